"""When is the next frame due, and how many messages may the process send.

:class:`FrameThrottle` decides when a frame is *due* (the fps limit, stretched when producing
frames eats more than its share of the loop), so callers skip rendering frames nobody would see.
:class:`MessageBudget` caps the widget messages of the whole process far below the Jupyter
server's IOPub limit (1000 messages/s over 3 s, after which it drops output).

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
    """An fps limit with an overhead budget; used by one producer thread.

    ``max_overhead`` is the share of the loop's wall time that producing frames may take: when a
    render costs ``c`` seconds, frames are spaced at least ``c / max_overhead`` apart, so a slow
    renderer lowers the frame rate instead of the loop's speed. ``clock`` tells the time.
    """

    def __init__(
        self, fps: float = 30, max_overhead: float = 0.1, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        if isinstance(max_overhead, bool) or not isinstance(max_overhead, (int, float)) or not 0 < max_overhead <= 1:
            raise ValueError(f"max_overhead must be a fraction in (0, 1]; got {max_overhead!r}")
        self._interval = 1.0 / check_fps(fps)
        self._max_overhead = float(max_overhead)
        self.clock = clock
        self._cost = 0.0  # smoothed seconds the caller spends producing one frame
        self._samples = 0
        self._last_accepted = -float("inf")
        self.accepted = 0  # frames taken for sending
        self.throttled = 0  # frames offered when none was due

    @property
    def fps(self) -> float:
        return 1.0 / self._interval

    @fps.setter
    def fps(self, value: float) -> None:
        self._interval = 1.0 / check_fps(value)

    @property
    def interval(self) -> float:
        """Seconds between due frames: the fps interval, or longer when frames are costly."""
        return max(self._interval, self._cost / self._max_overhead)

    def record_cost(self, seconds: float) -> None:
        """Tell the throttle how long producing the last frame took.

        The first sample is ignored (a renderer's first call opens windows, loads fonts...), and
        each later one is capped at 4x the running estimate, so one slow frame (a garbage
        collection, say) cannot stall the view; the estimate follows real changes in ~4 frames.
        """
        self._samples += 1
        if self._samples == 1:
            return
        if self._cost == 0.0:
            self._cost = seconds
        else:
            self._cost += (min(seconds, 4 * self._cost) - self._cost) / 4

    def due(self, now: float | None = None) -> bool:
        """True when a frame offered now would be accepted."""
        return self.seconds_until_due(now) <= 0.0

    def seconds_until_due(self, now: float | None = None) -> float:
        """How long until a frame is due (0 or less: due now)."""
        now = self.clock() if now is None else now
        return self._last_accepted + self.interval - now

    def accept(self, now: float | None = None, force: bool = False) -> bool:
        """Count a frame offered now: True (and the clock restarts) if one is due or ``force``."""
        now = self.clock() if now is None else now
        if not force and not self.due(now):
            self.throttled += 1
            return False
        self._last_accepted = now
        self.accepted += 1
        return True


class MessageBudget:
    """Token bucket of messages per second, shared by every view in the process.

    >>> budget = MessageBudget(rate=2, burst=1)
    >>> budget.try_acquire(now=0.0), budget.try_acquire(now=0.1), budget.try_acquire(now=0.6)
    (True, False, True)
    """

    def __init__(self, rate: float, burst: int) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"a message budget needs rate > 0 and burst >= 1; got {rate!r}, {burst!r}")
        self.rate = float(rate)
        self.burst = burst
        self._tokens = float(burst)
        self._updated: float | None = None
        self._lock = threading.Lock()

    def try_acquire(self, now: float | None = None) -> bool:
        """Take one message from the budget; False when it is spent for now."""
        now = time.perf_counter() if now is None else now
        with self._lock:
            if self._updated is not None:
                self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.rate)
            self._updated = now
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True


# A fifth of jupyter_server's default iopub_msg_rate_limit (1000/s), whatever the number of views,
# so the user's own prints and other widgets keep plenty of headroom.
PROCESS_BUDGET = MessageBudget(rate=200, burst=20)
