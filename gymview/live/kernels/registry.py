"""The LiveViews of this process, and what becomes of them in a child forked from it.

A child forked from the kernel (multiprocessing's fork, SB3's SubprocVecEnv, a NEAT pool) shares
the kernel's sockets: anything it sent would be dropped with a warning in the kernel's log. Every
view there becomes inert: no render, no encoder, no message, not even on close.

>>> from gymview.live.widget import LiveView
>>> view = LiveView()
>>> view in live_views()
True
>>> view.close(); view in live_views()
False
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

from gymview._internal.forks import after_fork_in_child
from gymview.live.kernels.thread_switches import switch_interval_lease

__all__ = ["add", "live_views", "remove"]

# open view -> what makes it inert in a forked child. Weak, so gymview keeps no view alive; ipywidgets
# itself holds every widget until it is closed.
_views: weakref.WeakKeyDictionary[Any, Callable[[Any], None]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def add(view: Any, go_inert: Callable[[Any], None]) -> None:
    """Count ``view`` as open (every ``LiveView`` adds itself when made); held weakly.

    Args:
        view: The view (weakly referable).
        go_inert: ``go_inert(view)`` is called in a child forked from this process, to make the view there
            send nothing.

    Examples:
        >>> class View: pass
        >>> view = View()
        >>> add(view, lambda view: None); view in live_views()
        True
        >>> remove(view)
    """
    with _lock:
        _views[view] = go_inert


def remove(view: Any) -> None:
    """Count ``view`` as closed; safe to call twice (every ``LiveView`` removes itself on close).

    Args:
        view: The view.

    Examples:
        >>> class View: pass
        >>> view = View()
        >>> add(view, lambda view: None); remove(view); remove(view)
        >>> view in live_views()
        False
    """
    with _lock:
        _views.pop(view, None)


def live_views() -> list[Any]:
    """List the LiveViews of this process that are not closed.

    Returns:
        The open views, oldest first.

    Examples:
        >>> import gymview
        >>> view = gymview.LiveView(title="mine")
        >>> [v.title for v in gymview.live_views() if v is view]
        ['mine']
        >>> view.close()
        >>> view in gymview.live_views()
        False
    """
    with _lock:
        return list(_views)


@after_fork_in_child
def _silence_views_in_forked_child() -> None:
    global _lock
    _lock = threading.Lock()  # another thread may have held it at the fork
    switch_interval_lease.after_fork()
    for view, go_inert in list(_views.items()):
        go_inert(view)
