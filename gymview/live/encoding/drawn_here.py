"""Pictures of scene frames made in the kernel, those of OpenGL painters all on one thread, or in a helper.

Frames the page draws itself are drawn in the kernel too, now and then: for a page that has just rendered
(the watcher thread), for the still image left by ``close()`` and for ``save_clip`` (the caller's thread),
for a replay of an older scene (the thread that hears the page). A painter whose ``draws_with_opengl`` is
true (MuJoCo's) draws with an OpenGL context, which EGL lets be current on one thread only, and with one
``MjData``: its drawings go to one thread of this process, made when first needed (again in a forked child,
where it does not exist). Where MuJoCo renders through GLFW, which makes its windows only on a process's
main thread (and which a MuJoCo env's ``close()`` ends for the whole process), they go to a helper process
of their own instead, whose main thread draws them. Other painters (numpy's, which lock) draw in the
calling thread.

>>> class Sum:
...     draws_with_opengl = True
...     def paint(self, a, b): return a + b
>>> draw_here(Sum(), Sum().paint, 2, 3)
5
"""

from __future__ import annotations

import atexit
import concurrent.futures
import io
import os
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np

from gymview._internal.forks import after_fork_in_child
from gymview.errors import EncoderProcessError
from gymview.image.frames import downsample
from gymview.live.encoding.deferred import DeferredFrame
from gymview.live.encoding.encoder_process import EncoderProcess

__all__ = ["draw_frame_here", "draw_here", "draw_scene_here", "makes_glfw_windows"]

T = TypeVar("T")

_NO_LIMIT = 0xFFFF  # the helper's max_size for a picture drawn as large as it is (no side is this long)
_PAINT, _PAGE_STATE = 0.0, 1.0  # what the helper draws: the first number of the state it is sent


class _Drawers:
    """This process's drawing thread and GLFW painters' helper; made anew in a forked child."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.thread: concurrent.futures.ThreadPoolExecutor | None = None
        self.helper: EncoderProcess | None = None
        self.helper_lock = threading.Lock()  # one drawing at a time in the helper
        self.no_helper = False  # a helper could not be started here: OpenGL painters draw on the thread
        # a painter's stand-in for the helper, kept while the helper holds it (it holds the painter)
        self.stand_ins: weakref.WeakValueDictionary[int, _StatePicture] = weakref.WeakValueDictionary()


_drawers = _Drawers()


@after_fork_in_child
def _forget_in_child() -> None:
    global _drawers
    parents = _drawers
    _drawers = _Drawers()  # the parent's locks may have been held by its other threads
    if parents.helper is not None:
        parents.helper.forget_after_fork()


def makes_glfw_windows() -> bool:
    """Whether MuJoCo renders through GLFW here: ``MUJOCO_GL=glfw``, or unset where gymnasium tries GLFW
    first and it can work (an X or Wayland display, macOS, Windows)."""
    backend = os.environ.get("MUJOCO_GL")
    if backend is not None:
        return backend == "glfw"
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def draw_here(painter: Any, draw: Callable[..., T], *args: Any) -> T:
    """``draw(*args)``, by ``painter``: on this process's one drawing thread for an OpenGL painter; its result,
    or its exception raised here."""
    if not getattr(painter, "draws_with_opengl", False):
        return draw(*args)
    drawers = _drawers
    with drawers.lock:
        if drawers.thread is None:
            drawers.thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="gymview-draw")
        executor = drawers.thread
    if threading.current_thread().name.startswith("gymview-draw"):  # already there (a drawing that draws)
        return draw(*args)
    return executor.submit(draw, *args).result()


def draw_frame_here(frame: DeferredFrame, max_size: int | None = None) -> np.ndarray:
    """``frame.draw()``, at most ``max_size`` long where given, made as :func:`draw_scene_here` makes it.

    >>> from gymview.renderers import Drawing, renderer_for
    >>> draw_frame_here(Drawing(renderer_for("CartPole-v1"), np.zeros(4)), max_size=120).shape
    (80, 120, 3)
    """
    picture = _helper_picture(frame.painter, frame.state, None, _PAINT)
    if picture is None:
        picture = draw_here(frame.painter, frame.draw)
    return downsample(picture, max_size) if max_size else picture


def draw_scene_here(
    painter: Any, state: np.ndarray, max_size: int | None = None, page_state: bool = False
) -> np.ndarray:
    """``painter``'s picture of ``state`` (a ``page_state``: the poses a page draws, by ``paint_page_state``),
    at most ``max_size`` long where given: drawn by :func:`draw_here`, or for an OpenGL painter where MuJoCo
    renders through GLFW, by a helper process (a :class:`~gymview.errors.FrameError` says why it could not).

    >>> from gymview.renderers import renderer_for
    >>> draw_scene_here(renderer_for("CartPole-v1"), np.zeros(4), max_size=120).shape
    (80, 120, 3)
    """
    picture = _helper_picture(painter, state, max_size, _PAGE_STATE if page_state else _PAINT)
    if picture is None:
        if page_state:
            picture = draw_here(painter, painter.paint_page_state, state, max_size)
        else:
            picture = draw_here(painter, painter.paint, state, None)
    return downsample(picture, max_size) if max_size else picture


class _StatePicture:
    """A painter as the helper process draws it: ``paint(state, canvas, max_size)`` of a state whose first
    number says whether the rest is a state to ``paint`` or a page state to ``paint_page_state``."""

    draws_to_max_size = True

    def __init__(self, painter: Any) -> None:
        self.painter = painter

    def paint(self, state: np.ndarray, canvas: Any, max_size: int = _NO_LIMIT) -> np.ndarray:
        if state[0] == _PAGE_STATE:
            return self.painter.paint_page_state(state[1:], None if max_size >= _NO_LIMIT else max_size)
        return self.painter.paint(state[1:], None)


class _HelperFrame(NamedTuple):
    """A DeferredFrame for the helper process."""

    painter: _StatePicture
    state: np.ndarray

    def draw(self) -> np.ndarray:
        return self.painter.paint(self.state, None)

    def checked(self) -> _HelperFrame:
        return self


def _helper_picture(painter: Any, state: np.ndarray, max_size: int | None, mode: float) -> np.ndarray | None:
    """The picture drawn by the helper process, or None where it is not the one to draw it: a painter
    without OpenGL, MuJoCo not through GLFW, or no helper could be started here."""
    from PIL import Image

    if not (getattr(painter, "draws_with_opengl", False) and makes_glfw_windows()):
        return None
    drawers = _drawers
    with drawers.lock:
        if drawers.no_helper:
            return None
        if drawers.helper is None:
            drawers.helper = EncoderProcess()
            atexit.register(drawers.helper.close)
        helper = drawers.helper
        stand_in = drawers.stand_ins.get(id(painter))  # alive, it keeps the painter alive: the id is its
        if stand_in is None:
            stand_in = drawers.stand_ins[id(painter)] = _StatePicture(painter)
    frame = _HelperFrame(stand_in, np.concatenate([[mode], np.asarray(state, np.float64)]))
    with drawers.helper_lock:
        try:
            data, _, _ = helper.encode(frame, max_size or _NO_LIMIT, "png", 0)
        except EncoderProcessError:
            if helper.has_run:
                raise
            drawers.no_helper = True  # drawn on the thread, as without GLFW: a picture at some risk, not none
            return None
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
