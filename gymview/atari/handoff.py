"""One ``put`` batch, and whether ``put`` hands batches to the pipeline's thread at all.

A batch handed to the thread costs the caller a wake-up and, when the caller asks for it at once, a
second one to learn it is done: on a 2-core machine that made ``put()`` then ``get()`` half as fast
as ``process()`` in some runs and as fast in others, depending on which thread won the batch
(docs/performance-log.md). :class:`HandOff` hands batches over only while the caller stays away from
``get`` long enough for the thread's work to pay: at least half a conversion, over the last few
batches. Otherwise the caller, who would wait anyway, converts the batch in ``put`` itself.

>>> choice = HandOff(clock=iter([0.0, 0.001, 1.0, 3.0]).__next__)
>>> choice.overlaps                       # nothing measured yet: put() converts the first batch itself
False
>>> start = choice.now(); choice.converted(start)   # a conversion from 0.0 to 0.001
>>> put_at = choice.now()                 # put() returned at 1.0
>>> choice.asked(put_at)                  # get() at 3.0: the caller was away 2 s
>>> choice.overlaps                       # the thread's work would have been done by then
True
>>> choice = HandOff(clock=iter([0.0, 1.0, 2.0, 2.001]).__next__)
>>> start = choice.now(); choice.converted(start)   # a conversion from 0.0 to 1.0 (in put)
>>> put_at = choice.now()                 # put() returned at 2.0
>>> choice.asked(put_at)                  # get() at 2.001: back almost at once
>>> choice.overlaps                       # 1 ms away is not worth a 1 s conversion's hand-off
False
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["CONVERTED", "Batch", "HandOff"]

# Batches looked back on: one slow put()-to-get() gap (a garbage collection, the OS scheduling
# another process) does not switch the hand-off on, and a real change switches it in three batches.
WINDOW = 5

CONVERTED = threading.Event()  # the done event of batches converted in put(): a new Event costs ~5 µs
CONVERTED.set()


class HandOff:
    """Whether ``put`` wakes the pipeline's thread, from the caller's recent gaps between ``put`` and
    ``get`` and the recent conversion times (``clock``: seconds, ``time.perf_counter`` by default).

    Args:
        clock: What times the gaps and conversions.

    Examples:
        >>> HandOff().overlaps
        False
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.now = clock
        self._gaps: collections.deque[float] = collections.deque(maxlen=WINDOW)
        self._conversions: collections.deque[float] = collections.deque(maxlen=WINDOW)
        self.overlaps = False
        """True when the next ``put`` should hand its batch to the thread (decided at each ``get``)."""

    def asked(self, put_at: float) -> None:
        """``get`` asks now for the batch put at ``put_at``."""
        gaps, conversions = self._gaps, self._conversions
        gaps.append(self.now() - put_at)
        if conversions:  # the middle of a few sorted values: statistics.median costs microseconds more
            self.overlaps = sorted(gaps)[len(gaps) // 2] >= sorted(conversions)[len(conversions) // 2] / 2

    def converted(self, started: float) -> None:
        """A conversion that began at ``started`` ended now (in any thread)."""
        self._conversions.append(self.now() - started)


class Batch:
    """One ``put`` batch: its frames until converted, then its result or error.

    Args:
        frames: The raw frames, dropped once converted (None for a batch converted in ``put``).
        reset: The indices of the envs whose stacks restart.
        put_at: When ``put`` took it (the pipeline's clock).
        done: Set once converted; a batch converted before anyone can wait for it shares :data:`CONVERTED`.

    Examples:
        >>> import numpy as np
        >>> Batch(np.zeros((1, 1, 210, 160, 3), np.uint8), np.array([0])).done.is_set()
        False
    """

    __slots__ = ("done", "error", "frames", "put_at", "reset", "result")

    def __init__(
        self, frames: np.ndarray | None, reset: np.ndarray, put_at: float = 0.0, done: threading.Event | None = None
    ) -> None:
        self.frames: np.ndarray | None = frames
        self.reset = reset
        self.put_at = put_at
        self.result: tuple[Any, Any] | None = None
        self.error: BaseException | None = None
        self.done = threading.Event() if done is None else done
