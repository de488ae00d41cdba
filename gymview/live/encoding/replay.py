"""FrameHistory: the frames a view sent lately, as sent (compressed), for instant replay.

H.264 frames are kept as packets, from a key frame on (the oldest kept is always one), and decoded
when asked for: a replayed frame goes to the page as an image. Frames the page draws from a state
(scene frames) are kept as their states, and drawn here by their painter when a picture is needed.

A view keeps the last ``seconds`` of its frames, and never more than ``max_bytes`` of them, each
counted with its header (``HEADER_BYTES``): by default 30 s of pictures, 30 s of 512-pixel JPEGs
(about 20 KB each) at 30 fps within 32 MB, and ``SCENE_SECONDS`` of scene frames, which take under
a kilobyte each (10 minutes at 30 fps in 32 MB). While the run is paused or stopped, the view's timeline slider
scrubs back through them, and :meth:`FrameHistory.save` writes them out as a clip.

>>> history = FrameHistory(seconds=30)
>>> history.add({"seq": 0, "step": 1}, b"jpeg bytes", at=0.0)
>>> len(history), history.total_bytes
(1, 522)
"""

from __future__ import annotations

import collections
import io
import itertools
import os
import pathlib
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from gymview._internal.checks import check_int
from gymview.image.codec import encode_frame
from gymview.live.encoding.drawn_here import draw_scene_here
from gymview.live.encoding.h264 import H264, decode_h264
from gymview.live.encoding.scene_frames import SCENE

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_SECONDS", "HEADER_BYTES", "SCENE_SECONDS", "FrameHistory"]

DEFAULT_SECONDS = 30.0
SCENE_SECONDS = 600.0
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
# a step row's columns that say where it is, not what happened: not charted under a clip
_PLACE = ("frame", "episode", "step")
# What a kept frame's header takes in memory besides its data (a dict of a dozen small values)
HEADER_BYTES = 512


class FrameHistory:
    """The last ``seconds`` of sent frames (header, image bytes, send time), at most ``max_bytes``;
    ``seconds=None``: 30 s of pictures, 10 minutes of scene frames."""

    def __init__(self, seconds: float | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if seconds is not None and not (
            isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds >= 0
        ):
            raise ValueError(f"replay_seconds must be a number of seconds >= 0 (0 keeps no frames); got {seconds!r}")
        self.seconds = DEFAULT_SECONDS if seconds is None else float(seconds)
        self.scene_seconds = SCENE_SECONDS if seconds is None else float(seconds)
        self.max_bytes = check_int("replay_max_bytes", max_bytes, minimum=0)
        self._frames: collections.deque[tuple[dict[str, Any], bytes, float]] = collections.deque()
        self._lock = threading.Lock()
        self._stream_kept = False  # the H.264 stream's frames are kept since its last key frame
        self._painters: dict[int, Any] = {}  # scene id -> the painter that draws its kept frames here
        self.total_bytes = 0

    def keep_painter(self, scene: int, painter: Any) -> None:
        """Scene frames of id ``scene`` are drawn here by ``painter`` (a replay of an older scene, a clip)."""
        with self._lock:
            self._painters[scene] = painter

    def add(self, header: dict[str, Any], data: bytes, at: float) -> None:
        """Keep one sent frame; forget those older than ``seconds`` before ``at`` or over the bound,
        and H.264 frames that no longer follow a kept key frame."""
        with self._lock:
            kept = self._seconds(header) > 0 and len(data) + HEADER_BYTES <= self.max_bytes
            if header.get("format") == H264:  # a frame after a key frame not kept cannot be decoded
                kept = kept and (bool(header.get("key")) or self._stream_kept)
                self._stream_kept = kept
            if kept:
                self._frames.append((header, data, at))
                self.total_bytes += len(data) + HEADER_BYTES
            frames = self._frames
            while frames and (
                self.total_bytes > self.max_bytes
                or at - frames[0][2] > self._seconds(frames[0][0])
                or _undecodable(frames[0][0])
            ):
                self.total_bytes -= len(frames.popleft()[1]) + HEADER_BYTES
            oldest = (frames[0][0].get("scene") or 0) if frames else float("inf")  # scenes are numbered in order
            for scene in [scene for scene in self._painters if scene < oldest]:
                del self._painters[scene]

    def _seconds(self, header: dict[str, Any]) -> float:
        return self.scene_seconds if header.get("format") == SCENE else self.seconds

    def __len__(self) -> int:
        return len(self._frames)

    def get(self, index: int, scene: int | None = None) -> tuple[dict[str, Any], bytes]:
        """The ``index``-th kept frame, oldest first (negative counts from the newest), as the page draws it:
        an H.264 frame is decoded and sent as a JPEG, and so is a scene frame of a scene other than ``scene``
        (the one the page has now)."""
        with self._lock:
            frames, painters = list(self._frames), dict(self._painters)
        header, data, _ = frames[index]
        if header.get("format") == SCENE and header.get("scene") != scene:
            picture = _picture(header, data, painters)
            return {**header, "format": "jpeg", "scene": None}, encode_frame(picture, "jpeg", 90)
        if header.get("format") != H264:
            return header, data
        index %= len(frames)
        start = next(i for i in range(index, -1, -1) if frames[i][0].get("key"))
        picture = decode_h264([packet for _, packet, _ in frames[start : index + 1]])[-1]
        picture = np.ascontiguousarray(picture[: header["height"], : header["width"]])
        return {**header, "format": "jpeg"}, encode_frame(picture, "jpeg", quality=90)

    def snapshot(self) -> list[tuple[dict[str, Any], bytes, float]]:
        with self._lock:
            return list(self._frames)

    def clear(self) -> None:
        with self._lock:
            self._frames.clear()
            self._painters.clear()
            self.total_bytes = 0
            self._stream_kept = False

    def save(
        self,
        path: str | os.PathLike[str],
        fps: float | None = None,
        rows_of: Callable[[list[int | None]], list[dict[str, Any] | None]] | None = None,
    ) -> pathlib.Path:
        """Write the kept frames to ``path`` (``.mp4`` through ffmpeg, ``.gif``, or ``.html``: the states of
        frames the page drew, played by the page), at the pace they were sent (``fps``: the clip's frame rate, by
        default the rate they were sent at). ``rows_of``: the rows of the steps numbered as the frames' ``row``
        (None for one not kept), charted under an ``.html`` clip."""
        path = pathlib.Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".mp4", ".gif", ".html"):
            raise ValueError(f"save_clip writes .mp4, .gif or .html files; got {str(path)!r}")
        with self._lock:
            frames, painters = list(self._frames), dict(self._painters)
        if not frames:
            raise ValueError("this view has no frames to save yet (it keeps the frames it sent; none were sent)")
        if fps is None:
            span = frames[-1][2] - frames[0][2]
            fps = (len(frames) - 1) / span if len(frames) > 1 and span > 0 else 10.0
        if not fps > 0:
            raise ValueError(f"fps must be above 0; got {fps!r}")
        if suffix == ".html":
            rows = None if rows_of is None else rows_of([header.get("row") for header, _, _ in frames])
            return _write_page(path, frames, painters, fps, rows)
        # one picture at a time: ten minutes of scene frames drawn at once would take gigabytes
        pictures = _decoded((h, _picture(h, data, painters) if h["format"] == SCENE else data) for h, data, _ in frames)
        path.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".gif":  # a GIF is written from every frame at once
            _write_gif(path, list(pictures), fps)
        else:
            _write_mp4(path, pictures, fps)
        return path


def _write_page(
    path: pathlib.Path,
    frames: list[tuple[dict[str, Any], bytes, float]],
    painters: dict[int, Any],
    fps: float,
    rows: list[dict[str, Any] | None] | None,
) -> pathlib.Path:
    """The kept frames as one HTML file that plays them as the page drew them: a segment per run of one scene,
    the steps' ``rows`` (one a frame, None where unknown) charted under them."""
    from gymview.episodes.page_file import Segment, write_page

    pictures = sum(header.get("format") != SCENE for header, _, _ in frames)
    if pictures:
        raise ValueError(
            f"an .html clip holds frames the page drew from the env's state, and {pictures} of the {len(frames)} "
            "frames this view kept are pictures (an env the page does not draw, or draw='kernel'): save them as "
            ".mp4 or .gif"
        )
    segments: list[Segment] = []
    for scene, run in itertools.groupby(frames, key=lambda frame: frame[0]["scene"]):
        states = np.stack([np.frombuffer(data, "<f4") for _, data, _ in run])
        segments.append(Segment(painters[scene].page_scene(), states))
    values = _per_env(_columns(rows or []))
    charted = [name for name in values if name.split("[")[0] not in ("terminated", "truncated")]
    return write_page(path, segments, fps, values, charted=charted)


def _columns(rows: list[dict[str, Any] | None]) -> dict[str, np.ndarray]:
    """Step rows (None where a frame's step is unknown) as a column a value, NaN where a row lacks it."""
    names = [name for name in dict.fromkeys(n for row in rows if row for n in row) if name not in _PLACE]
    return {
        name: np.array([np.nan if row is None or row.get(name) is None else row[name] for row in rows], float)
        for name in names
    }


def _per_env(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A vector env's columns ``reward[0]``, ``reward[1]``... as one ``reward`` of ``[frames, envs]``, as a grid's
    player charts them (an env a line); others (a PettingZoo agent's ``reward[player_0]``) as they are.

    >>> sorted(_per_env({"reward[1]": np.ones(2), "reward[0]": np.zeros(2), "x[a]": np.ones(2)}).items())[0][1]
    array([[0., 1.],
           [0., 1.]])
    """
    members: dict[str, dict[int, str]] = {}
    for name in columns:
        found = re.fullmatch(r"(.+)\[(\d+)\]", name)
        if found:
            members.setdefault(found[1], {})[int(found[2])] = name
    grouped = dict(columns)
    for base, names in members.items():
        if sorted(names) == list(range(len(names))) and base not in columns:
            grouped[base] = np.stack([grouped.pop(names[index]) for index in range(len(names))], axis=1)
    return grouped


def _undecodable(header: dict[str, Any]) -> bool:
    """An H.264 frame that is not a key frame: without the frames before it, it cannot be decoded."""
    return header.get("format") == H264 and not header.get("key")


def _picture(header: dict[str, Any], data: bytes, painters: dict[int, Any]) -> np.ndarray:
    """A scene frame drawn here (``draw_scene_here``), at the size the page showed it:
    by the painter's ``paint_page_state`` where it has one (the frame holds only what its ``page_state``
    kept), else by its ``paint``."""
    state = np.frombuffer(data, "<f4").astype(np.float64)
    painter = painters[header["scene"]]
    size = max(header["width"], header["height"])
    return draw_scene_here(painter, state, size, page_state=hasattr(painter, "paint_page_state"))


def _decoded(frames: Iterable[tuple[dict[str, Any], Any]]) -> Iterator[np.ndarray]:
    """RGB arrays of the same size as the first (a view's size may change mid-run), one at a time; scene
    frames come drawn."""
    from PIL import Image

    size: tuple[int, int] | None = None

    def fitted(image: Image.Image) -> np.ndarray:
        nonlocal size
        size = size or image.size
        return np.asarray(image if image.size == size else image.resize(size))

    stream: list[tuple[dict[str, Any], bytes]] = []  # H.264 frames from a key frame on
    for header, data in itertools.chain(frames, [({"format": None}, b"")]):
        if stream and (header.get("format") != H264 or header.get("key")):
            pictures = decode_h264([packet for _, packet in stream])
            for (kept, _), picture in zip(stream, pictures):
                yield fitted(Image.fromarray(picture[: kept["height"], : kept["width"]]))
            stream = []
        if header.get("format") == H264:
            stream.append((header, data))
        elif header.get("format") == SCENE:
            yield fitted(Image.fromarray(data))
        elif header.get("format") is not None:
            yield fitted(Image.open(io.BytesIO(data)).convert("RGB"))


def _write_gif(path: pathlib.Path, pictures: list[np.ndarray], fps: float) -> None:
    from PIL import Image

    images = [Image.fromarray(picture) for picture in pictures]
    images[0].save(path, save_all=True, append_images=images[1:], duration=max(20, round(1000 / fps)), loop=0)


def _write_mp4(path: pathlib.Path, pictures: Iterable[np.ndarray], fps: float) -> None:
    from gymview.video.recorder import VideoRecorder

    with VideoRecorder(path, fps=fps) as recorder:
        for picture in pictures:
            recorder.write(picture)
