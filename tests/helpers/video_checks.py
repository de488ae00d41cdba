"""Helpers the recording tests share: decode videos back, read MP4 boxes, make recognisable frames."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path

import imageio_ffmpeg
import numpy as np


def decode(path: str | os.PathLike[str]) -> np.ndarray:
    """Every frame of the video as an (N, H, W, 3) uint8 array (N may be 0)."""
    reader = imageio_ffmpeg.read_frames(os.fspath(path))
    meta = next(reader)
    width, height = meta["size"]
    frames = [np.frombuffer(data, np.uint8).reshape(height, width, 3) for data in reader]
    return np.stack(frames) if frames else np.zeros((0, height, width, 3), np.uint8)


def top_level_boxes(path: str | os.PathLike[str]) -> list[str]:
    """Names of the MP4 file's top-level boxes, in order (ftyp, moov, mdat, moof, ...)."""
    names, data = [], Path(path).read_bytes()
    offset = 0
    while offset + 8 <= len(data):
        size, name = struct.unpack(">I4s", data[offset : offset + 8])
        if size == 1:
            size = struct.unpack(">Q", data[offset + 8 : offset + 16])[0]
        names.append(name.decode("latin-1"))
        if size < 8:
            break
        offset += size
    return names


def pattern(index: int, height: int = 96, width: int = 128) -> np.ndarray:
    """A smooth frame that says which frame it is: a gradient and a square whose place is ``index``."""
    y, x = np.mgrid[0:height, 0:width]
    frame = np.stack([x * 200 // width, y * 200 // height, np.full_like(x, 60)], axis=2).astype(np.uint8)
    left = (index * 7) % (width - 24)
    top = (index * 3) % (height - 24)
    frame[top : top + 24, left : left + 24] = (250, 250, 40)
    return frame


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    error = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if error == 0 else 10 * np.log10(255.0**2 / error)


def random_states(env, renderer, count: int, seed: int) -> np.ndarray:
    """``count`` states (``renderer.state_of``) of ``env`` under random actions, reset where an
    episode ends: a jump, as between two videos."""
    env.reset(seed=seed)
    env.action_space.seed(seed)
    states = []
    for _ in range(count):
        states.append(renderer.state_of(env))
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    return np.stack(states)


def frames_decodable(path: str | os.PathLike[str]) -> int:
    """Frames of the video that decode now (0 while it has none, or is being written and cannot be read yet),
    counted as they decode and none kept: a video a running batch still grows may hold thousands."""
    try:
        reader = imageio_ffmpeg.read_frames(os.fspath(path))
        next(reader)
        return sum(1 for _ in reader)
    except (RuntimeError, StopIteration, OSError):
        return 0


def kill_once_on_disk(source: str, path: Path, frames: int, cwd: Path | None = None) -> None:
    """Run ``source`` in a child Python; SIGKILL it once ``frames`` frames of ``path`` decode."""
    child = subprocess.Popen([sys.executable, "-c", source], cwd=cwd or Path(__file__).resolve().parents[2])
    try:
        for _ in range(1200):  # a guard, not a timing: at most a minute
            if path.exists() and frames_decodable(path) >= frames:
                break
            threading.Event().wait(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
