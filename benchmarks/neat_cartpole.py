"""(Named apart from `neat`, which it imports.) NEAT on CartPole-v1 (pop 150): generations per second, serial and in parallel, gymview.neat beside
neat-python's own ParallelEvaluator (fork, fitness in a module), and the wall time to solve.

    python benchmarks/neat_cartpole.py [--generations 30] [--repeats 5] [--pairs 15]
    python benchmarks/neat_cartpole.py --panel     # the panel's cost, in JupyterLab seen from Chromium

The table: each repeat runs every variant once, in a rotating order; it shows medians, and ratios
are of medians. Parallel efficiency (2 workers / 1 worker) comes from its own pairs of adjacent runs
(1 worker then 2, or 2 then 1, alternating), each pair's ratio taken apart from the others so that a
slower spell of this shared machine cancels out; its noise floor is pairs of two 1-worker runs.
Beside each pair, the machine's own ceiling: two processes playing the same episodes with nothing
shared, against one (on a shared 2-core VM it moves between about 1.5x and 2x with the neighbours).
All variants evaluate the same fitness: the return of one episode, at most 500 steps, with the same
network code.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import statistics
import time

import gymnasium as gym
import neat

import gymview.neat as gn


def eval_genome(genome, config):  # neat's ParallelEvaluator needs a module-level function
    env = gym.make("CartPole-v1")
    total = play(genome, config, env)
    env.close()
    return total


def play(genome, config, env) -> float:
    network = neat.nn.FeedForwardNetwork.create(genome, config)
    observation, _ = env.reset(seed=genome.key)
    total, done = 0.0, False
    while not done:
        output = network.activate(observation.tolist())
        observation, reward, terminated, truncated, _ = env.step(int(output[1] > output[0]))
        total, done = total + reward, terminated or truncated
    return total


def config():
    return gn.config_for("CartPole-v1", pop_size=150, fitness_threshold=10**9)


def steps_of(stats: neat.StatisticsReporter) -> float:
    """Env steps evaluated: CartPole pays 1 per step, so a generation's steps are its fitness sum."""
    return sum(mean * 150 for mean in stats.get_fitness_mean())


def neat_serial(generations: int) -> tuple[float, float]:
    population = neat.Population(config(), seed=0)
    stats = neat.StatisticsReporter()
    population.add_reporter(stats)

    def evaluate(genomes, cfg):
        for _, genome in genomes:
            genome.fitness = eval_genome(genome, cfg)

    started = time.perf_counter()
    population.run(evaluate, generations)
    seconds = time.perf_counter() - started
    return generations / seconds, steps_of(stats) / seconds


def neat_parallel(generations: int) -> tuple[float, float]:
    population = neat.Population(config(), seed=0)
    stats = neat.StatisticsReporter()
    population.add_reporter(stats)
    started = time.perf_counter()
    with neat.ParallelEvaluator(2, eval_genome) as evaluator:
        population.run(evaluator.evaluate, generations)
    seconds = time.perf_counter() - started
    return generations / seconds, steps_of(stats) / seconds


def gymview_run(workers: int, generations: int) -> tuple[float, float]:
    started = time.perf_counter()
    result = gn.evolve("CartPole-v1", config(), generations=generations, workers=workers, seed=0, panel=False,
                       start_method="fork")
    seconds = time.perf_counter() - started
    return generations / seconds, sum(row["mean"] * 150 for row in result.history) / seconds


CONFIG = config()


def play_all(genomes: list) -> int:
    """Env steps of one episode per genome (the benchmark's fitness), in this process, with one env
    (as each of gymview's workers has)."""
    env = gym.make("CartPole-v1")
    steps = int(sum(play(genome, CONFIG, env) for genome in genomes))
    env.close()
    return steps


def independent_rate(processes: int, genomes: list) -> float:
    """Env steps/s of ``processes`` processes each playing every genome once, with nothing shared: what
    this machine gives that work right now, without any coordination."""
    with concurrent.futures.ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork")) as pool:
        list(pool.map(abs, range(processes)))  # the processes exist before the clock starts
        started = time.perf_counter()
        steps = sum(pool.map(play_all, [genomes] * processes))
        return steps / (time.perf_counter() - started)


PANEL_CELL = """
import time, gymview.neat as gn
rates = {{}}
for repeat in range({repeats}):
    for panel in ((False, True) if repeat % 2 == 0 else (True, False)):
        started = time.perf_counter()
        result = gn.evolve("CartPole-v1", gn.config_for("CartPole-v1", pop_size=150, fitness_threshold=10**9),
                           generations={generations}, workers=2, seed=0, panel=panel, start_method="fork")
        rates.setdefault(panel, []).append(sum(r["mean"] * 150 for r in result.history) / (time.perf_counter() - started))
import statistics
print("PANEL", statistics.median(rates[False]), statistics.median(rates[True]))
"""


def panel_cost(generations: int, repeats: int) -> None:
    """Evaluation speed with and without the panel, in a real JupyterLab with the page open."""
    import json
    import pathlib
    import sys
    import tempfile

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "browser"))
    from lab import chromium_page, notebook_of, open_notebook, running_server, start_cell, wait_for_output

    root = pathlib.Path(tempfile.mkdtemp(prefix="gymview-neat-bench-"))
    (root / "panel.ipynb").write_text(json.dumps(notebook_of([PANEL_CELL.format(generations=generations, repeats=repeats)])))
    with running_server(root, "lab") as server, chromium_page() as page:
        open_notebook(page, server, "panel.ipynb")
        start_cell(page, 0)
        text = wait_for_output(page, 0, "PANEL", timeout_ms=900_000)
    without, with_panel = (float(x) for x in text.split("PANEL", 1)[1].split()[:2])
    print(f"CartPole-v1, pop 150, {generations} generations, 2 workers, {repeats} paired repeats in JupyterLab:")
    print(f"  without the panel {without:,.0f} steps/s, with it {with_panel:,.0f} steps/s: x{with_panel / without:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=30,
                        help="a run's length: the first 10 are short episodes, where neat's breeding weighs more")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=15, help="adjacent run pairs for the parallel efficiency")
    parser.add_argument("--panel", action="store_true", help="measure the panel's cost in JupyterLab instead")
    args = parser.parse_args()
    if args.pairs < 2:
        parser.error("--pairs must be at least 2 (the quartiles of the ratios are printed)")
    if args.panel:
        panel_cost(args.generations, args.repeats)
        return
    variants = {
        "neat serial": lambda: neat_serial(args.generations),
        "neat ParallelEvaluator(2), fork": lambda: neat_parallel(args.generations),
        "gymview workers=0 (in process)": lambda: gymview_run(0, args.generations),
        "gymview workers=1": lambda: gymview_run(1, args.generations),
        "gymview workers=2": lambda: gymview_run(2, args.generations),
    }
    names = list(variants)
    generation_rates: dict[str, list[float]] = {name: [] for name in names}
    step_rates: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(args.repeats):
        for name in names[repeat % len(names):] + names[:repeat % len(names)]:
            per_generation, per_step = variants[name]()
            generation_rates[name].append(per_generation)
            step_rates[name].append(per_step)
    gens = {name: statistics.median(values) for name, values in generation_rates.items()}
    steps = {name: statistics.median(values) for name, values in step_rates.items()}
    spread = max((max(v) - min(v)) / statistics.median(v) for v in step_rates.values())
    print(f"CartPole-v1, pop 150, {args.generations} generations, {args.repeats} repeats (rotating order)")
    print("  Populations evolve differently (the seeds differ), so episodes get long at different times:")
    print("  env steps evaluated per second is the comparable rate; generations/s is shown beside it.")
    for name in names:
        print(f"  {name:34s} {steps[name]:9,.0f} steps/s (x{steps[name] / steps['neat serial']:.2f} of neat serial)"
              f"   {gens[name]:6.2f} generations/s")
    print(f"  gymview 2 workers / neat ParallelEvaluator(2) (steps/s):     "
          f"{steps['gymview workers=2'] / steps['neat ParallelEvaluator(2), fork']:.2f}")
    print(f"  noise: the widest spread of one variant's repeats was {spread:.0%} of its median")

    def rate(workers: int) -> float:
        return gymview_run(workers, args.generations)[1]

    # The machine's own ceiling for this work moves with its neighbours' load: two processes that share
    # nothing get from 1.5x to 2x one process's rate. Each pair measures it beside gymview's efficiency.
    genomes = list(gn.evolve("CartPole-v1", config(), generations=args.generations, workers=0, seed=1,
                             panel=False).population.population.values())
    ratios, ceilings, floor = [], [], []
    for pair in range(args.pairs):
        if pair % 2 == 0:
            one, two = rate(1), rate(2)
            alone, together = independent_rate(1, genomes), independent_rate(2, genomes)
        else:
            together, alone = independent_rate(2, genomes), independent_rate(1, genomes)
            two, one = rate(2), rate(1)
        ratios.append(two / one)
        ceilings.append(together / alone)
        floor.append(rate(1) / rate(1))
    for label, values in (
        (f"parallel efficiency, gymview 2 workers / 1 worker (steps/s, median of {args.pairs} adjacent pairs)", ratios),
        ("the machine's ceiling: 2 independent processes / 1 (same episodes, nothing shared)", ceilings),
        ("gymview's efficiency / the ceiling beside it", [r / c for r, c in zip(ratios, ceilings)]),
        ("noise floor, two adjacent 1-worker runs", floor),
    ):
        low, _, high = statistics.quantiles(values, n=4)
        print(f"  {label}: {statistics.median(values):.2f} (quartiles {low:.2f}-{high:.2f})")
    started = time.perf_counter()
    solved = gn.evolve("CartPole-v1", gn.config_for("CartPole-v1", pop_size=150, fitness_threshold=500),
                       generations=100, workers=2, seed=0, panel=False, episodes=5)
    print(f"  solve (mean return 500 over 5 episodes, 2 workers): {time.perf_counter() - started:.1f} s, "
          f"{solved.generations} generations, best {solved.winner.fitness}")


if __name__ == "__main__":
    main()
