"""The one background-thread pattern used everywhere in gymview.

A :class:`Worker` owns one daemon thread. ``start()`` and ``stop()`` are idempotent, the
thread is told to finish through a stop :class:`threading.Event`, ``stop()`` joins it with a
timeout, and an exception raised inside the thread is kept and re-raised to the user on the
next call of :meth:`Worker.check` (or on ``stop()``), so nothing fails silently.

>>> import threading
>>> seen = []
>>> def loop(stop: threading.Event) -> None:
...     seen.append("ran")
...     stop.wait()
>>> worker = Worker("example", loop)
>>> worker.start(); worker.start()   # the second call does nothing
>>> worker.stop()
>>> seen
['ran']
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from gymview.errors import WorkerError

__all__ = ["Worker"]


class Worker:
    """Run ``target(stop_event)`` in a daemon thread; see the module docstring."""

    def __init__(
        self,
        name: str,
        target: Callable[[threading.Event], None],
        wake: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self._target = target
        self._wake = wake
        self._stop_event = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._joining = False  # stop() waits for the thread: a start() from elsewhere starts the next one

    @property
    def running(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    @property
    def failed(self) -> bool:
        """True when the thread ended with an error that :meth:`check` has not raised yet."""
        return self._error is not None

    def start(self, again: bool = False) -> None:
        """Start the thread unless it already runs (``again``: even if the last one has not ended yet, because
        it is ending of its own accord: it is not waited for); re-raise an earlier failure first. Called while
        :meth:`stop` waits for the thread, it starts the next one, unless the ending thread itself calls it."""
        with self._lock:
            self.check()
            ending = self._joining and self._thread is not threading.current_thread()
            if self.running and not again and not ending:
                return
            self._stop_event = threading.Event()
            self._thread = threading.Thread(
                target=self._main, args=(self._stop_event,), name=f"gymview-{self.name}", daemon=True
            )
            self._thread.start()

    def _main(self, stop_event: threading.Event) -> None:
        try:
            self._target(stop_event)
        except BaseException as error:  # kept for the user's thread, never swallowed
            self._error = error

    def check(self) -> None:
        """Re-raise (once) an exception that ended the thread."""
        error, self._error = self._error, None
        if error is not None:
            raise WorkerError(f"gymview's {self.name} thread failed: {error!r}") from error

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the thread to finish, wait up to ``timeout`` s, then re-raise its failure if any."""
        with self._lock:
            thread = self._thread
            self._stop_event.set()
            if self._wake is not None:
                self._wake()
            self._joining = True
        # joined without the lock: the ending thread may still call start() (it finds itself running)
        try:
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout)
                if thread.is_alive():  # it stays this worker's thread: a start() now leaves it be
                    raise TimeoutError(f"gymview's {self.name} thread did not stop within {timeout} s")
            with self._lock:
                if self._thread is thread:
                    self._thread = None
        finally:
            self._joining = False
        self.check()
