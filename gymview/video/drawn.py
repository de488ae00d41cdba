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

__all__ = ["RENDER_CHUNK", "DrawnFrames", "Picture", "drawn_frames"]

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
        self._scratch = Scratch()
        self._filled: np.ndarray | None = None  # the Y plane of the picture filled last
        self._last_box: Box = (0, 0, 0, 0)  # where its frame differs from the background: top, bottom, left, right
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
                boxes = self._boxes(count)
                first = 0
                if picture[0] is not self._filled:  # the first frame whole: nothing is known of what it holds
                    rgb_to_i420(self._canvas[0], *picture, self._scratch)
                    self._filled, self._last_box, first = picture[0], boxes[0], 1
                    yield
                yield from self._fill_windows(picture, boxes, first, count)

    def _boxes(self, count: int) -> list[Box]:
        """Where the renderer drew each of the first ``count`` frames of its last call, one box
        around all it drew in a frame (empty, bottom above top, where it drew nothing)."""
        width, height = self.even_size
        boxes = np.array([[height, 0, width, 0]] * count, np.int64)
        drawn = np.array(self.renderer.drawn_boxes, np.int64).reshape(-1, 5)
        drawn = drawn[drawn[:, 0] < count]
        for column, reduce in ((1, np.minimum), (2, np.maximum), (3, np.minimum), (4, np.maximum)):
            reduce.at(boxes[:, column - 1], drawn[:, 0], drawn[:, column])
        return [tuple(box) for box in boxes.tolist()]

    def _fill_windows(self, picture: Picture, boxes: list[Box], first: int, count: int) -> Iterator[None]:
        """Frames ``first`` to ``count`` of the canvas into ``picture``, each where it or the frame
        before it was drawn: windows of one size for all, converted in one pass."""
        changed = []  # (frame, box) to convert
        before = self._last_box
        for index in range(first, count):
            own = boxes[index]
            union = (min(own[0], before[0]), max(own[1], before[1]), min(own[2], before[2]), max(own[3], before[3]))
            # far apart (a new episode's first frame): each box on its own
            parts = [union] if _area(union) <= _area(own) + _area(before) else [own, before]
            changed += [(index, part) for part in parts if _area(part)]
            before = own
        # even edges (I420's chroma covers 2x2 pixels), one size for all, inside the picture
        window_height = max((bottom - (top & ~1) for _, (top, bottom, _, _) in changed), default=0)
        window_width = max((right - (left & ~1) for _, (_, _, left, right) in changed), default=0)
        window_height, window_width = window_height + window_height % 2, window_width + window_width % 2
        width, height = self.even_size
        windows = [
            (index, min(top & ~1, height - window_height), min(left & ~1, width - window_width))
            for index, (top, _, left, _) in changed
        ]
        scratch = self._scratch
        rgb = scratch.array("windows", (len(windows), window_height, window_width, 3), np.uint8)
        for number, (index, top, left) in enumerate(windows):
            rgb[number] = self._canvas[index, top : top + window_height, left : left + window_width]
        window_y = scratch.array("y", rgb.shape[:3], np.uint8)
        window_u = scratch.array("u", (len(rgb), window_height // 2, window_width // 2), np.uint8)
        window_v = scratch.array("v", window_u.shape, np.uint8)
        if windows:
            rgb_to_i420(rgb, window_y, window_u, window_v, scratch)
        y, u, v = picture
        number = 0
        for index in range(first, count):
            while number < len(windows) and windows[number][0] == index:
                _, top, left = windows[number]
                y[top : top + window_height, left : left + window_width] = window_y[number]
                rows = slice(top // 2, (top + window_height) // 2)
                columns = slice(left // 2, (left + window_width) // 2)
                u[rows, columns] = window_u[number]
                v[rows, columns] = window_v[number]
                number += 1
            self._last_box = boxes[index]
            yield


def _area(box: Box) -> int:
    top, bottom, left, right = box
    return max(0, bottom - top) * max(0, right - left)
