"""Fitness evaluation in one process (a worker's side): one env reused across genomes, each genome's
evaluation seeded (leaving the process's random state as it was), a fitness function's error returned
as that genome's, and the chunking and seeds that make a run the same wherever it is evaluated."""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import math
import pickle
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from gymview._internal.user_code import error_text
from gymview.neat.config import make_env_from
from gymview.neat.policy import GenomePolicy

_RANDOM_STATE = threading.Lock()  # held while a genome is evaluated with the process's random module seeded


@contextlib.contextmanager
def random_state_kept() -> Iterator[None]:
    """Code inside may seed and draw from ``random`` and ``np.random``; afterwards both continue as before.

    >>> random.seed(1); expected = random.random()
    >>> random.seed(1)
    >>> with random_state_kept():
    ...     random.seed(99); _ = random.random(), np.random.random()
    >>> random.random() == expected
    True
    """
    states = random.getstate(), np.random.get_state()
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])


def chunked(pairs: list, workers: int) -> list[list]:
    """A generation's genomes in decreasing chunks: each takes 1/(2 x workers) of what is left.

    Early chunks are large, so the caller's process (which feeds the workers and gathers results on
    the same cores as the workers) wakes up rarely; the last ones hold one genome each, so the
    workers finish together although genomes cost 1 to 500+ steps.

    >>> [len(chunk) for chunk in chunked(list(range(20)), 2)]
    [5, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1]
    """
    chunks, start = [], 0
    while start < len(pairs):
        size = max(1, (len(pairs) - start) // (2 * max(1, workers)))
        chunks.append(pairs[start : start + size])
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
    """What every evaluation needs besides the genome, pickled once (gymview._internal.user_code.pickled) per run."""

    make_env: Callable[[], Any]
    fitness: Callable[..., float] | None
    config: Any
    episodes: int
    max_steps: int | None


def fitness_style(fitness: Callable[..., float] | None) -> str:
    """ "return" (the default), "genome" for ``fitness(genome, config, env)``, "policy" for ``fitness(policy, env)``."""
    if fitness is None:
        return "return"
    if not callable(fitness):
        raise TypeError(
            "fitness must be a function fitness(genome, config, env) or fitness(policy, env); "
            f"got {type(fitness).__name__}"
        )
    try:
        parameters = [
            p
            for p in inspect.signature(fitness).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        ]
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
        # Seeded per genome, for a fitness that draws from random or np.random, and put back: in the
        # caller's process (workers=0, a thread pool) it is the caller's and neat's state. It is
        # process-wide, so the threads of a thread pool take turns (one genome at a time per process).
        with _RANDOM_STATE, random_state_kept():
            random.seed(seed)
            np.random.seed(seed)
            return self._evaluate(genome, seed)

    def _evaluate(self, genome: Any, seed: int) -> tuple[int, float | None, str | None]:
        fitness = self.task.fitness  # None only in the "return" style
        try:
            if self.style == "genome":
                assert fitness is not None
                self.env.reset(seed=seed)  # the user's own resets continue from this seed
                value = fitness(genome, self.task.config, self.env)
            else:
                policy = GenomePolicy(genome, self.task.config, self.env)
                if self.style == "policy":
                    assert fitness is not None
                    self.env.reset(seed=seed)
                    value = fitness(policy, self.env)
                else:
                    value = self._mean_return(policy, seed)
            value = float(value)
            if math.isnan(value):
                raise ValueError("the fitness is NaN")
            return genome.key, value, None
        except Exception as error:
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
        _evaluations.key, _evaluations.evaluation = key, Evaluation(pickle.loads(payload))
    return [_evaluations.evaluation.evaluate(genome, seed) for genome, seed in chunk]
