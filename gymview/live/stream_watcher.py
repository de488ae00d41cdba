"""StreamWatcher: the one thread that does what a stream's producer left undone.

The producer (the user's loop) sends its own frames; this thread looks, at once when woken and else when its
owner says (``PUMP_WAIT_SECONDS`` by default), for the rest: an encoded frame nobody pumped for (the loop ended or
stalls), a frame waiting for an ack, a message posted from another thread, a resend a page asked for. It ends after
``IDLE_EXIT_SECONDS`` with nothing to do, and the next piece of work starts a new one.

Each look costs more than its chores: the thread must take the interpreter from a loop that holds it, and a loop
that lets it go many times a step (numpy's random numbers, torch's operations) wakes the waiting thread each time
in vain. A thread looking in 20 times a second slowed a CartPole loop by a few percent and spent tens of ms of the
other core each second (``benchmarks/waking_thread.py``), so once nothing is left to do the watcher sleeps until
new work wakes it.

Its chores run under the stream's lock; what they hand back (making a picture, ending a helper) runs
after it, so the loop's push and the page's acks never wait for them.

>>> import threading
>>> lock, done = threading.Lock(), threading.Event()
>>> def chores() -> tuple[bool, None]:
...     done.set()
...     return False, None
>>> watcher = StreamWatcher(lock, chores, retire=lambda: None)
>>> with lock:
...     watcher.keep_going()
>>> watcher.wake(); done.wait(5), watcher.stop()
(True, None)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from gymview._internal.memory import give_back_free_memory
from gymview._internal.worker import Worker

__all__ = ["IDLE_EXIT_SECONDS", "PUMP_WAIT_SECONDS", "StreamWatcher"]

# How often the watcher looks for work the producer left, by default (a stream's owner says when to look);
# an encoded frame nobody pumped for goes out after at most about twice this from a watcher that looks this often.
PUMP_WAIT_SECONDS = 0.05
# A watcher with nothing to do for this long ends, and the stream lets its encoder process go; the next frame
# starts both again, so views whose env was never closed (a re-run cell) leave nothing behind.
IDLE_EXIT_SECONDS = 10.0

Later = Callable[[], None] | None


class StreamWatcher:
    """Run ``chores()`` under ``lock`` until the stream idles.

    ``chores()`` returns whether there was anything to do, and a function to call once the lock is let go
    (or None). ``next_look()``, under the lock after the chores, gives the seconds until the next look (the
    watcher looks sooner when woken), or None while nothing is left to do: the watcher then sleeps until
    :meth:`keep_going` or :meth:`wake`, or until it idles out. ``retire()``, under the lock when the watcher
    idled out, returns one to end the encoder process with (called with its timeout in seconds), or None.
    ``on_watching(active)`` is told when a watcher starts (True) and ends (False).
    """

    def __init__(
        self,
        lock: threading.Lock,
        chores: Callable[[], tuple[bool, Later]],
        retire: Callable[[], Callable[[float], None] | None],
        on_watching: Callable[[bool], None] = lambda active: None,
        clock: Callable[[], float] = time.perf_counter,
        next_look: Callable[[], float | None] = lambda: PUMP_WAIT_SECONDS,
    ) -> None:
        self._lock = lock
        self._chores = chores
        self._next_look = next_look
        self._retire = retire
        self._on_watching = on_watching
        self._clock = clock
        self._nudge = threading.Event()
        self._retired = False  # the last watcher ended after idling (or is about to): the next start is new
        self._sleeping = True  # no watcher looks (none yet, or it found nothing left to do): new work wakes it
        self._worker = Worker("stream", self._watch, wake=self._nudge.set)

    @property
    def running(self) -> bool:
        """True while the thread runs (from the first piece of work until it idles out or stops)."""
        return self._worker.running

    @property
    def sleeping(self) -> bool:
        """True while no watcher looks: none started yet, or it found nothing left to do (new work wakes it)."""
        return self._sleeping

    @property
    def failed(self) -> bool:
        """True when the thread failed and :meth:`check` has not raised it yet."""
        return self._worker.failed

    def keep_going(self) -> None:
        """With the lock held: make sure a watcher runs (a new one if the last idled out, without waiting for it)
        and looks at the new work (waking it if it sleeps with nothing to do)."""
        again, self._retired = self._retired, False
        self._worker.start(again=again)
        if self._sleeping:
            self._sleeping = False
            self._nudge.set()

    def wake(self) -> None:
        """Look for work now rather than at the next look."""
        self._nudge.set()

    def check(self) -> None:
        """Raise the thread's failure as a WorkerError (once)."""
        self._worker.check()

    def stop(self, timeout: float = 10.0) -> None:
        """End the thread (waiting ``timeout`` s at most); raise its failure if it failed."""
        with self._lock:
            self._retired = False
        self._worker.stop(timeout)

    def _watch(self, stop: threading.Event) -> None:
        self._on_watching(True)
        try:
            self._watch_until(stop)
        finally:
            self._on_watching(False)

    def _watch_until(self, stop: threading.Event) -> None:
        idle_since, look = self._clock(), PUMP_WAIT_SECONDS
        while not stop.is_set():
            self._nudge.wait(look)
            if stop.is_set():
                return
            end_helper = None
            with self._lock:
                # These chores answer any nudge given so far (whoever nudged changed the stream under this lock
                # first); one given later stays set for the next wait. Stop nudges after setting its event.
                self._nudge.clear()
                if stop.is_set():
                    return
                active, later = self._chores()
                next_look = self._next_look()
                now = self._clock()
                retiring = not active and now - idle_since >= IDLE_EXIT_SECONDS
                if active:
                    idle_since = now
                elif retiring:
                    self._retired = True
                    end_helper = self._retire()
                self._sleeping = next_look is None
            look = max(0.0, idle_since + IDLE_EXIT_SECONDS - now) if next_look is None else next_look
            if later is not None:
                later()
            if retiring:
                if end_helper is not None:
                    end_helper(5.0)
                return
            if active:
                give_back_free_memory()  # outside the lock: the loop's push and pump never wait for a trim
