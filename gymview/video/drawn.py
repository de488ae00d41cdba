"""Env states drawn by a vectorized renderer straight into I420 video frames.

The renderer draws many states per call into one reused buffer, repainting only where the moving
parts were, and says where it drew. A frame then differs from the background only within that
box: the boxes of a call are cut out at one common size and converted to I420 in one vectorized
pass, and each is copied into the picture being filled, which otherwise still holds the frame
before. Where the renderer can tell that two states draw the very same frame (its shapes land on
whole pixels: ``BatchRenderer.frame_keys``), a frame's converted box is kept and reused: a
MountainCar goal reach mostly passes through frames drawn before.

>>> import numpy as np
>>> from gymview.renderers import renderer_for
>>> drawn = drawn_frames(renderer_for("MountainCar-v0"))
>>> [planes.shape for planes in drawn.planes(np.array([[-0.5, 0.0], [-0.4, 0.01]]))]
[(360000,), (360000,)]
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from gymview.image.yuv import Scratch, rgb_to_i420
from gymview.renderers import BatchRenderer

__all__ = [
    "KEPT_BYTES",
    "RENDER_CHUNK",
    "DrawnFrames",
    "Picture",
    "Window",
    "Windows",
    "changed_parts",
    "drawn_boxes",
    "drawn_frames",
]

RENDER_CHUNK = 32  # states drawn per call: fewer calls, while the buffer stays small (22 MiB at 600x400)
KEPT_BYTES = 32 * 2**20  # converted boxes kept for reuse, at most (about 6,000 MountainCar frames)

Box = tuple[int, int, int, int]  # top, bottom, left, right
#: the Y, U and V planes of one I420 frame: (H, W), (H / 2, W / 2), (H / 2, W / 2) uint8 arrays
Picture = tuple[np.ndarray, np.ndarray, np.ndarray]

_by_renderer: weakref.WeakKeyDictionary[BatchRenderer, DrawnFrames] = weakref.WeakKeyDictionary()
_by_renderer_lock = threading.Lock()


def drawn_frames(renderer: BatchRenderer) -> DrawnFrames:
    """The :class:`DrawnFrames` of ``renderer``, kept while the renderer lives: its buffer already
    holds the background, so the next video's first states repaint only what moved."""
    with _by_renderer_lock:
        found = _by_renderer.get(renderer)
        if found is None:
            found = _by_renderer[renderer] = DrawnFrames(renderer)
        return found


class DrawnFrames:
    """Frames drawn from states by ``renderer`` and converted to I420 where they changed.

    Frames of an odd width or height get one black column on the right or row at the bottom, as
    :class:`gymview.image.yuv.I420Converter` gives them: I420 pictures are of :attr:`even_size`.

    Args:
        renderer: The vectorized renderer of the env.
        chunk: States drawn per call.
        kept_bytes: How much of the converted boxes to keep for frames drawn again (the oldest go
            first); 0 keeps none.
    """

    def __init__(self, renderer: BatchRenderer, chunk: int = RENDER_CHUNK, kept_bytes: int = KEPT_BYTES) -> None:
        self.renderer = renderer
        width, height = renderer.width, renderer.height
        self.even_size = (width + width % 2, height + height % 2)
        even_width, even_height = self.even_size
        # the renderer draws into the top-left of a black canvas of the even size
        self._canvas = np.zeros((chunk, even_height, even_width, 3), np.uint8)
        self._drawn = self._canvas[:, :height, :width]
        self._out = np.empty(even_width * even_height * 3 // 2, np.uint8)
        self._own = _picture_of(self._out, even_width, even_height)
        self._windows = Windows()
        self._background: Picture | None = None  # the background in I420, made when first needed
        self._kept: dict[bytes, _Kept] = {}  # converted boxes by BatchRenderer.frame_keys
        self._kept_bytes, self._most_kept_bytes = 0, kept_bytes
        self._filled: np.ndarray | None = None  # the Y plane of the picture filled last
        self._last_box: Box = (0, 0, 0, 0)  # where its frame may differ from the background
        self._behind: _Cut | None = None  # the background there, when that frame was a kept one
        self._lock = threading.Lock()

    def planes(self, states: np.ndarray) -> Iterator[np.ndarray]:
        """The I420 planes of each state's frame, in order, Y then U then V in one flat array,
        refilled for each frame (use it before taking the next)."""
        for _ in self.fill(states, self._own):
            yield self._out

    def fill(self, states: np.ndarray, picture: Picture) -> Iterator[None]:
        """Fill ``picture`` with each state's frame in turn, yielding once it holds it.

        Only where a frame differs from the one before it is written, so ``picture`` must be left
        as this left it between calls; a picture other than the one filled last gets a whole frame
        first.
        """
        with self._lock:
            keys = self.renderer.frame_keys(states) if self._most_kept_bytes else None
            if keys is not None:
                yield from self._fill_kept(states, keys, picture)
                return
            chunk = len(self._canvas)
            for start in range(0, len(states), chunk):
                yield from self._fill_drawn(states[start : start + chunk], picture)

    def _draw(self, states: np.ndarray) -> list[Box]:
        """Draw ``states`` (at most a chunk) into the canvas; where each was drawn. The renderer
        repaints only what moved in the first frames of the array it drew into before."""
        self.renderer.render(states, out=self._drawn[: len(states)])
        return drawn_boxes(self.renderer, len(states))

    def _fill_drawn(self, states: np.ndarray, picture: Picture) -> Iterator[None]:
        """Frames drawn and converted where each or the frame before it was drawn."""
        boxes = self._draw(states)
        first = 0
        if picture[0] is not self._filled:  # the first frame whole: nothing is known of what it holds
            rgb_to_i420(self._canvas[0], *picture, self._windows.scratch)
            self._filled, self._last_box, first = picture[0], boxes[0], 1
            self._behind = None
            yield
        frames, changed = [], []
        before = self._last_box
        for index in range(first, len(states)):
            for part in changed_parts(boxes[index], before):
                frames.append(index)
                changed.append(part)
            before = boxes[index]
        windows = self._windows
        windows.convert([self._canvas[index] for index in frames], changed, self.even_size)
        number = 0
        for index in range(first, len(states)):
            while number < len(frames) and frames[number] == index:
                windows.put(number, picture)
                number += 1
            self._last_box, self._behind = boxes[index], None
            yield

    def _fill_kept(self, states: np.ndarray, keys: list[bytes], picture: Picture) -> Iterator[None]:
        """Frames from their kept converted boxes, those not kept yet drawn and kept first, a
        chunk of them per call."""
        missing: dict[bytes, int] = {}  # keys not kept yet, and a state of each
        for index, key in enumerate(keys):
            if key not in self._kept and key not in missing:
                missing[key] = index
        missing_keys, indexes, chunk = list(missing), list(missing.values()), len(self._canvas)
        for start in range(0, len(missing_keys), chunk):
            self._keep(states[indexes[start : start + chunk]], missing_keys[start : start + chunk])
        background = self._background_planes()
        for key in keys:
            kept = self._kept[key]
            if picture[0] is not self._filled:
                for plane, whole in zip(picture, background):
                    plane[...] = whole
                self._filled = picture[0]
            else:  # the background back where the frame before may differ from it
                _paste(picture, *(self._behind or _cut(background, self._last_box)))
            _paste(picture, *kept.window)
            self._last_box, self._behind = kept.window.box, kept.behind
            yield
        while self._kept_bytes > self._most_kept_bytes:  # the oldest first
            oldest = next(iter(self._kept))
            self._kept_bytes -= self._kept.pop(oldest).window.nbytes

    def _keep(self, states: np.ndarray, keys: list[bytes]) -> None:
        """Draw and convert ``states`` (at most a chunk), keeping each frame's box by its key."""
        boxes = [box if _area(box) else (0, 2, 0, 2) for box in self._draw(states)]  # nothing drawn: any box
        windows = self._windows
        windows.convert(list(self._canvas[: len(states)]), boxes, self.even_size)
        background = self._background_planes()
        for number, key in enumerate(keys):
            window = windows.window(number)
            self._kept[key] = _Kept(window, _cut(background, window.box))
            self._kept_bytes += window.nbytes

    def _background_planes(self) -> Picture:
        if self._background is None:
            width, height = self.even_size
            canvas = np.zeros((height, width, 3), np.uint8)
            canvas[: self.renderer.height, : self.renderer.width] = self.renderer.background
            self._background = _picture_of(np.empty(width * height * 3 // 2, np.uint8), width, height)
            rgb_to_i420(canvas, *self._background, self._windows.scratch)
        return self._background


def drawn_boxes(renderer: BatchRenderer, count: int) -> list[Box]:
    """Where ``renderer`` drew each of the first ``count`` frames of its last call: one box around
    all it drew in a frame (an empty one, bottom above top, where it drew nothing). Outside it the
    frame is the renderer's background."""
    boxes = np.array([[renderer.height, 0, renderer.width, 0]] * count, np.int64)
    drawn = np.array(renderer.drawn_boxes, np.int64).reshape(-1, 5)
    drawn = drawn[drawn[:, 0] < count]
    for column, reduce in ((1, np.minimum), (2, np.maximum), (3, np.minimum), (4, np.maximum)):
        reduce.at(boxes[:, column - 1], drawn[:, 0], drawn[:, column])
    return [tuple(box) for box in boxes.tolist()]


def changed_parts(own: Box, before: Box) -> list[Box]:
    """Where a frame drawn in the box ``own`` may differ from the frame before it, drawn in
    ``before``: the box around both, or each on its own when that would be mostly empty (a jump,
    as between two episodes); empty boxes left out.

    >>> changed_parts((0, 10, 0, 10), (2, 12, 1, 11)), changed_parts((0, 10, 0, 10), (90, 99, 90, 99))
    ([(0, 12, 0, 11)], [(0, 10, 0, 10), (90, 99, 90, 99)])
    """
    union = (min(own[0], before[0]), max(own[1], before[1]), min(own[2], before[2]), max(own[3], before[3]))
    parts = [union] if _area(union) <= _area(own) + _area(before) else [own, before]
    return [part for part in parts if _area(part)]


def _area(box: Box) -> int:
    top, bottom, left, right = box
    return max(0, bottom - top) * max(0, right - left)


class Windows:
    """Boxes of RGB images converted to I420 in one numpy pass, then copied into pictures.

    The boxes are grown to even edges (I420's chroma covers 2x2 pixels) and to one size, the
    largest, kept inside the images: many small conversions cost numpy's overhead per call each.
    """

    def __init__(self) -> None:
        self.scratch = Scratch()
        self._origins: list[tuple[int, int]] = []
        self._size = (0, 0)
        self._planes: Picture | None = None

    def convert(self, images: list[np.ndarray], boxes: list[Box], size: tuple[int, int]) -> None:
        """Convert box ``boxes[i]`` (top, bottom, left, right) of ``images[i]``, each an (H, W, 3)
        uint8 image of the even ``size`` (W, H)."""
        width, height = size
        window_height = max((bottom - (top & ~1) for top, bottom, _, _ in boxes), default=0)
        window_width = max((right - (left & ~1) for _, _, left, right in boxes), default=0)
        window_height, window_width = window_height + window_height % 2, window_width + window_width % 2
        self._size = (window_height, window_width)
        self._origins = [
            (min(top & ~1, height - window_height), min(left & ~1, width - window_width)) for top, _, left, _ in boxes
        ]
        scratch = self.scratch
        rgb = scratch.array("windows", (len(boxes), window_height, window_width, 3), np.uint8)
        for window, image, (top, left) in zip(rgb, images, self._origins):
            window[...] = image[top : top + window_height, left : left + window_width]
        y = scratch.array("y", rgb.shape[:3], np.uint8)
        u = scratch.array("u", (len(rgb), window_height // 2, window_width // 2), np.uint8)
        v = scratch.array("v", u.shape, np.uint8)
        if boxes:
            rgb_to_i420(rgb, y, u, v, scratch)
        self._planes = (y, u, v)

    def put(self, number: int, picture: Picture) -> None:
        """Copy the I420 of box ``number`` of the last :meth:`convert` into ``picture`` where it was."""
        assert self._planes is not None  # convert() came first
        y, u, v = self._planes
        _paste(picture, *self._origins[number], y[number], u[number], v[number])

    def window(self, number: int) -> Window:
        """Box ``number`` of the last :meth:`convert`, copied out to keep."""
        assert self._planes is not None  # convert() came first
        y, u, v = self._planes
        return Window(*self._origins[number], y[number].copy(), u[number].copy(), v[number].copy())


_Cut = tuple[int, int, np.ndarray, np.ndarray, np.ndarray]  # top, left and the Y, U and V planes of a box


class _Kept(NamedTuple):
    """A frame's converted box kept for reuse, and the background's there (to put back after it)."""

    window: Window
    behind: _Cut


class Window(NamedTuple):
    """A box of a frame in I420: where it goes in a picture, and its planes."""

    top: int
    left: int
    y: np.ndarray
    u: np.ndarray
    v: np.ndarray

    @property
    def box(self) -> Box:
        return self.top, self.top + self.y.shape[0], self.left, self.left + self.y.shape[1]

    @property
    def nbytes(self) -> int:
        """Its planes, and about what a kept one costs besides (its key, the tuple, the arrays' own)."""
        return self.y.nbytes + self.u.nbytes + self.v.nbytes + 512


def _picture_of(flat: np.ndarray, width: int, height: int) -> Picture:
    """The Y, U and V planes of I420 bytes laid out one after another in ``flat``."""
    luma = width * height
    return (
        flat[:luma].reshape(height, width),
        flat[luma : luma * 5 // 4].reshape(height // 2, width // 2),
        flat[luma * 5 // 4 :].reshape(height // 2, width // 2),
    )


def _cut(picture: Picture, box: Box) -> _Cut:
    """``box`` of ``picture``, grown to even edges: top, left and the three planes' parts."""
    top, bottom, left, right = box
    top, bottom, left, right = top & ~1, bottom + bottom % 2, left & ~1, right + right % 2
    rows, columns = slice(top // 2, bottom // 2), slice(left // 2, right // 2)
    return top, left, picture[0][top:bottom, left:right], picture[1][rows, columns], picture[2][rows, columns]


def _paste(picture: Picture, top: int, left: int, y: np.ndarray, u: np.ndarray, v: np.ndarray) -> None:
    """Copy planes into ``picture`` with their top-left corner at (``top``, ``left``), both even."""
    height, width = y.shape
    picture[0][top : top + height, left : left + width] = y
    rows, columns = slice(top // 2, (top + height) // 2), slice(left // 2, (left + width) // 2)
    picture[1][rows, columns] = u
    picture[2][rows, columns] = v
