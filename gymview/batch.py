"""Many episodes to video, in parallel, on any :class:`concurrent.futures.Executor`.

:func:`record_batch` runs each episode in a worker process: simulate it (recording only the
small state needed to draw it when a vectorized renderer exists), ask ``keep`` whether it is
worth a video, and only then render and encode it. Rows stream back as episodes finish; an
episode that fails is a row with its error, never a gap. Seeds make runs reproducible.

>>> import tempfile
>>> result = record_batch("CartPole-v1", lambda obs: int(obs[2] > 0), episodes=2,
...                       out=tempfile.mkdtemp(), max_steps=20, workers=1, progress=False)
>>> [row["steps"] for row in result.table], len(result.files)
([20, 20], 2)
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import hashlib
import html
import os
import random
import shutil
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cloudpickle
import gymnasium as gym
import numpy as np

from gymview.frames import downsample, tile
from gymview.renderers import BatchRenderer, renderer_for

if TYPE_CHECKING:
    from gymview.recorder import VideoRecorder

__all__ = ["BatchResult", "Episode", "record_batch"]

LAYOUTS = ("per-episode", "mosaic", "concat")
#: the columns of :attr:`BatchResult.table`
COLUMNS = ("episode", "seed", "steps", "return", "terminated", "truncated", "file", "frames", "error")
#: encoder settings per ``quality``: (x264 preset, crf)
QUALITIES = {"fast": ("ultrafast", 23), "final": ("slow", 18)}
_RENDER_CHUNK = 32  # states drawn at a time when encoding an episode
_MOSAIC_WIDTH = 1920  # a mosaic is at most this wide: tiles are downscaled by a whole factor


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
class _Job:
    """Settings shared by every episode of one :func:`record_batch` call (sent to workers)."""

    payload: bytes  # cloudpickle of (make_env, policy, keep)
    out: str
    layout: str
    max_steps: int | None
    fps: float
    crf: int
    preset: str
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
        from gymview.recorder import VideoRecorder  # imported when used: keeps `import gymview` light

        return VideoRecorder(
            path, fps=self.fps, codec="libx264", crf=self.crf, preset=self.preset, threads=self.threads, tune=None,
            crash_safe=False,  # one ffmpeg process per video; a crashed episode is simply re-run
        )


class BatchResult:
    """The outcome of :func:`record_batch`: one row per episode and the video files written.

    ``table`` rows (dicts, in episode order): ``episode``, ``seed``, ``steps``, ``return``,
    ``terminated``, ``truncated``, ``file`` (None when not kept), ``frames`` (frames of this
    episode in ``file``) and ``error`` (None, or the text of what failed).
    ``pandas.DataFrame(result.table)`` makes a data frame of it.
    """

    def __init__(self, table: list[dict[str, Any]], files: list[Path], out: Path, seconds: float) -> None:
        self.table = table
        self.files = files
        self.out = out
        self.seconds = seconds

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The rows of episodes that raised."""
        return [row for row in self.table if row["error"] is not None]

    def _summary(self) -> str:
        kept = sum(row["file"] is not None for row in self.table)
        steps = sum(row["steps"] for row in self.table)
        return (
            f"{len(self.table)} episodes ({steps:,} steps) in {self.seconds:.1f} s: {kept} kept in "
            f"{len(self.files)} file{'s' * (len(self.files) != 1)} under {str(self.out)!r}, {len(self.failed)} failed"
        )

    def __repr__(self) -> str:
        return f"<BatchResult {self._summary()}>"

    def _repr_html_(self, max_rows: int = 20) -> str:
        head = "".join(f"<th>{column}</th>" for column in COLUMNS)
        body = ""
        for row in self.table[:max_rows]:
            cells = {**row, "file": None if row["file"] is None else Path(row["file"]).name}
            body += "<tr>" + "".join(f"<td>{html.escape(_cell(cells[column]))}</td>" for column in COLUMNS) + "</tr>"
        more = f"<p>… {len(self.table) - max_rows} more rows in <code>.table</code></p>" if len(self.table) > max_rows else ""
        return f"<p><b>BatchResult</b>: {html.escape(self._summary())}</p><table><tr>{head}</tr>{body}</table>{more}"


def _cell(value: object) -> str:
    if value is None:
        return ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


# ---------------------------------------------------------------------------------------------
# worker side


class _Setup:
    """A worker's env, policy, keep and renderer, made once per worker thread and job."""

    def __init__(self, payload: bytes, vectorized: bool) -> None:
        make_env, self.policy, self.keep = cloudpickle.loads(payload)
        self.env: gym.Env = make_env()
        self.renderer: BatchRenderer | None = renderer_for(self.env) if vectorized else None


_setups = threading.local()


def _setup_for(job: _Job) -> _Setup:
    key = hashlib.sha1(job.payload + bytes([job.vectorized])).digest()
    cache = _setups.__dict__.setdefault("by_key", {})
    if key not in cache:
        for old in cache.values():  # one job at a time per worker: free the previous env
            old.env.close()
        cache.clear()
        cache[key] = _Setup(job.payload, job.vectorized)
    return cache[key]


def _error_text(error: BaseException) -> str:
    """``Type: message (file:line in function)`` for the innermost frame of the traceback."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    return f"{type(error).__name__}: {error}{where}"


def _run_episode(job: _Job, index: int, seed: int) -> dict[str, Any]:
    """Simulate one episode; render and encode it if kept. Never raises: failures go in the row."""
    row: dict[str, Any] = dict(
        episode=index, seed=seed, steps=0, total=0.0, terminated=False, truncated=False, file=None, frames=0, error=None
    )
    states: list[np.ndarray] = []
    sink: _FrameSink | None = None
    setup: _Setup | None = None
    try:
        setup = _setup_for(job)
        env, renderer = setup.env, setup.renderer
        random.seed(seed)
        np.random.seed(seed % 2**32)
        env.action_space.seed(seed)
        if renderer is None:
            sink = _FrameSink(job, index)
        observation, _ = env.reset(seed=seed)
        _record(env, renderer, states, sink)
        while True:
            action = env.action_space.sample() if setup.policy is None else setup.policy(observation)
            observation, reward, terminated, truncated, _ = env.step(action)
            row["steps"] += 1
            row["total"] += float(reward)
            _record(env, renderer, states, sink)
            row["terminated"], row["truncated"] = bool(terminated), bool(truncated)
            if terminated or truncated:
                break
            if job.max_steps is not None and row["steps"] >= job.max_steps:
                row["truncated"] = True
                break
    except Exception as error:  # noqa: BLE001 - reported in the table
        row["error"] = _error_text(error)
        if setup is None:  # no env: nothing to record
            return _finish_row(row)
    kept = True
    if setup.keep is not None:
        episode = Episode(index, seed, row["steps"], row["total"], row["terminated"], row["truncated"], row["error"])
        try:
            kept = bool(setup.keep(episode))
        except Exception as error:  # noqa: BLE001 - kept, so nothing is lost; the error is shown
            note = f"keep() raised {_error_text(error)}; the episode was kept"
            row["error"] = f"{row['error']}; {note}" if row["error"] else note
    try:
        if sink is not None:
            row.update(sink.finish(kept))
        elif kept and states:
            if job.layout == "mosaic":
                row["states"] = np.stack(states)
                row["frames"] = len(states)
            else:
                path = job.episode_path(index)
                _encode_states(job, setup.renderer, np.stack(states), path)
                row["file"], row["frames"] = str(path), len(states)
    except Exception as error:  # noqa: BLE001 - reported in the table
        row["error"] = (row["error"] + "; " if row["error"] else "") + f"recording failed: {_error_text(error)}"
    return _finish_row(row)


def _finish_row(row: dict[str, Any]) -> dict[str, Any]:
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
        sink.write(frame)  # type: ignore[union-attr]


def _encode_states(job: _Job, renderer: BatchRenderer, states: np.ndarray, path: Path) -> None:
    buffer = np.empty((_RENDER_CHUNK, renderer.height, renderer.width, 3), np.uint8)
    with job.recorder(path) as recorder:
        for start in range(0, len(states), _RENDER_CHUNK):
            chunk = states[start : start + _RENDER_CHUNK]
            frames = renderer.render(chunk, out=buffer[: len(chunk)] if len(chunk) < _RENDER_CHUNK else buffer)
            for frame in frames:
                recorder.write(frame)


class _FrameSink:
    """Frames from ``env.render()`` (no vectorized renderer), streamed as they come.

    per-episode / concat: encoded into a hidden file, renamed when kept, deleted when not.
    mosaic: downscaled to tile size and appended to a raw file the mosaic step reads back.
    """

    def __init__(self, job: _Job, index: int) -> None:
        self.job = job
        self.final = job.episode_path(index)
        self.count = 0
        if job.layout == "mosaic":
            self.path = Path(job.parts) / f"frames-{index}.raw"
            self.file = open(self.path, "wb")  # noqa: SIM115 - closed in finish()
            self.tile_shape: tuple[int, ...] | None = None
        else:
            self.path = self.final.with_name(f".{self.final.stem}.gymview-partial.mp4")
            self.recorder = job.recorder(self.path)

    def write(self, frame: np.ndarray) -> None:
        if self.job.layout == "mosaic":
            small = np.ascontiguousarray(downsample(np.asarray(frame, np.uint8), _tile_max_size(frame.shape, self.job.columns)))
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
        os.replace(self.path, self.final)
        return {"file": str(self.final), "frames": self.count}


def _tile_max_size(shape: Sequence[int], columns: int) -> int:
    """Long side of a mosaic tile: the frame shrunk by the smallest whole factor that fits."""
    long_side = max(shape[0], shape[1])
    factor = max(1, -(-columns * long_side // _MOSAIC_WIDTH))
    return max(1, long_side // factor)


def _encode_mosaic(job: _Job, members: list[dict[str, Any]], path: str) -> str:
    """Encode one mosaic video: the kept episodes ``members`` side by side, labelled."""
    labels = [f"ep {m['episode']} seed {m['seed']} R {m['return']:.4g}" for m in members]
    length = max(m["frames"] for m in members)
    if "states" in members[0]:
        renderer = _setup_for(job).renderer
        states = [m["states"] for m in members]
        source: Callable[[int], list[np.ndarray]] = lambda t: [  # noqa: E731
            downsample(frame, _tile_max_size(frame.shape, job.columns))
            for frame in renderer.render(np.stack([s[min(t, len(s) - 1)] for s in states]))
        ]
    else:
        arrays = [np.memmap(m["raw"][0], np.uint8, "r").reshape(-1, *m["raw"][1]) for m in members]
        source = lambda t: [a[min(t, len(a) - 1)] for a in arrays]  # noqa: E731
    with job.recorder(Path(path)) as recorder:
        for t in range(length):
            recorder.write(tile(source(t), labels, job.columns))
    return path


# ---------------------------------------------------------------------------------------------
# the caller's side


def record_batch(
    env: str | Callable[[], gym.Env],
    policy: Callable[[Any], Any] | None,
    episodes: int = 1000,
    out: str | os.PathLike[str] = "videos/",
    keep: Callable[[Episode], bool] | None = None,
    workers: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    layout: str = "per-episode",
    seed: int = 0,
    fps: float = 30,
    max_steps: int | None = None,
    quality: str = "fast",
    crf: int | None = None,
    preset: str | None = None,
    tiles: int = 16,
    vectorized: bool = True,
    progress: bool = True,
) -> BatchResult:
    """Run ``episodes`` episodes in parallel and write the kept ones as MP4 videos into ``out``.

    Args:
        env: a registered env id, or a function (lambda, closure, notebook function: all fine)
            that makes the env; without a vectorized renderer it needs ``render_mode="rgb_array"``.
        policy: ``policy(observation) -> action``; None takes random actions.
        episodes: how many; episode ``i`` is reset with seed ``seed + i``.
        keep: ``keep(episode: Episode) -> bool`` decides which episodes become video (all if
            None). Episodes not kept are not rendered or encoded when the env has a vectorized
            renderer (MountainCar, CartPole, Acrobot, Pendulum).
        workers: processes of the default pool (None: one per core). Ignored with ``executor``.
        executor: any :class:`concurrent.futures.Executor`, e.g. a dask cluster's
            ``client.get_executor()``; workers must see ``out`` (a shared folder on a cluster).
        layout: ``"per-episode"`` (one file each), ``"mosaic"`` (``tiles`` episodes side by
            side per file, labelled) or ``"concat"`` (one file, joined without re-encoding).
        max_steps: end episodes after this many steps (marked truncated).
        quality: ``"fast"`` (x264 ultrafast, crf 23) or ``"final"`` (slow, crf 18);
            ``crf`` / ``preset`` override it.
        vectorized: use the numpy renderers when there is one (False: always ``env.render()``).
        progress: show a tqdm progress bar (episodes, steps/s, ETA).

    The same arguments give the same episodes, whatever the executor. Random numbers drawn by the
    policy from ``random`` / ``np.random`` are seeded per episode too.

    >>> import tempfile
    >>> result = record_batch("MountainCar-v0", lambda obs: 2 if obs[1] >= 0 else 0, episodes=2,
    ...                       out=tempfile.mkdtemp(), workers=1, progress=False)
    >>> [row["terminated"] for row in result.table]
    [True, True]
    """
    job = _make_job(env, policy, keep, episodes, out, layout, seed, max_steps, fps, quality, crf, preset, tiles, vectorized, workers, executor)
    own_executor = executor is None
    if own_executor:
        executor = concurrent.futures.ProcessPoolExecutor(max_workers=_pool_size(workers))
    started = time.perf_counter()
    try:
        rows = _simulate_all(executor, job, episodes, seed, progress)
        files = _assemble(executor, job, rows, progress)
    finally:
        if own_executor:
            executor.shutdown(wait=True, cancel_futures=True)
        if job.parts and os.path.isdir(job.parts) and not os.listdir(job.parts):
            os.rmdir(job.parts)
    for row in rows:
        row.pop("states", None)
        row.pop("raw", None)
    return BatchResult(rows, files, Path(job.out), time.perf_counter() - started)


def _make_job(env, policy, keep, episodes, out, layout, seed, max_steps, fps, quality, crf, preset, tiles, vectorized, workers, executor) -> _Job:  # noqa: ANN001, PLR0913
    if isinstance(env, str):
        gym.spec(env)  # an unknown id fails here, once, with gymnasium's message
        make_env: Callable[[], gym.Env] = functools.partial(gym.make, env, render_mode="rgb_array")
    elif callable(env):
        make_env = env
    else:
        raise TypeError(f"env must be an env id string or a function that makes the env; got {type(env).__name__}")
    if policy is not None and not callable(policy):
        raise TypeError(f"policy must be a function observation -> action, or None for random actions; got {type(policy).__name__}")
    if keep is not None and not callable(keep):
        raise TypeError(f"keep must be a function Episode -> bool, or None to keep every episode; got {type(keep).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer (episode i uses seed + i); got {seed!r}")
    from gymview.ffmpeg import fps_text

    fps_text(fps)  # a clear error now rather than one per episode
    if not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be a positive integer; got {episodes!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(map(repr, LAYOUTS))}; got {layout!r}")
    if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 1):
        raise ValueError(f"max_steps must be a positive integer or None; got {max_steps!r}")
    if quality not in QUALITIES:
        raise ValueError(f"quality must be one of {', '.join(map(repr, QUALITIES))}; got {quality!r}")
    if not isinstance(tiles, int) or tiles < 1:
        raise ValueError(f"tiles must be a positive integer (episodes per mosaic video); got {tiles!r}")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer or None (one per core); got {workers!r}")
    if executor is not None and not isinstance(executor, concurrent.futures.Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor (e.g. client.get_executor()); got {type(executor).__name__}")
    try:
        payload = cloudpickle.dumps((make_env, policy, keep))
    except Exception as error:
        raise TypeError(f"could not pickle the env factory, policy or keep function for the workers: {error}") from error
    out_path = Path(os.fspath(out)).absolute()
    out_path.mkdir(parents=True, exist_ok=True)
    parts = ""
    if layout != "per-episode":
        parts = tempfile.mkdtemp(prefix=".gymview-parts-", dir=out_path)
    default_preset, default_crf = QUALITIES[quality]
    cores = os.cpu_count() or 1
    job = _Job(
        payload=payload,
        out=str(out_path),
        layout=layout,
        max_steps=max_steps,
        fps=fps,
        crf=default_crf if crf is None else crf,
        preset=default_preset if preset is None else preset,
        threads=max(1, cores // _pool_size(workers)) if executor is None else 1,
        vectorized=vectorized,
        name_width=max(4, len(str(episodes - 1))),
        parts=parts,
        tiles=tiles,
        columns=int(np.ceil(np.sqrt(tiles))),
    )
    return job


def _pool_size(workers: int | None) -> int:
    """Worker processes of the default pool: one per core unless told.

    Measured on 2 cores (MountainCar, one file per episode, 100 episodes, medians of two or three
    runs): 2 workers gave 1409 frames/s, 3 gave 1255, 4 gave 1193 and 6 gave 1057. (Two per core
    was faster while ffmpeg converted RGB itself and idled longer; with I420 input it is not.)
    """
    return workers or (os.cpu_count() or 1)


def _progress_bar(total: int, description: str, enabled: bool):  # noqa: ANN202
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="ep", disable=not enabled, dynamic_ncols=True)


def _simulate_all(executor: concurrent.futures.Executor, job: _Job, episodes: int, seed: int, progress: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any] | None] = [None] * episodes
    futures = {executor.submit(_run_episode, job, index, seed + index): index for index in range(episodes)}
    steps, started = 0, time.perf_counter()
    with _progress_bar(episodes, "episodes", progress) as bar:
        try:
            for future in concurrent.futures.as_completed(futures):
                index = futures[future]
                try:
                    row = future.result()
                except Exception as error:  # noqa: BLE001 - the worker itself died
                    row = _finish_row(dict(episode=index, seed=seed + index, steps=0, total=0.0, terminated=False,
                                           truncated=False, file=None, frames=0, error=f"worker failed: {error!r}"))  # fmt: skip
                rows[index] = row
                steps += row["steps"] + 1
                bar.set_postfix_str(f"{steps / max(time.perf_counter() - started, 1e-9):,.0f} steps/s", refresh=False)
                bar.update(1)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return rows  # type: ignore[return-value]


def _assemble(executor: concurrent.futures.Executor, job: _Job, rows: list[dict[str, Any]], progress: bool) -> list[Path]:
    """Files of the layout: per-episode files as they are, mosaics encoded, concat parts joined."""
    kept = [row for row in rows if row["frames"] and (row["file"] or "states" in row or "raw" in row)]
    if job.layout == "per-episode":
        return [Path(row["file"]) for row in kept]
    if not kept:
        return []
    if job.layout == "concat":
        return _concat(job, kept)
    groups = [kept[start : start + job.tiles] for start in range(0, len(kept), job.tiles)]
    width = max(4, len(str(len(groups) - 1)))
    paths = [str(Path(job.out) / f"mosaic-{number:0{width}d}.mp4") for number in range(len(groups))]
    futures = {executor.submit(_encode_mosaic, job, group, path): (group, path) for group, path in zip(groups, paths)}
    with _progress_bar(len(groups), "mosaics", progress) as bar:
        for future in concurrent.futures.as_completed(futures):
            group, path = futures[future]
            try:
                future.result()
                for row in group:
                    row["file"] = path
            except Exception as error:  # noqa: BLE001 - reported per episode
                for row in group:
                    row["error"] = (row["error"] + "; " if row["error"] else "") + f"mosaic failed: {_error_text(error)}"
            for row in group:
                if "raw" in row:
                    Path(row["raw"][0]).unlink(missing_ok=True)
            bar.update(1)
    return [Path(path) for group, path in zip(groups, paths) if group[0]["file"] == path]


def _concat(job: _Job, kept: list[dict[str, Any]]) -> list[Path]:
    """Join the kept episodes' files into one MP4 without re-encoding (ffmpeg's concat demuxer).

    Should ffmpeg fail, the per-episode parts stay where they are and are returned instead.
    """
    from gymview.ffmpeg import FFmpegProcess, find_ffmpeg

    target = Path(job.out) / "episodes.mp4"
    listing = Path(job.parts) / "concat.txt"
    listing.write_text("".join(f"file '{Path(row['file']).as_posix()}'\n" for row in kept))
    command = [find_ffmpeg(), "-hide_banner", "-loglevel", "error", "-y", "-f", "concat", "-safe", "0",
               "-i", str(listing), "-c", "copy", "-movflags", "+faststart", str(target)]  # fmt: skip
    process = FFmpegProcess(command)
    if process.finish(timeout=600) != 0:
        error = process.error(f"could not join the episodes into {str(target)!r}; the parts are kept in {job.parts!r}")
        for row in kept:
            row["error"] = (row["error"] + "; " if row["error"] else "") + str(error).splitlines()[0]
        return [Path(row["file"]) for row in kept]
    for row in kept:
        Path(row["file"]).unlink(missing_ok=True)
        row["file"] = str(target)
    listing.unlink()
    shutil.rmtree(job.parts, ignore_errors=True)
    return [target]
