"""RunControls: what the view's Pause / Play / Step / Stop / Speed buttons and keys ask of a loop.

The loop feeding a view (a watched env's ``step()``, :func:`gymview.play`) reads one attribute a
step, :attr:`RunControls.engaged`, and calls :meth:`RunControls.before_step` only while it is
True: paused, a single step or a stop requested, or playback paced to real time. Clicks arrive
on another thread (a kernel subshell, or ipykernel's shell-channel thread) and only change state
under one condition variable, which also wakes a paused loop at once.

>>> controls = RunControls()
>>> controls.engaged
False
>>> controls.pause(); controls.state
'paused'
>>> controls.stop(); controls.before_step(fps=None)
Traceback (most recent call last):
...
gymview.errors.Stopped: stopped from the view (or run.stop()); catch gymview.Stopped to end the loop quietly
"""

from __future__ import annotations

import numbers
import threading
import time
import weakref
from collections.abc import Callable, Iterable

from gymview._internal.forks import after_fork_in_child
from gymview.errors import Stopped

__all__ = ["SPEEDS", "RunControls", "check_speed", "request_thread_stop", "thread_stop_requested"]

# The speeds the view offers, as multiples of the env's render_fps; None is "max" (no pacing).
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
# Pacing for envs that do not say their render_fps.
DEFAULT_FPS = 30.0
# Key presses remembered for take_presses() (a turn-based game waiting for a person's move).
MAX_PRESSES = 16
# A paused loop wakes this often even without a click, so a kernel interrupt is noticed.
PAUSED_POLL_SECONDS = 0.1

RUNNING, PAUSED, STOPPED = "running", "paused", "stopped"


def check_speed(speed: float | str | None) -> float | None:
    """``speed`` as a positive float, or None for "max" (None, "max" or ``float("inf")``)."""
    if speed is None or speed == "max":
        return None
    if isinstance(speed, bool) or not isinstance(speed, numbers.Real):
        raise TypeError(f"speed must be a number (1.0 = the env's real time) or 'max'; got {speed!r}")
    if speed == float("inf"):
        return None
    speed = float(speed)
    if not speed > 0:
        raise ValueError(
            f"speed must be above 0 (1.0 = the env's real time, 'max' = as fast as it goes); got {speed!r}"
        )
    return float(speed)


# Threads asked to stop by gymview.background's job.stop(): their watched envs raise Stopped.
_stopping_threads: set[int] = set()
_all_controls: weakref.WeakSet[RunControls] = weakref.WeakSet()  # a view never closed is not kept by it
_registry_lock = threading.Lock()


@after_fork_in_child
def _forget_threads_in_child() -> None:
    global _registry_lock
    _registry_lock = threading.Lock()
    _stopping_threads.clear()


def request_thread_stop(thread_id: int, stop: bool = True) -> None:
    """Ask every watched env stepping in thread ``thread_id`` to raise :class:`Stopped` (or, with
    ``stop=False``, forget the request once that thread has ended)."""
    with _registry_lock:
        (_stopping_threads.add if stop else _stopping_threads.discard)(thread_id)
        controls = list(_all_controls)
    for each in controls:
        each._recompute()


def thread_stop_requested() -> bool:
    """True in a thread whose stop was requested (see :func:`request_thread_stop`)."""
    return threading.get_ident() in _stopping_threads


class RunControls:
    """The state the view's controls set and the stepping loop obeys; see the module docstring.

    ``on_change(controls)`` is called after every change (from the changing thread) so the view
    can show the new state.
    """

    def __init__(self, on_change: Callable[[RunControls], None] | None = None) -> None:
        self._cond = threading.Condition()
        self._on_change = on_change
        self.state = RUNNING
        self.speed: float | None = None  # None: as fast as it goes
        self._steps_allowed = 0
        self._stop_pending = False
        self._next_deadline = 0.0
        self._keys_down: set[str] = set()
        self._presses: list[str] = []  # keys pressed since take_presses(): a tap between two looks counts
        self.engaged = False  # the one attribute a step reads: True when before_step has work
        self._loops_held = 0
        with _registry_lock:
            _all_controls.add(self)

    def reset_after_fork(self) -> None:
        """In a child forked from the kernel: running, unpaced, with fresh locks (another thread may
        have held them at the fork)."""
        self._cond = threading.Condition()
        self._on_change = None
        self.state, self.speed, self._steps_allowed, self._stop_pending = RUNNING, None, 0, False
        self._loops_held = 0
        self._recompute_locked()

    @property
    def holding(self) -> bool:
        """True while a loop waits in :meth:`before_step` because the run is paused: it takes no
        step until Step, resume or Stop."""
        return self._loops_held > 0

    def forget(self) -> None:
        """Leave the process-wide list (the view closed)."""
        with _registry_lock:
            _all_controls.discard(self)

    # -- what the buttons (and run.pause() ...) do: any thread ---------------------------------
    def pause(self) -> None:
        self._change(lambda: setattr(self, "state", PAUSED) if self.state == RUNNING else None)

    def resume(self) -> None:
        def resume() -> None:
            self.state, self._steps_allowed, self._stop_pending = RUNNING, 0, False
            self._next_deadline = 0.0

        self._change(resume)

    def step(self) -> None:
        """Let exactly one more step through; pauses a running loop first."""

        def step() -> None:
            self.state = PAUSED
            self._steps_allowed += 1

        self._change(step)

    def stop(self) -> None:
        """The next ``before_step`` raises :class:`Stopped` (once)."""

        def stop() -> None:
            self.state, self._stop_pending = STOPPED, True

        self._change(stop)

    def set_speed(self, speed: float | str | None) -> None:
        speed = check_speed(speed)

        def set_speed() -> None:
            self.speed, self._next_deadline = speed, 0.0

        self._change(set_speed)

    def set_keys(self, down: Iterable[str]) -> None:
        with self._cond:
            self._keys_down = set(down)
            self._presses.clear()

    def press(self, key: str, down: bool) -> None:
        with self._cond:
            (self._keys_down.add if down else self._keys_down.discard)(key)
            if down:
                self._presses = [*self._presses[-(MAX_PRESSES - 1) :], key]

    def take_presses(self) -> list[str]:
        """The keys pressed (down) since the last call, oldest first (at most MAX_PRESSES), then forgotten."""
        with self._cond:
            presses, self._presses = self._presses, []
            return presses

    @property
    def keys_down(self) -> frozenset[str]:
        with self._cond:
            return frozenset(self._keys_down)

    def undo_stop(self) -> None:
        """Forget a stop that no loop has acted on (a click that arrived after its cell ended)."""

        def forget() -> None:
            if self._stop_pending:
                self._stop_pending = False
                self.state = RUNNING

        self._change(forget)

    def _change(self, change: Callable[[], None]) -> None:
        with self._cond:
            change()
            self._recompute_locked()
            self._cond.notify_all()
        if self._on_change is not None:
            self._on_change(self)

    def _recompute(self) -> None:
        with self._cond:
            self._recompute_locked()
            self._cond.notify_all()

    def _recompute_locked(self) -> None:
        self.engaged = self.state != RUNNING or self.speed is not None or bool(_stopping_threads)

    # -- the stepping loop's side -------------------------------------------------------------
    def before_reset(self) -> None:
        """A reset is not a step: it never waits for Play nor uses up a Step (a Step lets exactly
        one ``step()`` through, even when a reset comes first); after a stop it raises
        :class:`Stopped` (once), like :meth:`before_step`."""
        with self._cond:
            stopping, changed = self._stop_pending or thread_stop_requested(), self._stop_pending
            if stopping:
                self._stop_pending = False
                self._recompute_locked()
        if changed and self._on_change is not None:
            self._on_change(self)
        if stopping:
            raise Stopped()

    def before_step(self, fps: float | None, wait: Callable[[float], None] | None = None) -> None:
        """Block while paused, let one step through per Step, raise :class:`Stopped` after a stop,
        and pace to ``fps`` x :attr:`speed` steps a second. Call it only while :attr:`engaged`.

        ``wait(seconds)`` is how a paused loop passes its time (the view's pump, so frames
        still go out); by default it waits on the condition, woken by the next click.
        """
        with self._cond:
            held = False
            try:
                while self.state == PAUSED and not (
                    self._steps_allowed or self._stop_pending or thread_stop_requested()
                ):
                    if not held:
                        held, self._loops_held = True, self._loops_held + 1
                    if wait is None:
                        self._cond.wait(PAUSED_POLL_SECONDS)
                        continue
                    self._cond.release()
                    try:
                        wait(PAUSED_POLL_SECONDS)
                    finally:
                        self._cond.acquire()
            finally:
                if held:
                    self._loops_held -= 1
            stopping, changed = self._stop_pending or thread_stop_requested(), self._stop_pending
            if stopping:
                self._stop_pending = False  # the view keeps showing "stopped" until stepping resumes
            elif self.state == PAUSED:  # a Step
                self._steps_allowed -= 1
                changed = True
            elif self.state == STOPPED:  # stepping again after a stop
                self.state, changed = RUNNING, True
            self._recompute_locked()
            speed = self.speed if self.state == RUNNING else None
        if changed and self._on_change is not None:
            self._on_change(self)
        if stopping:
            raise Stopped()
        if speed is not None:
            self._pace((fps or DEFAULT_FPS) * speed)

    def _pace(self, steps_per_second: float) -> None:
        interval = 1.0 / steps_per_second
        now = time.perf_counter()
        # A loop that fell behind (a slow step, a pause) starts again from now instead of racing.
        deadline = max(self._next_deadline, now)
        with self._cond:  # a click (Stop, Pause, another speed) ends the wait at once
            while self.state == RUNNING and self.speed is not None and not self._stop_pending:
                left = deadline - time.perf_counter()
                if left <= 0:
                    break
                self._cond.wait(left)
        self._next_deadline = deadline + interval
