"""When the next frame is due, and how many messages the whole process may send.

>>> throttle = FrameThrottle(fps=10)
>>> throttle.accept(now=0.0), throttle.accept(now=0.05), throttle.accept(now=0.1)
(True, False, True)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["PROCESS_BUDGET", "FrameThrottle", "MessageBudget", "check_fps"]


def check_fps(fps: float) -> float:
    """Return ``fps`` as a float if it is a number in (0, 120], else raise ValueError."""
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not 0 < fps <= 120:
        raise ValueError(f"fps must be a number above 0 and at most 120; got {fps!r}")
    return float(fps)


class FrameThrottle:
    """An fps limit stretched so that frames take at most ``max_overhead`` of the loop's time: a frame that
    costs ``c`` seconds comes at least ``c / max_overhead`` after the last. Used by one thread."""

    def __init__(
        self, fps: float = 30, max_overhead: float = 0.1, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        if isinstance(max_overhead, bool) or not isinstance(max_overhead, (int, float)) or not 0 < max_overhead <= 1:
            raise ValueError(f"max_overhead must be a fraction in (0, 1]; got {max_overhead!r}")
        self.fps = check_fps(fps)
        self._max_overhead = float(max_overhead)
        self.clock = clock
        self._cost, self._samples, self._last_accepted = 0.0, 0, -float("inf")  # smoothed seconds per frame
        self._spent = 0.0  # the share of the loop's time watching takes besides frames (spend())
        self.accepted = 0  # frames taken
        self.throttled = 0  # frames offered when none was due

    @property
    def interval(self) -> float:
        """Seconds between due frames."""
        return max(1.0 / self.fps, self._cost / (self._max_overhead - self._spent))

    def spend(self, share: float) -> None:
        """Watching takes ``share`` of the loop's time besides frames (a wrapper's own work at each step): frames
        get what is left of ``max_overhead``, and never less than a quarter of it, so a view of a loop whose steps
        cost less than its wrapper's work still shows frames.

        >>> throttle = FrameThrottle(fps=120, max_overhead=0.1)
        >>> throttle.record_cost(0.001); throttle.record_cost(0.001)  # the first sample is ignored
        >>> throttle.spend(0.05); round(throttle.interval, 3)   # 1 ms a frame in the 5% left
        0.02
        >>> throttle.spend(0.5); round(throttle.interval, 3)    # a quarter of the budget at least
        0.04
        """
        self._spent = min(max(0.0, share), 0.75 * self._max_overhead)

    def record_cost(self, seconds: float) -> None:
        """The last frame cost ``seconds``; not the first (a renderer's first opens windows), and at most 4x the
        estimate (one garbage collection cannot stall the view)."""
        self._samples += 1
        if self._samples > 1:
            self._cost = seconds if self._cost == 0.0 else self._cost + (min(seconds, 4 * self._cost) - self._cost) / 4

    def missed(self, now: float | None = None) -> None:
        """A due frame could not be made (its render raised): the next is due an interval from now, so a
        failing render is tried at the frame rate, not at every step.

        >>> throttle = FrameThrottle(fps=10)
        >>> throttle.missed(now=0.0); throttle.accept(now=0.05), throttle.accept(now=0.1), throttle.accepted
        (False, True, 1)
        """
        self._last_accepted = self.clock() if now is None else now

    def seconds_until_due(self, now: float | None = None) -> float:
        """How long until a frame is due (0 or less: due now)."""
        return self._last_accepted + self.interval - (self.clock() if now is None else now)

    def accept(self, now: float | None = None, force: bool = False) -> bool:
        """Count a frame offered now: True (and the interval restarts) if one is due or ``force``."""
        now = self.clock() if now is None else now
        if not force and self.seconds_until_due(now) > 0.0:
            self.throttled += 1
            return False
        self._last_accepted, self.accepted = now, self.accepted + 1
        return True


class MessageBudget:
    """A token bucket of messages per second, shared by every view in the process.

    >>> budget = MessageBudget(rate=2, burst=1)
    >>> budget.try_acquire(now=0.0), budget.try_acquire(now=0.1), budget.try_acquire(now=0.6)
    (True, False, True)
    """

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = float(rate), burst
        self._tokens, self._updated = float(burst), -float("inf")
        self._lock = threading.Lock()

    def try_acquire(self, now: float | None = None) -> bool:
        """Take one message from the budget; False when it is spent for now."""
        now = time.perf_counter() if now is None else now
        with self._lock:
            self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.rate)
            self._updated = now
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True


# A fifth of jupyter_server's iopub_msg_rate_limit (1000/s; past it the server drops output), whatever the
# number of views: the user's own prints and other widgets keep plenty of headroom.
PROCESS_BUDGET = MessageBudget(rate=200, burst=20)
