"""What gymview's background calls share (``play`` runs, ``background`` jobs): a list of those
still running, and an end that other threads wait for, with a timeout, on Ctrl-C and with ``await``.

>>> import threading
>>> class Sleep(BackgroundTask):
...     def __init__(self):
...         self.begin(SLEEPERS)
...         threading.Thread(target=self.end).start()
...     def wait(self, timeout=None):
...         self.wait_for_end(timeout, on_interrupt=lambda: None, still_running="still asleep")
...         return "awake"
>>> SLEEPERS = ActiveSet()
>>> Sleep().wait(10)
'awake'
>>> SLEEPERS.now()
[]
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ActiveSet(Generic[T]):
    """The calls of one kind that have begun and not ended."""

    def __init__(self) -> None:
        self._items: list[T] = []
        self._lock = threading.Lock()

    def add(self, item: T) -> None:
        with self._lock:
            self._items.append(item)

    def remove(self, item: T) -> None:
        with self._lock:
            self._items.remove(item)

    def now(self) -> list[T]:
        with self._lock:
            return list(self._items)


class BackgroundTask:
    """A call's end as an Event, waited on instead of ``Thread.join`` (an interrupt inside
    ``join()`` can leave ``is_alive()`` wrong). Subclasses call :meth:`begin` before starting
    their thread, :meth:`end` last in it, and define ``wait()``."""

    def begin(self, running: ActiveSet[Any]) -> None:
        self._finished = threading.Event()
        self._running = running
        running.add(self)

    def end(self) -> None:
        self._running.remove(self)
        self._finished.set()

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    def wait_for_end(self, timeout: float | None, on_interrupt: Callable[[], None], still_running: str) -> None:
        """Block until the end; Ctrl-C (a kernel interrupt) calls ``on_interrupt`` and re-raises;
        past ``timeout`` raise TimeoutError with ``still_running``."""
        try:
            finished = self._finished.wait(timeout)
        except KeyboardInterrupt:
            on_interrupt()
            raise
        if not finished:
            raise TimeoutError(still_running)

    def wait(self, timeout: float | None = None) -> Any:
        raise NotImplementedError

    def __await__(self) -> Generator[Any, None, Any]:
        async def finished() -> Any:
            while not self._finished.is_set():
                await asyncio.sleep(0.05)
            return self.wait()

        return finished().__await__()
