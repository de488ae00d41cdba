"""What keeping every step's data costs: loop speed and memory, measured side by side in one run.

Loop speed (steps/s, medians of interleaved repeats, the variants in turn in one process):

* CartPole-v1 under ``gymview.watch`` (outside a notebook the view is inactive: only the wrapper's
  own work counts), as it is (each step kept for the replay's charts: ``LoopSteps``), with each step
  going through a ``StepTracker`` and ``RecentSteps`` instead (as recordings keep steps), and with that
  bookkeeping taken out; against CartPole-v1 unwatched, and under a wrapper that passes each step on;
* 8 CartPole-v1 sub-envs (``gym.make_vec``) under ``gymview.watch``, each vector step kept
  (``KeyedStepTracker``) against the same wrapper without that bookkeeping;
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from watched_loops import without_bookkeeping  # noqa: E402 - benchmarks/ is on the path from here


def watched(keep_steps: bool | str) -> Any:
    """CartPole under watch(); without ``keep_steps`` its step() is the wrapper's step without the
    step bookkeeping (what it was before step data was kept); with ``"tracker"`` each step goes through
    a StepTracker and RecentSteps, as recordings keep them, instead of the loop's LoopSteps."""
    import gymnasium as gym

    import gymview
    from gymview.episodes.recent import RecentSteps
    from gymview.episodes.rows import StepTracker
    from gymview.watched import WatchedEnv

    class EachStepTracked(WatchedEnv):
        def step(self, action):
            if self._controls.engaged:
                self.feed.obey_controls()
            result = self.env.step(action)
            self.track(action, result[1], result[2], result[3], result[4])
            if time.perf_counter() >= self._next_check:
                self._next_check = self.feed.show()
            return result

    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), display=False)
    if keep_steps == "tracker":
        tracker = StepTracker()
        RecentSteps(tracker)
        env.__class__ = EachStepTracked
        env.track = tracker.step
        return env
    return env if keep_steps else without_bookkeeping(env, controls=True)


def watched_vector(keep_steps: bool) -> Any:
    """8 CartPole sub-envs under watch(); without ``keep_steps`` its step() leaves the step out."""
    import gymnasium as gym
    import numpy as np

    import gymview
    from gymview.watched import WatchedVectorEnv

    class WithoutStepData(WatchedVectorEnv):
        def step(self, actions):
            if self.feed.controls.engaged:
                self.feed.obey_controls()
            observations, rewards, terminations, truncations, infos = self.env.step(actions)
            self._returns.add(rewards, np.logical_or(terminations, truncations))
            if time.perf_counter() >= self.feed.next_check:
                self.feed.show()
            return observations, rewards, terminations, truncations, infos

    envs = gymview.watch(gym.make_vec("CartPole-v1", 8, render_mode="rgb_array"), display=False)
    if not keep_steps:
        envs.__class__ = WithoutStepData
    return envs


def vector_steps_per_second(keep_steps: bool, steps: int) -> float:
    envs = watched_vector(keep_steps)
    observations, _ = envs.reset(seed=0)
    started = time.perf_counter()
    for _ in range(steps):
        observations, *_ = envs.step((observations[:, 2] > 0).astype(int))
    elapsed = time.perf_counter() - started
    envs.close()
    return steps / elapsed


def unwatched(wrapped: bool) -> Any:
    """CartPole as gym.make gives it; ``wrapped``: under a wrapper that passes each step on (the least a
    wrapper such as watch()'s costs)."""
    import gymnasium as gym

    env = gym.make("CartPole-v1", render_mode="rgb_array")
    return gym.Wrapper(env) if wrapped else env


def watch_steps_per_second(keep_steps: bool | str, steps: int) -> float:
    env = unwatched(keep_steps == "wrapper") if keep_steps in ("plain", "wrapper") else watched(keep_steps)
    observation, _ = env.reset(seed=0)
    started = time.perf_counter()
    for _ in range(steps):
        observation, _, terminated, truncated, _ = env.step(int(observation[2] > 0))
        if terminated or truncated:
            observation, _ = env.reset()
    elapsed = time.perf_counter() - started
    env.close()
    return steps / elapsed


EPISODE_STEPS = 22  # a CartPole episode under a random policy, about


def bookkeeping_microseconds(repeats: int) -> tuple[float, float, float]:
    """(microseconds a step's bookkeeping takes in a watched loop: LoopSteps.record, and settle() every
    SETTLE_STEPS steps; in a recording: StepTracker.step; one CartPole env.step), medians of ``repeats``
    timeit runs of about 100,000 steps in episodes of EPISODE_STEPS (resets included): the cost itself,
    without the loop's noise."""
    import timeit

    import gymnasium as gym
    import numpy as np

    from gymview.episodes.loop_steps import SETTLE_STEPS, LoopSteps
    from gymview.episodes.rows import StepTracker

    tracker = StepTracker()
    tracker.reset()
    loop = LoopSteps()
    loop.reset()
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    result = (np.zeros(4), np.float64(1.0), False, False, {})
    record, settle = loop.record, loop.settle

    episodes = 100_000 // EPISODE_STEPS

    def watched_steps() -> None:
        for episode in range(episodes):
            loop.reset()
            for _ in range(EPISODE_STEPS):
                record((1, result[1], result[2], result[3], result[4]))
            if episode % episodes_a_settle == 0:
                settle()

    def tracked_steps() -> None:
        for _ in range(episodes):
            tracker.reset()
            for _ in range(EPISODE_STEPS):
                tracker.step(1, result[1], False, False, result[4])

    episodes_a_settle = max(1, SETTLE_STEPS // EPISODE_STEPS)
    steps = episodes * EPISODE_STEPS
    loop_kept = [seconds * 100_000 / steps for seconds in timeit.repeat(watched_steps, number=1, repeat=repeats)]
    kept = [seconds * 100_000 / steps for seconds in timeit.repeat(tracked_steps, number=1, repeat=repeats)]
    stepped = timeit.repeat(lambda: env.step(1) if env.unwrapped.steps_beyond_terminated is None else env.reset(),
                            number=100_000, repeat=repeats)  # fmt: skip
    return statistics.median(loop_kept) * 10, statistics.median(kept) * 10, statistics.median(stepped) * 10


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
elif kind == "vector":
    envs = step_data.watched_vector(keep)
    observations, _ = envs.reset(seed=0)
    for _ in range(steps):
        observations, *_ = envs.step((observations[:, 2] > 0).astype(int))
    held = tracemalloc.get_traced_memory()[0]
    envs.close()
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
    names = (
        "plain",
        "wrapper",
        "watch",
        "watch-tracker",
        "watch-bare",
        "vector",
        "vector-bare",
        "record",
        "record-bare",
    )
    rates: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(options.repeats):  # interleaved: a busy moment slows every variant alike
            rates["plain"].append(watch_steps_per_second("plain", 100_000))
            rates["wrapper"].append(watch_steps_per_second("wrapper", 100_000))
            rates["watch"].append(watch_steps_per_second(True, 100_000))
            rates["watch-tracker"].append(watch_steps_per_second("tracker", 100_000))
            rates["watch-bare"].append(watch_steps_per_second(False, 100_000))
            rates["vector"].append(vector_steps_per_second(True, 20_000))
            rates["vector-bare"].append(vector_steps_per_second(False, 20_000))
            rates["record"].append(record_steps_per_second(True, 10_000, folder))
            rates["record-bare"].append(record_steps_per_second(False, 10_000, folder))
    median = {name: statistics.median(values) for name, values in rates.items()}
    loop_kept, kept, stepped = bookkeeping_microseconds(options.repeats)
    print(
        f"a step's bookkeeping: {loop_kept:.3f} us in a watched loop (LoopSteps), {kept:.3f} us in a recording "
        f"(StepTracker.step); a CartPole env.step: {stepped:.2f} us ({loop_kept / stepped:.1%} and "
        f"{kept / stepped:.1%} of it)"
    )
    print(f"loop speed, medians of {options.repeats} interleaved runs (steps/s):")
    print(f"  CartPole, unwatched:                {median['plain']:>10,.0f}")
    print(
        f"  a wrapper passing each step on:     {median['wrapper']:>10,.0f}   "
        f"ratio {median['wrapper'] / median['plain']:.3f} to the unwatched loop"
    )
    print(
        f"  watch(CartPole), steps kept:        {median['watch']:>10,.0f}   "
        f"ratio {median['watch'] / median['plain']:.3f} to the unwatched loop"
    )
    print(f"  watch(CartPole), each step tracked: {median['watch-tracker']:>10,.0f}")
    print(
        f"  watch(CartPole), no step data:      {median['watch-bare']:>10,.0f}   "
        f"ratio {median['watch'] / median['watch-bare']:.3f} (each step tracked: "
        f"{median['watch-tracker'] / median['watch-bare']:.3f})"
    )
    print(f"  watch(8 CartPoles), steps kept:     {median['vector']:>10,.0f}   (vector steps/s)")
    print(
        f"  watch(8 CartPoles), no step data:   {median['vector-bare']:>10,.0f}   "
        f"ratio {median['vector'] / median['vector-bare']:.3f}"
    )
    print(f"  RecordVideo(MountainCar), table:    {median['record']:>10,.0f}")
    print(
        f"  RecordVideo(MountainCar), no table: {median['record-bare']:>9,.0f}   "
        f"ratio {median['record'] / median['record-bare']:.3f}"
    )
    if not options.steps:
        return
    print(f"memory held after {options.steps:,} steps (tracemalloc, Python objects):")
    for kind, what in (("watch", "watch(CartPole)"), ("vector", "watch(8 CartPoles)"),
                       ("record", "RecordVideo(MountainCar)")):  # fmt: skip
        kept, bare = memory_held(kind, True, options.steps), memory_held(kind, False, options.steps)
        print(
            f"  {what}: {kept / 2**20:.2f} MiB with step data, {bare / 2**20:.2f} MiB without "
            f"({(kept - bare) / 2**20:+.2f} MiB)"
        )


if __name__ == "__main__":
    main()
