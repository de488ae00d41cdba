"""What keeping every step's data costs: loop speed and memory, measured side by side in one run.

Loop speed (steps/s, medians of interleaved repeats, the variants in turn in one process):

* CartPole-v1 under ``gymview.watch`` (outside a notebook the view is inactive: only the wrapper's
  own work counts), as it is (each step kept for the replay's charts: ``StepTracker`` and
  ``RecentSteps``) against the same wrapper with that bookkeeping taken out;
* MountainCar-v0 recorded by ``gymview.RecordVideo`` with its step table (the default) and with
  ``steps=False``; frames drawn by gymview's renderer and encoded by x264 in this process.

Memory (each variant in a fresh process, traced by tracemalloc): the Python memory still held after
a long watched run (the steps kept for the replay), and after a long recording (the table's rows
waiting for their fragment), with and without step data.

    python benchmarks/step_data.py                     # 7 repeats, 200,000 steps for memory
    python benchmarks/step_data.py --repeats 3 --steps 0  # loop speed only
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def watched(keep_steps: bool) -> Any:
    """CartPole under watch(); without ``keep_steps`` its step() is the wrapper's step without the
    step bookkeeping (what it was before step data was kept)."""
    import gymnasium as gym

    import gymview
    from gymview.watched import WatchedEnv

    class WithoutStepData(WatchedEnv):
        def step(self, action):
            if self._controls.engaged:
                self.feed.obey_controls()
            result = self.env.step(action)
            self.total_steps += 1
            self.episode_return += result[1]
            if time.perf_counter() >= self._next_check:
                self._next_check = self.feed.show()
            return result

    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), display=False)
    if not keep_steps:
        env.__class__ = WithoutStepData
    return env


def watch_steps_per_second(keep_steps: bool, steps: int) -> float:
    env = watched(keep_steps)
    observation, _ = env.reset(seed=0)
    started = time.perf_counter()
    for _ in range(steps):
        observation, _, terminated, truncated, _ = env.step(int(observation[2] > 0))
        if terminated or truncated:
            observation, _ = env.reset()
    elapsed = time.perf_counter() - started
    env.close()
    return steps / elapsed


def bookkeeping_microseconds(repeats: int) -> tuple[float, float]:
    """(microseconds a step's bookkeeping takes: StepTracker.step with RecentSteps keeping it, one
    CartPole env.step), medians of ``repeats`` timeit runs: the cost itself, without the loop's noise."""
    import timeit

    import gymnasium as gym
    import numpy as np

    from gymview.episodes.recent import RecentSteps
    from gymview.episodes.rows import StepTracker

    tracker = StepTracker()
    RecentSteps(tracker)
    tracker.reset()
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    info: dict[str, Any] = {}
    reward = np.float64(1.0)
    kept = timeit.repeat(lambda: tracker.step(1, reward, False, False, info), number=100_000, repeat=repeats)
    stepped = timeit.repeat(lambda: env.step(1) if env.unwrapped.steps_beyond_terminated is None else env.reset(),
                            number=100_000, repeat=repeats)  # fmt: skip
    return statistics.median(kept) * 10, statistics.median(stepped) * 10


def record_steps_per_second(keep_steps: bool, steps: int, folder: str) -> float:
    import gymnasium as gym

    import gymview

    env = gymview.RecordVideo(gym.make("MountainCar-v0", render_mode="rgb_array", max_episode_steps=None),
                              folder, steps=keep_steps)  # fmt: skip
    observation, _ = env.reset(seed=0)
    started = time.perf_counter()
    for _ in range(steps):
        observation, *_ = env.step(2 if observation[1] >= 0 else 0)
    env.close()
    return steps / (time.perf_counter() - started)


MEMORY = """
import json, sys, tempfile, tracemalloc
sys.path.insert(0, {root!r})
sys.path.insert(0, {benchmarks!r})
import step_data
kind, keep, steps = {kind!r}, {keep!r}, {steps!r}
tracemalloc.start()
if kind == "watch":
    env = step_data.watched(keep)
    observation, _ = env.reset(seed=0)
    for _ in range(steps):
        observation, _, terminated, truncated, _ = env.step(int(observation[2] > 0))
        if terminated or truncated:
            observation, _ = env.reset()
    held = tracemalloc.get_traced_memory()[0]
    env.close()
else:
    import gymnasium as gym, gymview
    env = gymview.RecordVideo(gym.make("MountainCar-v0", render_mode="rgb_array", max_episode_steps=None),
                              tempfile.mkdtemp(), steps=keep)
    observation, _ = env.reset(seed=0)
    for _ in range(steps):
        observation, *_ = env.step(2 if observation[1] >= 0 else 0)
    held = tracemalloc.get_traced_memory()[0]
    env.close()
print(json.dumps(held))
"""


def memory_held(kind: str, keep: bool, steps: int) -> int:
    code = MEMORY.format(root=str(ROOT), benchmarks=str(ROOT / "benchmarks"), kind=kind, keep=keep, steps=steps)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=200_000, help="steps of the long runs for memory (0: none)")
    options = parser.parse_args()
    rates: dict[str, list[float]] = {name: [] for name in ("watch", "watch-bare", "record", "record-bare")}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(options.repeats):  # interleaved: a busy moment slows every variant alike
            rates["watch"].append(watch_steps_per_second(True, 100_000))
            rates["watch-bare"].append(watch_steps_per_second(False, 100_000))
            rates["record"].append(record_steps_per_second(True, 10_000, folder))
            rates["record-bare"].append(record_steps_per_second(False, 10_000, folder))
    median = {name: statistics.median(values) for name, values in rates.items()}
    kept, stepped = bookkeeping_microseconds(options.repeats)
    print(f"a step's bookkeeping: {kept:.2f} us (StepTracker.step + RecentSteps), a CartPole env.step: "
          f"{stepped:.2f} us ({kept / stepped:.1%} of it)")
    print(f"loop speed, medians of {options.repeats} interleaved runs (steps/s):")
    print(f"  watch(CartPole), steps kept:        {median['watch']:>10,.0f}")
    print(f"  watch(CartPole), no step data:      {median['watch-bare']:>10,.0f}   "
          f"ratio {median['watch'] / median['watch-bare']:.3f}")
    print(f"  RecordVideo(MountainCar), table:    {median['record']:>10,.0f}")
    print(f"  RecordVideo(MountainCar), no table: {median['record-bare']:>9,.0f}   "
          f"ratio {median['record'] / median['record-bare']:.3f}")
    if not options.steps:
        return
    print(f"memory held after {options.steps:,} steps (tracemalloc, Python objects):")
    for kind, what in (("watch", "watch(CartPole)"), ("record", "RecordVideo(MountainCar)")):
        kept, bare = memory_held(kind, True, options.steps), memory_held(kind, False, options.steps)
        print(f"  {what}: {kept / 2**20:.2f} MiB with step data, {bare / 2**20:.2f} MiB without "
              f"({(kept - bare) / 2**20:+.2f} MiB)")


if __name__ == "__main__":
    main()
