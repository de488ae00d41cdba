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

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any


__all__ = ["FrameThrottle", "HelperShare", "MessageBudget", "PROCESS_BUDGET", "RelayCost", "check_fps", "cpu_seconds",
           "jupyter_server_cpu_seconds", "torch_saturates_cores"]


def check_fps(fps: float) -> float:
    """Return ``fps`` as a float if it is a number in (0, 120], else raise ValueError."""
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not 0 < fps <= 120:
        raise ValueError(f"fps must be a number above 0 and at most 120; got {fps!r}")
    return float(fps)


def torch_saturates_cores() -> bool:
    """True when this process runs torch with a thread for every physical core it may use
    (torch's default).

    Then, while torch trains, a frame's work in the helper process is taken from the loop: torch's
    threads meet at every parallel operation, and one that waits for a core holds up the others
    (docs/performance.md).
    """
    torch = sys.modules.get("torch")
    get_num_threads = getattr(torch, "get_num_threads", None)
    if get_num_threads is None:
        return False
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        import psutil  # ipykernel and marimo depend on it; gymview does not
    except ImportError:
        physical = usable
    else:
        physical = psutil.cpu_count(logical=False) or usable
    return get_num_threads() >= min(usable, physical)


def cpu_seconds(pid: int | None) -> tuple[float, float]:
    """The machine's idle time, summed over its cores, and process ``pid``'s CPU time (0 for None or a
    process that ended), in seconds since boot and since that process started."""
    import psutil  # only where frames go out: ipykernel and marimo both depend on it

    times = psutil.cpu_times()
    idle = times.idle + getattr(times, "iowait", 0.0)
    if pid is None:
        return idle, 0.0
    try:
        used = psutil.Process(pid).cpu_times()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return idle, 0.0
    return idle, used.user + used.system


class HelperShare:
    """The share of the helper process's time per frame that the loop pays for, on this machine now.

    The helper draws a frame on one core. Over each ``period`` it compares what the rest of the
    machine left free, the idle cores plus the helper's own use, with the core the helper needs:
    ``share = 1 - free`` (between 0 and 1). On 16 idle cores the helper costs the loop nothing
    (share 0); on 2 cores where the loop holds one and the page (Chromium, the Jupyter server) half
    of the other, half of the helper's time is taken from the loop or from what serves it (share
    0.5), so half of it counts against ``max_overhead``. Leaving the helper's own use out of ``free``
    keeps the share from swinging with the frame rate it sets.

    ``read(pid)`` gives (idle seconds over all cores, the helper's CPU seconds): :func:`cpu_seconds`,
    or readings a test injects; :meth:`sample` is the arithmetic, with no clock.

    Args:
        read: Where the readings come from.
        period: Seconds between readings (each costs two small /proc reads).
        clock: The time of a reading.

    Examples:
        >>> share = HelperShare(read=None)
        >>> share.sample(0.0, idle=100.0, helper=5.0)        # the first reading: nothing to compare
        0.0
        >>> share.sample(1.0, idle=100.25, helper=5.25)      # 0.25 idle cores + 0.25 used by the helper
        0.5
        >>> share.sample(2.0, idle=101.75, helper=5.5)       # 1.5 idle cores: a core to spare
        0.0
    """

    def __init__(self, read: Callable[[int | None], tuple[float, float]] | None = cpu_seconds,
                 period: float = 0.5, clock: Callable[[], float] = time.perf_counter) -> None:
        self.read = read
        self.period = float(period)
        self.clock = clock
        self.share = 0.0
        self._last: tuple[float, float, float] | None = None  # (time, idle, helper) of the last reading
        self._pid: int | None = None

    def update(self, pid: int | None) -> float:
        """Read the machine again if ``period`` has passed (the helper being process ``pid``); the share."""
        now = self.clock()
        if self.read is None or (self._last is not None and now - self._last[0] < self.period):
            return self.share
        if pid != self._pid:  # a new helper: its CPU time starts again from zero
            self._pid, self._last = pid, None
        return self.sample(now, *self.read(pid))

    def sample(self, now: float, idle: float, helper: float) -> float:
        """Take a reading (seconds since some origin, like :func:`cpu_seconds`); the share it gives."""
        last, self._last = self._last, (now, idle, helper)
        if last is not None and now > last[0] and helper >= last[2]:
            free = (idle - last[1] + helper - last[2]) / (now - last[0])
            self.share = min(1.0, max(0.0, 1.0 - free))
        return self.share


_server: Any = None  # the Jupyter server's psutil.Process, False when there is none


def jupyter_server_cpu_seconds() -> float | None:
    """The CPU seconds of the Jupyter server that started this kernel (the kernel's parent, when its
    command line names Jupyter), or None where there is none to read (VS Code, Colab, no kernel)."""
    global _server
    import psutil  # only where frames go out: ipykernel and marimo both depend on it

    try:
        if _server is None:
            parent = psutil.Process(os.getppid())
            _server = parent if any("jupyter" in part for part in parent.cmdline()) else False
        if _server is False:
            return None
        used = _server.cpu_times()
    except (psutil.NoSuchProcess, psutil.AccessDenied, OSError):
        _server = False
        return None
    return used.user + used.system


class RelayCost:
    """The Jupyter server's CPU time per frame sent: relaying each frame to the page costs it a
    share of a core (about a third at 30 frames/s on a small machine), which on a machine with no
    idle core is taken from the loop like the helper's.

    ``read()`` gives the server's CPU seconds (:func:`jupyter_server_cpu_seconds`, or readings a test
    injects; None: no server to read); :meth:`sample` is the arithmetic, with no clock.

    Args:
        read: Where the readings come from.
        period: Seconds between readings.
        clock: The time of a reading.

    Examples:
        >>> relay = RelayCost(read=None)
        >>> relay.sample(0.0, server=10.0, frames=0)     # the first reading: nothing to compare
        0.0
        >>> relay.sample(1.0, server=10.3, frames=30)    # 0.3 s of the server's CPU for 30 frames
        0.01
        >>> relay.sample(2.0, server=10.4, frames=30)    # no frame sent meanwhile: the estimate stays
        0.01
    """

    def __init__(self, read: Callable[[], float | None] | None = jupyter_server_cpu_seconds,
                 period: float = 0.5, clock: Callable[[], float] = time.perf_counter) -> None:
        self.read = read
        self.period = float(period)
        self.clock = clock
        self.per_frame = 0.0
        self._last: tuple[float, float, int] | None = None  # (time, server seconds, frames) of the last reading

    def update(self, frames: int) -> float:
        """Read the server again if ``period`` has passed (``frames``: sent so far); seconds per frame."""
        now = self.clock()
        if self.read is None or (self._last is not None and now - self._last[0] < self.period):
            return self.per_frame
        server = self.read()
        if server is None:
            self.read = None  # nothing to read here, ever
            return self.per_frame
        return self.sample(now, server, frames)

    def sample(self, now: float, server: float, frames: int) -> float:
        """Take a reading; the server's seconds per frame it gives."""
        last, self._last = self._last, (now, server, frames)
        if last is not None and frames > last[2] and server >= last[1]:
            self.per_frame = round((server - last[1]) / (frames - last[2]), 9)
        return self.per_frame


class FrameThrottle:
    """An fps limit with an overhead budget; used by one producer thread.

    ``max_overhead`` is the share of the loop's wall time that producing frames may take: when a
    render costs ``c`` seconds, frames are spaced at least ``c / max_overhead`` apart, so a slow
    renderer lowers the frame rate instead of the loop's speed.
    """

    def __init__(self, fps: float = 30, max_overhead: float = 0.1) -> None:
        if isinstance(max_overhead, bool) or not isinstance(max_overhead, (int, float)) or not 0 < max_overhead <= 1:
            raise ValueError(f"max_overhead must be a fraction in (0, 1]; got {max_overhead!r}")
        self._interval = 1.0 / check_fps(fps)
        self._max_overhead = float(max_overhead)
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
        now = time.perf_counter() if now is None else now
        return self._last_accepted + self.interval - now

    def accept(self, now: float | None = None, force: bool = False) -> bool:
        """Count a frame offered now: True (and the clock restarts) if one is due or ``force``."""
        now = time.perf_counter() if now is None else now
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
