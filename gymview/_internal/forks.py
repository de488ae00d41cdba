"""What a child forked from this process does first, in one place.

A forked child holds copies of its parent's locks (maybe held by a thread that is not in the child), threads'
bookkeeping, zmq sockets and helper processes: none of them is the child's to use. Each module that keeps such
state registers here what the child forgets, with :func:`after_fork_in_child`; one hook given to
``os.register_at_fork`` runs them in the order they were registered (the order of the imports: the modules
others build on first), each one even when one before it failed.

>>> forked_child()
False
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

__all__ = ["after_fork_in_child", "forked_child"]

_in_child: list[Callable[[], None]] = []
_forked = False  # this process was forked from the one that imported this module


def after_fork_in_child(forget: Callable[[], None]) -> Callable[[], None]:
    """Have ``forget()`` run in every child forked from this process, before the child goes on; returns
    ``forget``, so it serves as a decorator.

    >>> @after_fork_in_child
    ... def forget_the_parents_sockets():
    ...     pass
    >>> forget_the_parents_sockets in _in_child
    True
    """
    _in_child.append(forget)
    return forget


def forked_child() -> bool:
    """Whether this process was forked from the one that imported gymview (its kernel is the parent's)."""
    return _forked


def _run_in_child() -> None:
    global _forked
    _forked = True
    for forget in list(_in_child):
        try:
            forget()
        except Exception:  # the others still run: a child that kept its parent's state would use it
            print(f"gymview: in a forked child, {forget.__qualname__} failed:", file=sys.stderr)
            traceback.print_exc()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_run_in_child)
