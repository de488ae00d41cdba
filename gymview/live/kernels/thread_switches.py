"""Quicker hand-overs of the GIL while a live view is open in a kernel.

A cell that keeps the interpreter busy (a watched loop) lets another thread run only when that
thread asks for the GIL and ``sys.getswitchinterval()`` (5 ms by default) has passed. ipykernel's
shell-channel thread needs the GIL many times to take in one message, so a click waited for dozens
of those turns. While frames flow to any live view in a kernel (its stream's watcher runs) the interval
is 1 ms (clicks are heard several times sooner, the loop runs as fast: docs/performance-log.md), and the
user's own setting comes back when the last stream goes quiet: a view closed, stopped, or left open
with nothing to show for 10 s.

>>> import sys
>>> switches = SwitchIntervalLease()
>>> before = sys.getswitchinterval()
>>> switches.hold(); sys.getswitchinterval()
0.001
>>> switches.release(); sys.getswitchinterval() == before
True
"""

from __future__ import annotations

import math
import sys
import threading

QUICK_SECONDS = 0.001


class SwitchIntervalLease:
    """Counts holders; the first sets a 1 ms switch interval, the last puts the previous one back.

    An interval the user set meanwhile is left as it is, and one already at or under 1 ms is never changed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._restore: float | None = None  # the interval to put back, when this lowered it

    def hold(self) -> None:
        with self._lock:
            self._holders += 1
            current = sys.getswitchinterval()
            if self._holders == 1 and current > QUICK_SECONDS:
                self._restore = current
                sys.setswitchinterval(QUICK_SECONDS)

    def hold_while(self, active: bool) -> None:
        """:meth:`hold` when ``active``, else :meth:`release` (a stream's watcher starting and ending)."""
        if active:
            self.hold()
        else:
            self.release()

    def release(self) -> None:
        with self._lock:
            self._holders = max(0, self._holders - 1)
            if self._holders == 0 and self._restore is not None:
                if math.isclose(sys.getswitchinterval(), QUICK_SECONDS):
                    sys.setswitchinterval(self._restore)
                self._restore = None

    def after_fork(self) -> None:
        """In a forked child (no live view to click): no holder, the previous interval back, a new lock
        (another thread may have held the parent's at the fork)."""
        self._lock = threading.Lock()
        self._holders = 0
        if self._restore is not None and math.isclose(sys.getswitchinterval(), QUICK_SECONDS):
            sys.setswitchinterval(self._restore)
        self._restore = None


switch_interval_lease = SwitchIntervalLease()
"""The process's one counter: every LiveView in a kernel holds it while its frames flow."""
