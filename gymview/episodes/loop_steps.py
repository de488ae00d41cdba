"""LoopSteps: a watched env's steps, kept as its loop gave them: the step count, the episode's return
and the latest steps for the replay's charts, with rows made only when they are read.

A watched loop's every step adds one tuple's fields to a flat list (``record``). Every few hundred
steps (``settle_after``) the loop's thread calls ``settle()``: it counts the new steps and resets, sums
the rewards since the last reset (the episode's return), and keeps the steps as one chunk of columns;
chunks older than the latest ``limit`` steps are let go. A row, and the running return it shows, is
made when the page asks for the replay's charts (a pause) or ``log()`` adds to the latest step.

>>> steps = LoopSteps(limit=100)
>>> steps.reset()
>>> for _ in range(3):
...     steps.record((1, 1.0, False, False, {"x": 0.5}))
>>> steps.log({"value": 2.0})   # settles first: the latest step is the third
>>> steps.count - steps.resets, steps.episode_return, steps.last
(3, 3.0, 3)
>>> row = steps.rows([3])[0]
>>> row["step"], row["return"], row["x"], row["value"]
(3, 3.0, 0.5, 2.0)
"""

from __future__ import annotations

import collections
import functools
import itertools
import operator
import threading
from time import perf_counter
from typing import Any, NamedTuple

from gymview.episodes.recent import RECENT_STEPS, KeptSteps
from gymview.episodes.rows import LOG_BEFORE_RESET, RawStep, check_logged

__all__ = ["LoopSteps"]

# A watched loop settles about every SETTLE_STEPS steps, and at least every SETTLE_SECONDS. Settled in
# small chunks, old steps are let go about as fast as new ones come, so the garbage collector's count of
# new objects stays under its threshold (700) instead of passing it at each settle.
SETTLE_STEPS = 256
SETTLE_SECONDS = 0.005
SHORTEST_SETTLE_SECONDS = 0.0002

_RESET = (None, 0.0, False, False, None)  # an episode's row 0: its first picture, before any action
FIELDS = len(_RESET)  # a step's entries in the pending list: action, reward, terminated, truncated, info


class _Chunk(NamedTuple):
    """Settled steps as columns: an old chunk let go frees a few tuples, not several objects a step."""

    first: int  # the number of its first entry
    actions: tuple[Any, ...]  # one entry a step, and one a reset (None): its row 0, before any action
    rewards: tuple[Any, ...]
    terminated: tuple[Any, ...]
    truncated: tuple[Any, ...]
    infos: tuple[Any, ...] | None  # None when every info was empty, as most envs' are
    start_return: Any  # the episode's return before its first entry (returns are summed when rows are made)
    episodes: list[tuple[int, int, int]]  # (index of the entry it starts at, episode, step number there)
    logged: dict[int, dict[str, float]]  # index in the columns -> the values env.log() added to that step


def _any_info(infos: tuple[Any, ...]) -> bool:
    """Whether any info holds something (an info whose truth is ambiguous, an array, counts as one)."""
    try:
        return any(infos)
    except Exception:
        return True


class LoopSteps(KeptSteps):
    """See the module docstring. ``record((action, reward, terminated, truncated, info))`` keeps a step
    (the caller copies an action array it may fill again); ``reset()`` starts an episode; ``settle()``
    counts what was recorded. ``count`` (steps and resets), ``resets``, ``episode``, ``steps`` (in the
    episode) and ``episode_return`` are as of the last ``settle()``.

    Examples:
        >>> steps = LoopSteps()
        >>> steps.reset(); steps.record((0, 1.0, False, False, {})); steps.record((1, 0.5, True, False, {}))
        >>> steps.settle()
        >>> steps.episode, steps.steps, steps.episode_return
        (0, 2, 1.5)
    """

    def __init__(self, limit: int = RECENT_STEPS) -> None:
        super().__init__()
        self._limit = limit
        # The fields of the steps recorded since the last settle(), one after another: columns are then taken
        # as slices, where a transposition (zip) would make an object a step and start the garbage collector.
        self._pending: list[Any] = []
        self.record = self._pending.extend  # atomic: a tuple is added at once, even with another thread settling
        self._reset_at: list[int] = []  # which of the steps pending are the resets since the last settle()
        self._chunks: collections.deque[_Chunk] = collections.deque()
        self._kept_count = 0  # entries in _chunks
        self._settling = threading.Lock()  # a status read on another thread may settle too
        self.count = 0
        self.resets = 0
        self.episode = 0  # steps before any reset count in the first episode
        self._next_episode = 0
        self.steps = 0
        self.episode_return: Any = 0.0
        #: seconds until the loop should settle again: about SETTLE_STEPS steps at the pace of the last ones
        self.settle_after = SETTLE_SECONDS
        self._settled_at = perf_counter()

    def reset(self) -> None:
        """A new episode: its row 0 (the first picture) is the latest step from now on."""
        with self._settling:
            self.record(_RESET)
            self._reset_at.append(len(self._pending) // FIELDS - 1)

    def settle(self) -> None:
        """Count and keep the steps and resets recorded since the last call."""
        if not self._pending:
            return
        with self._settling:
            pending = self._pending
            fields = len(pending)  # steps recorded meanwhile (another thread) wait for the next call
            if not fields:  # another thread settled them while this one waited
                return
            taken = fields // FIELDS
            actions, rewards, terminated, truncated, infos = (
                tuple(pending[field:fields:FIELDS]) for field in range(FIELDS)
            )
            # All is worked out first and kept at the end, so that a Ctrl-C on the way leaves the steps waiting.
            resets = self._reset_at
            episodes = [(0, self.episode, self.steps + 1)]
            episodes += [(at, self._next_episode + index, 0) for index, at in enumerate(resets)]
            if resets:  # the return counts from the last reset (its row 0's reward is 0.0)
                episode, next_episode = episodes[-1][1], episodes[-1][1] + 1
                steps, episode_return = taken - resets[-1] - 1, 0.0
                last = rewards[resets[-1] + 1 :]
            else:
                episode, next_episode, steps, episode_return = (
                    self.episode,
                    self._next_episode,
                    self.steps,
                    self.episode_return,
                )
                steps += taken
                last = rewards
            # added one by one, as a step tracker adds them (sum() compensates from Python 3.12)
            episode_return = functools.reduce(operator.add, last, episode_return)
            now = perf_counter()
            pace = (now - self._settled_at) * SETTLE_STEPS / taken
            infos_kept = infos if _any_info(infos) else None
            del pending[:fields]
            start_return = self.episode_return
            self._keep(
                _Chunk(self.count, actions, rewards, terminated, truncated, infos_kept, start_return, episodes, {})
            )
            self.resets += len(resets)
            self._reset_at = []
            self.episode, self._next_episode, self.steps, self.episode_return = (
                episode,
                next_episode,
                steps,
                episode_return,
            )
            self.settle_after, self._settled_at = max(SHORTEST_SETTLE_SECONDS, min(SETTLE_SECONDS, pace)), now

    def log(self, values: dict[str, Any]) -> None:
        """Add ``values`` to the latest step's row (checked by :func:`gymview.episodes.rows.check_logged`).

        Raises:
            RuntimeError: Before the first step or reset: there is no step to add them to.
        """
        checked = check_logged(values)
        self.settle()
        if not self._chunks:
            raise RuntimeError(LOG_BEFORE_RESET)
        chunk = self._chunks[-1]
        chunk.logged.setdefault(len(chunk.actions) - 1, {}).update(checked)

    def _keep(self, chunk: _Chunk) -> None:
        chunks = self._chunks
        chunks.append(chunk)
        self._kept_count += len(chunk.actions)
        self.count += len(chunk.actions)
        while self._kept_count - len(chunks[0].actions) >= self._limit:
            self._kept_count -= len(chunks.popleft().actions)

    @property
    def last(self) -> int:
        """The number of the step kept last (-1 before the first)."""
        return self.count - 1

    def _kept(self) -> tuple[int, list[RawStep]]:
        raws: list[RawStep] = []
        chunks = list(self._chunks)
        for chunk in chunks:
            infos = chunk.infos or (None,) * len(chunk.actions)
            starts = [*chunk.episodes[1:], (len(chunk.actions), 0, 0)]
            for (begin, episode, first_step), (end, _, _) in zip(chunk.episodes, starts):
                initial = chunk.start_return if begin == 0 and first_step else 0.0  # else from a reset's row 0
                returns = itertools.accumulate(chunk.rewards[begin:end], operator.add, initial=initial)
                next(returns)  # the initial value itself
                for index, episode_return in zip(range(begin, end), returns):
                    raws.append(RawStep(episode, first_step + index - begin, chunk.rewards[index], episode_return,
                                        chunk.terminated[index], chunk.truncated[index], chunk.actions[index],
                                        infos[index], chunk.logged.get(index)))  # fmt: skip
        oldest = chunks[0].first if chunks else 0
        extra = max(0, len(raws) - self._limit)
        return oldest + extra, raws[extra:]
