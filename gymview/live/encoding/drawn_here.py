"""draw_here: pictures of scene frames made in the kernel, those of OpenGL painters all on one thread.

Frames the page draws itself are drawn in the kernel too, now and then: for a page that has just rendered
(the watcher thread), for the still image left by ``close()`` and for ``save_clip`` (the caller's thread),
for a replay of an older scene (the thread that hears the page). A painter whose ``draws_with_opengl`` is
true (MuJoCo's) draws with an OpenGL context, which EGL lets be current on one thread only, and with one
``MjData``: its drawings go to one thread of this process, made when first needed (again in a forked child,
where it does not exist). Where MuJoCo renders through GLFW, which makes its windows only on a process's
main thread (a second one made on another thread crashes the process), they go to a helper process instead,
whose main thread draws them. Other painters (numpy's, which lock) draw in the calling thread.

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

from gymview.live.encoding.encoder_process import EncoderProcess

__all__ = ["draw_here", "draw_scene_here", "makes_glfw_windows"]

T = TypeVar("T")

_lock = threading.Lock()
_drawer: tuple[int, concurrent.futures.ThreadPoolExecutor] | None = None  # (the process it runs in, it)
_helper: tuple[int, EncoderProcess] | None = None  # the GLFW painters' helper: (the process it serves, it)
_helper_lock = threading.Lock()  # one drawing at a time in the helper
_adapters: weakref.WeakKeyDictionary[Any, dict[bool, _StatePicture]] = weakref.WeakKeyDictionary()


def makes_glfw_windows() -> bool:
    """Whether MuJoCo renders through GLFW here: ``MUJOCO_GL=glfw``, or unset where gymnasium tries GLFW
    first and it can work (an X or Wayland display, or macOS)."""
    backend = os.environ.get("MUJOCO_GL")
    if backend is not None:
        return backend == "glfw"
    return sys.platform == "darwin" or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def draw_here(painter: Any, draw: Callable[..., T], *args: Any) -> T:
    """``draw(*args)``, by ``painter``: on this process's one drawing thread for an OpenGL painter; its result,
    or its exception raised here."""
    if not getattr(painter, "draws_with_opengl", False):
        return draw(*args)
    global _drawer
    with _lock:
        if _drawer is None or _drawer[0] != os.getpid():
            _drawer = (os.getpid(), concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="gymview-draw"))
        executor = _drawer[1]
    if threading.current_thread().name.startswith("gymview-draw"):  # already there (a drawing that draws)
        return draw(*args)
    return executor.submit(draw, *args).result()


def draw_scene_here(painter: Any, state: np.ndarray, max_size: int | None = None, page_state: bool = False) -> Any:
    """``painter``'s picture of ``state`` (a ``page_state``: the poses a page draws, by ``paint_page_state``),
    at most ``max_size`` long where given: drawn by :func:`draw_here`, or for an OpenGL painter where MuJoCo
    renders through GLFW, by a helper process (a :class:`~gymview.errors.FrameError` says why it could not).

    >>> from gymview.renderers import renderer_for
    >>> draw_scene_here(renderer_for("CartPole-v1"), np.zeros(4), max_size=120).shape
    (80, 120, 3)
    """
    from gymview.image.frames import downsample

    if getattr(painter, "draws_with_opengl", False) and makes_glfw_windows():
        return _drawn_by_helper(painter, np.asarray(state, np.float64), max_size, page_state)
    if page_state:
        picture = draw_here(painter, painter.paint_page_state, state, max_size)
    else:
        picture = draw_here(painter, painter.paint, state, None)
    return downsample(picture, max_size) if max_size else picture


class _StatePicture:
    """A painter's picture of a state, or of a page state, as the helper process paints: ``paint(state, canvas)``."""

    def __init__(self, painter: Any, page_state: bool) -> None:
        self.painter = painter
        self.page_state = page_state

    def paint(self, state: np.ndarray, canvas: Any) -> np.ndarray:
        if self.page_state:
            return self.painter.paint_page_state(state)
        return self.painter.paint(state, None)


class _HelperFrame(NamedTuple):
    """A DeferredFrame for the helper process."""

    painter: _StatePicture
    state: np.ndarray

    def draw(self) -> np.ndarray:
        return self.painter.paint(self.state, None)

    def checked(self) -> _HelperFrame:
        return self


def _drawn_by_helper(painter: Any, state: np.ndarray, max_size: int | None, page_state: bool) -> np.ndarray:
    from PIL import Image

    global _helper
    with _lock:
        adapters = _adapters.setdefault(painter, {})
        adapter = adapters.get(page_state) or adapters.setdefault(page_state, _StatePicture(painter, page_state))
        if _helper is None or _helper[0] != os.getpid():
            if _helper is not None:
                _helper[1].forget_after_fork()
            _helper = (os.getpid(), EncoderProcess())
            atexit.register(_helper[1].close)
        helper = _helper[1]
    with _helper_lock:  # without max_size, the picture as drawn (no side is 65,535 pixels long)
        data, _, _ = helper.encode(_HelperFrame(adapter, state), max_size or 0xFFFF, "png", 0)
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
