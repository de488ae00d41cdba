"""Episodes in recorded videos: where each one's frames are (a video may hold several: a
``record_batch`` concat, a step-triggered recording) and their rows, their frames decoded.

>>> import gymnasium as gym, gymview, tempfile, os
>>> folder = os.path.join(tempfile.mkdtemp(), "videos")
>>> env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), folder, step_trigger=lambda s: s == 0,
...                           episode_trigger=lambda e: False, video_length=12)
>>> for seed in (0, 1):
...     _ = env.reset(seed=seed)
...     for _ in range(5):
...         _ = env.step(0)
>>> env.close()
>>> clips = clips_in(os.path.join(folder, "rl-video-step-0.mp4"))
>>> [(clip.episode, clip.start, clip.count) for clip in clips]
[(0, 0, 5), (1, 5, 6)]
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from gymview.episodes.rows import jsonable
from gymview.episodes.table import read_steps

__all__ = ["Clip", "clips_in", "episode_clips", "read_frames", "video_fps"]


@dataclasses.dataclass(frozen=True)
class Clip:
    """One episode in a video: its frames ``start`` to ``start + count`` and their rows."""

    video: Path
    start: int
    rows: list[dict[str, float | int]]
    label: str

    @property
    def count(self) -> int:
        """Frames of the episode in the video."""
        return len(self.rows)

    @property
    def episode(self) -> int:
        """The episode's number (the ``episode`` column)."""
        return int(self.rows[0]["episode"])

    def summary(self) -> dict[str, Any]:
        """What the table of episodes shows of it: its last row's step, return and end."""
        last = self.rows[-1]
        return {"episode": self.episode, "steps": int(last["step"]), "return": last["return"],
                "terminated": bool(last["terminated"]), "truncated": bool(last["truncated"])}  # fmt: skip

    def columns(self) -> dict[str, list[float | int | None]]:
        """The rows as columns, for the page (JSON has no NaN: a missing value is None)."""
        names = dict.fromkeys(name for row in self.rows for name in row)
        return {name: [jsonable(row.get(name)) for row in self.rows] for name in names}


def clips_in(video: str | os.PathLike[str], label: str | None = None) -> list[Clip]:
    """The episodes in ``video``, from its step table: a new one where the ``episode`` column changes
    or ``step`` starts again at 0.

    Raises:
        FileNotFoundError: When the video has no step table (see ``gymview.read_steps``).
    """
    path = Path(os.fspath(video))
    rows = read_steps(path)
    starts = [
        index
        for index, row in enumerate(rows)
        if index == 0 or row["episode"] != rows[index - 1]["episode"] or row["step"] <= rows[index - 1]["step"]
    ]
    name = label or path.stem
    return [
        Clip(path, start, rows[start:end], name if len(starts) == 1 else f"{name} · episode {rows[start]['episode']}")
        for start, end in zip(starts, [*starts[1:], len(rows)])
    ]


def episode_clips(video: str | os.PathLike[str], episode: int | None = None) -> list[Clip]:
    """What ``show_episode`` shows of ``video``: the episode numbered ``episode``, or (None) the whole
    video as one clip.

    Raises:
        FileNotFoundError: When the video or its step table is missing.
        ValueError: When ``episode`` is not in the video.
    """
    path = Path(os.fspath(video))
    if not path.is_file():
        raise FileNotFoundError(f"no video at {str(path)!r}")
    clips = clips_in(path)
    if episode is None:
        return [Clip(path, 0, [row for clip in clips for row in clip.rows], path.stem)] if len(clips) > 1 else clips
    chosen = [clip for clip in clips if clip.episode == episode]
    if not chosen:
        found = sorted({clip.episode for clip in clips})
        raise ValueError(f"no episode {episode} in {path.name}; it holds episodes {found}")
    return chosen


def video_fps(video: str | os.PathLike[str]) -> Fraction:
    """The frame rate of the MP4 ``video``."""
    import av

    with av.open(os.fspath(video)) as container:
        rate = container.streams.video[0].average_rate or container.streams.video[0].guessed_rate
        return Fraction(rate) if rate else Fraction(30)


def read_frames(video: str | os.PathLike[str], start: int, count: int) -> Iterator[np.ndarray]:
    """RGB frames ``start`` to ``start + count`` of ``video`` (fewer where it ends), decoded one at a
    time from the key frame before ``start``."""
    import av

    with av.open(os.fspath(video)) as container:
        stream = container.streams.video[0]
        rate = Fraction(stream.average_rate or stream.guessed_rate or 30)
        if start:
            container.seek(int(Fraction(start) / rate / stream.time_base), stream=stream, backward=True)
        given = 0
        for frame in container.decode(stream):
            index = round(frame.pts * stream.time_base * rate) if frame.pts is not None else start + given
            if index < start:
                continue
            yield frame.to_ndarray(format="rgb24")
            given += 1
            if given == count:
                return
