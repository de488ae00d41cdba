"""OpenCV's ``INTER_AREA`` shrink of gray frames, bit for bit, at a fraction of its cost.

An area resize averages the source pixels each output pixel covers. When the source size and
the target size share a factor (210 -> 84 rows repeat every 5 -> 2, 160 -> 84 columns every
40 -> 21), every output pixel is an integer-weighted sum of source pixels divided by one
integer (200 for Atari's 210x160 -> 84x84). ``ExactAreaResize`` computes that sum exactly: the
rows with a few numpy integer operations per repeating row pattern, the columns as one float32
matrix product whose integer results are exact, and rounds it. OpenCV sums in float32 with
inexact weights instead, so it agrees everywhere except where the exact average lies halfway
between two levels; those pixels (one or two in a typical Atari frame) are recomputed with
OpenCV's own float32 arithmetic, weight by weight in its order.

``matches_cv2`` compares the two on random frames full of halfway pixels; ``Cv2Resizer`` uses this
class only when they agree on this machine's OpenCV build, and OpenCV's resize otherwise.

>>> import numpy as np
>>> resize = ExactAreaResize(height=210, width=160, size=84)
>>> frames = np.random.default_rng(0).integers(0, 256, (2, 210, 160), dtype=np.uint8)
>>> out = np.empty((2, 84, 84), np.uint8)
>>> resize(frames, out)
>>> import cv2
>>> bool((out[0] == cv2.resize(frames[0], (84, 84), interpolation=cv2.INTER_AREA)).all())
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

CHUNK_FRAMES = 32  # frames converted together: few numpy calls per frame, scratch buffers of ~3 MB
MATMUL_ROWS = 256  # rows per matrix product: small enough that BLAS stays in the calling thread (see _products)
MAX_ROW_PHASES = 8  # longer row patterns cost more numpy calls than OpenCV's resize
MAX_COLUMN_PHASES = 32  # wider column patterns make the matrix product dense, slower than OpenCV


def opencv_area_taps(source: int, target: int) -> tuple[np.ndarray, np.ndarray]:
    """Per output index, the source indices and float32 weights OpenCV's ``INTER_AREA`` uses, in its order.

    Padded with index 0 and weight 0, which leave a float32 sum unchanged.

    >>> indices, weights = opencv_area_taps(5, 2)
    >>> indices.tolist(), weights.astype(float).round(2).tolist()
    ([[0, 1, 2], [2, 3, 4]], [[0.4, 0.4, 0.2], [0.2, 0.4, 0.4]])
    """
    scale = 1.0 / (target / source)  # computed as OpenCV does: the inverse of its inverse scale
    taps: list[list[tuple[int, float]]] = []
    for index in range(target):
        start = index * scale
        end = start + scale
        cell = min(scale, source - start)
        first = min(math.ceil(start), math.floor(end), source - 1)
        last = min(math.floor(end), source - 1)
        row: list[tuple[int, float]] = []
        if first - start > 1e-3:
            row.append((first - 1, (first - start) / cell))
        row.extend((pixel, 1.0 / cell) for pixel in range(first, last))
        if end - last > 1e-3:
            row.append((last, min(end - last, 1.0, cell) / cell))
        taps.append(row)
    width = max(map(len, taps))
    indices = np.zeros((target, width), np.intp)
    weights = np.zeros((target, width), np.float32)
    for index, row in enumerate(taps):
        indices[index, : len(row)] = [pixel for pixel, _ in row]
        weights[index, : len(row)] = [weight for _, weight in row]
    return indices, weights


def integer_area_weights(source: int, target: int) -> np.ndarray:
    """(target, source) integer weights of an area resize, in the smallest units that make them whole.

    Every row sums to the same integer: the divisor of that axis.

    >>> integer_area_weights(5, 2).tolist()
    [[2, 2, 1, 0, 0], [0, 0, 1, 2, 2]]
    """
    starts = np.arange(source) * target  # source pixel edges, in units of 1/target of a pixel
    weights = np.array(
        [
            np.clip(np.minimum((row + 1) * source, starts + target) - np.maximum(row * source, starts), 0, None)
            for row in range(target)
        ]
    )
    return weights // np.gcd.reduce(weights[weights > 0])


class ExactAreaResize:
    """Shrink (n, height, width) uint8 gray frames to (n, size, size) exactly as ``cv2.resize(INTER_AREA)``.

    ``supported(height, width, size)`` says whether the sizes repeat in short enough patterns for
    this to pay; ``matches_cv2(cv2)`` whether this machine's OpenCV rounds as emulated. Not
    thread-safe: each thread needs its own instance (its scratch buffers).
    """

    def __init__(self, height: int, width: int, size: int) -> None:
        if not self.supported(height, width, size):
            raise ValueError(f"{height}x{width} -> {size}x{size} does not repeat in a short pattern; use cv2.resize")
        self._height, self._width, self._size = height, width, size
        row_step, column_step = math.gcd(height, size), math.gcd(width, size)
        self._rows_in, self._rows_out = height // row_step, size // row_step
        self._columns_in, self._columns_out = width // column_step, size // column_step
        rows, columns = integer_area_weights(height, size), integer_area_weights(width, size)
        self._divisor = int(rows[0].sum() * columns[0].sum())
        self._row_taps = [
            [(pixel, int(rows[phase, pixel])) for pixel in range(self._rows_in) if rows[phase, pixel]]
            for phase in range(self._rows_out)
        ]
        # One row of the column pattern -> its outputs, divided by the divisor (a unit: 1/divisor of
        # a level). The extra input (a constant 1) adds half a level plus half a unit: truncation
        # then rounds halves up, a halfway pixel's fractional part is half a unit and every other
        # pixel's at least 1.5 units; supported() keeps float32's error under a quarter unit.
        block = np.zeros((self._columns_in + 1, self._columns_out))
        block[:-1] = columns[: self._columns_out, : self._columns_in].T
        block[-1] = self._divisor / 2 + 0.5
        self._block = (block / self._divisor).astype(np.float32)
        self._halfway_below = 1.0 / self._divisor  # fractional part of a halfway pixel: 0.5 / divisor
        self._opencv_rows = opencv_area_taps(height, size)
        self._opencv_columns = opencv_area_taps(width, size)
        self._chunk = 0  # frames the scratch buffers hold: allocated by the first call

    @staticmethod
    def supported(height: int, width: int, size: int) -> bool:
        """Whether the exact path applies and pays for these sizes (Atari's 210x160 -> 84 does)."""
        if not 0 < size <= min(height, width):
            return False
        rows_in, rows_out = height // math.gcd(height, size), size // math.gcd(height, size)
        columns_in, columns_out = width // math.gcd(width, size), size // math.gcd(width, size)
        divisor = rows_in * columns_in  # the integer weights of each axis sum to its pattern length
        # Worst float32 error of one output, in levels: each of the product's terms and the weights'
        # rounding add at most 2**-24 of the result (under 256).
        float_error = (columns_in + 3) * 256 / 2**24
        return (
            rows_out <= MAX_ROW_PHASES
            and columns_out <= MAX_COLUMN_PHASES
            and 255 * rows_in < 2**16  # row sums fit in uint16
            and float_error * divisor < 0.25  # under a quarter unit: halfway pixels stay apart from the rest
        )

    def matches_cv2(self, cv2: Any, frames: int = 4) -> bool:
        """Whether this OpenCV build gives the same pixels, tried on random frames (dozens of halfway pixels each)."""
        rng = np.random.default_rng(0)
        images = rng.integers(0, 256, (frames, self._height, self._width), dtype=np.uint8)
        few_levels = np.array([0, 25, 75, 150, 255], np.uint8)  # sums of these often end halfway
        images[frames // 2 :] = few_levels[images[frames // 2 :] % len(few_levels)]
        ours = np.empty((frames, self._size, self._size), np.uint8)
        self(images, ours)
        theirs = [cv2.resize(image, (self._size, self._size), interpolation=cv2.INTER_AREA) for image in images]
        return bool(np.array_equal(ours, np.stack(theirs)))

    def __call__(self, frames: np.ndarray, out: np.ndarray) -> None:
        """Resize ``frames`` (n, height, width) uint8 into ``out`` (n, size, size) uint8."""
        expected = (self._height, self._width)
        if not isinstance(frames, np.ndarray) or frames.dtype != np.uint8 or frames.shape[1:] != expected:
            got = f"{frames.dtype} {frames.shape}" if isinstance(frames, np.ndarray) else type(frames).__name__
            raise ValueError(f"frames must be uint8 gray frames of shape (n, {expected[0]}, {expected[1]}); got {got}")
        if (
            not isinstance(out, np.ndarray)
            or out.dtype != np.uint8
            or out.shape != (len(frames), self._size, self._size)
        ):
            got = f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
            raise ValueError(
                f"out must be a uint8 array of shape ({len(frames)}, {self._size}, {self._size}); got {got}"
            )
        if not len(frames):
            return
        if self._chunk < min(len(frames), CHUNK_FRAMES):
            self._allocate(min(len(frames), CHUNK_FRAMES))
        halfway: list[np.ndarray] = []
        for start in range(0, len(frames), self._chunk):
            end = min(len(frames), start + self._chunk)
            found = self._resize_chunk(frames[start:end], out[start:end])
            if found is not None:
                found[0] += start
                halfway.append(found)
        if halfway:
            frame, row, column = np.concatenate(halfway, axis=1)
            out[frame, row, column] = self._opencv_rounding(frames, frame, row, column)

    def _allocate(self, frames: int) -> None:
        size, width, patterns = self._size, self._width, self._height // self._rows_in
        self._chunk = frames
        self._sums = np.ones((frames, size, width // self._columns_in, self._columns_in + 1), np.float32)
        self._row_sum = np.empty((frames * patterns, width), np.uint16)
        self._scaled = np.empty((frames * size * (width // self._columns_in), self._columns_out), np.float32)
        # Whole 8-byte words, so that the rare halfway pixels are found by scanning words, not bytes.
        self._halfway = np.zeros(-(-frames * size * size // 8) * 8, np.bool_)

    def _products(self, sums: np.ndarray, scaled: np.ndarray) -> None:
        """``sums @ block`` in slices. OpenBLAS hands a product of more than 2**18 multiply-adds to its
        own threads, which then spin on every core between calls (docs/performance-log.md); slices this size
        stay in the calling thread, which may be one of the pipeline's threads already running beside
        another."""
        for start in range(0, len(sums), MATMUL_ROWS):
            np.matmul(sums[start : start + MATMUL_ROWS], self._block, out=scaled[start : start + MATMUL_ROWS])

    def _resize_chunk(self, frames: np.ndarray, out: np.ndarray) -> np.ndarray | None:
        count, size = len(frames), self._size
        patterns = self._height // self._rows_in
        source = frames.reshape(count * patterns, self._rows_in, self._width)
        row_sum = self._row_sum[: count * patterns]
        sums = self._sums[:count]
        by_phase = sums.reshape(count, patterns, self._rows_out, self._width // self._columns_in, self._columns_in + 1)
        for phase, taps in enumerate(self._row_taps):
            (first, weight), *others = taps
            np.multiply(source[:, first], weight, out=row_sum, dtype=np.uint16)
            for pixel, weight in others:
                if weight == 1:
                    np.add(row_sum, source[:, pixel], out=row_sum, dtype=np.uint16)
                else:
                    row_sum += np.multiply(source[:, pixel], weight, dtype=np.uint16)  # uint16 on numpy 1.x too
            by_phase[:, :, phase, :, :-1] = row_sum.reshape(
                count, patterns, self._width // self._columns_in, self._columns_in
            )
        scaled = self._scaled[: count * size * (self._width // self._columns_in)]
        self._products(sums.reshape(-1, self._columns_in + 1), scaled)
        out[...] = scaled.reshape(out.shape)  # truncation = floor: every value is positive
        scaled -= out.reshape(scaled.shape)
        padded = self._halfway[: -(-scaled.size // 8) * 8]
        np.less(scaled.reshape(-1), self._halfway_below, out=padded[: scaled.size])
        padded[scaled.size :] = False
        words = np.flatnonzero(padded.view(np.uint64))
        if not words.size:
            return None
        nearby = (words[:, None] * 8 + np.arange(8)).reshape(-1)
        found = nearby[padded[nearby]]
        frame, pixel = np.divmod(found, size * size)
        return np.array([frame, *np.divmod(pixel, size)])

    def _opencv_rounding(
        self, frames: np.ndarray, frame: np.ndarray, row: np.ndarray, column: np.ndarray
    ) -> np.ndarray:
        """OpenCV's float32 result at these pixels: per source row a weighted sum over columns, then over rows."""
        (row_pixels, row_weights), (column_pixels, column_weights) = self._opencv_rows, self._opencv_columns
        values = frames[frame[:, None, None], row_pixels[row][:, :, None], column_pixels[column][:, None, :]].astype(
            np.float32
        )
        across = np.zeros(values.shape[:2], np.float32)
        for tap in range(values.shape[2]):
            across = across + values[:, :, tap] * column_weights[column, tap][:, None]
        total = row_weights[row, 0] * across[:, 0]
        for tap in range(1, values.shape[1]):
            total = total + row_weights[row, tap] * across[:, tap]
        return np.clip(np.rint(total), 0, 255).astype(np.uint8)  # rint: round half to even, as OpenCV's cvRound
