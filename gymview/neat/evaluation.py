"""Fitness evaluation: one env per worker reused across genomes, genomes sent in chunks, fitness
functions from notebook cells pickled by value (cloudpickle), a crashed worker reported as its
genome's error and never a hang, and pool workers that die with the process that started them."""

from __future__ import annotations

import concurrent.futures
import ctypes
import hashlib
import inspect
import math
import multiprocessing
import os
import random
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import cloudpickle
import numpy as np

from gymview.neat.config import make_env_from
from gymview.neat.policy import GenomePolicy
from gymview.video.batch_episode import error_text

START_METHODS = ("fork", "spawn", "forkserver")
_RANDOM_STATE = threading.Lock()  # held while a genome is evaluated with the process's random module seeded


def chunked(pairs: list, workers: int) -> list[list]:
    """A generation's genomes in decreasing chunks: each takes 1/(2 x workers) of what is left.

    Early chunks are large, so the caller's process (which feeds the pool and gathers results on
    the same cores as the workers) wakes up rarely; the last ones hold one genome each, so the
    workers finish together although genomes cost 1 to 500+ steps.

    >>> [len(chunk) for chunk in chunked(list(range(20)), 2)]
    [5, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1]
    """
    chunks, start = [], 0
    while start < len(pairs):
        size = max(1, (len(pairs) - start) // (2 * max(1, workers)))
        chunks.append(pairs[start:start + size])
        start += size
    return chunks


def genome_seed(seed: int, generation: int, key: int) -> int:
    """The seed of one genome's evaluation: the same whether it runs here or in any worker.

    >>> genome_seed(0, 3, 17) == genome_seed(0, 3, 17) != genome_seed(1, 3, 17)
    True
    """
    digest = hashlib.blake2b(f"{seed}:{generation}:{key}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little") & 0x7FFFFFFF


@dataclass
class Task:
    """What every evaluation needs besides the genome, pickled once (cloudpickle) per run."""

    make_env: Callable[[], Any]
    fitness: Callable[..., float] | None
    config: Any
    episodes: int
    max_steps: int | None


def fitness_style(fitness: Callable[..., float] | None) -> str:
    """"return" (the default), "genome" for ``fitness(genome, config, env)``, "policy" for ``fitness(policy, env)``."""
    if fitness is None:
        return "return"
    if not callable(fitness):
        raise TypeError(f"fitness must be a function fitness(genome, config, env) or fitness(policy, env); got {type(fitness).__name__}")
    try:
        parameters = [p for p in inspect.signature(fitness).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):
        return "genome"
    if len(parameters) == 3:
        return "genome"
    if len(parameters) == 2:
        return "policy"
    raise TypeError(
        f"fitness takes {len(parameters)} arguments; it must be fitness(genome, config, env) or fitness(policy, env)"
    )


class Evaluation:
    """One process's env and fitness for a task; evaluates genomes one by one. Never raises for a
    genome: its error text comes back instead."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.style = fitness_style(task.fitness)
        self.env, _ = make_env_from(task.make_env)

    def evaluate(self, genome: Any, seed: int) -> tuple[int, float | None, str | None]:
        # Seeded per genome (evolve() puts neat's own state back after a generation). The state is
        # process-wide, so the threads of a thread pool take turns (one genome at a time per process).
        with _RANDOM_STATE:
            random.seed(seed)
            np.random.seed(seed)
            return self._evaluate(genome, seed)

    def _evaluate(self, genome: Any, seed: int) -> tuple[int, float | None, str | None]:
        try:
            if self.style == "genome":
                self.env.reset(seed=seed)  # the user's own resets continue from this seed
                value = self.task.fitness(genome, self.task.config, self.env)
            else:
                policy = GenomePolicy(genome, self.task.config, self.env)
                if self.style == "policy":
                    self.env.reset(seed=seed)
                    value = self.task.fitness(policy, self.env)
                else:
                    value = self._mean_return(policy, seed)
            value = float(value)
            if math.isnan(value):
                raise ValueError("the fitness is NaN")
            return genome.key, value, None
        except Exception as error:  # noqa: BLE001 - reported as this genome's error
            return genome.key, None, error_text(error)

    def _mean_return(self, policy: GenomePolicy, seed: int) -> float:
        total = 0.0
        for episode in range(self.task.episodes):
            policy.reset()
            observation, _ = self.env.reset(seed=seed + episode)
            steps, done = 0, False
            while not done:
                observation, reward, terminated, truncated, _ = self.env.step(policy(observation))
                total += float(reward)
                steps += 1
                done = terminated or truncated or (self.task.max_steps is not None and steps >= self.task.max_steps)
        return total / self.task.episodes

    def close(self) -> None:
        self.env.close()


_evaluations = threading.local()  # per worker (process, or thread of a thread pool): its task and env


def evaluate_chunk(payload: bytes, chunk: list[tuple[Any, int]]) -> list[tuple[int, float | None, str | None]]:
    """Worker side: evaluate ``(genome, seed)`` pairs with this worker's env for the task."""
    key = hashlib.sha1(payload).digest()
    if getattr(_evaluations, "key", None) != key:
        old = getattr(_evaluations, "evaluation", None)
        if old is not None:  # one task at a time per worker: free the previous env
            old.close()
        _evaluations.key, _evaluations.evaluation = key, Evaluation(cloudpickle.loads(payload))
    return [_evaluations.evaluation.evaluate(genome, seed) for genome, seed in chunk]


def die_with_parent(parent: int | None) -> None:
    """Pool initializer: on Linux this worker is killed when the process that started it dies,
    even by SIGKILL (an interrupted or killed kernel leaves no workers behind)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle, not each worker's
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked worker may inherit a handler that ignores it
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if parent is not None and os.getppid() != parent:  # it died before the line above ran
            os._exit(1)


@dataclass
class Batch:
    """A generation's ``(genome, seed)`` pairs and the chunks handed to the workers for them."""

    pairs: list[tuple[Any, int]]
    futures: dict[concurrent.futures.Future, list]

    def cancel(self) -> None:
        """Chunks not yet running are dropped; running ones finish unread."""
        for future in self.futures:
            future.cancel()


class Evaluator:
    """Caller side: hands a generation's genomes to the workers and gathers fitnesses.

    ``workers=0`` evaluates in this process; otherwise a process pool of that size (started with
    ``start_method``) or the given ``executor`` does the work.
    """

    def __init__(self, task: Task, workers: int | None, executor: concurrent.futures.Executor | None,
                 start_method: str | None) -> None:
        if start_method is not None and start_method not in START_METHODS:
            raise ValueError(f"start_method must be one of {', '.join(START_METHODS)} or None; got {start_method!r}")
        if executor is not None and not isinstance(executor, concurrent.futures.Executor):
            raise TypeError(f"executor must be a concurrent.futures.Executor (e.g. a dask client's get_executor()); got {type(executor).__name__}")
        self.workers = (os.cpu_count() or 1) if workers is None else workers
        self.start_method = start_method
        self.executor = executor
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._last_failure = ""
        self._local: Evaluation | None = Evaluation(task) if executor is None and self.workers == 0 else None
        self.payload = b""
        if self._local is None:
            try:
                self.payload = cloudpickle.dumps(task)
            except Exception as error:
                raise TypeError(
                    f"could not pickle the env factory or the fitness function for the workers: {error}. "
                    f"workers=0 evaluates in this process, without pickling"
                ) from error

    def _own_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context(self.start_method)
            parent = None if context.get_start_method() == "forkserver" else os.getpid()
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.workers, mp_context=context, initializer=die_with_parent, initargs=(parent,),
            )
        return self._pool

    @property
    def runs_elsewhere(self) -> bool:
        """Whether evaluations run in this evaluator's own worker processes: then they may start while
        this process does other work (e.g. neat speciating), since they cannot touch its state."""
        return self._local is None and self.executor is None

    def start(self, pairs: list[tuple[Any, int]]) -> Batch:
        """Hand ``(genome, seed)`` pairs to the workers and return at once; :meth:`collect` gathers them."""
        if self._local is not None:
            return Batch(pairs, {})
        return Batch(pairs, self._submit(chunked(pairs, self.workers)))

    def collect(self, batch: Batch) -> dict[int, tuple[float | None, str | None]]:
        """``{genome key: (fitness, error)}`` for a started batch (waits for it)."""
        if self._local is not None:
            return {key: (value, error) for key, value, error in (self._local.evaluate(g, s) for g, s in batch.pairs)}
        results, lost = self._gather(batch.futures)
        if lost and self.executor is None:
            # A worker died: find the genome that kills one alone (one per task, fresh pools);
            # the run stops on it, so the genomes after it are not needed.
            for genome, seed in [pair for chunk in lost for pair in chunk]:
                alone, died = self._gather(self._submit([[(genome, seed)]]))
                results.update(alone)
                if died:
                    results[genome.key] = (None, (
                        f"its worker process died ({self._last_failure}): a crash in native code, os._exit or out "
                        f"of memory; a script started with spawn or forkserver also needs `if __name__ == "
                        f"'__main__':` around its code"))
                    break
        elif lost:
            for chunk in lost:
                for genome, _ in chunk:
                    results[genome.key] = (None, f"the executor failed this task: {self._last_failure}")
        return results

    def evaluate(self, pairs: list[tuple[Any, int]]) -> dict[int, tuple[float | None, str | None]]:
        """``{genome key: (fitness, error)}`` for ``(genome, seed)`` pairs."""
        return self.collect(self.start(pairs))

    def _submit(self, chunks: Iterable[list[tuple[Any, int]]]) -> dict[concurrent.futures.Future, list]:
        executor = self.executor or self._own_pool()
        return {executor.submit(evaluate_chunk, self.payload, chunk): chunk for chunk in chunks}

    def _gather(self, futures: dict[concurrent.futures.Future, list]) -> tuple[dict[int, tuple[float | None, str | None]], list]:
        results: dict[int, tuple[float | None, str | None]] = {}
        lost = []
        try:
            for future in concurrent.futures.as_completed(futures):
                try:
                    for key, value, error in future.result():
                        results[key] = (value, error)
                except BrokenProcessPool as error:
                    self._last_failure = str(error) or "the pool broke"
                    lost.append(futures[future])
                except Exception as error:  # noqa: BLE001 - e.g. a dask worker lost
                    self._last_failure = error_text(error)
                    lost.append(futures[future])
        except BaseException:
            for future in futures:
                future.cancel()
            self.close()
            raise
        if lost and self.executor is None:
            self.close()  # a broken pool takes no more work: the next call starts a fresh one
        return results, lost

    def close(self) -> None:
        """End the workers now (idempotent): nothing is left running, even mid-generation."""
        pool, self._pool = self._pool, None
        if pool is not None:
            if hasattr(pool, "terminate_workers"):  # Python 3.14
                pool.terminate_workers()
            else:  # before 3.14 the pool has no public way to end busy workers
                for process in list((getattr(pool, "_processes", None) or {}).values()):
                    process.kill()  # workers hold nothing worth saving; SIGKILL cannot be handled away
                # The pool's own thread reaps them (joining them here too races it: a child reaped by
                # the other thread then looks alive forever).
                pool.shutdown(wait=True, cancel_futures=True)
        if self._local is not None:
            self._local.close()
            self._local = None
