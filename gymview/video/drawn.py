"""Env states drawn by a vectorized renderer straight into I420 video frames.

The renderer draws many states per call into one reused buffer, repainting only where the moving
parts were, and says where it drew. A frame then differs from the one before it only within the
box around where both were drawn: those boxes, one per frame, are cut out at one common size and
converted to I420 in one vectorized pass per call, and each is copied into the picture being
filled, which otherwise still holds the frame before.

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

import numpy as np

from gymview.image.yuv import Scratch, rgb_to_i420
from gymview.renderers import BatchRenderer

__all__ = ["RENDER_CHUNK", "DrawnFrames", "Picture", "Windows", "changed_parts", "drawn_boxes", "drawn_frames"]

RENDER_CHUNK = 32  # states drawn per call: fewer calls, while the buffer stays small (22 MiB at 600x400)

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
    """

    def __init__(self, renderer: BatchRenderer, chunk: int = RENDER_CHUNK) -> None:
        self.renderer = renderer
        width, height = renderer.width, renderer.height
        self.even_size = (width + width % 2, height + height % 2)
        even_width, even_height = self.even_size
        # the renderer draws into the top-left of a black canvas of the even size
        self._canvas = np.zeros((chunk, even_height, even_width, 3), np.uint8)
        self._drawn = self._canvas[:, :height, :width]
        luma = even_width * even_height
        self._out = np.empty(luma * 3 // 2, np.uint8)
        self._own: Picture = (
            self._out[:luma].reshape(even_height, even_width),
            self._out[luma : luma * 5 // 4].reshape(even_height // 2, even_width // 2),
            self._out[luma * 5 // 4 :].reshape(even_height // 2, even_width // 2),
        )
        self._windows = Windows()
        self._filled: np.ndarray | None = None  # the Y plane of the picture filled last
        self._last_box: Box = (0, 0, 0, 0)  # where its frame differs from the background
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
        chunk = len(self._canvas)
        with self._lock:
            for start in range(0, len(states), chunk):
                part = states[start : start + chunk]
                count = len(part)
                if count < chunk:  # the last state again: the whole buffer, so only what moved is repainted
                    part = np.concatenate([part, np.repeat(part[-1:], chunk - count, axis=0)])
                self.renderer.render(part, out=self._drawn)
                boxes = drawn_boxes(self.renderer, count)
                first = 0
                if picture[0] is not self._filled:  # the first frame whole: nothing is known of what it holds
                    rgb_to_i420(self._canvas[0], *picture, self._windows.scratch)
                    self._filled, self._last_box, first = picture[0], boxes[0], 1
                    yield
                yield from self._fill_changed(picture, boxes, first, count)

    def _fill_changed(self, picture: Picture, boxes: list[Box], first: int, count: int) -> Iterator[None]:
        """Frames ``first`` to ``count`` of the canvas into ``picture``, each where it or the frame
        before it was drawn."""
        frames, changed = [], []
        before = self._last_box
        for index in range(first, count):
            for part in changed_parts(boxes[index], before):
                frames.append(index)
                changed.append(part)
            before = boxes[index]
        windows = self._windows
        windows.convert([self._canvas[index] for index in frames], changed, self.even_size)
        number = 0
        for index in range(first, count):
            while number < len(frames) and frames[number] == index:
                windows.put(number, picture)
                number += 1
            self._last_box = boxes[index]
            yield


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
        (top, left), (height, width) = self._origins[number], self._size
        y, u, v = self._planes
        picture[0][top : top + height, left : left + width] = y[number]
        rows, columns = slice(top // 2, (top + height) // 2), slice(left // 2, (left + width) // 2)
        picture[1][rows, columns] = u[number]
        picture[2][rows, columns] = v[number]
