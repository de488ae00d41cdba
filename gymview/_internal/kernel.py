"""Where this code runs: the IPython shell, if any, and whether a notebook front-end that shows
widgets runs it: an IPython kernel (JupyterLab, Notebook 7, VS Code, Colab) or a marimo notebook
(``marimo edit``, ``marimo run``).

>>> in_kernel(), in_ipython_kernel(), in_marimo()   # a plain interpreter (or a test run)
(False, False, False)
"""

from __future__ import annotations

import sys
from typing import Any

from gymview._internal.forks import forked_child


def ipython_shell() -> Any:
    """The running IPython shell, or None; never imports IPython (nobody imported it: no shell)."""
    ipython = sys.modules.get("IPython")
    return None if ipython is None else ipython.get_ipython()


def in_kernel() -> bool:
    """True where a notebook front-end can show widgets: an IPython kernel or a marimo notebook.
    False in a process forked from one (it shares the kernel's sockets: anything it sent would be
    dropped)."""
    return in_ipython_kernel() or in_marimo()


def in_ipython_kernel() -> bool:
    """True inside an IPython kernel (ipykernel: comms, subshells, ``display``, ``%load_ext``);
    False in a process forked from one."""
    if forked_child():
        return False
    shell = ipython_shell()
    return shell is not None and getattr(shell, "kernel", None) is not None


def in_marimo() -> bool:
    """True while a marimo notebook runs this thread (a cell of ``marimo edit`` or ``marimo run``,
    or a thread marimo started with its context, ``mo.Thread``); never imports marimo (a marimo
    kernel has imported it). False in a process forked from one, and for ``python app.py``."""
    if forked_child():
        return False
    marimo = sys.modules.get("marimo")
    running = getattr(marimo, "running_in_notebook", None)
    if running is None:
        return False
    try:
        return bool(running())
    except Exception:  # a marimo whose runtime is half torn down (the kernel shutting down)
        return False
