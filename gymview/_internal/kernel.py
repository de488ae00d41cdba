"""Where this code runs: the IPython shell, if any, and whether it is a notebook kernel that can
show widgets.

>>> in_kernel()   # a plain interpreter (or a test run): no kernel
False
"""

from __future__ import annotations

import os
import sys
from typing import Any

_forked_child = False  # this process was forked from the one that imported this module


def _note_fork() -> None:
    global _forked_child
    _forked_child = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_note_fork)


def ipython_shell() -> Any:
    """The running IPython shell, or None; never imports IPython (nobody imported it: no shell)."""
    ipython = sys.modules.get("IPython")
    return None if ipython is None else ipython.get_ipython()


def in_kernel() -> bool:
    """True inside an IPython kernel, where a notebook front-end can show widgets; False in a
    process forked from one (it shares the kernel's sockets: anything it sent would be dropped)."""
    if _forked_child:
        return False
    shell = ipython_shell()
    return shell is not None and getattr(shell, "kernel", None) is not None


def in_forked_child() -> bool:
    """True in a process forked from the one that imported this module."""
    return _forked_child
