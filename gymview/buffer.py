"""Thread-safe hand-over of frames from the user's loop to the stream thread.

:class:`FrameBuffer` is a single slot: the latest frame wins, so memory stays O(1) however fast
the loop steps. It also decides when the next frame is *due* (the fps throttle, stretched when
rendering eats more than its share of the loop), so callers can skip rendering frames that
nobody would see. :class:`MessageBudget` caps the widget messages of the whole process far
below the Jupyter server's IOPub limit (1000 messages/s over 3 s, after which it drops output).

>>> buffer = FrameBuffer(fps=10)
>>> buffer.offer("frame 1", {}, now=0.0), buffer.offer("frame 2", {}, now=0.05)
(True, False)
>>> buffer.take(timeout=0)
('frame 1', {})
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["FrameBuffer", "MessageBudget", "PROCESS_BUDGET"]


def check_fps(fps: float) -> float:
    """Return ``fps`` as a float if it is a number in (0, 120], else raise ValueError."""
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not 0 < fps <= 120:
        raise ValueError(f"fps must be a number above 0 and at most 120; got {fps!r}")
    return float(fps)


class FrameBuffer:
    """Latest-frame-wins slot with an fps throttle and an overhead budget.

    ``max_overhead`` is the share of the loop's wall time that producing frames may take: when a
    render costs ``c`` seconds, frames are spaced at least ``c / max_overhead`` apart, so a slow
    renderer lowers the frame rate instead of the loop's speed.
    """

    def __init__(self, fps: float = 30, max_overhead: float = 0.1) -> None:
        if not 0 < max_overhead <= 1:
            raise ValueError(f"max_overhead must be a fraction in (0, 1]; got {max_overhead!r}")
        self._interval = 1.0 / check_fps(fps)
        self._max_overhead = max_overhead
        self._cost = 0.0  # smoothed seconds the caller spends producing one frame
        self._samples = 0
        self._condition = threading.Condition()
        self._item: tuple[Any, dict[str, Any]] | None = None
        self._last_accepted = -float("inf")
        self._woken = False
        self._in_hand = False
        self.retired = False  # set by a taker that gave up waiting; see take(retire=True)
        self.accepted = 0  # frames kept for sending; the count doubles as each frame's ticket
        self.taken = 0  # the ticket of the frame take() returned last
        self.replaced = 0  # kept frames replaced by a newer one before they were sent
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
        now = time.perf_counter() if now is None else now
        return self._last_accepted + self.interval - now

    def offer(self, frame: Any, info: dict[str, Any], now: float | None = None, force: bool = False) -> bool:
        """Keep ``frame`` if one is due (or ``force``), replacing an unsent one; never blocks. True if kept."""
        now = time.perf_counter() if now is None else now
        if not force and not self.due(now):
            self.throttled += 1
            return False
        with self._condition:
            if self._item is not None:
                self.replaced += 1
            self._item = (frame, info)
            self._last_accepted = now
            self.accepted += 1
            self._condition.notify()
        return True

    def take(self, timeout: float | None = None, retire: bool = False) -> tuple[Any, dict[str, Any]] | None:
        """Remove and return the waiting (frame, info); wait up to ``timeout`` s (None: until woken).

        Like :class:`queue.Queue`, the taker calls :meth:`task_done` when it has handled the
        frame, so that :meth:`join` can tell when everything offered was handled. With
        ``retire=True`` a taker that waited in vain sets :attr:`retired` atomically with finding
        the slot empty, so whoever offers next knows it must start a new taker.
        """
        with self._condition:
            if self._item is None and not self._woken:
                self._condition.wait(timeout)
            if retire and self._item is None and not self._woken:
                self.retired = True
                return None
            item, self._item = self._item, None
            if item is not None:
                self.taken = self.accepted  # the slot only ever holds the newest frame
            self._in_hand = item is not None or self._woken
            self._woken = False
            return item

    def task_done(self) -> None:
        with self._condition:
            self._in_hand = False
            self._condition.notify_all()

    def join(self, timeout: float) -> bool:
        """Wait until nothing waits or is being handled; False if ``timeout`` s passed first."""
        with self._condition:
            return self._condition.wait_for(
                lambda: self._item is None and not self._in_hand and not self._woken, timeout
            )

    def wake(self) -> None:
        """Make a waiting :meth:`take` return now (with None if no frame is waiting).

        The taker then calls :meth:`task_done` too, so :meth:`join` also waits for the work the
        wake-up was for (a resend, say).
        """
        with self._condition:
            self._woken = True
            self._condition.notify_all()


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
