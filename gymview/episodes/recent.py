"""Kept steps: a loop's latest steps, kept raw and numbered, for the live view's replay: when it is
paused, the page charts the steps its kept frames span, the cursor at the frame replayed.
:class:`RecentSteps` keeps what a step tracker records (vector envs); a single env's loop keeps its
own (:mod:`gymview.episodes.loop_steps`).

>>> from gymview.episodes.rows import StepTracker
>>> tracker = StepTracker()
>>> recent = RecentSteps(tracker, limit=100)
>>> tracker.reset()
>>> for _ in range(5):
...     tracker.step(1, 1.0, False, False, {})
>>> recent.last
5
>>> window = recent.window(first=2, max_rows=100)
>>> window["first"], window["stride"], window["columns"]["return"]
(2, 1, [2.0, 3.0, 4.0, 5.0])
"""

from __future__ import annotations

import abc
import collections
import dataclasses
import math
import operator
import threading
from collections.abc import Callable, Iterable
from typing import Any

from gymview.episodes.keyed_rows import KeyedStepTracker
from gymview.episodes.rows import RawStep, StepTracker, jsonable, row_of

__all__ = ["MAX_CHART_ROWS", "RECENT_STEPS", "KeptSteps", "RecentSteps"]

#: steps kept by default: at 10,000 steps a second, the last second; at 50 (a view's pace), minutes
RECENT_STEPS = 20_000
#: rows sent to the page for its charts at most: beyond, every k-th
MAX_CHART_ROWS = 2_000
#: steps kept as one chunk of columns (see RecentSteps)
CHUNK_STEPS = 256


class KeptSteps(abc.ABC):
    """A loop's latest steps, each with a number counted from 0 (a frame sent to the view carries its
    step's number as ``row``), as rows for the replay's charts; ``row_of`` makes a raw step a row.
    Subclasses keep the steps (``_kept``)."""

    def __init__(self, row_of: Callable[[RawStep], dict[str, float | int]] = row_of) -> None:
        self._row_of = row_of

    @property
    @abc.abstractmethod
    def last(self) -> int:
        """The number of the step kept last (-1 before the first)."""

    @abc.abstractmethod
    def _kept(self) -> tuple[int, list[RawStep]]:
        """(number of the oldest kept, the kept ones): one copy, taken at once."""

    def rows(self, numbers: Iterable[int | None]) -> list[dict[str, float | int] | None]:
        """The rows of the steps ``numbers`` (None for one no longer kept, or no number)."""
        oldest, raws = self._kept()
        return [
            None if number is None or not 0 <= number - oldest < len(raws) else self._json_row(raws[number - oldest])
            for number in numbers
        ]

    def window(self, first: int, max_rows: int = MAX_CHART_ROWS) -> dict[str, Any]:
        """The kept steps from number ``first`` (or the oldest kept) to the latest, as columns for
        charts: ``{"first": number, "stride": k, "columns": {name: values}}``, every k-th step when
        there are more than ``max_rows``; a missing value is None (JSON has no NaN)."""
        oldest, raws = self._kept()
        start = max(first, oldest)
        chosen = raws[start - oldest :]
        stride = max(1, math.ceil(len(chosen) / max_rows))
        rows = [self._json_row(raw) for raw in chosen[::stride]]
        names = dict.fromkeys(name for row in rows for name in row)
        return {"first": start, "stride": stride,
                "columns": {name: [row.get(name) for row in rows] for name in names}}  # fmt: skip

    def _json_row(self, raw: RawStep) -> dict[str, Any]:
        return {name: jsonable(value) for name, value in self._row_of(raw).items()}


class RecentSteps(KeptSteps):
    """The last ``limit`` steps ``tracker`` records (raw, a reset's row 0 included).

    Each step is appended to a list; every ``CHUNK_STEPS`` steps they are kept as one chunk of columns
    (a tuple per field), the latest step left out (``env.log()`` may still add to it). Steps kept one
    object each would be promoted by every young collection of the garbage collector, and their numbers
    would start full collections that the unwatched loop never runs (docs/performance-log.md);
    a chunk is a few objects, mostly ones the collector stops tracking. Rows are made only when the
    page asks (a pause). ``row_of`` makes them: :func:`gymview.episodes.keyed_rows.keyed_row_of` for a
    ``KeyedStepTracker``.
    """

    def __init__(
        self,
        tracker: StepTracker | KeyedStepTracker,
        limit: int = RECENT_STEPS,
        row_of: Callable[[RawStep], dict[str, float | int]] = row_of,
    ) -> None:
        super().__init__(row_of)
        self._limit = limit
        self._pending: list[RawStep] = []
        self._chunks: collections.deque[tuple[tuple[Any, ...], ...]] = collections.deque()
        self._chunked = 0  # steps in _chunks
        self._lock = threading.Lock()  # the page's thread reads what the loop's thread keeps
        self._tracker = tracker
        tracker.keep = self._keep

    @property
    def last(self) -> int:
        """The number of the step kept last (-1 before the first)."""
        return self._tracker.count - 1

    def _keep(self, raw: RawStep) -> None:
        pending = self._pending
        pending.append(raw)
        if len(pending) > CHUNK_STEPS:
            with self._lock:
                chunk = tuple(zip(*map(_fields_of, pending[:-1])))  # each field's column, transposed in C
                del pending[:-1]
                self._chunks.append(chunk)
                self._chunked += len(chunk[0])
                while self._chunks and self._chunked - len(self._chunks[0][0]) >= self._limit:
                    self._chunked -= len(self._chunks.popleft()[0])

    def _kept(self) -> tuple[int, list[RawStep]]:
        with self._lock:
            chunks, pending = list(self._chunks), list(self._pending)
        raws = [RawStep(*fields) for chunk in chunks for fields in zip(*chunk)] + pending
        raws = raws[-self._limit :]
        return self.last - len(raws) + 1, raws


# a chunk's columns, in RawStep's order
_FIELDS = tuple(field.name for field in dataclasses.fields(RawStep))
_fields_of = operator.attrgetter(*_FIELDS)
