"""``gymview.export_episode``: an episode with its charts drawn under the picture, as an MP4 or a GIF
that plays at the episode's own speed, for papers and READMEs.

>>> import gymview, os, tempfile
>>> result = gymview.record_batch("CartPole-v1", lambda obs: int(obs[2] > 0), episodes=1, out=tempfile.mkdtemp(),
...                               max_steps=20, workers=1, progress=False)
>>> export_episode(result.files[0], os.path.join(tempfile.mkdtemp(), "episode.gif"), values=["return"]).suffix
'.gif'
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gymview.video.recorder import VideoRecorder

if TYPE_CHECKING:
    from PIL import Image

    from gymview.episodes.player import EpisodePlayer

__all__ = ["GIF_MAX_FPS", "export_episode", "gif_durations"]

#: a GIF's frames last whole hundredths of a second, and browsers slow down any shorter than two:
#: faster episodes keep every k-th frame, each lasting k frames' time
GIF_MAX_FPS = 50


def gif_durations(frames: int, fps: float) -> list[int]:
    """Milliseconds each of ``frames`` GIF frames lasts to play at ``fps``: whole hundredths of a
    second that add up to the right time (a frame at 30 fps lasts 30, 30 or 40 ms in turn).

    >>> gif_durations(6, 30), sum(gif_durations(30, 30))
    ([30, 40, 30, 30, 40, 30], 1000)
    """
    ticks = [round(index * 100 / fps) for index in range(frames + 1)]
    return [10 * (later - earlier) for earlier, later in itertools.pairwise(ticks)]


def export_episode(
    source: str | os.PathLike[str] | EpisodePlayer,
    path: str | os.PathLike[str],
    values: Sequence[str] | None = None,
    episode: int | None = None,
    fps: float | None = None,
    max_width: int | None = None,
) -> Path:
    """Write an episode with its charts under the picture as an ``.mp4``, a ``.gif`` or an ``.html`` page.

    Each frame is the episode's picture (several side by side for a ``compare``'s player), the
    charts of its step values with the cursor at that frame, and the values at the cursor as text,
    as the player shows them. The file plays at the episode's speed: an MP4 at the video's frame
    rate, a GIF with frame times in whole hundredths of a second that add up to it (above 50 frames
    a second, every k-th frame is kept, each lasting k frames' time). An HTML page plays the states
    the frames were drawn from, drawn by the browser, with the charts, a slider and the arrow keys: one
    file that plays from disk, a few bytes a frame; it needs the states, which a recording keeps where
    the page draws the env (classic control, Box2D, toy text: ``gymview.RecordVideo``).

    Args:
        source: A video with its step table (``gymview.RecordVideo``, ``record_batch``...), or a
            player (``gymview.show_episode``, ``Comparison.player()``) to export as it shows.
        path: The file to write, ending in ``.mp4``, ``.gif`` or ``.html``; missing folders are made.
        values: The columns to chart; ``None``: the player's, or for a video ``show_episode``'s default.
        episode: For a video that holds several episodes, the one to export.
        fps: The speed to play at, in frames of the episode per second; ``None``: the video's own.
        max_width: Scale the frames down to this width at most (GIFs grow fast); ``None``: full size.

    Returns:
        The path written.

    Raises:
        ValueError: When ``path`` ends in none of those, ``fps`` is not above 0, a value names no
            column, or an ``.html`` page is asked of several episodes or of a video whose states were not kept.
        FileNotFoundError: When the video or its step table is missing.

    Examples:
        >>> import gymview, os, tempfile
        >>> result = gymview.compare({"left": lambda obs: 0, "right": lambda obs: 1}, "CartPole-v1", seed=0)
        >>> out = export_episode(result.player(), os.path.join(tempfile.mkdtemp(), "compare.mp4"))
        >>> out.name
        'compare.mp4'
    """
    from gymview.episodes.clips import episode_clips, video_fps
    from gymview.episodes.player import EpisodePlayer, default_values

    target = Path(os.fspath(path))
    suffix = target.suffix.lower()
    if suffix not in (".mp4", ".gif", ".html"):
        raise ValueError(f"export_episode writes .mp4, .gif or .html files; got {str(path)!r}")
    if fps is not None and not (isinstance(fps, (int, float, Fraction)) and fps > 0 and math.isfinite(fps)):
        raise ValueError(f"fps must be a number above 0, or None for the video's own; got {fps!r}")
    if isinstance(source, EpisodePlayer):
        clips, chosen, rate = source.clips, list(source.values if values is None else values), source.fps
    else:
        clips = episode_clips(source, episode)
        chosen, rate = default_values(clips) if values is None else list(values), float(video_fps(clips[0].video))
    known = {name for clip in clips for row in clip.rows for name in row}
    if unknown := [name for name in chosen if name not in known]:
        raise ValueError(f"no column {unknown[0]!r} in the step table; its columns: {', '.join(sorted(known))}")
    if suffix == ".html":
        return _write_page(target, clips, chosen, float(fps or rate))
    target.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".gif":
        _write_gif(target, clips, chosen, float(fps or rate), max_width)
    else:
        _write_mp4(target, clips, chosen, fps or rate, max_width)
    return target


def _write_page(path: Path, clips: Any, names: list[str], fps: float) -> Path:
    """The episode as an HTML page that plays the states its frames were drawn from, with its values charted."""
    import numpy as np

    from gymview.episodes.kept_states import read_states, states_path
    from gymview.episodes.page_file import Segment, write_page
    from gymview.episodes.table import read_steps

    if len(clips) != 1:
        raise ValueError(f"an .html page holds one episode; this player shows {len(clips)}: export each alone")
    clip = clips[0]
    kept = read_states(clip.video)
    if kept is None or len(kept[1]) != len(read_steps(clip.video)):  # none, or not this video's (a row a frame)
        raise ValueError(
            f"an .html page plays the states the frames were drawn from, and {clip.video.name} has none kept beside "
            f"it ({states_path(clip.video).name}): a recording keeps them where the page draws the env (classic "
            "control, Box2D, toy text); export this one as .mp4 or .gif"
        )
    scene, states = kept
    columns = clip.columns()
    values = {name: np.array([np.nan if v is None else v for v in columns[name]], np.float64) for name in names}
    return write_page(path, [Segment(scene, states[clip.start : clip.start + clip.count])], fps, values, clip.label)


def _write_mp4(path: Path, clips: Any, names: list[str], fps: float, max_width: int | None) -> None:
    import numpy as np

    from gymview.episodes.picture import episode_pictures

    with VideoRecorder(path, fps=fps, crash_safe=False, tune=None) as recorder:
        for image in episode_pictures(clips, names, max_width=max_width):
            recorder.write(np.asarray(image), copy=False)


def _write_gif(path: Path, clips: Any, names: list[str], fps: float, max_width: int | None) -> None:
    from gymview.episodes.picture import episode_pictures

    every = max(1, math.ceil(fps / GIF_MAX_FPS))
    count = max(clip.count for clip in clips)
    kept = -(-count // every)
    durations = gif_durations(kept, fps / every)
    frames: Iterator[Image.Image] = episode_pictures(clips, names, every=every, max_width=max_width)
    first = next(frames)
    first.save(path, save_all=True, append_images=frames, duration=durations, loop=0)
