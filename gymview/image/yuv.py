"""RGB frames to I420 (yuv420p) planes for the H.264 encoder, converting only what changed.

FFmpeg's scaler spends about twice as long converting a 600x400 rgb24 frame to yuv420p as x264
'ultrafast' spends encoding it. Env frames mostly repeat a static background: :class:`I420Converter`
converts only the boxes that differ from the previous frame (BT.601, limited range: what FFmpeg's
own rgb24 -> yuv420p conversion gives, within 2 levels on real frames). It finds them by comparing
the two frames, or is told them by whoever drew the frame (a renderer knows where it drew).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["I420Converter", "Scratch", "changed_boxes", "rgb_to_i420"]

_BAND_GAP = 16  # unchanged rows that split two changed bands into separate boxes


class I420Converter:
    """Convert equal-sized (H, W, 3) uint8 RGB frames to I420 bytes.

    ``convert(frame)`` returns the Y plane then the U and V planes in one array that is reused:
    write it out before the next call. Only the boxes that differ from the previous frame are
    converted; the caller must not change a frame after passing it. An odd width or height gets
    one black column on the right or row at the bottom (I420 needs even sizes; nothing is
    scaled): the planes are of ``even_size``. Work buffers are allocated once: a fresh large
    array per frame costs more in page faults than the arithmetic.

    >>> import numpy as np
    >>> converter = I420Converter(width=4, height=2)
    >>> converter.convert(np.full((2, 4, 3), 255, np.uint8)).tolist()
    [235, 235, 235, 235, 235, 235, 235, 235, 128, 128, 128, 128]
    >>> I420Converter(width=5, height=3).even_size
    (6, 4)
    """

    def __init__(self, width: int, height: int) -> None:
        if width < 1 or height < 1:
            raise ValueError(f"frame size must be positive; got {width}x{height}")
        self.frame_size = (width, height)
        # odd sizes: frames are copied into a black canvas one column or row larger, where they changed
        width, height = self.even_size = (width + width % 2, height + height % 2)
        self._canvas = None if self.even_size == self.frame_size else np.zeros((height, width, 3), np.uint8)
        self.width, self.height = width, height
        luma = width * height
        self._out = np.empty(luma * 3 // 2, np.uint8)
        self._y = self._out[:luma].reshape(height, width)
        self._u = self._out[luma : luma * 5 // 4].reshape(height // 2, width // 2)
        self._v = self._out[luma * 5 // 4 :].reshape(height // 2, width // 2)
        self._scratch = Scratch()
        self._previous: np.ndarray | None = None

    def convert(self, frame: np.ndarray, changed: list[tuple[int, int, int, int]] | None = None) -> np.ndarray:
        """The I420 planes of ``frame``, a C-contiguous (height, width, 3) uint8 array.

        ``changed``: (top, bottom, left, right) boxes outside which ``frame`` equals the frame
        converted before it, when the caller knows them; ``None`` finds them by comparing.
        """
        width, height = self.frame_size
        if frame.shape != (height, width, 3) or frame.dtype != np.uint8 or not frame.flags.c_contiguous:
            raise ValueError(
                f"expected a C-contiguous ({height}, {width}, 3) uint8 frame; got {frame.dtype} {frame.shape}"
            )
        if self._previous is None:
            boxes = [(0, self.height, 0, self.width)]
        elif changed is None:
            boxes = changed_boxes(frame, self._previous)
        else:
            boxes = [_even_box(box, height, width) for box in changed]
        self._previous = frame
        if self._canvas is not None:
            for top, bottom, left, right in boxes:
                part = frame[top:bottom, left:right]  # up to the frame's own odd edge
                self._canvas[top : top + part.shape[0], left : left + part.shape[1]] = part
            frame = self._canvas
        for top, bottom, left, right in boxes:
            self._convert_box(frame, top, bottom, left, right)
        return self._out

    def _convert_box(self, frame: np.ndarray, top: int, bottom: int, left: int, right: int) -> None:
        rows, columns = slice(top // 2, bottom // 2), slice(left // 2, right // 2)
        rgb_to_i420(
            frame[top:bottom, left:right],
            self._y[top:bottom, left:right],
            self._u[rows, columns],
            self._v[rows, columns],
            self._scratch,
        )


class Scratch:
    """Work arrays of :func:`rgb_to_i420`, each grown to the largest size asked for and then reused:
    a fresh large array per call costs more in page faults than the arithmetic."""

    def __init__(self) -> None:
        self._flat: dict[str, np.ndarray] = {}

    def array(self, name: str, shape: tuple[int, ...], dtype: type) -> np.ndarray:
        """The work array ``name`` as an uninitialized array of ``shape``."""
        size = math.prod(shape)
        flat = self._flat.get(name)
        if flat is None or flat.size < size:
            flat = self._flat[name] = np.empty(size, dtype)
        return flat[:size].reshape(shape)


def rgb_to_i420(rgb: np.ndarray, y: np.ndarray, u: np.ndarray, v: np.ndarray, scratch: Scratch) -> None:
    """Convert RGB pixels to I420 planes: BT.601 limited range, chroma from 2x2 averages (FFmpeg's
    own conversion within 2 levels).

    ``rgb`` is (..., H, W, 3) uint8 with H and W even: one image or a stack of them; ``y`` (..., H,
    W), ``u`` and ``v`` (..., H / 2, W / 2) uint8 are written. A stack of small images costs about
    what one image of their total size costs: numpy's per-call overhead is paid once.

    >>> import numpy as np
    >>> y, u, v = np.empty((2, 2, 2), np.uint8), np.empty((2, 1, 1), np.uint8), np.empty((2, 1, 1), np.uint8)
    >>> rgb_to_i420(np.stack([np.zeros((2, 2, 3)), np.full((2, 2, 3), 255)]).astype(np.uint8), y, u, v, Scratch())
    >>> y.ravel().tolist(), u.ravel().tolist(), v.ravel().tolist()
    ([16, 16, 16, 16, 235, 235, 235, 235], [128, 128], [128, 128])
    """
    *stack, height, width, _ = rgb.shape
    planes = scratch.array("rgb", (3, *stack, height, width), np.uint16)
    planes[...] = np.moveaxis(rgb, -1, 0)
    red, green, blue = planes
    luma, term = scratch.array("luma", (2, *stack, height, width), np.uint16)
    np.multiply(red, 66, out=luma, dtype=np.uint16)
    for plane, weight in ((green, 129), (blue, 25)):
        np.multiply(plane, weight, out=term, dtype=np.uint16)
        luma += term
    luma += 128 + (16 << 8)  # rounding, then the +16 offset; the sum stays below 2**16
    luma >>= 8
    y[...] = luma
    quads = scratch.array("quads", (3, *stack, height // 2, width // 2), np.int32)  # 2x2 sums of R, G, B
    np.add(planes[..., 0::2, 0::2], planes[..., 1::2, 0::2], out=quads, dtype=np.int32)
    quads += planes[..., 0::2, 1::2]
    quads += planes[..., 1::2, 1::2]
    chroma, term = scratch.array("chroma", (2, *stack, height // 2, width // 2), np.int32)
    for target, weights in ((u, (-38, -74, 112)), (v, (112, -94, -18))):
        np.multiply(quads[0], weights[0], out=chroma)
        for plane, weight in zip(quads[1:], weights[1:]):
            np.multiply(plane, weight, out=term)
            chroma += term
        chroma += 512 + (128 << 10)  # rounding of the 4-pixel average, then the +128 offset
        chroma >>= 10
        target[...] = chroma


def _even_box(box: tuple[int, int, int, int], height: int, width: int) -> tuple[int, int, int, int]:
    """``box`` clipped to the frame and grown to even edges (no wider than the frame's even size)."""
    top, bottom, left, right = (max(0, int(edge)) for edge in box)
    return top & ~1, min(height + height % 2, bottom + bottom % 2), left & ~1, min(width + width % 2, right + right % 2)


def _words(frame: np.ndarray) -> tuple[np.ndarray, int]:
    """``frame`` as rows of k-byte words, the widest k in 8, 4, 2, 1 that divides a row; and k."""
    rows = frame.reshape(frame.shape[0], -1)
    for dtype in (np.uint64, np.uint32, np.uint16):
        size = np.dtype(dtype).itemsize
        if rows.shape[1] % size == 0:
            return rows.view(dtype), size
    return rows, 1


def changed_boxes(frame: np.ndarray, previous: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(top, bottom, left, right) boxes with even edges covering every pixel that differs (an odd
    frame's last box may end one past it, at its even size).

    Rows are compared as words of up to 8 bytes, so a box may take in a few unchanged pixels
    beside the changed ones; changed rows close together form one band, and each band gets
    the columns that changed in it.

    >>> import numpy as np
    >>> a = np.zeros((100, 100, 3), np.uint8)
    >>> b = a.copy(); b[11, 21] = 1; b[90:, :5] = 7
    >>> changed_boxes(b, a)
    [(10, 12, 20, 24), (90, 100, 0, 6)]
    """
    height, width = frame.shape[:2]
    words, size = _words(frame)
    changed = words != _words(previous)[0]
    rows = np.flatnonzero(changed.any(axis=1))
    boxes = []
    for band in np.split(rows, np.flatnonzero(np.diff(rows) > _BAND_GAP) + 1) if rows.size else []:
        top, bottom = int(band[0]), int(band[-1]) + 1
        columns = np.flatnonzero(changed[top:bottom].any(axis=0))
        left, right = int(columns[0]) * size // 3, -(-(int(columns[-1]) + 1) * size // 3)
        # to even edges, within the even size an odd frame is padded to
        boxes.append((top & ~1, min(height + 1, bottom + 1) & ~1, left & ~1, min(width + 1, right + 1) & ~1))
    return boxes
