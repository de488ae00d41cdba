"""What a frame costs the loop beyond the time spent making it: the two costs that timing the frame
itself cannot see, measured where the loop runs.

:class:`RunQueueWait` reads how long the loop's thread waited for a core (Linux's per-thread
``schedstat``): on a small machine the helper process, the Jupyter server and the browser take their
cores from the loop while they handle its frames. :class:`AfterFrameCost` keeps what the first step
after a frame takes over the step after it: caches the frame's work left cold, and the GIL the
frame's message hands to the IOPub thread.

>>> waits = iter([1.0, 1.25])
>>> wait = RunQueueWait(read=lambda: next(waits))
>>> wait.since_last(), wait.since_last()   # the first reading compares with nothing
(0.0, 0.25)
"""

from __future__ import annotations

import collections
import statistics
import threading
from collections.abc import Callable

__all__ = ["AfterFrameCost", "RunQueueWait", "thread_run_queue_seconds"]

SCHEDSTAT = "/proc/thread-self/schedstat"  # "<on-CPU ns> <waiting on a run queue ns> <time slices>"


def thread_run_queue_seconds() -> float | None:
    """Seconds the calling thread has waited for a core while runnable since it started, or None where the
    system does not say (not Linux, or a kernel without scheduler statistics).

    Examples:
        >>> waited = thread_run_queue_seconds()
        >>> waited is None or waited >= 0.0
        True
    """
    try:
        with open(SCHEDSTAT, "rb") as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class RunQueueWait:
    """How long the calling thread waited for a core between two calls: a loop whose thread is runnable but
    waits pays that time, whoever took the core.

    ``read()`` gives the calling thread's total wait (:func:`thread_run_queue_seconds`, or readings a test
    injects; None: nothing to read, ever). A call from another thread than the last compares with nothing.

    Args:
        read: Where the readings come from.
        thread_id: Which thread calls (``threading.get_ident``).

    Examples:
        >>> RunQueueWait(read=lambda: None).since_last()     # nothing to read here: no wait is counted
        0.0
    """

    def __init__(self, read: Callable[[], float | None] | None = thread_run_queue_seconds,
                 thread_id: Callable[[], int] = threading.get_ident) -> None:
        self.read = read
        self._thread_id = thread_id
        self._last: tuple[int, float] | None = None  # (thread, its total wait) at the last call

    def restart(self) -> None:
        """Count from now: the wait so far is counted elsewhere."""
        self.since_last()

    def since_last(self) -> float:
        """Seconds the calling thread waited for a core since the last call (0 for a first call)."""
        if self.read is None:
            return 0.0
        total = self.read()
        if total is None:
            self.read = None
            return 0.0
        thread = self._thread_id()
        last, self._last = self._last, (thread, total)
        if last is None or last[0] != thread or total < last[1]:
            return 0.0
        return total - last[1]


# Frames looked back on: the median ignores a step that reset its episode (much slower than the next).
SAMPLES = 9
# The fewest frames the estimate stands on.
LEAST_SAMPLES = 3
# A first step slower than this many times the second, plus a millisecond, was held up by more than the
# frame (the loop waited between two cells, or for a core): its wait is the run queue's to count.
SLOWER = 10


class AfterFrameCost:
    """What the first step after a frame costs over the second: the loop's time that the frame takes
    after it was made. The median of the last few frames' differences, never below 0, once there are three.

    Examples:
        >>> cost = AfterFrameCost()
        >>> for first, second in [(0.00012, 0.00002), (0.00011, 0.00002), (0.001, 0.00002), (5.0, 0.00002)]:
        ...     cost.add(first, second)
        >>> round(cost.seconds, 6)   # an outlier (a reset) moves the median little; 5 s between two cells is left out
        0.0001
    """

    def __init__(self) -> None:
        self._differences: collections.deque[float] = collections.deque(maxlen=SAMPLES)
        self.seconds = 0.0
        """The estimate: seconds the loop pays after each frame."""

    def add(self, first_step: float, second_step: float, restart: RunQueueWait | None = None) -> None:
        """Record the seconds the two steps after a frame took. A first step held up by more than the frame is
        left out; otherwise ``restart`` counts its wait afresh: what it waited so far is in this difference."""
        if first_step > SLOWER * second_step + 0.001:
            return
        if restart is not None:
            restart.restart()
        self._differences.append(first_step - second_step)
        if len(self._differences) >= LEAST_SAMPLES:
            self.seconds = max(0.0, statistics.median(self._differences))
