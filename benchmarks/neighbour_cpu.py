"""What a busy neighbour CPU costs a loop that has a CPU of its own: the machine's ceiling for a watched loop.

    python benchmarks/neighbour_cpu.py [--envs CartPole-v1,HalfCheetah-v5] [--shares 0.25,0.5,0.75,1]
                                       [--work numpy,python] [--rounds 15] [--slice 0.5]

An unwatched env steps with random actions on one CPU (this process is held there) while a second
process, held on another CPU, is busy for a share of every 10 ms and sleeps the rest: the work a page
drawing frames in a browser, the Jupyter server or the helper process does beside a loop. Its work is
``numpy`` (float32 multiply-adds streaming through 1 MiB, as a software rasterizer such as SwiftShader
does) or ``python`` (an interpreter's loop, as the server's and the kernel's other threads). Each round
times three slices of the loop: the neighbour idle, busy, idle again; the loop ratio is the busy
slice's steps/s over the mean of its two idle neighbours, the noise floor the second idle slice over
the first. Medians over the rounds. No gymview code runs: on a machine where the ratio is below one,
nothing gymview does can keep a loop at its unwatched speed while anything else runs beside it.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time
from typing import Any

PERIOD_S = 0.010


def neighbour(share: Any, cpu: int, work: str, parent: int) -> None:
    """Do ``work`` for ``share`` of every PERIOD_S on ``cpu``, sleep the rest; until killed, or until
    the benchmark's process dies (even by SIGKILL)."""
    import numpy as np

    from gymview.neat.workers import die_with_parent

    die_with_parent(parent)
    os.sched_setaffinity(0, {cpu})
    pixels = np.ones(1 << 18, np.float32)
    while True:
        busy = share.value * PERIOD_S
        end = time.perf_counter() + busy
        while time.perf_counter() < end:
            if work == "numpy":
                pixels *= 0.999
                pixels += 0.001
        time.sleep(PERIOD_S - busy)


def steps_per_second(env: Any, seconds: float) -> float:
    """Step ``env`` with random actions for ``seconds``; its speed."""
    sample = env.action_space.sample
    steps = 0
    started = time.perf_counter()
    while True:
        for _ in range(50):
            _, _, terminated, truncated, _ = env.step(sample())
            if terminated or truncated:
                env.reset()
        steps += 50
        now = time.perf_counter()
        if now - started >= seconds:
            return steps / (now - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default="CartPole-v1,HalfCheetah-v5", help="comma-separated gymnasium ids")
    parser.add_argument("--shares", default="0.25,0.5,0.75,1", help="the neighbour's busy shares, comma-separated")
    parser.add_argument("--work", default="numpy,python", help="the neighbour's work: numpy, python or both")
    parser.add_argument("--rounds", type=int, default=15, help="idle, busy, idle slices per share")
    parser.add_argument("--slice", type=float, default=0.5, help="seconds a slice")
    args = parser.parse_args()

    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        parser.error("the benchmark may use one CPU here: it needs two, one for the loop, one for its neighbour")
    works = args.work.split(",")
    if not set(works) <= {"numpy", "python"}:
        parser.error(f"--work {args.work!r}: say numpy, python or numpy,python")
    os.sched_setaffinity(0, {cpus[0]})

    context = multiprocessing.get_context("fork")
    print(f"loop on CPU {cpus[0]}, neighbour on CPU {cpus[1]}; {args.rounds} rounds of {args.slice} s slices\n")
    print("| env | neighbour's work | neighbour busy | loop ratio | noise floor |")
    print("|---|---|---:|---:|---:|")
    for work in works:
        share = context.Value("d", 0.0, lock=False)
        helper = context.Process(target=neighbour, args=(share, cpus[1], work, os.getpid()), daemon=True)
        helper.start()
        try:
            for name in args.envs.split(","):
                measure(name, work, share, args.shares, args.rounds, args.slice)
        finally:
            helper.kill()
            helper.join(5)


def measure(name: str, work: str, share: Any, shares: str, rounds: int, seconds: float) -> None:
    """Print the loop ratio of env ``name`` with the neighbour busy at each of ``shares``."""
    import gymnasium as gym

    env = gym.make(name)
    env.reset(seed=0)
    steps_per_second(env, 1.0)  # warm-up: caches, the interpreter's specialised code
    for busy in (float(x) for x in shares.split(",")):
        ratios, floors = [], []
        for _ in range(rounds):
            share.value = 0.0
            idle = steps_per_second(env, seconds)
            share.value = busy
            time.sleep(2 * PERIOD_S)
            loaded = steps_per_second(env, seconds)
            share.value = 0.0
            time.sleep(2 * PERIOD_S)
            idle_again = steps_per_second(env, seconds)
            ratios.append(loaded / ((idle + idle_again) / 2))
            floors.append(idle_again / idle)
        print(f"| {name} | {work} | {busy:.0%} | {statistics.median(ratios):.3f}x | {statistics.median(floors):.3f}x |",
              flush=True)  # fmt: skip
    env.close()


if __name__ == "__main__":
    main()
