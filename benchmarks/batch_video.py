"""MountainCar goal reaches to video: gymnasium's RecordVideo vs gymview.record_batch.

    python benchmarks/batch_video.py [--episodes 100] [--workers N] [--baseline-episodes 100]

Every episode uses the goal-reaching policy (push in the direction of the velocity) and is
written to its own MP4. Measured side by side in one run:

* ``RecordVideo``: gymnasium's wrapper, serial, every episode recorded (pygame + moviepy);
* ``record_batch``: gymview, worker processes, numpy renderer, libx264 ultrafast;
* the encoder ceiling: the same number of files encoded from frames already in memory, with
  the same workers and encoder settings (gymview's VideoRecorder, and bare ffmpeg without the
  final faststart copy) -- what record_batch would reach if simulating and drawing were free.

Reported: wall time, frames/s, peak memory (RSS summed over the process tree) and ratios.
RecordVideo runs on ``--baseline-episodes`` episodes (its frames/s does not depend on the count).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import psutil  # noqa: E402
from recording import mountain_car_episodes  # noqa: E402  (benchmarks/recording.py, beside this file)

import gymview  # noqa: E402
from gymview.image.yuv import I420Converter  # noqa: E402
from gymview.renderers import renderer_for  # noqa: E402

ENV_ID = "MountainCar-v0"


def push(observation: np.ndarray) -> int:
    """Goal-reaching policy: accelerate in the direction of the velocity."""
    return 2 if observation[1] >= 0 else 0


class PeakMemory:
    """Sample the RSS of this process and all its children every 50 ms; keep the peak."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for process in [me, *me.children(recursive=True)]:
                try:
                    total += process.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(0.05)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_record_video(episodes: int, folder: Path) -> int:
    """The baseline: gymnasium's RecordVideo, serial, one file per episode (as in recording.py)."""
    return mountain_car_episodes("gymnasium", episodes, str(folder))


_FRAMES: list[np.ndarray] = []  # episodes of frames for the ceiling, inherited by forked workers
_I420: list[np.ndarray] = []  # the same frames already converted to I420 planes


def _encode_file(index: int, folder: str, bare: str | None) -> int:
    frames = _FRAMES[index % len(_FRAMES)] if bare != "yuv420p" else _I420[index % len(_I420)]
    path = Path(folder) / f"ceiling-{index:04d}.mp4"
    if bare:
        from gymview.video.ffmpeg import FFmpegProcess, encode_command, find_ffmpeg

        height, width = _FRAMES[0].shape[1:3]
        command = encode_command(find_ffmpeg(), path, width=width, height=height, fps=30, preset="ultrafast",
                                 threads=1, fragmented=False, input_format=bare)  # fmt: skip
        process = FFmpegProcess(command)
        for frame in frames:
            process.write(frame.data)
        if process.finish() != 0:
            raise process.error("ceiling encode failed")
    else:
        from gymview.video.recorder import VideoRecorder

        with VideoRecorder(path, fps=30, preset="ultrafast", threads=1) as recorder:
            for frame in frames:
                recorder.write(frame)
    return len(frames)


def run_ceiling(episodes: int, workers: int, folder: Path, bare: str | None) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        return sum(pool.map(_encode_file, range(episodes), [str(folder)] * episodes, [bare] * episodes))


def episode_frames(seeds: range) -> list[np.ndarray]:
    env = gym.make(ENV_ID)
    renderer = renderer_for(env)
    episodes = []
    for seed in seeds:
        observation, _ = env.reset(seed=seed)
        states = [renderer.state_of(env)]
        done = False
        while not done:
            observation, _, terminated, truncated, _ = env.step(push(observation))
            states.append(renderer.state_of(env))
            done = terminated or truncated
        episodes.append(renderer.render(np.stack(states)))
    return episodes


def measure(name: str, function, results: dict) -> None:  # noqa: ANN001
    with PeakMemory() as memory:
        start = time.perf_counter()
        frames = function()
        seconds = time.perf_counter() - start
    results[name] = (seconds, frames, memory.peak)
    print(f"  {name:34s} {seconds:8.1f} s {frames:8d} frames {frames / seconds:8.0f} frames/s {memory.peak / 2**20:8.0f} MiB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--workers", type=int, default=None, help="default: record_batch's default, one per core")
    parser.add_argument("--baseline-episodes", type=int, default=None, help="RecordVideo episodes (default: min(episodes, 100); 0 skips it)")
    args = parser.parse_args()
    workers = args.workers or (os.cpu_count() or 1)
    baseline_episodes = min(args.episodes, 100) if args.baseline_episodes is None else args.baseline_episodes
    print(f"{ENV_ID}, goal-reaching policy, one file per episode; {os.cpu_count()} cores, {workers} workers")
    results: dict[str, tuple[float, int, int]] = {}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        if baseline_episodes:
            measure(f"RecordVideo x{baseline_episodes} (serial)", lambda: run_record_video(baseline_episodes, root / "rv"), results)
        batch = {}

        def run_batch() -> int:
            batch["result"] = gymview.record_batch(ENV_ID, push, episodes=args.episodes, out=root / "gv", workers=workers, progress=False)
            return sum(row["frames"] for row in batch["result"].table)

        measure(f"record_batch x{args.episodes}", run_batch, results)
        assert not batch["result"].failed, batch["result"].failed[:3]
        assert all(row["terminated"] for row in batch["result"].table)
        _FRAMES[:] = episode_frames(range(4))
        _I420[:] = [np.stack([I420Converter(*frames.shape[2:0:-1]).convert(frame).copy() for frame in frames]) for frames in _FRAMES]
        measure(f"ceiling: VideoRecorder x{args.episodes}", lambda: run_ceiling(args.episodes, workers, root / "c1", None), results)
        measure(f"ceiling: bare ffmpeg x{args.episodes}", lambda: run_ceiling(args.episodes, workers, root / "c2", "rgb24"), results)
        measure(f"ceiling: bare ffmpeg I420 x{args.episodes}", lambda: run_ceiling(args.episodes, workers, root / "c3", "yuv420p"), results)
    rate = {name: frames / seconds for name, (seconds, frames, _) in results.items()}
    batch_name = f"record_batch x{args.episodes}"
    print("ratios (frames/s):")
    if baseline_episodes:
        baseline = f"RecordVideo x{baseline_episodes} (serial)"
        print(f"  record_batch / RecordVideo            {rate[batch_name] / rate[baseline]:6.1f}x   (target >= 6x)")
    print(f"  record_batch / VideoRecorder ceiling   {rate[batch_name] / rate[f'ceiling: VideoRecorder x{args.episodes}']:6.0%}   (target >= 80%)")
    print(f"  record_batch / bare ffmpeg, RGB in     {rate[batch_name] / rate[f'ceiling: bare ffmpeg x{args.episodes}']:6.0%}")
    print(f"  record_batch / bare ffmpeg, I420 in    {rate[batch_name] / rate[f'ceiling: bare ffmpeg I420 x{args.episodes}']:6.0%}   (encoding only)")
    seconds = results[batch_name][0]
    print(f"  1000 episodes at this rate             {seconds / args.episodes * 1000:6.0f} s   (target < 120 s)")


if __name__ == "__main__":
    main()
