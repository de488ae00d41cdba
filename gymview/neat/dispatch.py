"""The caller's side of fitness evaluation: a generation's genomes go to this process, to gymview's own
worker processes or to the caller's executor; a worker that dies is found out genome by genome and
reported as that genome's error, never a hang; an interrupt ends the workers."""

from __future__ import annotations

import concurrent.futures
import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from gymview._internal.user_code import error_text, pickled
from gymview.neat.worker_side import Evaluation, Task, chunked, evaluate_chunk
from gymview.neat.workers import CLOSED, NOT_STARTED, Died, Workers

START_METHODS = ("fork", "spawn", "forkserver")
# A worker holds a second chunk (ready the moment it finishes one) only while many are left: near the
# end of a generation each chunk goes to whichever worker is free, so they finish together.
CHUNKS_HELD, CHUNKS_HELD_NEAR_THE_END = 2, 1

Results = dict[int, tuple[float | None, str | None]]


@dataclass(eq=False)
class PendingGeneration:
    """One generation's ``(genome, seed)`` pairs on their way through the evaluator."""

    pairs: list[tuple[Any, int]]
    results: Results = field(default_factory=dict)
    futures: dict[concurrent.futures.Future, list] = field(default_factory=dict)  # with an executor
    waiting: deque[tuple[list, bool]] = field(
        default_factory=deque
    )  # chunks not yet sent, and if each is one genome alone
    in_workers: int = 0  # chunks sent and not yet answered
    cancelled: bool = False

    def cancel(self) -> None:
        """Nothing more of it is sent; what workers already hold is evaluated and dropped."""
        self.cancelled = True
        self.waiting.clear()
        for future in self.futures:
            future.cancel()


def _pickled(task: Task) -> bytes:
    """The task for the workers, leaving the caller's config as it was: neat's genome config draws the
    next node id when pickled (a run would differ with workers from one without). Workers make no nodes."""
    genome_config = task.config.genome_config
    indexer = getattr(genome_config, "node_indexer", None)
    if indexer is None:
        return pickled(task)
    genome_config.node_indexer = None
    try:
        return pickled(task)
    finally:
        genome_config.node_indexer = indexer


class Evaluator:
    """Hands a generation's genomes to the workers and gathers fitnesses.

    ``workers=0`` evaluates in this process; otherwise ``workers`` processes (started with
    ``start_method``) or the given ``executor`` do the work.
    """

    def __init__(
        self, task: Task, workers: int | None, executor: concurrent.futures.Executor | None, start_method: str | None
    ) -> None:
        if start_method is not None and start_method not in START_METHODS:
            raise ValueError(f"start_method must be one of {', '.join(START_METHODS)} or None; got {start_method!r}")
        if executor is not None and not isinstance(executor, concurrent.futures.Executor):
            raise TypeError(
                "executor must be a concurrent.futures.Executor (e.g. a dask client's get_executor()); "
                f"got {type(executor).__name__}"
            )
        # One per core by default, and never more than there are genomes to play at once.
        self.workers = min((os.cpu_count() or 1) if workers is None else workers, task.config.pop_size)
        self.executor = executor
        self._local: Evaluation | None = Evaluation(task) if executor is None and self.workers == 0 else None
        self._own: Workers | None = None
        self.payload = b""
        if self._local is None:
            try:
                self.payload = _pickled(task)
            except Exception as error:
                raise TypeError(
                    f"could not pickle the env factory or the fitness function for the workers: {error}. "
                    f"workers=0 evaluates in this process, without pickling"
                ) from error
            if executor is None:
                self._own = Workers(self.workers, start_method, self.payload)

    @property
    def runs_elsewhere(self) -> bool:
        """Whether evaluations run in gymview's own worker processes: then they may go on while this
        process does other work (neat speciating), since they cannot touch its state."""
        return self._own is not None

    def prepare(self) -> None:
        """Start gymview's workers now (they make their envs at once) rather than at the first chunk."""
        if self._own is not None:
            self._own.start()

    def start(self, pairs: list[tuple[Any, int]]) -> PendingGeneration:
        """Hand ``(genome, seed)`` pairs to the workers and return; :meth:`collect` gathers them."""
        batch = PendingGeneration(pairs)
        # neat lists a species' genomes together, and they cost alike (all fall at once, or all play
        # 500 steps): in the order of their seeds (random) every chunk costs about the same per genome.
        chunks = chunked(sorted(pairs, key=lambda pair: pair[1]), self.workers)
        if self.executor is not None:
            batch.futures = {self.executor.submit(evaluate_chunk, self.payload, chunk): chunk for chunk in chunks}
        elif self._own is not None:
            batch.waiting.extend((chunk, False) for chunk in chunks)
            self._feed(batch)
        return batch

    def collect(self, batch: PendingGeneration) -> Results:
        """``{genome key: (fitness, error)}`` for a started batch (waits for it).

        When a worker dies, each genome it held is tried again alone; the first that kills its worker
        alone gets the error and the rest are not needed (the run stops on it).
        """
        if self._local is not None:
            return {key: (value, error) for key, value, error in (self._local.evaluate(g, s) for g, s in batch.pairs)}
        try:
            if self.executor is not None:
                self._gather(batch)
            else:
                self._drive(batch)
        except BaseException:
            batch.cancel()
            self.close()
            raise
        return batch.results

    def _feed(self, batch: PendingGeneration) -> None:
        own = self._own
        assert own is not None  # gymview's workers: neither an executor nor workers=0
        # Breadth first: every worker gets a chunk before any gets a second.
        for depth in range(CHUNKS_HELD):
            for slot in range(self.workers):
                held = CHUNKS_HELD if len(batch.waiting) > 2 * self.workers else CHUNKS_HELD_NEAR_THE_END
                if batch.waiting and len(own.sent[slot]) <= depth < held:
                    chunk, alone = batch.waiting.popleft()
                    batch.in_workers += 1
                    own.send(slot, (batch, chunk, alone), chunk)

    def _drive(self, batch: PendingGeneration) -> None:
        own = self._own
        assert own is not None  # gymview's workers: neither an executor nor workers=0
        while batch.waiting or batch.in_workers:
            news = own.wait()
            if not news and not batch.waiting:  # all it had sent was dropped by close()
                raise RuntimeError(CLOSED)
            for _, (owner, chunk, alone), reply in news:
                owner.in_workers -= 1
                if owner.cancelled:
                    continue
                if reply is NOT_STARTED:  # its worker died on an earlier chunk
                    owner.waiting.appendleft((chunk, alone))
                elif isinstance(reply, Died):
                    if alone:
                        owner.results[chunk[0][0].key] = (
                            None,
                            (
                                f"its worker process died ({reply.reason}): a crash in native code, os._exit or out "
                                f"of memory; a script started with spawn or forkserver also needs `if __name__ == "
                                f"'__main__':` around its code"
                            ),
                        )
                        owner.cancel()
                        return
                    owner.waiting.extendleft(([pair], True) for pair in reversed(chunk))
                elif isinstance(reply, str):  # the worker could not evaluate the chunk at all
                    owner.results.update((genome.key, (None, reply)) for genome, _ in chunk)
                else:
                    owner.results.update((key, (value, error)) for key, value, error in reply)
            self._feed(batch)

    def _gather(self, batch: PendingGeneration) -> None:
        for future in concurrent.futures.as_completed(batch.futures):
            try:
                batch.results.update((key, (value, error)) for key, value, error in future.result())
            except Exception as error:
                failure = f"the executor failed this task: {error_text(error)}"
                batch.results.update((genome.key, (None, failure)) for genome, _ in batch.futures[future])

    def close(self) -> None:
        """End the workers now (idempotent): nothing is left running, even mid-generation."""
        if self._own is not None:
            self._own.close()
        if self._local is not None:
            self._local.close()
            self._local = None
