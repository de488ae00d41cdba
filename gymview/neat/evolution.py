"""evolve(): NEAT on a Gymnasium env from a notebook cell, in parallel, reproducible, stoppable; and
record(): the champion's episodes to video."""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import os
import statistics
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from gymview._internal.checks import check_int, check_optional_int
from gymview._internal.kernel import in_kernel
from gymview.errors import FitnessError
from gymview.jobs import should_stop
from gymview.neat._neat import neat_module
from gymview.neat.config import (
    check_against_env,
    config_for,
    load_config,
    make_env_from,
    spaces_of,
)
from gymview.neat.dispatch import Evaluator, PendingGeneration
from gymview.neat.panel import EvolutionPanel
from gymview.neat.worker_side import Task, genome_seed, random_state_kept

if TYPE_CHECKING:
    from gymview.video.batch import BatchResult
from gymview.neat.policy import GenomePolicy


class EvolutionResult:
    """What ``evolve`` found: the best genome, as a genome and as a policy, and the run's history.

    ``evolve`` makes it; each argument is kept as the attribute of the same name. In a notebook it
    shows as a table of the last 15 generations.

    Args:
        winner: The best genome of the run.
        config: The ``neat.Config`` the run used.
        history: One row per generation, a dict with ``generation``, ``best``, ``mean``, ``stdev``
            (of the fitnesses), ``species`` (how many) and ``seconds`` (the generation's time).
        stats: neat's ``StatisticsReporter`` for the run.
        env: An env made the way the run made its envs, to try the policy on; close it when done.
        policy: The winner as ``policy(observation) -> action``, a picklable ``GenomePolicy`` (for
            ``gymview.play`` and ``record``).
        stopped: True when a Stop ended the run early (in a ``gymview.background`` job).
        population: The ``neat.Population``, as the run left it.

    Examples:
        >>> config = config_for("CartPole-v1", pop_size=10)
        >>> result = evolve("CartPole-v1", config, generations=2, workers=0, panel=False)
        >>> result.generations, result.stopped, result.winner is result.policy.genome
        (2, False, True)
        >>> sorted(result.history[-1])
        ['best', 'generation', 'mean', 'seconds', 'species', 'stdev']
        >>> result.env.close()
    """

    def __init__(
        self,
        winner: Any,
        config: Any,
        history: list[dict[str, Any]],
        stats: Any,
        env: Any,
        policy: GenomePolicy,
        stopped: bool,
        population: Any,
    ) -> None:
        self.winner = winner
        self.config = config
        self.history = history
        self.stats = stats
        self.env = env
        self.policy = policy
        self.stopped = stopped
        self.population = population

    @property
    def generations(self) -> int:
        """How many generations were evaluated (the rows of ``history``)."""
        return len(self.history)

    def __repr__(self) -> str:
        fitness = getattr(self.winner, "fitness", None)
        state = "stopped" if self.stopped else "done"
        return f"<EvolutionResult {state} after {self.generations} generations, best fitness {fitness}>"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{r['generation']}</td><td>{r['best']:.4g}</td><td>{r['mean']:.4g}</td><td>{r['stdev']:.3g}</td>"
            f"<td>{r['species']}</td><td>{r['seconds']:.2f}</td></tr>"
            for r in self.history[-15:]
        )
        return (
            f"<p>{self.__repr__()[1:-1]}</p><table><tr><th>generation</th><th>best</th><th>mean</th>"
            f"<th>stdev</th><th>species</th><th>seconds</th></tr>{rows}</table>"
        )


class _History:
    """A neat reporter that keeps one row per generation."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.generation = 0
        self.started = time.perf_counter()

    def start_generation(self, generation: int) -> None:
        self.generation = generation
        self.started = time.perf_counter()

    def post_evaluate(self, config: Any, population: dict[int, Any], species: Any, best_genome: Any) -> None:
        fitnesses = [genome.fitness for genome in population.values()]
        self.rows.append(
            dict(
                generation=self.generation,
                best=max(fitnesses),
                mean=statistics.fmean(fitnesses),
                stdev=statistics.pstdev(fitnesses),
                species=len(species.species),
                seconds=time.perf_counter() - self.started,
            )
        )

    def __getattr__(self, name: str) -> Callable[..., None]:  # the reporter hooks neat calls that we ignore
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


class _Stop(Exception):
    """Raised inside neat's loop when a stop was requested between generations."""


def _same_pairs(a: list[tuple[Any, int]], b: list[tuple[Any, int]]) -> bool:
    """The same genome objects with the same seeds (in any order)."""
    return len(a) == len(b) and {g.key: (id(g), s) for g, s in a} == {g.key: (id(g), s) for g, s in b}


def _env_factories(env: str | Callable[[], gym.Env]) -> tuple[Callable[[], gym.Env], Callable[[], gym.Env] | None, str]:
    """(make an env to evaluate with, make one to watch or None, a name for it)."""
    if isinstance(env, str):
        gym.spec(env)  # an unknown id fails here, with gymnasium's suggestions

        def make() -> gym.Env:
            return gym.make(env)

        return make, (lambda: gym.make(env, render_mode="rgb_array")), env
    if isinstance(env, gym.Env):
        raise TypeError(
            "evolve() needs an env id or a function that makes the env (workers each make their own), "
            "e.g. lambda: gym.make('CartPole-v1'); not an env object"
        )
    if not callable(env):
        raise TypeError(f"env must be an env id or a function that makes the env; got {type(env).__name__}")
    probe = env()
    try:
        watchable = getattr(probe, "render_mode", None) == "rgb_array"
        name = probe.spec.id if probe.spec is not None else type(probe.unwrapped).__name__
    finally:
        probe.close()
    return env, (env if watchable else None), name


def _config(config: Any, make: Callable[[], gym.Env]) -> Any:
    neat = neat_module()
    if config is None:
        return config_for(make)
    if isinstance(config, (str, os.PathLike)):
        return load_config(config, make)
    if isinstance(config, neat.Config):
        env, _ = make_env_from(make)
        try:
            name = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
            genome = config.genome_config
            check_against_env(
                {"num_inputs": str(genome.num_inputs), "num_outputs": str(genome.num_outputs)}, spaces_of(env), name
            )
        finally:
            env.close()
        return config
    raise TypeError(
        "config must be None, a neat.Config (see gymview.neat.config_for) or a config file path; "
        f"got {type(config).__name__}"
    )


def evolve(
    env: str | Callable[[], gym.Env],
    config: Any = None,
    generations: int = 50,
    fitness: Callable[..., float] | None = None,
    episodes: int = 1,
    workers: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    seed: int = 0,
    start_method: str | None = None,
    max_steps: int | None = None,
    panel: bool | None = None,
    checkpoint_every: int | None = None,
    checkpoint_prefix: str = "neat-checkpoint-",
    resume: str | os.PathLike[str] | None = None,
) -> EvolutionResult:
    """Evolve NEAT networks that play ``env``, from a notebook cell, in parallel and reproducibly.

    Each worker makes its own env and reuses it for every genome it evaluates; each genome's
    evaluation is seeded, so the same ``seed`` gives the same run in this process, in worker
    processes or on an executor. In a ``gymview.background`` job, Stop ends the run after the
    current generation and returns the best genome so far (``result.stopped``). An interrupt ends
    the workers and raises ``KeyboardInterrupt``. The performance page has what parallel workers gain.

    Args:
        env: An env id, or a function that makes the env (a lambda or a notebook function is fine),
            not an env object. The panel shows the champion playing for an id, or for a function
            whose envs have ``render_mode="rgb_array"``.
        config: None (``config_for(env)``), a ``neat.Config`` or a config file path (read with
            ``load_config``); its inputs and outputs are checked against the env.
        generations: At most this many generations; evolution also ends when ``fitness_threshold``
            is reached.
        fitness: None (the mean return over ``episodes`` episodes), ``fitness(genome, config, env)``
            or ``fitness(policy, env)``; defined anywhere, including a notebook cell. The env is
            reset with the genome's seed first, so the function's own resets are reproducible.
        episodes: Episodes per genome for the default fitness; episode ``i`` is reset with the
            genome's seed plus ``i``.
        workers: Worker processes (None: one per core, never more than ``pop_size``; 0: evaluate in
            this process, nothing pickled).
        executor: Any ``concurrent.futures.Executor`` to evaluate on instead of gymview's workers,
            e.g. a dask client's ``get_executor()`` or a thread pool.
        seed: The same seed gives the same run, serial or parallel, with any number of workers.
            (neat breeds with Python's ``random`` module: other threads of this process drawing
            from it between generations, a busy dask scheduler for one, can change the run.)
            Afterwards ``random`` and ``np.random`` are put back as they were before the call.
        start_method: ``"fork"``, ``"spawn"`` or ``"forkserver"`` for the worker processes (None: the
            platform's).
        max_steps: End each evaluation episode after this many steps (None: episodes end by
            themselves).
        panel: Show the fitness chart, the champion's network and the champion playing (None: when
            running in a notebook).
        checkpoint_every: Save a neat checkpoint every this many generations (None: none).
        checkpoint_prefix: The checkpoint files' name before the generation number.
        resume: A checkpoint file to continue from, with its population and config (``config`` is
            not used).

    Returns:
        An ``EvolutionResult`` with the winner, its policy and one history row per generation.

    Raises:
        FitnessError: When a genome's fitness raises (or its worker dies), naming the genome and the
            error; the workers are ended first.
        ValueError: When ``generations``, ``episodes``, ``max_steps`` or ``checkpoint_every`` is not
            an integer of at least 1, ``workers`` or ``seed`` is not an integer of at least 0,
            ``start_method`` is unknown, or the config's inputs or outputs do not fit the env.
        TypeError: When ``env`` is an env object or not callable, ``config`` or ``executor`` is of
            another type, ``fitness`` takes other arguments, or the env function or fitness cannot
            be pickled for the workers (``workers=0`` needs no pickling).
        RuntimeError: When a Stop comes before the first generation is evaluated.

    Examples:
        >>> config = config_for("CartPole-v1", pop_size=10)
        >>> result = evolve("CartPole-v1", config, generations=2, workers=0, panel=False)
        >>> result.generations, result.policy(result.env.reset(seed=0)[0]) in (0, 1)
        (2, True)

        A fitness of your own, here the steps the cart survives in one episode:

        >>> def steps(policy, env):
        ...     observation, _ = env.reset()
        ...     for step in range(500):
        ...         observation, _, terminated, truncated, _ = env.step(policy(observation))
        ...         if terminated or truncated:
        ...             break
        ...     return step + 1
        >>> result = evolve("CartPole-v1", config, generations=1, fitness=steps, workers=0, panel=False)
        >>> result.winner.fitness >= 1
        True
    """
    neat = neat_module()
    _check_arguments(generations, episodes, seed, max_steps, workers, checkpoint_every)
    make, make_watched, name = _env_factories(env)
    # neat seeds and breeds with the global random module: the caller's state comes back afterwards.
    with random_state_kept():
        restored = neat.Checkpointer.restore_checkpoint(os.fspath(resume)) if resume is not None else None
        config = _config(config if restored is None else restored.config, make)
        evaluator = Evaluator(Task(make, fitness, config, episodes, max_steps), workers, executor, start_method)
        with contextlib.closing(evaluator):
            evaluator.prepare()  # the workers start and make their envs while neat makes its first population
            population = restored if restored is not None else neat.Population(config, seed=seed)
            history, stats = _add_reporters(population, checkpoint_every, checkpoint_prefix)
            champion_policy = _champion_policy(population, config, make)
            show = in_kernel() if panel is None else panel
            view = EvolutionPanel(f"NEAT on {name}", make_watched and (lambda: _watch(make_watched))) if show else None
            loop = _GenerationLoop(population, evaluator, history, seed, generations)
            stopped = loop.run(view, config, champion_policy)
    if population.best_genome is None:
        raise RuntimeError("stopped before the first generation was evaluated: there is no genome to return")
    result_env = make()
    return EvolutionResult(
        population.best_genome, config, history.rows, stats, result_env, champion_policy(), stopped, population
    )


def _check_arguments(
    generations: int, episodes: int, seed: int, max_steps: int | None, workers: int | None, checkpoint_every: int | None
) -> None:
    """``evolve``'s numbers, each checked the way its documentation says (a ValueError or TypeError)."""
    check_int("generations", generations)
    check_int("episodes", episodes)
    check_int("seed", seed, minimum=0)
    check_optional_int("max_steps", max_steps, meaning_of_none="episodes end by themselves")
    if workers is not None:
        check_int("workers", workers, minimum=0, hint=" (0 evaluates in this process)")
    if checkpoint_every is not None:
        check_int("checkpoint_every", checkpoint_every, hint=" (generations between checkpoints)")


def _add_reporters(population: Any, checkpoint_every: int | None, checkpoint_prefix: str) -> tuple[_History, Any]:
    """Adds the run's history, neat's statistics and, if asked, a checkpointer; returns (history, stats)."""
    neat = neat_module()
    history, stats = _History(), neat.StatisticsReporter()
    population.add_reporter(history)
    population.add_reporter(stats)
    if checkpoint_every is not None:
        population.add_reporter(neat.Checkpointer(checkpoint_every, filename_prefix=checkpoint_prefix))
    return history, stats


def _champion_policy(population: Any, config: Any, make: Callable[[], gym.Env]) -> Callable[[], GenomePolicy]:
    """A function that gives the population's best genome so far as a policy (the env's spaces are read
    now, from an env made for that)."""
    probe, _ = make_env_from(make)
    mapping, action_space = spaces_of(probe), probe.action_space
    probe.close()

    def champion_policy() -> GenomePolicy:
        return GenomePolicy(population.best_genome, config, mapping, action_space)

    return champion_policy


class _GenerationLoop:
    """neat's loop over generations: each genome evaluated with its own seed, failures raised, a Stop
    honoured between generations and, when the evaluations run elsewhere, each new generation handed to
    the workers as soon as it is bred."""

    def __init__(self, population: Any, evaluator: Evaluator, history: _History, seed: int, generations: int) -> None:
        self.population, self.evaluator, self.history = population, evaluator, history
        self.seed, self.generations = seed, generations
        # The next generation's evaluation, handed to the workers as soon as it is bred.
        self.started: list[PendingGeneration] = []
        self._breed = population.reproduction.reproduce

    def run(self, view: EvolutionPanel | None, config: Any, champion_policy: Callable[[], GenomePolicy]) -> bool:
        """Runs neat for at most ``generations`` generations, updating ``view``; True when a Stop ended it."""
        population = self.population
        stopped = False
        if self.evaluator.runs_elsewhere:  # evaluations in this process would reseed neat's random state meanwhile
            population.reproduction.reproduce = self.breed_and_start
        try:
            if view is not None:
                population.add_reporter(_PanelReporter(view, self.history, population, config, champion_policy))
            try:
                population.run(self.assign, self.generations)
            except _Stop:
                stopped = True
            if view is not None and self.history.rows and population.best_genome is not None:
                view.update(self.history.rows, population.best_genome, config, champion_policy(), done=True)
        finally:
            population.reproduction.__dict__.pop("reproduce", None)
        return stopped

    def pairs_of(self, genomes: Iterable[tuple[int, Any]], generation: int) -> list[tuple[Any, int]]:
        return [(genome, genome_seed(self.seed, generation, key)) for key, genome in genomes]

    def assign(self, genomes: list[tuple[int, Any]], config: Any) -> None:
        """neat's fitness function: sets each genome's fitness (raises _Stop when a stop was requested)."""
        evaluator = self.evaluator
        batch = self.started.pop() if self.started else None
        if should_stop():
            if batch is not None:
                batch.cancel()
            raise _Stop
        generation = self.population.generation
        pairs = self.pairs_of(genomes, generation)
        if batch is not None and not _same_pairs(batch.pairs, pairs):
            batch.cancel()  # neat replaced the population it bred (a new one after an extinction)
            batch = None
        # neat breeds with Python's random module, which other threads here may draw from while
        # the genomes are evaluated (a dask scheduler): that may not change the next generation.
        with random_state_kept():
            results = evaluator.collect(batch or evaluator.start(pairs))
        failed = [(key, error) for key, (_, error) in sorted(results.items()) if error is not None]
        if failed:
            key, error = failed[0]
            more = f" ({len(failed) - 1} more genomes failed too)" if len(failed) > 1 else ""
            raise FitnessError(f"the fitness of genome {key} in generation {generation} failed: {error}{more}")
        for key, genome in genomes:
            genome.fitness = results[key][0]

    def breed_and_start(self, config: Any, species: Any, pop_size: int, generation: int) -> dict[int, Any]:
        """neat's reproduce, which also starts evaluating the children."""
        children = self._breed(config, species, pop_size, generation)
        if children and len(self.history.rows) < self.generations and not should_stop():
            # Speciating the children needs no fitness: the workers evaluate them meanwhile.
            self.started.append(self.evaluator.start(self.pairs_of(children.items(), generation + 1)))
        return children


class _PanelReporter:
    """Updates the panel after each generation (neat calls post_evaluate once fitnesses are in)."""

    def __init__(
        self, panel: EvolutionPanel, history: _History, population: Any, config: Any, policy: Callable[[], GenomePolicy]
    ) -> None:
        self.panel, self.history, self.population, self.config, self.policy = panel, history, population, config, policy

    def post_evaluate(self, config: Any, population: dict[int, Any], species: Any, best_genome: Any) -> None:
        champion = self.population.best_genome
        if champion is None or best_genome.fitness > champion.fitness:
            champion = best_genome  # neat updates best_genome just after this call
        self.panel.update(
            self.history.rows,
            champion,
            self.config,
            GenomePolicy(champion, self.config, self.policy().mapping, self.policy().action_space),
        )

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


def _watch(make: Callable[[], gym.Env]) -> Any:
    from gymview.watched import watch

    return watch(make())


def record(
    result: EvolutionResult, episodes: int = 10, out: str | os.PathLike[str] = "videos/", **options: Any
) -> BatchResult:
    """Record the champion's episodes to video with ``gymview.record_batch``.

    The episodes run on the env the result was evolved on, remade from its spec with the same settings.

    Args:
        result: What ``evolve`` returned.
        episodes: How many episodes to record.
        out: The folder for the videos.
        **options: Passed to ``gymview.record_batch`` (``workers``, ``layout``, ``seed``, ``max_steps``...).

    Returns:
        The ``BatchResult`` of ``gymview.record_batch``: one row per episode in ``.table``, the files in ``.files``.

    Raises:
        TypeError: When ``result`` is not what ``evolve`` returned.
        ValueError: When the result's env was not made by ``gym.make`` (it has no spec to remake it from).

    Examples:
        >>> import tempfile
        >>> config = config_for("CartPole-v1", pop_size=10)
        >>> result = evolve("CartPole-v1", config, generations=1, workers=0, panel=False)
        >>> len(record(result, episodes=2, out=tempfile.mkdtemp(), workers=1, progress=False).files)
        2
    """
    from gymview.video.batch import record_batch

    if not isinstance(result, EvolutionResult):
        raise TypeError(f"record() takes the result of gymview.neat.evolve(); got {type(result).__name__}")
    spec = result.env.spec
    if spec is None:
        raise ValueError(
            "record() needs an env made by gym.make(...): the result's env has no spec to remake it "
            "from; record it with gymview.record_batch(make_env, result.policy, ...)"
        )
    settings = {name: value for name, value in spec.kwargs.items() if name != "render_mode"}
    registered = gym.spec(spec.id) if spec.id in gym.registry else None
    if not settings and registered is not None and registered.max_episode_steps == spec.max_episode_steps:
        env: Any = spec.id  # an id lets record_batch draw classic-control envs with its own renderers
    else:  # made with settings of its own: remake exactly that env, recording its frames
        env = functools.partial(gym.make, spec, render_mode="rgb_array")
    return record_batch(env, result.policy, episodes=episodes, out=out, **options)
