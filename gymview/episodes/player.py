"""``gymview.show_episode``: a recorded episode played with charts of its step values under it,
one slider scrubbing both. ``EpisodePlayer`` is the widget (``js/episode.js``); several episodes
in one player play side by side with shared charts (``gymview.compare``).

>>> import gymnasium as gym, gymview, os, tempfile
>>> folder = os.path.join(tempfile.mkdtemp(), "videos")
>>> env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), folder)
>>> _ = env.reset(seed=0)
>>> for step in range(10):
...     _ = env.step(step % 2)
>>> env.close()
>>> player = show_episode(os.path.join(folder, "rl-video-episode-0.mp4"), values=["reward", "return"])
>>> player.readout(10)
'step 10 · reward 1 · return 10'
"""

from __future__ import annotations

import base64
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from gymview._internal import frontend
from gymview.episodes.charts import readout_lines
from gymview.episodes.clips import Clip, episode_clips, read_frames, video_fps
from gymview.episodes.picture import composed

__all__ = ["EpisodePlayer", "default_values", "show_episode"]

#: the columns charted when the caller names none, and how many at most
MAX_DEFAULT_VALUES = 6
_NOT_CHARTED = {"frame", "episode", "step", "terminated", "truncated"}


def default_values(clips: Sequence[Clip]) -> list[str]:
    """Reward and return, the action's columns and the other values, up to ``MAX_DEFAULT_VALUES``."""
    names = dict.fromkeys(name for clip in clips for row in clip.rows[:1] for name in row)
    names.update(dict.fromkeys(name for clip in clips for row in clip.rows[1:2] for name in row))
    return [name for name in names if name not in _NOT_CHARTED][:MAX_DEFAULT_VALUES]


class EpisodePlayer(anywidget.AnyWidget):
    """Episodes' videos side by side, charts of their step values under them, one slider for both.

    Made by ``gymview.show_episode`` (one episode) and ``gymview.compare`` (one per policy). The
    slider, a click or drag on the charts, and the arrow keys (once the player has focus) move the
    cursor; Space plays and pauses. The chips under it pick the charted values. A saved notebook
    shows the first frame and the charts as a picture.

    Args:
        clips: The episodes, from ``gymview.episodes.clips.clips_in``; frame ``i`` of each shows at once.
        values: The columns to chart (``None``: reward, return, the action's and the others, up to six).
        title: Shown above the videos.

    Attributes:
        frame: The frame at the cursor (set it to move there).
        values: The columns charted.

    Raises:
        ValueError: When a value names no column of the episodes.

    Examples:
        >>> import gymnasium as gym, gymview, os, tempfile
        >>> folder = os.path.join(tempfile.mkdtemp(), "videos")
        >>> env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), folder)
        >>> _ = env.reset(seed=0); _ = env.step(0); env.close()
        >>> from gymview.episodes.clips import clips_in
        >>> player = EpisodePlayer(clips_in(os.path.join(folder, "rl-video-episode-0.mp4")), values=["return"])
        >>> player.frame = 1
        >>> player.readout()
        'step 1 · return 1'
    """

    _esm = frontend.EPISODES_ESM  # text, not a path: see LiveView
    _css = frontend.CSS
    _view = traitlets.Unicode("player").tag(sync=True)
    _videos = traitlets.List(traitlets.Bytes()).tag(sync=True)
    _episodes = traitlets.List(traitlets.Dict()).tag(sync=True)
    fps = traitlets.Float(30.0, help="Frames per second of the videos.").tag(sync=True)
    frame = traitlets.Int(0, help="The frame at the cursor.").tag(sync=True)
    values = traitlets.List(traitlets.Unicode(), help="The columns charted.").tag(sync=True)
    title = traitlets.Unicode("", help="Shown above the videos.").tag(sync=True)

    def __init__(self, clips: Sequence[Clip], values: Sequence[str] | None = None, title: str = "") -> None:
        if not clips:
            raise ValueError("an EpisodePlayer shows at least one episode")
        self.clips = list(clips)
        chosen = default_values(self.clips) if values is None else list(values)
        known = {name for clip in self.clips for row in clip.rows for name in row}
        unknown = [name for name in chosen if name not in known]
        if unknown:
            raise ValueError(
                f"no column {unknown[0]!r} in the episode's step table; its columns: {', '.join(sorted(known))}"
            )
        super().__init__(
            _videos=[clip.video.read_bytes() for clip in self.clips],
            _episodes=[
                {"label": clip.label, "start": clip.start, "count": clip.count, "columns": clip.columns()}
                for clip in self.clips
            ],
            fps=float(video_fps(self.clips[0].video)),
            values=chosen,
            title=title,
        )

    @property
    def count(self) -> int:
        """Frames the slider spans: the longest episode's."""
        return max(clip.count for clip in self.clips)

    def _columns(self) -> list[dict[str, list[Any]]]:
        return [episode["columns"] for episode in self._episodes]

    def readout(self, frame: int | None = None) -> str:
        """The text under the charts at a frame, one line per episode.

        Args:
            frame: The frame; ``None``: the cursor's.

        Returns:
            ``"step 120 · reward 1 · value 60"`` (each line prefixed by its episode's label when several).
        """
        frame = self.frame if frame is None else frame
        return "\n".join(readout_lines([clip.label for clip in self.clips], self._columns(), self.values, frame))

    def picture(self, frame: int | None = None) -> Any:
        """The videos' frame with the charts and the readout under it: what a saved notebook shows.

        Args:
            frame: The frame; ``None``: the cursor's.

        Returns:
            A PIL image.
        """
        frame = self.frame if frame is None else frame
        pictures = [next(read_frames(clip.video, clip.start + min(frame, clip.count - 1), 1)) for clip in self.clips]
        columns, labels = self._columns(), [clip.label for clip in self.clips]
        lines = readout_lines(labels, columns, self.values, frame)
        return composed(pictures, columns, self.values, self.count, frame, lines, labels)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)  # anywidget's (data, metadata)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        png = io.BytesIO()  # the picture a saved notebook (or a page without widgets) shows
        self.picture().save(png, format="PNG")
        return {**data, "image/png": base64.b64encode(png.getvalue()).decode("ascii")}, metadata

    def __repr__(self) -> str:
        names = ", ".join(clip.label for clip in self.clips)
        return f"<EpisodePlayer {names}: {self.count} frames; charts {', '.join(self.values) or 'none'}>"


def show_episode(
    video: str | os.PathLike[str],
    values: Sequence[str] | None = None,
    episode: int | None = None,
    title: str | None = None,
) -> EpisodePlayer:
    """Play a recorded episode with charts of its step values under it, scrubbed together.

    One slider moves the video and the charts' cursor; the values at the cursor show as text
    (``step 120 · reward 1 · value 60``); the arrow keys step a frame once the player has focus,
    Space plays. The chips under the charts pick what is charted. The video is embedded in the
    notebook; a saved notebook shows its first frame and the charts as a picture.

    Args:
        video: A video with a step table beside it (``gymview.RecordVideo``, ``watch(record=...)``,
            ``record_batch``, ``compare``).
        values: The columns to chart: ``"reward"``, ``"return"``, ``"action"`` (``"action_0"``...
            for a vector), ``info``'s and logged names. ``None``: reward, return, the action's and
            the others, up to six.
        episode: For a video that holds several episodes, the one to show (its ``episode``
            column); ``None`` shows the whole video.
        title: Shown above the video; the file's name by default.

    Returns:
        The player; ``player.frame`` is the frame at its cursor.

    Raises:
        FileNotFoundError: When the video or its step table is missing.
        ValueError: When ``episode`` is not in the video, or a value names no column.

    Examples:
        >>> import gymview, tempfile
        >>> def policy(observation):
        ...     gymview.log(value=60)
        ...     return 1
        >>> result = gymview.record_batch("CartPole-v1", policy, episodes=1, out=tempfile.mkdtemp(), max_steps=3,
        ...                               workers=1, progress=False)
        >>> player = gymview.show_episode(result.files[0], values=["reward", "value"])
        >>> player.readout(2)
        'step 2 · reward 1 · value 60'
    """
    path = Path(os.fspath(video))
    clips = episode_clips(path, episode)
    return EpisodePlayer(clips, values, path.name if title is None else title)
