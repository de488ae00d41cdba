"""What watching costs the cheapest loops before any frame: the wrapper's own work, measured against what the
frames' budget counts for it.

    python benchmarks/wrapper_cost.py [--rounds 15] [--slice 0.3] [--envs CartPole-v1,FrozenLake-v1] [--no-kernel]

Each env steps under a random policy (``env.step(env.action_space.sample())``, a reset at each episode's end, as
users write it) in alternating slices, in a script and then in a kernel (jupyter_client, no front-end):

  plain       the env itself (its slices are the reference; a second copy gives the noise floor)
  pass        under a ``gym.Wrapper`` that passes each step on: what any wrapper costs
  keeper      under a wrapper that keeps each step as one tuple in a list and reads the clock, as little as a
              wrapper counting steps and returns for a status line can do in Python
  watched     under ``gymview.watch`` with frames all but off (``fps=1``, drawn in the kernel): in a kernel the
              view is live; in a script it is inert, and only the wrapper's work remains

Printed per env and place: each variant's loop ratio (median of its slice over the plain slice of the same round),
the nanoseconds a step that ratio means, and, for ``watched``, the share of the loop's time that the frames' budget
counts for the wrapper's own work (``own_seconds_per_step()`` for each step and reset, at the watched loop's pace)
beside the share it took (one minus its ratio).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "kernel"))

MEASURE = r'''
import json, statistics, time
import gymnasium as gym
import gymview
from gymview.watched import own_seconds_per_step

class Keeper(gym.Wrapper):
    def __init__(self, env):
        super().__init__(env)
        self.kept, self.due = [], 0.0
    def step(self, action):
        result = self.env.step(action)
        self.kept.extend((action, result[1], result[2], result[3], result[4]))
        if time.perf_counter() >= self.due:
            self.kept.clear()
            self.due = time.perf_counter() + 0.002
        return result

def run_slice(env, seconds):
    steps, resets, start = 0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()
                resets += 1
        steps += 100
    return steps / (time.perf_counter() - start), resets / steps

def measure(env_id, rounds, slice_s, in_kernel):
    make = lambda: gym.make(env_id, render_mode="rgb_array")
    variants = {
        "plain": make(),
        "plain again": make(),
        "pass": gym.Wrapper(make()),
        "keeper": Keeper(make()),
        "watched": gymview.watch(make(), draw="kernel", fps=1) if in_kernel else gymview.watch(make(), display=False),
    }
    for env in variants.values():
        env.reset(seed=0)
        run_slice(env, slice_s)
    names = list(variants)
    ratios = {name: [] for name in names if name != "plain"}
    paces, resets = [], []
    for index in range(rounds):
        order = names[index % len(names):] + names[:index % len(names)]
        rates = {}
        for name in order:
            rates[name], per_step = run_slice(variants[name], slice_s)
            if name == "watched":
                paces.append(rates[name])
                resets.append(per_step)
        for name in ratios:
            ratios[name].append(rates[name] / rates["plain"])
    plain_step = 1.0 / statistics.median(paces) * statistics.median(ratios["watched"])
    result = {"env": env_id, "plain_ns": plain_step * 1e9}
    for name, values in ratios.items():
        ratio = statistics.median(values)
        result[name] = ratio
        result[name + "_ns"] = (1.0 / ratio - 1.0) * plain_step * 1e9
    result["counted"] = own_seconds_per_step() * (1.0 + statistics.median(resets)) * statistics.median(paces)
    variants["watched"].close()
    return result
'''


def in_script(envs: list[str], rounds: int, slice_s: float) -> list[dict]:
    scope: dict = {}
    exec(MEASURE, scope)  # the same code the kernel runs
    return [scope["measure"](env_id, rounds, slice_s, False) for env_id in envs]


def in_kernel(envs: list[str], rounds: int, slice_s: float) -> list[dict]:
    from conftest import running_kernel

    results = []
    with running_kernel(str(REPO)) as kernel:
        kernel.run(MEASURE)
        for env_id in envs:
            reply = kernel.run(
                f"print('RESULT', json.dumps(measure({env_id!r}, {rounds}, {slice_s}, True)))",
                timeout=rounds * 5 * slice_s * 4 + 120,
            )
            line = next(line for line in reply.stdout.splitlines() if line.startswith("RESULT"))
            results.append(json.loads(line.split(" ", 1)[1]))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--slice", type=float, default=0.3)
    parser.add_argument("--envs", default="CartPole-v1,FrozenLake-v1")
    parser.add_argument("--no-kernel", action="store_true")
    args = parser.parse_args()
    envs = args.envs.split(",")
    runs = [("script", in_script(envs, args.rounds, args.slice))]
    if not args.no_kernel:
        runs.append(("kernel", in_kernel(envs, args.rounds, args.slice)))
    print(f"\nloop ratios against the plain env, medians of {args.rounds} rounds of {args.slice} s slices "
          "(ns a step in brackets)\n")
    print("| env | where | plain step | noise floor | pass | keeper | watched | watched: budget counts / took |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for where, results in runs:
        for r in results:
            cells = [f"{r[name]:.3f}x ({r[name + '_ns']:.0f})" for name in ("pass", "keeper", "watched")]
            print(f"| {r['env']} | {where} | {r['plain_ns']:.0f} ns | {r['plain again']:.3f}x | " + " | ".join(cells)
                  + f" | {r['counted']:.1%} / {1 - r['watched']:.1%} |")


if __name__ == "__main__":
    main()
