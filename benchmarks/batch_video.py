"""MountainCar goal reaches to video: gymnasium's RecordVideo vs gymview.record_batch.

    python benchmarks/batch_video.py [--episodes 100] [--workers N] [--baseline-episodes 100] [--repeats 3] [--layouts]

Every episode uses the goal-reaching policy (push in the direction of the velocity) and is
written to its own MP4. Measured side by side in one run:

* ``RecordVideo``: gymnasium's wrapper, serial, every episode recorded (pygame + moviepy);
* ``record_batch``: gymview, worker processes, numpy renderer, libx264 ultrafast, one file each;
  ``--layouts`` adds the mosaic and concat layouts (run by run, their frames/s and CPU per episode
  frame against per-episode files of the same repeat);
* the x264 ceiling: libx264 ultrafast, crf 23, the same frame size, one encoder per core, each
  encoding its share of the frames as one stream from memory (I420 planes made beforehand, handed
  to x264 through PyAV without a copy): what record_batch would reach if simulating, drawing,
  converting and starting files were free.

Reported: wall time, frames/s, peak memory (RSS summed over the process tree), CPU time per frame
(this process and its workers) and ratios; the target is the frames/s ratio, the CPU one shows the
same comparison where other work on the machine took cores from one side more than the other.
RecordVideo runs on ``--baseline-episodes`` episodes (its frames/s does not depend on the count).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import resource
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
        self.cpu = 0.0  # the sampler thread's own CPU time, left out of "this process"
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
            self.cpu = time.thread_time()
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


_I420: list[np.ndarray] = []  # episodes of frames as I420 planes, inherited by forked workers


def _encode_stream(share: int, frames: int, path: str) -> int:
    """One core's share of the ceiling: ``frames`` frames through one libx264 stream into one file.

    PyAV straight, the frames wrapped where they lie (``from_numpy_buffer``, no copy): x264 copies
    each frame in itself, and any copy before it would count for the ceiling, not against gymview.
    """
    import av

    height, width = _HEIGHT_WIDTH
    pictures = [
        av.VideoFrame.from_numpy_buffer(frame.reshape(height * 3 // 2, width), format="yuv420p")
        for episode in _I420
        for frame in episode
    ]
    with av.open(path, "w", format="mp4", container_options={"movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.gop_size = 30  # a key frame a second, as gymview's files have
        stream.codec_context.thread_count = 1
        stream.codec_context.options = {"crf": "23", "preset": "ultrafast"}
        for index in range(frames):
            picture = pictures[(share * 7919 + index) % len(pictures)]
            picture.pts = index
            container.mux(stream.encode(picture))
        container.mux(stream.encode(None))
    return frames


_HEIGHT_WIDTH = (0, 0)


def run_ceiling(frames: int, workers: int, folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    shares = [frames // workers + (share < frames % workers) for share in range(workers)]
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        paths = [str(folder / f"ceiling-{share}.mp4") for share in range(workers)]
        return sum(pool.map(_encode_stream, range(workers), shares, paths))


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


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (a pool's workers, once shut down)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(name: str, function, results: dict) -> None:  # noqa: ANN001
    with PeakMemory() as memory:
        start, cpu, own = time.perf_counter(), cpu_seconds(), time.process_time()
        frames = function()
        seconds, cpu, own = time.perf_counter() - start, cpu_seconds() - cpu, time.process_time() - own
    own -= memory.cpu
    results[name] = (seconds, frames, memory.peak, cpu)
    # "this process": the caller's share (for concat, the joining), the memory sampler's thread left out
    print(f"  {name:34s} {seconds:8.1f} s {frames:8d} frames {frames / seconds:8.0f} frames/s {memory.peak / 2**20:8.0f} MiB"
          f" {cpu / frames * 1e3:7.3f} CPU ms/frame ({own / frames * 1e3:.4f} this process)"
          f"  (load {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--workers", type=int, default=None, help="default: record_batch's default, one per core")
    parser.add_argument("--baseline-episodes", type=int, default=None, help="RecordVideo episodes (default: min(episodes, 100); 0 skips it)")
    parser.add_argument("--repeats", type=int, default=1, help="interleaved runs of record_batch and the ceiling")
    parser.add_argument("--layouts", action="store_true", help="also the mosaic and concat layouts")
    args = parser.parse_args()
    workers = args.workers or (os.cpu_count() or 1)
    baseline_episodes = min(args.episodes, 100) if args.baseline_episodes is None else args.baseline_episodes
    print(f"{ENV_ID}, goal-reaching policy, one file per episode; {os.cpu_count()} cores, {workers} workers")
    results: dict[str, tuple[float, int, int, float]] = {}
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    layout_ratios: dict[str, list[tuple[float, float]]] = {}  # layout -> (frames/s, CPU per frame) / per-episode's, run by run
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        if baseline_episodes:
            measure(f"RecordVideo x{baseline_episodes} (serial)", lambda: run_record_video(baseline_episodes, root / "rv"), results)
        batch: dict[str, gymview.BatchResult] = {}

        def run_batch(layout: str) -> int:
            result = batch[layout] = gymview.record_batch(
                ENV_ID, push, episodes=args.episodes, out=root / layout, workers=workers, progress=False, layout=layout
            )
            return sum(row["frames"] for row in result.table)

        global _HEIGHT_WIDTH
        frames = episode_frames(range(4))
        _HEIGHT_WIDTH = frames[0].shape[1:3]
        _I420[:] = [np.stack([I420Converter(*f.shape[2:0:-1]).convert(frame).copy() for frame in f]) for f in frames]
        layouts = ["per-episode", *(["mosaic", "concat"] if args.layouts else [])]
        for repeat in range(args.repeats):  # interleaved: a slow spell of the machine hits both
            for layout in layouts if repeat % 2 == 0 else layouts[::-1]:  # ABBA: neither layout always first
                measure(f"record_batch {layout} x{args.episodes}", lambda: run_batch(layout), results)
                assert not batch[layout].failed, batch[layout].failed[:3]
            total = results[f"record_batch per-episode x{args.episodes}"][1]
            measure(f"x264 ceiling, {total} frames", lambda: run_ceiling(total, workers, root / "ceiling"), results)
            batch_name, ceiling_name = f"record_batch per-episode x{args.episodes}", f"x264 ceiling, {total} frames"
            ratios.append(rate(results, batch_name) / rate(results, ceiling_name))
            for layout in layouts[1:]:
                name = f"record_batch {layout} x{args.episodes}"
                layout_ratios.setdefault(layout, []).append(
                    (rate(results, name) / rate(results, batch_name), cpu_per_frame(results, batch_name) / cpu_per_frame(results, name)))
            cpu_ratios.append(cpu_per_frame(results, ceiling_name) / cpu_per_frame(results, batch_name))
    print("ratios (frames/s):")
    batch_name = f"record_batch per-episode x{args.episodes}"
    if baseline_episodes:
        baseline = f"RecordVideo x{baseline_episodes} (serial)"
        print(f"  record_batch / RecordVideo               {rate(results, batch_name) / rate(results, baseline):6.1f}x")
    print(f"  record_batch / x264 ceiling, run by run  {', '.join(f'{r:.2f}' for r in ratios)}   (target >= 0.80)")
    print(f"  the same in CPU time per frame           {', '.join(f'{r:.2f}' for r in cpu_ratios)}   (what load takes less from)")
    for layout, pairs in layout_ratios.items():  # above 1: faster per episode frame than per-episode files
        print(f"  {layout} / per-episode, frames/s run by run  {', '.join(f'{r:.2f}' for r, _ in pairs)}")
        print(f"  {layout} / per-episode, in CPU per frame     {', '.join(f'{r:.2f}' for _, r in pairs)}   (target >= 1)")
    seconds = results[batch_name][0]
    print(f"  1000 episodes at this rate               {seconds / args.episodes * 1000:6.0f} s")


def rate(results: dict, name: str) -> float:
    seconds, frames, _, _ = results[name]
    return frames / seconds


def cpu_per_frame(results: dict, name: str) -> float:
    _, frames, _, cpu = results[name]
    return cpu / frames


if __name__ == "__main__":
    main()
