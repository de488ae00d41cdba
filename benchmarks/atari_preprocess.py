"""Frames/s to network-ready stacked Atari tensors on the target device, side by side.

    python benchmarks/atari_preprocess.py            # 8, 32 and 128 envs, 3 s a row
    python benchmarks/atari_preprocess.py --quick    # 8 and 32 envs, 1 s a row

Rows, for N envs of Breakout (frameskip=1, 84x84 gray, stack 4, uint8 on the device):
  (a) gymnasium: SyncVectorEnv of AtariPreprocessing + FrameStackObservation per env, then .to(device)
  (b) ale_py AtariVectorEnv with its native C++ preprocessing, then one batched .to(device)
  (c) gymview atari_vector_env(): on CUDA raw ALE frames through the GPU AtariPipeline, on the CPU (b)'s
      native path with gymview's stack padding
  (c') gymview AtariPipeline fed by raw ALE frames (the path for any vector env), env stepping t+1
      overlapping the processing of batch t in the pipeline's thread
Stepping cost alone: raw RGB frames from the same envs with no preprocessing, and the pipeline alone
on recorded frames (no env), so the preprocessing share is visible. Last, (c) against (b) in short
slices alternating in one process, with (b) against a second (b) as the noise floor: rows of 1-3 s
run one after another differ by more than (c) and (b) do on the CPU, where (c) is (b) plus a few
microseconds of bookkeeping a step.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import ale_py
import gymnasium as gym
import numpy as np
import torch
from ale_py.vector_env import AtariVectorEnv
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

from gymview.atari import AtariPipeline, atari_vector_env

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


def pipeline_alone(num_envs: int, seconds: float, device: torch.device) -> float:
    envs = AtariVectorEnv(GAME, num_envs, **ALE_OPTIONS, **RAW)
    envs.reset(seed=0)
    recorded = [envs.step(np.full(num_envs, index % 4))[0] for index in range(8)]
    envs.close()
    counter = iter(range(1 << 62))
    with AtariPipeline(num_envs, device=device) as pipe:
        return rate(num_envs, seconds, lambda actions: pipe.process(recorded[next(counter) % 8]), device)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="8 and 32 envs, 1 s a row")
    parser.add_argument("--envs", type=int, nargs="+", help="numbers of envs (default 8 32 128)")
    parser.add_argument("--seconds", type=float, help="timing per row (default 3, quick 1)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per cell; medians are printed")
    parser.add_argument("--device", default="auto", help="auto (cuda if available), cpu or cuda")
    args = parser.parse_args()
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else args.device.replace("auto", "cpu"))
    env_counts = args.envs or ([8, 32] if args.quick else [8, 32, 128])
    seconds = args.seconds or (1.0 if args.quick else 3.0)
    with AtariPipeline(1, device=device) as probe:
        backend = probe.backend
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"device: {device} ({name}); torch {torch.__version__}, {torch.get_num_threads()} threads; pipeline backend: {backend}")
    rows = [
        ("(a) gymnasium AtariPreprocessing+FrameStack per env", lambda n: gymnasium_per_env(n, seconds, device)),
        ("(b) ale_py native preprocessing + .to(device)", lambda n: ale(n, seconds, device)),
        ("(c) gymview atari_vector_env", lambda n: gymview_env(n, seconds, device)),
        ("(c') gymview AtariPipeline on raw ALE frames", lambda n: gymview_pipeline(n, seconds, device)),
        ("    stepping only: gymnasium raw frames", lambda n: gymnasium_per_env(n, seconds, device, preprocess=False)),
        ("    stepping only: ale_py raw frames", lambda n: ale(n, seconds, device, preprocess=False)),
        ("    preprocessing only: AtariPipeline, no env", lambda n: pipeline_alone(n, seconds, device)),
    ]
    print(f"{'frames/s':<52}" + "".join(f"{f'{n} envs':>12}" for n in env_counts))
    # Interleaved repeats, medians: on a shared or throttling machine one 1-3 s row is noise.
    samples: dict[str, dict[int, list[float]]] = {label: {n: [] for n in env_counts} for label, _ in rows}
    for _ in range(args.repeats):
        for label, run in rows:
            for n in env_counts:
                samples[label][n].append(run(n))
    results = {label: [statistics.median(samples[label][n]) for n in env_counts] for label, _ in rows}
    for label, values in results.items():
        print(f"{label:<52}" + "".join(f"{value:>12,.0f}" for value in values))
    best = [max(a, b) for a, b in zip(results[rows[0][0]], results[rows[1][0]])]
    for label in (rows[2][0], rows[3][0]):
        ratios = [value / reference for value, reference in zip(results[label], best)]
        print(f"{label[:4]} / best of (a),(b){'':<30}" + "".join(f"{ratio:>12.2f}" for ratio in ratios))
    pairs = [paired_slices(n, device) for n in env_counts]
    print(f"{'(c) / (b), alternating slices, median':<52}" + "".join(f"{c_over_b:>12.3f}" for c_over_b, _ in pairs))
    print(f"{'(b) / (b) again: the noise floor':<52}" + "".join(f"{floor:>12.3f}" for _, floor in pairs))


if __name__ == "__main__":
    main()
