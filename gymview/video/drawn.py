"""Env states drawn by a vectorized renderer straight into I420 video frames.

The renderer draws many states per call into one reused buffer, repainting only where the moving
parts were, and says where it drew; the converter then converts only those places (where this frame
or the one before it drew) instead of comparing whole frames to find them.

>>> import numpy as np
>>> from gymview.renderers import renderer_for
>>> drawn = drawn_frames(renderer_for("MountainCar-v0"))
>>> [planes.shape for planes in drawn.planes(np.array([[-0.5, 0.0], [-0.4, 0.01]]), video=object())]
[(360000,), (360000,)]
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator

import numpy as np

from gymview.image.yuv import I420Converter
from gymview.renderers import BatchRenderer

__all__ = ["RENDER_CHUNK", "DrawnFrames", "drawn_frames"]

RENDER_CHUNK = 32  # states drawn per call: fewer calls, while the buffer stays small (22 MiB at 600x400)

Box = tuple[int, int, int, int]
_MERGE_GAP = 16  # boxes this close are converted as one: each conversion call costs ~40 µs however small

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

    Args:
        renderer: The vectorized renderer of the env.
        chunk: States drawn per call.
    """

    def __init__(self, renderer: BatchRenderer, chunk: int = RENDER_CHUNK) -> None:
        self.renderer = renderer
        self.size = (renderer.width, renderer.height)
        self._buffer = np.empty((chunk, renderer.height, renderer.width, 3), np.uint8)
        self._converter = I420Converter(renderer.width, renderer.height)
        self._video: object = None  # whose frames were converted last
        self._last_drawn: list[Box] = []  # where the renderer drew the frame converted last
        self._lock = threading.Lock()

    def planes(self, states: np.ndarray, video: object) -> Iterator[np.ndarray]:
        """The I420 planes of each state's frame, in order, for the video ``video`` (any object that
        stands for it): one array, refilled for each frame (use it before taking the next). A video
        other than the last one starts with a whole frame converted."""
        chunk = len(self._buffer)
        with self._lock:
            for start in range(0, len(states), chunk):
                part = states[start : start + chunk]
                if len(part) < chunk:  # the last state again: the whole buffer, so only what moved is repainted
                    part = np.concatenate([part, np.repeat(part[-1:], chunk - len(part), axis=0)])
                frames = self.renderer.render(part, out=self._buffer)
                drawn: list[list[Box]] = [[] for _ in range(chunk)]
                for index, *box in self.renderer.drawn_boxes:
                    drawn[index].append(tuple(box))  # type: ignore[arg-type]
                for frame, boxes in zip(frames[: len(states) - start], drawn):
                    if video is self._video:
                        changed = _merged(boxes + self._last_drawn)
                    else:
                        changed, self._video = [(0, self.size[1], 0, self.size[0])], video
                    self._last_drawn = boxes
                    yield self._converter.convert(frame, changed)


def _merged(boxes: list[Box]) -> list[Box]:
    """``boxes`` with those that overlap or nearly touch joined into their bounding box.

    >>> _merged([(0, 10, 0, 10), (5, 20, 8, 30), (100, 110, 100, 110)])
    [(0, 20, 0, 30), (100, 110, 100, 110)]
    """
    merged: list[Box] = []
    for box in sorted(boxes):
        top, bottom, left, right = box
        for index, (t, b, lft, r) in enumerate(merged):
            if (
                top <= b + _MERGE_GAP
                and t <= bottom + _MERGE_GAP
                and left <= r + _MERGE_GAP
                and lft <= right + _MERGE_GAP
            ):
                merged[index] = (min(t, top), max(b, bottom), min(lft, left), max(r, right))
                break
        else:
            merged.append(box)
    return merged
