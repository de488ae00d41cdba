"""How a child process ended, in the words gymview's errors use."""

from __future__ import annotations

import signal

__all__ = ["how_it_ended"]


def how_it_ended(exit_status: int) -> str:
    """How a process ended, from its exit status (negative: the signal that killed it, as subprocess and
    multiprocessing report it).

    >>> how_it_ended(3), how_it_ended(-9), how_it_ended(-int(signal.SIGRTMIN) - 2)
    ('exit code 3', 'killed by SIGKILL', 'killed by signal 36')
    """
    if exit_status >= 0:
        return f"exit code {exit_status}"
    try:
        return f"killed by {signal.Signals(-exit_status).name}"
    except ValueError:  # a real-time signal, which has no name
        return f"killed by signal {-exit_status}"
