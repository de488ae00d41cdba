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

import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any

from gymview._internal.forks import after_fork_in_child
from gymview.live.kernels.thread_switches import switch_interval_lease

__all__ = ["add", "comm_handlers", "live_views", "remove"]

# open view -> what makes it inert in a forked child, and what takes its pages' messages. Weak, so gymview keeps
# no view alive; ipywidgets itself holds every widget until it is closed.
_views: weakref.WeakKeyDictionary[Any, tuple[Callable[[Any], None], Callable[[Any, Any], None]]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


def add(view: Any, go_inert: Callable[[Any], None], receive: Callable[[Any, Any], None]) -> None:
    """Count ``view`` as open (every ``LiveView`` adds itself when made); held weakly.

    Args:
        view: The view (weakly referable).
        go_inert: ``go_inert(view)`` is called in a child forked from this process, to make the view there
            send nothing.
        receive: ``receive(view, content)`` takes a message from a page showing the view (:func:`comm_handlers`).

    Examples:
        >>> class View: pass
        >>> view = View()
        >>> add(view, lambda view: None, lambda view, content: None); view in live_views()
        True
        >>> remove(view)
    """
    with _lock:
        _views[view] = (go_inert, receive)


def remove(view: Any) -> None:
    """Count ``view`` as closed; safe to call twice (every ``LiveView`` removes itself on close).

    Args:
        view: The view.

    Examples:
        >>> class View: pass
        >>> view = View()
        >>> add(view, lambda view: None, lambda view, content: None); remove(view); remove(view)
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


def comm_handlers() -> dict[str, Callable[[Any], None]]:
    """Comm id -> message handler of every open view with a comm: a poll on ipykernel 6 delivers to all of them.

    Examples:
        >>> import gymview
        >>> view = gymview.LiveView()
        >>> view.comm.comm_id in comm_handlers()
        True
        >>> view.close()
    """
    with _lock:
        views = list(_views.items())
    return {
        view.comm.comm_id: functools.partial(receive, view)
        for view, (_, receive) in views
        if getattr(view, "comm", None) is not None
    }


@after_fork_in_child
def _silence_views_in_forked_child() -> None:
    global _lock
    _lock = threading.Lock()  # another thread may have held it at the fork
    switch_interval_lease.after_fork()
    for view, (go_inert, _) in list(_views.items()):
        go_inert(view)
