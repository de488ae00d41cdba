"""draw_here: pictures of scene frames made in the kernel, those of OpenGL painters all on one thread.

Frames the page draws itself are drawn in the kernel too, now and then: for a page that has just rendered
(the watcher thread), for the still image left by ``close()`` and for ``save_clip`` (the caller's thread),
for a replay of an older scene (the thread that hears the page). A painter whose ``draws_with_opengl`` is
true (MuJoCo's) draws with an OpenGL context, which EGL lets be current on one thread only, and with one
``MjData``: its drawings go to one thread of this process, made when first needed (again in a forked child,
where it does not exist). Other painters (numpy's, which lock) draw in the calling thread.

>>> class Sum:
...     draws_with_opengl = True
...     def paint(self, a, b): return a + b
>>> draw_here(Sum(), Sum().paint, 2, 3)
5
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["draw_here"]

T = TypeVar("T")

_lock = threading.Lock()
_drawer: tuple[int, concurrent.futures.ThreadPoolExecutor] | None = None  # (the process it runs in, it)


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
