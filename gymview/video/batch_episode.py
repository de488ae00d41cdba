"""The worker side of record_batch: simulate one episode, decide whether to keep it, render and
encode it, and tile mosaics."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import random
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from gymview._internal.opengl_failures import OPENGL_ADVICE, opengl_failure
from gymview._internal.user_code import error_text
from gymview.episodes.current import logging_to
from gymview.episodes.rows import RawStep, StepTracker
from gymview.episodes.table import StepTable
from gymview.image.frames import to_rgb_uint8
from gymview.image.tiling import tile
from gymview.renderers import BatchRenderer, renderer_for
from gymview.video.drawn import drawn_frames
from gymview.video.mosaic import MosaicFrames, shrink

if TYPE_CHECKING:
    from gymview.video.encoder import VideoEncoder
    from gymview.video.recorder import VideoRecorder

#: the columns of :attr:`BatchResult.table`
COLUMNS = ("episode", "seed", "steps", "return", "terminated", "truncated", "file", "frames", "error")
MOSAIC_WIDTH = 1920  # a mosaic is at most this wide: tiles are downscaled by a whole factor


@dataclasses.dataclass(frozen=True)
class Episode:
    """What ``keep`` sees about a finished episode (``error`` is None unless it failed)."""

    index: int
    seed: int
    steps: int
    episode_return: float
    terminated: bool
    truncated: bool
    error: str | None = None


@dataclasses.dataclass(frozen=True)
class BatchSpec:
    """Settings shared by every episode of one :func:`record_batch` call (sent to workers)."""

    payload: bytes  # gymview._internal.user_code.pickled((make_env, policy, keep))
    out: str
    layout: str
    max_steps: int | None
    fps: float
    crf: int
    preset: str
    tune: str | None
    threads: int
    vectorized: bool
    name_width: int
    parts: str  # folder for intermediate files (concat parts, mosaic fallback frames)
    tiles: int  # episodes per mosaic
    columns: int  # tiles per mosaic row

    def episode_path(self, index: int) -> Path:
        folder = self.parts if self.layout == "concat" else self.out
        return Path(folder) / f"episode-{index:0{self.name_width}d}.mp4"

    def recorder(self, path: Path) -> VideoRecorder:
        from gymview.video.recorder import (
            VideoRecorder,  # imported when used: keeps `import gymview` light
        )

        return VideoRecorder(
            path,
            fps=self.fps,
            codec="libx264",
            crf=self.crf,
            preset=self.preset,
            threads=self.threads,
            tune=self.tune,
            crash_safe=False,  # the plain MP4 at once; a crashed episode is simply re-run
        )


class _Setup:
    """A worker's env, policy, keep, renderer and encoder, made once per worker thread and job."""

    def __init__(self, payload: bytes, vectorized: bool) -> None:
        make_env, self.policy, self.keep = pickle.loads(payload)
        self.env: gym.Env = make_env()
        self.renderer: BatchRenderer | None = renderer_for(self.env) if vectorized else None
        self._encoder: VideoEncoder | None = None
        self._encoder_settings: tuple[Any, ...] = ()

    def encoder_for(self, job: BatchSpec, width: int, height: int) -> VideoEncoder:
        """The encoder of this worker's episode files (frames of ``width`` x ``height``), kept from
        one episode to the next while the settings stay the same."""
        settings = (width + width % 2, height + height % 2, job.fps, job.crf, job.preset, job.tune, job.threads)
        if self._encoder is None or self._encoder_settings != settings:
            from gymview.video.encoder import VideoEncoder  # imported when used: keeps `import gymview` light

            even_width, even_height, fps, crf, preset, tune, threads = settings
            self._encoder = VideoEncoder(
                even_width, even_height, fps=fps, crf=crf, preset=preset, tune=tune, threads=threads
            )
            self._encoder_settings = settings
        return self._encoder


_setups = threading.local()


def _setup_for(job: BatchSpec) -> _Setup:
    key = hashlib.sha1(job.payload + bytes([job.vectorized])).digest()
    cache = _setups.__dict__.setdefault("by_key", {})
    if key not in cache:
        for old in cache.values():  # one job at a time per worker: free the previous env
            old.env.close()
        cache.clear()
        cache[key] = _Setup(job.payload, job.vectorized)
    return cache[key]


def run_episode(job: BatchSpec, index: int, seed: int) -> dict[str, Any]:
    """Simulate one episode; render and encode it if kept. Never raises: failures go in the row."""
    row: dict[str, Any] = dict(
        episode=index, seed=seed, steps=0, total=0.0, terminated=False, truncated=False, file=None, frames=0, error=None
    )
    frames = _EpisodeFrames()
    setup: _Setup | None = None
    try:
        setup = _setup_for(job)
        random.seed(seed)
        np.random.seed(seed % 2**32)
        setup.env.action_space.seed(seed)
        if setup.renderer is None:
            frames.sink = _FrameSink(job, index)
        _play(job, setup, index, seed, row, frames)
    except Exception as error:
        row["error"] = error_text(error)
        if opengl_failure(error):
            row["error"] += f"; the env could not render in the worker: {OPENGL_ADVICE}"
        if setup is None:  # no env: nothing to record
            return finish_row(row)
    kept = True
    if setup.keep is not None:
        episode = Episode(index, seed, row["steps"], row["total"], row["terminated"], row["truncated"], row["error"])
        try:
            kept = bool(setup.keep(episode))
        except Exception as error:
            note = f"keep() raised {error_text(error)}; the episode was kept"
            row["error"] = f"{row['error']}; {note}" if row["error"] else note
    try:
        _keep(job, setup, index, row, frames, kept)
    except Exception as error:
        row["error"] = (row["error"] + "; " if row["error"] else "") + f"recording failed: {error_text(error)}"
    return finish_row(row)


class _EpisodeFrames:
    """What an episode recorded: a renderer's states (or a sink's frames), and each frame's step."""

    def __init__(self) -> None:
        self.states: list[np.ndarray] = []
        self.steps: list[RawStep] = []
        self.sink: _FrameSink | None = None

    def record(self, env: gym.Env, renderer: BatchRenderer | None, tracker: StepTracker) -> None:
        _record(env, renderer, self.states, self.sink)
        self.steps.append(tracker.latest)  # type: ignore[arg-type]  # set by reset() and step()


def _play(job: BatchSpec, setup: _Setup, index: int, seed: int, row: dict[str, Any], frames: _EpisodeFrames) -> None:
    """Run episode ``index`` from ``seed``, counting its steps and return in ``row``, its frames in ``frames``."""
    env, tracker = setup.env, StepTracker(first_episode=index)
    observation, _ = env.reset(seed=seed)
    tracker.reset()
    frames.record(env, setup.renderer, tracker)
    while True:
        if setup.policy is None:
            action = env.action_space.sample()
        else:
            with logging_to(tracker):  # gymview.log() in the policy: to the row of the frame it sees
                action = setup.policy(observation)
        observation, reward, terminated, truncated, info = env.step(action)
        tracker.step(action, reward, terminated, truncated, info)
        row["steps"] += 1
        row["total"] += float(reward)
        frames.record(env, setup.renderer, tracker)
        row["terminated"], row["truncated"] = bool(terminated), bool(truncated)
        if terminated or truncated:
            return
        if job.max_steps is not None and row["steps"] >= job.max_steps:
            row["truncated"] = True
            tracker.mark_truncated()  # its row says so too
            return


def _keep(job: BatchSpec, setup: _Setup, index: int, row: dict[str, Any], frames: _EpisodeFrames, kept: bool) -> None:
    """Encode a kept episode (or hand its states on for a mosaic), with its step table; drop one not kept."""
    states = frames.states
    if frames.sink is not None:
        row.update(frames.sink.finish(kept))
    elif kept and states:
        if job.layout == "mosaic":
            row["states"] = np.stack(states)
            row["frames"] = len(states)
        else:
            path = job.episode_path(index)
            _encode_states(job, setup, np.stack(states), path)
            row["file"], row["frames"] = str(path), len(states)
    if row["file"] is not None:
        _write_table(row["file"], frames.steps[: row["frames"]])


def _write_table(video: str, steps: list[RawStep]) -> None:
    """The step table beside an episode's ``video``, one row per frame (written whole, at once)."""
    table = StepTable(video)
    for raw in steps:
        table.add(raw)
    table.close()


def finish_row(row: dict[str, Any]) -> dict[str, Any]:
    """The row with its columns in table order (plus the worker's hand-over keys, removed later)."""
    row["return"] = row.pop("total")
    return {**{column: row.pop(column) for column in COLUMNS}, **row}


def _record(env: gym.Env, renderer: BatchRenderer | None, states: list[np.ndarray], sink: _FrameSink | None) -> None:
    if renderer is not None:
        states.append(renderer.state_of(env))
    else:
        frame = env.render()
        if frame is None:
            raise ValueError(
                "env.render() returned None: make the env with render_mode='rgb_array', "
                "e.g. lambda: gym.make('MyEnv-v0', render_mode='rgb_array')"
            )
        assert sink is not None  # made for every env without a renderer
        # gymnasium types render() as any RenderFrame; in rgb_array mode it is an image
        sink.write(frame)  # type: ignore[arg-type]


def _partial(path: Path) -> Path:
    """Where this process writes the video ``path`` before :func:`_publish` renames it: a worker that
    died may have left an ffmpeg finishing a file of the same video, its own one (its pid differs).

    >>> _partial(Path("out/episode-0003.mp4")).name == f".episode-0003.{os.getpid()}.gymview-partial.mp4"
    True
    """
    return path.with_name(f".{path.stem}.{os.getpid()}.gymview-partial{path.suffix}")


def _publish(partial: Path, path: Path) -> None:
    """Rename the written ``partial`` to ``path``; remove what attempts that died left of it."""
    os.replace(partial, path)
    for stale in path.parent.glob(f".{path.stem}.*.gymview-partial{path.suffix}"):
        stale.unlink(missing_ok=True)


def _encode_states(job: BatchSpec, setup: _Setup, states: np.ndarray, path: Path) -> None:
    """Draw and encode ``states`` into ``path`` on this thread: a worker has a core of its own, so a
    thread to encode beside it would only add hand-offs."""
    renderer = setup.renderer
    assert renderer is not None  # states are recorded with a renderer only
    encoder = setup.encoder_for(job, renderer.width, renderer.height)
    partial = _partial(path)
    # a concat part is fragmented: record_batch appends its fragments to episodes.mp4 as they are
    filled = drawn_frames(renderer).fill(states, encoder.picture)
    _encode_filled(encoder, filled, partial, fragmented=job.layout == "concat")
    _publish(partial, path)


def _encode_filled(encoder: VideoEncoder, filled: Iterator[None], partial: Path, fragmented: bool = False) -> None:
    """Encode into ``partial`` the encoder's picture each time ``filled`` has filled it."""
    try:
        encoder.start(partial, fragmented=fragmented)
        for _ in filled:
            encoder.encode()
        encoder.finish()
    except BaseException:
        encoder.abandon()
        partial.unlink(missing_ok=True)
        raise


class _FrameSink:
    """Frames from ``env.render()`` (no vectorized renderer), streamed as they come.

    per-episode / concat: encoded into a hidden file, renamed when kept, deleted when not.
    mosaic: downscaled to tile size and appended to a raw file the mosaic step reads back.
    """

    def __init__(self, job: BatchSpec, index: int) -> None:
        self.job = job
        self.final = job.episode_path(index)
        self.count = 0
        if job.layout == "mosaic":
            self.path = Path(job.parts) / f"frames-{index}.raw"
            self.file = open(self.path, "wb")  # noqa: SIM115 - closed in finish()
            self.tile_shape: tuple[int, ...] | None = None
        else:
            self.path = _partial(self.final)
            self.recorder = job.recorder(self.path)

    def write(self, frame: np.ndarray) -> None:
        if self.job.layout == "mosaic":
            frame = to_rgb_uint8(frame, copy=False)  # as the other layouts do: floats, gray, RGBA
            factor = _tile_factor(frame.shape, self.job.columns)  # as MosaicFrames shrinks drawn frames
            height, width = frame.shape[0] // factor * factor, frame.shape[1] // factor * factor
            small = np.ascontiguousarray(shrink(frame[:height, :width], factor))
            self.tile_shape = self.tile_shape or small.shape
            self.file.write(small.tobytes())
        else:
            self.recorder.write(frame)
        self.count += 1

    def finish(self, kept: bool) -> dict[str, Any]:
        if self.job.layout == "mosaic":
            self.file.close()
            if not kept or not self.count:
                self.path.unlink()
                return {}
            return {"raw": (str(self.path), self.tile_shape), "frames": self.count}
        self.recorder.close()
        if not kept or not self.count:
            self.path.unlink(missing_ok=True)
            return {}
        _publish(self.path, self.final)
        return {"file": str(self.final), "frames": self.count}


def _tile_factor(shape: Sequence[int], columns: int) -> int:
    """How many times smaller than a frame of ``shape`` a mosaic tile is: the smallest whole factor
    that fits ``columns`` tiles in a mosaic's width."""
    return max(1, -(-columns * max(shape[0], shape[1]) // MOSAIC_WIDTH))


def encode_mosaic(job: BatchSpec, members: list[dict[str, Any]], path: str) -> str:
    """Encode one mosaic video: the kept episodes ``members`` side by side, labelled."""
    labels = [f"ep {m['episode']} seed {m['seed']} R {m['return']:.4g}" for m in members]
    partial = _partial(Path(path))
    if "states" in members[0]:  # drawn here, only where each tile changed, into this worker's encoder
        setup = _setup_for(job)
        renderer = setup.renderer
        assert renderer is not None  # states are recorded with a renderer only
        factor = _tile_factor((renderer.height, renderer.width), job.columns)
        mosaic = MosaicFrames(renderer, [m["states"] for m in members], labels, job.columns, factor)
        encoder = setup.encoder_for(job, *mosaic.size)
        _encode_filled(encoder, mosaic.fill(encoder.picture), partial)
    else:
        arrays = [np.memmap(m["raw"][0], np.uint8, "r").reshape(-1, *m["raw"][1]) for m in members]
        try:
            with job.recorder(partial) as recorder:
                for t in range(max(m["frames"] for m in members)):
                    recorder.write(tile([a[min(t, len(a) - 1)] for a in arrays], labels, job.columns))
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    _publish(partial, Path(path))
    return path
