"""NVENC against libx264 through gymview's encoder, on the same frames.

    python benchmarks/nvenc.py [--frames 3000] [--rounds 5]

Encodes the same MountainCar goal-reaching frames (600x400, I420 planes made beforehand, so only
the encoder is timed) through ``gymview.video.encoder.VideoEncoder`` — the path ``VideoRecorder``,
``RecordVideo`` and ``record_batch`` use — once with ``codec="libx264"`` (ultrafast, crf 23, one
thread: record_batch's settings) and once with ``codec="h264_nvenc"`` (NVENC's defaults), in
alternating rounds, one file each. Prints each round's frames/s, the medians and nvenc / x264.

Needs an NVIDIA GPU and its driver (``libnvidia-encode``, loaded by FFmpeg at run time), and the
packages gymview already installs: PyAV's PyPI wheels (``av`` 18.1 here) carry an FFmpeg that has
``h264_nvenc``. Where NVENC cannot be opened it says why and exits 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

from gymview.image.yuv import I420Converter  # noqa: E402
from gymview.renderers import renderer_for  # noqa: E402
from gymview.video.encoder import VideoEncoder, check_encoder  # noqa: E402

SETTINGS = {"libx264": dict(crf=23, preset="ultrafast", threads=1), "h264_nvenc": dict(threads=None)}


def goal_frames(count: int) -> list[np.ndarray]:
    """I420 planes of ``count`` MountainCar frames, goal-reaching episodes one after another."""
    env = gym.make("MountainCar-v0")
    renderer = renderer_for(env)
    states, seed = [], 0
    while len(states) < count:
        observation, _ = env.reset(seed=seed)
        states.append(renderer.state_of(env))
        done = False
        while not done and len(states) < count:
            observation, _, terminated, truncated, _ = env.step(2 if observation[1] >= 0 else 0)
            states.append(renderer.state_of(env))
            done = terminated or truncated
        seed += 1
    converter = I420Converter(renderer.width, renderer.height)
    return [converter.convert(frame).copy() for frame in renderer.render(np.stack(states))]


def nvenc_missing() -> str | None:
    """Why h264_nvenc cannot encode here, or None."""
    try:
        check_encoder("h264_nvenc")
        with tempfile.TemporaryDirectory() as folder:
            encoder = VideoEncoder(64, 64, fps=30, codec="h264_nvenc", threads=None)
            encoder.start(os.path.join(folder, "probe.mp4"), fragmented=False)
            encoder.encode(np.zeros(64 * 64 * 3 // 2, np.uint8))
            encoder.finish()
    except Exception as error:  # no encoder in this FFmpeg, no GPU, no driver
        return f"{type(error).__name__}: {error}"
    return None


def encode(codec: str, frames: list[np.ndarray], width: int, height: int, folder: str) -> float:
    """Frames/s of one file of ``frames`` through ``codec``."""
    encoder = VideoEncoder(width, height, fps=30, codec=codec, **SETTINGS[codec])
    start = time.perf_counter()
    encoder.start(os.path.join(folder, f"{codec}.mp4"), fragmented=False)
    for planes in frames:
        encoder.encode(planes)
    encoder.finish()
    return len(frames) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    why = nvenc_missing()
    if why is not None:
        print(f"skipped: h264_nvenc is not usable here ({why}). It needs an NVIDIA GPU and its driver.")
        return
    frames = goal_frames(args.frames)
    width, height = 600, 400
    rates: dict[str, list[float]] = {codec: [] for codec in SETTINGS}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):  # alternating, so a slow spell hits both
            for codec in SETTINGS:
                rates[codec].append(encode(codec, frames, width, height, folder))
            print(f"round {round_}: " + ", ".join(f"{codec} {rates[codec][-1]:.0f} frames/s" for codec in SETTINGS))
    x264, nvenc = (statistics.median(rates[codec]) for codec in SETTINGS)
    print(f"medians: libx264 {x264:.0f} frames/s, h264_nvenc {nvenc:.0f} frames/s; nvenc / x264 = {nvenc / x264:.2f}")


if __name__ == "__main__":
    main()
