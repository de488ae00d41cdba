"""StreamWatcher: the one thread that does what a stream's producer left undone.

The producer (the user's loop) sends its own frames; this thread looks in every ``PUMP_WAIT_SECONDS``, or
at once when woken, for the rest: an encoded frame nobody pumped for (the loop ended or stalls), a frame
waiting for an ack, a message posted from another thread, a resend a page asked for. It ends after
``IDLE_EXIT_SECONDS`` with nothing to do, and the next piece of work starts a new one.

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

# How often the watcher looks for work the producer left; an encoded frame nobody pumped for goes out after
# at most about twice this.
PUMP_WAIT_SECONDS = 0.05
# A watcher with nothing to do for this long ends, and the stream lets its encoder process go; the next frame
# starts both again, so views whose env was never closed (a re-run cell) leave nothing behind.
IDLE_EXIT_SECONDS = 10.0

Later = Callable[[], None] | None


class StreamWatcher:
    """Run ``chores()`` under ``lock`` until the stream idles.

    ``chores()`` returns whether there was anything to do, and a function to call once the lock is let go
    (or None). ``retire()``, under the lock when the watcher idled out, returns one to end the encoder
    process with (called with its timeout in seconds), or None. ``on_watching(active)`` is told when a
    watcher starts (True) and ends (False).
    """

    def __init__(
        self,
        lock: threading.Lock,
        chores: Callable[[], tuple[bool, Later]],
        retire: Callable[[], Callable[[float], None] | None],
        on_watching: Callable[[bool], None] = lambda active: None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._lock = lock
        self._chores = chores
        self._retire = retire
        self._on_watching = on_watching
        self._clock = clock
        self._nudge = threading.Event()
        self._retired = False  # the last watcher ended after idling (or is about to): the next start is new
        self._worker = Worker("stream", self._watch, wake=self._nudge.set)

    @property
    def running(self) -> bool:
        """True while the thread runs (from the first piece of work until it idles out or stops)."""
        return self._worker.running

    @property
    def failed(self) -> bool:
        """True when the thread failed and :meth:`check` has not raised it yet."""
        return self._worker.failed

    def keep_going(self) -> None:
        """With the lock held: make sure a watcher runs (a new one if the last idled out, without waiting for it)."""
        again, self._retired = self._retired, False
        self._worker.start(again=again)

    def wake(self) -> None:
        """Look for work now rather than at the next ``PUMP_WAIT_SECONDS``."""
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
        idle_since = self._clock()
        while not stop.is_set():
            self._nudge.wait(PUMP_WAIT_SECONDS)
            self._nudge.clear()
            if stop.is_set():
                return
            end_helper = None
            with self._lock:
                active, later = self._chores()
                now = self._clock()
                retiring = not active and now - idle_since >= IDLE_EXIT_SECONDS
                if active:
                    idle_since = now
                elif retiring:
                    self._retired = True
                    end_helper = self._retire()
            if later is not None:
                later()
            if retiring:
                if end_helper is not None:
                    end_helper(5.0)
                return
            if active:
                give_back_free_memory()  # outside the lock: the loop's push and pump never wait for a trim
