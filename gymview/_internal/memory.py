"""Give the C heap's free memory back to the operating system now and then (glibc only).

Frames of hundreds of kilobytes are allocated on the loop's thread and freed on others (the
encoder hand-off, the video feed). glibc keeps memory freed that way in its arenas instead of
returning it, so a long-running kernel grows while Python's own objects stay flat
(docs/performance-log.md, benchmarks/soak.py).

>>> trimmer = HeapTrimmer(period=10.0)
>>> _ = trimmer(now=0.0)
>>> trimmer(now=5.0)  # within the period: nothing to do
False
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from collections.abc import Callable

__all__ = ["HeapTrimmer", "give_back_free_memory"]


def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim  # the C library the process already runs on
    except (OSError, AttributeError):  # musl and others have no malloc_trim: nothing to do
        return None


class HeapTrimmer:
    """Calls ``malloc_trim(0)`` at most once per ``period`` seconds, whichever thread asks; a call
    returns True when it trimmed. A trim walks the heap (milliseconds, with the GIL released), so
    threads that handle frames ask from their own loops, not the user's."""

    def __init__(self, period: float) -> None:
        self.period = period
        self._trim = _malloc_trim()
        self._lock = threading.Lock()
        self._next = -float("inf")

    def __call__(self, now: float | None = None) -> bool:
        if self._trim is None:
            return False
        now = time.monotonic() if now is None else now
        with self._lock:
            if now < self._next:
                return False
            self._next = now + self.period
        self._trim(0)
        return True


give_back_free_memory = HeapTrimmer(period=10.0)
