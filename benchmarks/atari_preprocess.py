"""Frames/s to network-ready stacked Atari tensors on the target device, side by side.

    python benchmarks/atari_preprocess.py            # 8, 32 and 128 envs, 3 s a row
    python benchmarks/atari_preprocess.py --quick    # 8 and 32 envs, 1 s a row

Rows, for N envs of Breakout (frameskip=1, 84x84 gray, stack 4, uint8 on the device):
  (a) gymnasium: SyncVectorEnv of AtariPreprocessing + FrameStackObservation per env, then .to(device)
  (b) ale_py AtariVectorEnv with its native C++ preprocessing, then one batched .to(device)
  (c) gymview atari_vector_env(): (b)'s native path with gymview's stack padding, on every device (raw
      frames through the GPU AtariPipeline measured slower than (b) on an H100 at 8, 32 and 128 envs)
  (c') gymview AtariPipeline fed by raw ALE frames (the path for any vector env), env stepping t+1
      overlapping the processing of batch t in the pipeline's thread: a loop whose actions need not
      wait for the newest observation (data collection); a policy acting on each observation cannot
  (d) envpool (where it installs): its C++ thread pool with native Atari preprocessing, to numpy then .to(device)
  (u) ale_py raw frames + the per-env OpenCV loop users write (gray, INTER_AREA resize, shift the stack)
Stepping cost alone: raw RGB frames from the same envs with no preprocessing, so the preprocessing
share is visible. Then (c) against (b) in short slices alternating in one process, with (b) against a
second (b) as the noise floor: rows of 1-3 s run one after another differ by more than (c) and (b) do
on the CPU, where (c) is (b) plus a few microseconds of bookkeeping a step.

Last, preprocessing only, on frames recorded from N Breakout envs (no emulator in the timing), every way
into gymview beside the per-env OpenCV loop and gymnasium's wrappers (AtariPreprocessing +
FrameStackObservation over an env that replays the frames; its gray screens are precomputed, as ALE
hands them over): put(frames) then get() at once (a caller that waits for each result), process(),
and wrap() of a vector env replaying the frames. Slices of each alternate in one process; each is
divided by the cv2 loop of its own round (medians), and a second cv2 loop gives the noise floor.
    python benchmarks/atari_preprocess.py --only preprocessing

put() then get() against process(), run after run (``--only putget --runs 5``; 8 envs by default): each
run makes fresh pipelines (a thread hand-off that goes wrong does so for a whole run) and alternates
slices of put()+get(), process() and a second process() (the noise floor), each divided by the
per-env cv2 loop of its round; medians per run. Then each way's own bookkeeping: microseconds a batch
with the conversion replaced by a fixed busy wait.
    python benchmarks/atari_preprocess.py --only putget --runs 5
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import ale_py
import cv2
import gymnasium as gym
import numpy as np
import torch
from ale_py.vector_env import AtariVectorEnv
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

from gymview.atari import AtariPipeline, atari_vector_env, wrap

try:
    import envpool
except ImportError:  # row (d) is left out
    envpool = None

gym.register_envs(ale_py)
GAME, GYM_ID = "breakout", "ALE/Breakout-v5"
ALE_OPTIONS = dict(frameskip=1, noop_max=0, repeat_action_probability=0.0, use_fire_reset=False, reward_clipping=False)
RAW = dict(img_height=210, img_width=160, grayscale=False, stack_num=1, maxpool=False)


def rate(num_envs: int, seconds: float, step: Callable[[np.ndarray], object], device: torch.device) -> float:
    """Frames/s of ``step(actions)`` over ``seconds``, after a short warm-up."""
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 4, size=(64, num_envs))
    for index in range(5):
        step(actions[index])
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step(actions[steps % 64])
        steps += 1
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return steps * num_envs / (time.perf_counter() - start)


def gymnasium_per_env(num_envs: int, seconds: float, device: torch.device, preprocess: bool = True) -> float:
    def make() -> gym.Env:
        env = gym.make(GYM_ID, frameskip=1, repeat_action_probability=0.0)
        return FrameStackObservation(AtariPreprocessing(env, frame_skip=1, noop_max=0), 4) if preprocess else env

    envs = gym.vector.SyncVectorEnv([make] * num_envs)
    envs.reset(seed=0)

    def step(actions: np.ndarray) -> object:
        observations = envs.step(actions)[0]
        return torch.from_numpy(observations).to(device) if preprocess else observations

    try:
        return rate(num_envs, seconds, step, device)
    finally:
        envs.close()


def ale(num_envs: int, seconds: float, device: torch.device, preprocess: bool = True) -> float:
    envs = AtariVectorEnv(GAME, num_envs, **ALE_OPTIONS, **({} if preprocess else RAW))
    envs.reset(seed=0)

    def step(actions: np.ndarray) -> object:
        observations = envs.step(actions)[0]
        return torch.from_numpy(observations).to(device, non_blocking=True) if preprocess else observations

    try:
        return rate(num_envs, seconds, step, device)
    finally:
        envs.close()


def gymview_env(num_envs: int, seconds: float, device: torch.device) -> float:
    envs = atari_vector_env(GAME, num_envs, device=device, **ALE_OPTIONS)
    envs.reset(seed=0)
    try:
        return rate(num_envs, seconds, lambda actions: envs.step(actions)[0], device)
    finally:
        envs.close()


def gymview_pipeline(num_envs: int, seconds: float, device: torch.device) -> float:
    envs = AtariVectorEnv(GAME, num_envs, **ALE_OPTIONS, **RAW)
    pipe = AtariPipeline(num_envs, device=device)
    observations, _ = envs.reset(seed=0)
    pipe.put(observations)
    ended = np.zeros(num_envs, dtype=bool)

    def step(actions: np.ndarray) -> torch.Tensor:
        nonlocal ended
        observations, _, terminated, truncated, _ = envs.step(actions)  # overlaps batch t-1 in the thread
        stacked = pipe.get()
        pipe.put(observations, reset_mask=ended)
        ended = terminated | truncated
        return stacked

    try:
        return rate(num_envs, seconds, step, device)
    finally:
        pipe.get()
        pipe.close()
        envs.close()


def paired_slices(num_envs: int, device: torch.device, rounds: int = 30, steps: int = 150) -> tuple[float, float]:
    """Median frames/s ratios (c)/(b) and (b)/(b), from short slices alternating in one process.

    Whole 1-3 s rows run one after another drift with the machine; slices of ``steps`` steps
    that alternate (in both orders) see the same machine. All slices step one ALE env, through
    gymview's wrapper (c) or around it (b), because a second AtariVectorEnv's idle worker
    threads disturb the first. (b)/(b), two alternating slices of the same thing, is the noise
    floor. (Stepping around the wrapper leaves its stack padding out of date: fine for timing.)
    """
    ours = atari_vector_env(GAME, num_envs, device=device, **ALE_OPTIONS)
    native = ours.env
    ours.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 4, size=(64, num_envs))

    def native_step(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(native.step(a)[0]).to(device, non_blocking=True)

    steppers = {"b": native_step, "b'": native_step, "c": lambda a: ours.step(a)[0]}

    def slice_rate(name: str) -> float:
        start = time.perf_counter()
        for index in range(steps):
            steppers[name](actions[index % 64])
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return steps * num_envs / (time.perf_counter() - start)

    ratios: dict[str, list[float]] = {"c/b": [], "b/b'": []}
    try:
        for round_index in range(rounds):
            order = ["b", "c", "b'"] if round_index % 2 else ["b'", "c", "b"]
            rates = {name: slice_rate(name) for name in order}
            ratios["c/b"].append(rates["c"] / rates["b"])
            ratios["b/b'"].append(rates["b"] / rates["b'"])
    finally:
        ours.close()
    return statistics.median(ratios["c/b"]), statistics.median(ratios["b/b'"])


def envpool_native(num_envs: int, seconds: float, device: torch.device) -> float:
    envs = envpool.make(
        "Breakout-v5", env_type="gymnasium", num_envs=num_envs, frame_skip=1, noop_max=1,
        repeat_action_probability=0.0, episodic_life=False, reward_clip=False, use_fire_reset=False,
        img_height=84, img_width=84, stack_num=4, gray_scale=True,
    )
    envs.reset()

    def step(actions: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(envs.step(actions)[0]).to(device, non_blocking=True)

    try:
        return rate(num_envs, seconds, step, device)
    finally:
        envs.close()


class Cv2Loop:
    """The per-env loop users write: gray, INTER_AREA resize and a shifted stack, env by env."""

    def __init__(self, num_envs: int, stack: int = 4) -> None:
        self.stacks = np.zeros((num_envs, stack, 84, 84), np.uint8)

    def __call__(self, frames: np.ndarray, reset: np.ndarray) -> torch.Tensor:
        for index, frame in enumerate(frames):
            small = cv2.resize(cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY), (84, 84), interpolation=cv2.INTER_AREA)
            if reset[index]:
                self.stacks[index] = small
            else:
                self.stacks[index, :-1] = self.stacks[index, 1:]
                self.stacks[index, -1] = small
        return torch.from_numpy(self.stacks)


def ale_with_cv2_loop(num_envs: int, seconds: float, device: torch.device) -> float:
    envs = AtariVectorEnv(GAME, num_envs, **ALE_OPTIONS, **RAW)
    observations, _ = envs.reset(seed=0)
    loop = Cv2Loop(num_envs)
    loop(observations[:, 0], np.ones(num_envs, bool))
    ended = np.zeros(num_envs, bool)

    def step(actions: np.ndarray) -> torch.Tensor:
        nonlocal ended
        observations, _, terminated, truncated, _ = envs.step(actions)
        stacked = loop(observations[:, 0], ended).to(device, non_blocking=True)
        ended = terminated | truncated
        return stacked

    try:
        return rate(num_envs, seconds, step, device)
    finally:
        envs.close()


# -- preprocessing only, on recorded frames --------------------------------------------------------


def record_frames(num_envs: int, steps: int = 32) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Raw frames of ``steps`` steps of Breakout, and reset masks restarting one env every few steps."""
    envs = AtariVectorEnv(GAME, num_envs, **ALE_OPTIONS, **RAW)
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    frames = [envs.step(rng.integers(0, 4, num_envs))[0][:, 0].copy() for _ in range(steps)]
    envs.close()
    masks = [(np.arange(num_envs) + step) % 23 == 0 for step in range(steps)]
    return frames, masks


class ReplayALE:
    """The bit of ALE's interface AtariPreprocessing reads, serving recorded screens."""

    def __init__(self, env: ReplayEnv) -> None:
        self._env = env

    def lives(self) -> int:
        return 5

    def getScreenGrayscale(self, buffer: np.ndarray) -> None:  # noqa: N802 - ALE's name
        buffer[...] = self._env.gray[self._env.index]

    def getScreenRGB(self, buffer: np.ndarray) -> None:  # noqa: N802
        buffer[...] = self._env.frames[self._env.index]


class ReplayEnv(gym.Env):
    """One env's recorded frames, in a loop, as an Atari env below gymnasium's wrappers."""

    def __init__(self, frames: list[np.ndarray], resets: list[bool]) -> None:
        self.frames, self.resets, self.index = frames, resets, 0
        self.gray = [cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY) for frame in frames]
        self.observation_space = gym.spaces.Box(0, 255, frames[0].shape, np.uint8)
        self.action_space = gym.spaces.Discrete(4)
        self.ale = ReplayALE(self)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        return self.frames[self.index], {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.index = (self.index + 1) % len(self.frames)
        ended = self.resets[(self.index + 1) % len(self.frames)]
        return self.frames[self.index], 0.0, ended, False, {}


class ReplayVectorEnv(gym.vector.VectorEnv):
    """N envs' recorded frames as a vector env of raw RGB frames (next-step autoreset)."""

    def __init__(self, frames: list[np.ndarray], masks: list[np.ndarray]) -> None:
        self.frames, self.masks, self.index = frames, masks, 0
        self.num_envs = frames[0].shape[0]
        self.single_observation_space = gym.spaces.Box(0, 255, frames[0].shape[1:], np.uint8)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = gym.spaces.Discrete(4)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}
        self._zeros = np.zeros(self.num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        return self.frames[self.index], {}

    def step(self, actions: np.ndarray) -> tuple:
        self.index = (self.index + 1) % len(self.frames)
        ended = self.masks[(self.index + 1) % len(self.frames)]
        return self.frames[self.index], self._zeros, ended, ended & False, {}


def preprocessing_only(num_envs: int, device: torch.device, rounds: int, steps: int) -> dict[str, tuple[float, float]]:
    """{way in: (median frames/s, median ratio to the cv2 loop of the same round)} on recorded frames."""
    frames, masks = record_frames(num_envs)
    count = len(frames)
    loop, loop_again = Cv2Loop(num_envs), Cv2Loop(num_envs)
    per_env = gym.vector.SyncVectorEnv(
        [
            (lambda index: lambda: FrameStackObservation(
                AtariPreprocessing(ReplayEnv([f[index] for f in frames], [m[index] for m in masks]), frame_skip=1, noop_max=0), 4
            ))(index)
            for index in range(num_envs)
        ]
    )
    per_env.reset(seed=0)
    waits, processes = AtariPipeline(num_envs, device=device), AtariPipeline(num_envs, device=device)
    wrapped = wrap(ReplayVectorEnv(frames, masks), device=device)
    wrapped.reset(seed=0)
    actions = np.zeros(num_envs, dtype=np.int64)

    def put_get(step: int) -> torch.Tensor:
        waits.put(frames[step % count], reset_mask=masks[step % count])
        return waits.get()

    ways = {
        "per-env cv2 loop (the reference)": lambda step: loop(frames[step % count], masks[step % count]).to(device),
        "gymnasium AtariPreprocessing+FrameStack": lambda step: torch.from_numpy(per_env.step(actions)[0]).to(device),
        "AtariPipeline put() then get()": put_get,
        "AtariPipeline process()": lambda step: processes.process(frames[step % count], masks[step % count]),
        "wrap(vector env)": lambda step: wrapped.step(actions)[0],
        "per-env cv2 loop again (noise floor)": lambda step: loop_again(frames[step % count], masks[step % count]).to(device),
    }
    rates: dict[str, list[float]] = {name: [] for name in ways}
    ratios: dict[str, list[float]] = {name: [] for name in ways}
    reference = next(iter(ways))
    try:
        for name, run in ways.items():  # warm-up: first calls allocate and start threads
            for step in range(5):
                run(step)
        for round_index in range(rounds):
            names = list(ways) if round_index % 2 else list(reversed(ways))
            this_round = {}
            for name in names:
                start = time.perf_counter()
                for step in range(steps):
                    out = ways[name](step)
                if device.type == "cuda":
                    out.sum().item()
                this_round[name] = steps * num_envs / (time.perf_counter() - start)
            for name in ways:
                rates[name].append(this_round[name])
                ratios[name].append(this_round[name] / this_round[reference])
    finally:
        waits.close()
        processes.close()
        wrapped.close()
        per_env.close()
    return {name: (statistics.median(rates[name]), statistics.median(ratios[name])) for name in ways}


def put_get_runs(num_envs: int, device: torch.device, runs: int, rounds: int, steps: int) -> list[dict[str, float]]:
    """Per run (fresh pipelines each): the median ratio to the cv2 loop of put()+get(), process() and
    process() again, over alternating slices."""
    frames, masks = record_frames(num_envs)
    count = len(frames)
    results = []
    for _ in range(runs):
        loop = Cv2Loop(num_envs)
        # One pipeline serves every way: of three identical pipelines the first made ran 2-4% slower
        # whichever way it served (where its buffers lie), as much as is measured here.
        pipe = AtariPipeline(num_envs, device=device)

        def put_get(step: int) -> torch.Tensor:
            pipe.put(frames[step % count], reset_mask=masks[step % count])
            return pipe.get()

        ways = {
            "cv2 loop": lambda step: loop(frames[step % count], masks[step % count]).to(device),
            "put() then get()": put_get,
            "process()": lambda step: pipe.process(frames[step % count], masks[step % count]),
            "process() again": lambda step: pipe.process(frames[step % count], masks[step % count]),
        }
        ratios: dict[str, list[float]] = {name: [] for name in ways}
        try:
            for run in ways.values():
                for step in range(5):
                    run(step)
            for round_index in range(rounds):
                seconds = {}
                # a new order each round (seeded): a slice right after the cv2 loop finds the caches
                # cold, which cost the way that always came next 3-4% in a fixed or rotated order
                order = list(ways)
                random.Random(round_index).shuffle(order)
                for name in order:
                    start = time.perf_counter()
                    for step in range(steps):
                        out = ways[name](step)
                    if device.type == "cuda":
                        out.sum().item()
                    seconds[name] = time.perf_counter() - start
                for name in ways:
                    ratios[name].append(seconds["cv2 loop"] / seconds[name])
        finally:
            pipe.close()
        results.append({name: statistics.median(values) for name, values in ratios.items()})
    return results


def put_get_table(env_counts: list[int], device: torch.device, runs: int, rounds: int) -> None:
    for num_envs in env_counts:
        print(f"\nput() then get() against process(), {num_envs} envs, {runs} runs of {rounds} shuffled rounds "
              "(ratio to the per-env cv2 loop, medians)")
        print(f"{'run':<6}{'put()+get()':>14}{'process()':>12}{'process() again':>18}{'put+get / process':>20}{'floor':>8}")
        for index, row in enumerate(put_get_runs(num_envs, device, runs, rounds, steps=max(10, 1200 // num_envs)), 1):
            put_get, process, again = row["put() then get()"], row["process()"], row["process() again"]
            print(f"{index:<6}{put_get:>14.2f}{process:>12.2f}{again:>18.2f}{put_get / process:>20.3f}{again / process:>8.3f}",
                  flush=True)
        put_get, process = bookkeeping(num_envs, device)
        print(f"bookkeeping alone (the conversion a 200 us busy wait): put()+get() {put_get:.2f} us a batch, "
              f"process() {process:.2f} us, difference {put_get - process:.2f} us")


def bookkeeping(num_envs: int, device: torch.device, rounds: int = 40, batches: int = 500) -> tuple[float, float]:
    """Microseconds a batch of put()+get() and of process() when converting costs a fixed 200 us busy wait:
    what each way adds to the conversion (medians of alternating slices). The wait keeps put() converting in
    the caller, as it does for a caller that asks for each batch at once; a free conversion would not."""
    frames, mask = record_frames(num_envs, steps=1)[0][0], np.zeros(num_envs, bool)
    pipe = AtariPipeline(num_envs, device=device)
    result = pipe.process(frames)

    def busy_wait(*batch: object) -> object:
        end = time.perf_counter() + 0.0002
        while time.perf_counter() < end:
            pass
        return result, None

    pipe._convert = busy_wait  # the benchmark's seam: only the pipeline's own work is left to time
    ways = {"put()+get()": lambda: (pipe.put(frames, reset_mask=mask), pipe.get()),
            "process()": lambda: pipe.process(frames, mask)}
    micros: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for round_index in range(rounds):
            for name in (list(ways) if round_index % 2 else list(ways)[::-1]):
                start = time.perf_counter()
                for _ in range(batches):
                    ways[name]()
                micros[name].append((time.perf_counter() - start) / batches * 1e6)
    finally:
        pipe.close()
    return statistics.median(micros["put()+get()"]), statistics.median(micros["process()"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="8 and 32 envs, 1 s a row")
    parser.add_argument("--envs", type=int, nargs="+", help="numbers of envs (default 8 32 128)")
    parser.add_argument("--seconds", type=float, help="timing per row (default 3, quick 1)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per cell; medians are printed")
    parser.add_argument("--device", default="auto", help="auto (cuda if available), cpu or cuda")
    parser.add_argument("--only", choices=["stepping", "preprocessing", "putget"], help="one of the tables")
    parser.add_argument("--runs", type=int, default=5, help="--only putget: runs, each with fresh pipelines")
    parser.add_argument("--rounds", type=int, default=15, help="alternating rounds of the preprocessing-only table")
    args = parser.parse_args()
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else args.device.replace("auto", "cpu"))
    env_counts = args.envs or ([8] if args.only == "putget" else [8, 32] if args.quick else [8, 32, 128])
    seconds = args.seconds or (1.0 if args.quick else 3.0)
    with AtariPipeline(1, device=device) as probe:
        backend = probe.backend
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"device: {device} ({name}); torch {torch.__version__}, {torch.get_num_threads()} threads; pipeline backend: {backend}")
    if args.only in (None, "stepping"):
        stepping_table(env_counts, seconds, args.repeats, device)
    if args.only in (None, "preprocessing"):
        preprocessing_table(env_counts, device, args.rounds)
    if args.only == "putget":
        put_get_table(env_counts, device, args.runs, args.rounds)


def stepping_table(env_counts: list[int], seconds: float, repeats: int, device: torch.device) -> None:
    rows = [
        ("(a) gymnasium AtariPreprocessing+FrameStack per env", lambda n: gymnasium_per_env(n, seconds, device)),
        ("(b) ale_py native preprocessing + .to(device)", lambda n: ale(n, seconds, device)),
        ("(c) gymview atari_vector_env", lambda n: gymview_env(n, seconds, device)),
        ("(c') gymview AtariPipeline on raw ALE frames", lambda n: gymview_pipeline(n, seconds, device)),
        ("(u) ale_py raw frames + per-env cv2 loop", lambda n: ale_with_cv2_loop(n, seconds, device)),
        ("    stepping only: gymnasium raw frames", lambda n: gymnasium_per_env(n, seconds, device, preprocess=False)),
        ("    stepping only: ale_py raw frames", lambda n: ale(n, seconds, device, preprocess=False)),
    ]
    if envpool is not None:
        rows.insert(4, (f"(d) envpool {envpool.__version__} native preprocessing", lambda n: envpool_native(n, seconds, device)))
    print(f"{'frames/s, stepping included':<52}" + "".join(f"{f'{n} envs':>12}" for n in env_counts))
    results: dict[str, list[float]] = {}
    for label, run in rows:  # each row printed as soon as it is measured; repeats give medians
        results[label] = [statistics.median(run(n) for _ in range(repeats)) for n in env_counts]
        print(f"{label:<52}" + "".join(f"{value:>12,.0f}" for value in results[label]), flush=True)
    by_key = {label.split()[0]: values for label, values in results.items() if label.startswith("(")}
    for ours in ("(c)", "(c')"):
        for reference in ("(a)", "(b)") + (("(d)",) if envpool is not None else ()):
            ratios = [value / base for value, base in zip(by_key[ours], by_key[reference])]
            print(f"{ours} / {reference}{'':<{44 - len(ours) - len(reference)}}" + "".join(f"{ratio:>12.2f}" for ratio in ratios))
    pairs = [paired_slices(n, device) for n in env_counts]
    print(f"{'(c) / (b), alternating slices, median':<52}" + "".join(f"{c_over_b:>12.3f}" for c_over_b, _ in pairs))
    print(f"{'(b) / (b) again: the noise floor':<52}" + "".join(f"{floor:>12.3f}" for _, floor in pairs))


def preprocessing_table(env_counts: list[int], device: torch.device, rounds: int) -> None:
    results = {n: preprocessing_only(n, device, rounds=rounds, steps=max(10, 1200 // n)) for n in env_counts}
    with AtariPipeline(max(env_counts), device=device) as probe:
        probe.process(np.zeros((max(env_counts), 210, 160, 3), np.uint8))  # the frame size decides the threads
        threads = probe.threads
    print(f"\npreprocessing only, recorded frames ({rounds} alternating rounds; pipeline: {probe.backend}, "
          f"{threads} thread(s) at {max(env_counts)} envs)")
    names = list(results[env_counts[0]])
    print(f"{'frames/s (median)':<52}" + "".join(f"{f'{n} envs':>12}" for n in env_counts))
    for name in names:
        print(f"{name:<52}" + "".join(f"{results[n][name][0]:>12,.0f}" for n in env_counts))
    print(f"{'ratio to the cv2 loop of the same round (median)':<52}" + "".join(f"{f'{n} envs':>12}" for n in env_counts))
    for name in names[1:]:
        print(f"{name:<52}" + "".join(f"{results[n][name][1]:>12.2f}" for n in env_counts))


if __name__ == "__main__":
    main()
