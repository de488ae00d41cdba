"""Many episodes to video, in parallel, on any ``concurrent.futures.Executor``.

``record_batch`` runs each episode in a worker process: simulate it (recording only the
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
import contextlib
import functools
import html
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from gymview._internal.checks import check_int, check_optional_int
from gymview._internal.user_code import pickled
from gymview.episodes.table import TableJoiner
from gymview.errors import FFmpegError, VideoLogError
from gymview.video.batch_episode import (
    COLUMNS,
    BatchSpec,
    Episode,
    encode_mosaic,
    finish_row,
    run_episode,
)
from gymview.video.batch_pool import Call, Outcome, RestartingPool, executor_results
from gymview.video.env_ids import registered_env
from gymview.video.log_sinks import LogTarget, VideoLog, video_log
from gymview.video.mp4 import Joiner

if TYPE_CHECKING:
    from gymview.episodes.listing import EpisodeBrowser

__all__ = ["BatchResult", "Episode", "record_batch"]

LAYOUTS = ("per-episode", "mosaic", "concat")
#: encoder settings per ``quality``: (x264 preset, crf)
QUALITIES = {"fast": ("ultrafast", 23), "final": ("slow", 18)}


class BatchResult:
    """The outcome of ``record_batch``: one row per episode and the video files written.

    The rows of ``table`` are dicts, in episode order, with the keys ``episode``, ``seed``,
    ``steps``, ``return``, ``terminated``, ``truncated``, ``file`` (``None`` when not kept),
    ``frames`` (frames of this episode in ``file``) and ``error`` (``None``, or the text of what
    failed). ``pandas.DataFrame(result.table)`` makes a data frame of it. In a notebook the result
    shows itself as a summary and the table's first rows.

    Args:
        table: The rows, one per episode.
        files: The video files written.
        out: The folder the videos went to.
        seconds: How long the batch took.

    Attributes:
        table: The rows, one per episode.
        files: The video files written, in episode order (several episodes per file with the
            ``"mosaic"`` and ``"concat"`` layouts).
        out: The folder the videos went to.
        seconds: How long the batch took, in seconds.

    Examples:
        >>> import tempfile
        >>> result = record_batch("CartPole-v1", lambda obs: 0, episodes=2, out=tempfile.mkdtemp(), max_steps=5,
        ...                       workers=1, progress=False)
        >>> [(row["episode"], row["steps"], row["return"], row["truncated"]) for row in result.table]
        [(0, 5, 5.0, True), (1, 5, 5.0, True)]
        >>> [path.name for path in result.files], result.failed
        (['episode-0000.mp4', 'episode-0001.mp4'], [])
    """

    def __init__(self, table: list[dict[str, Any]], files: list[Path], out: Path, seconds: float) -> None:
        self.table = table
        self.files = files
        self.out = out
        self.seconds = seconds
        self._browser: EpisodeBrowser | None = None

    def browse(self, values: Sequence[str] | None = None) -> EpisodeBrowser:
        """The table of episodes, sortable in the page, each kept episode opening in the player under it.

        Args:
            values: The step values the player charts (``None``: reward, return, the action's and
                the logged ones).

        Returns:
            The browser; ``browser.open(i)`` returns the player of row ``i`` (from Python).

        Examples:
            >>> import tempfile
            >>> result = record_batch("CartPole-v1", lambda obs: 0, episodes=2, out=tempfile.mkdtemp(), max_steps=5,
            ...                       workers=1, progress=False)
            >>> result.browse(values=["return"]).open(1).readout(5)
            'step 5 · return 5 · truncated'
        """
        from gymview.episodes.listing import EpisodeBrowser, EpisodeEntry  # anywidget: imported when used
        from gymview.episodes.table import steps_path

        shared = {row["file"] for row in self.table if row["file"]}
        shared = {name for name in shared if sum(row["file"] == name for row in self.table) > 1}
        entries = []
        for row in self.table:
            cells = {column: row[column] for column in COLUMNS if column != "frames"}
            cells["file"] = Path(row["file"]).name if row["file"] else None
            video = Path(row["file"]) if row["file"] and steps_path(row["file"]).is_file() else None
            entries.append(EpisodeEntry(cells, video, row["episode"] if row["file"] in shared else None))
        return EpisodeBrowser(entries, [column for column in COLUMNS if column != "frames"], values)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        if self._browser is None:
            self._browser = self.browse()
        return {**self._browser._repr_mimebundle_(**kwargs), "text/html": self._repr_html_()}

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The rows of the episodes that failed (their ``error`` is not ``None``)."""
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
        more = (
            f"<p>… {len(self.table) - max_rows} more rows in <code>.table</code></p>"
            if len(self.table) > max_rows
            else ""
        )
        return f"<p><b>BatchResult</b>: {html.escape(self._summary())}</p><table><tr>{head}</tr>{body}</table>{more}"


def _cell(value: object) -> str:
    if value is None:
        return ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


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
    log_to: LogTarget | None = None,
) -> BatchResult:
    """Record many episodes to video in worker processes, keeping the ones you choose.

    Each episode runs in a worker: it is simulated first (recording only the small state needed to
    draw it when a vectorized renderer exists), ``keep`` decides whether it is worth a video, and
    only then is it rendered and encoded. Rows stream back as episodes finish; an episode that
    fails is a row with its error, never a gap. When a worker process of the default pool dies (a
    native crash, ``os._exit``), the episodes it was running run again, each alone: one whose
    process dies again fails, naming the exit code or signal; the rest go on in a fresh pool. The
    same arguments give the same episodes, whatever the executor: random numbers the policy draws
    from ``random`` or ``np.random`` are seeded per episode too.

    Args:
        env: A registered env id (``"MountainCar-v0"``), or a function that makes the env (a
            lambda, a closure or a notebook function: all fine). Without a vectorized renderer
            the env needs ``render_mode="rgb_array"``.
        policy: ``policy(observation) -> action``, pickled by value, so a function defined in a
            notebook cell works; ``None`` takes random actions.
        episodes: How many episodes to run; episode ``i`` is reset with seed ``seed + i``.
        out: The folder for the videos; created if missing. Workers must see it (a shared folder
            on a cluster).
        keep: ``keep(episode: Episode) -> bool`` decides which episodes become video; ``None``
            keeps all. Episodes not kept are neither rendered nor encoded when the env has a
            vectorized renderer (MountainCar, CartPole, Acrobot, Pendulum).
        workers: Processes of the default pool; ``None`` gives one per core. Ignored with
            ``executor``.
        executor: Any ``concurrent.futures.Executor``, for example a dask cluster's
            ``client.get_executor()``; ``None`` makes a process pool of ``workers``.
        layout: ``"per-episode"`` (one file per episode, ``episode-0000.mp4``...), ``"mosaic"``
            (``tiles`` episodes side by side per file, labelled) or ``"concat"`` (one file,
            ``episodes.mp4``, joined without re-encoding as the episodes come in: a fragmented
            MP4, which plays up to the episode joined last should the process be killed).
        seed: The seed of the first episode, at least 0.
        fps: Frames per second of the videos.
        max_steps: End episodes after this many steps (marked truncated); ``None`` lets them end
            by themselves.
        quality: ``"fast"`` (x264 ultrafast, crf 23) or ``"final"`` (slow, crf 18).
        crf: Overrides the crf of ``quality``.
        preset: Overrides the x264 preset of ``quality``.
        tiles: Episodes per mosaic video, with ``layout="mosaic"``.
        vectorized: Draw frames with gymview's numpy renderers where the env has one; ``False``
            always calls ``env.render()``.
        progress: Show a tqdm progress bar (episodes, steps per second, time left).
        log_to: Where each video goes too: a TensorBoard ``SummaryWriter`` (frames shrunk to 256
            pixels: TensorBoard keeps GIFs), a ``wandb`` run (or the ``wandb`` module after
            ``wandb.init()``; the MP4 as it is) or a function ``log_to(path, info)``. The tag is
            ``videos/episode`` (``videos/mosaic``, ``videos/episodes`` for the other layouts), the
            step the episode's index (a file's first episode). Videos are logged in episode order
            by this process as the rows come in, while the workers go on. A failed log leaves
            the file, a ``logging failed`` note in the rows' ``error`` and one ``RuntimeWarning``.

    Returns:
        A ``BatchResult``: one row per episode in ``.table``, the files written in ``.files``.

    Raises:
        ValueError: When ``layout`` is not ``"per-episode"``, ``"mosaic"`` or ``"concat"``,
            ``quality`` is not ``"fast"`` or ``"final"``, or ``episodes``, ``seed``, ``fps``,
            ``max_steps``, ``tiles`` or ``workers`` is out of range.
        TypeError: When ``env``, ``policy``, ``keep``, ``executor`` or ``log_to`` has the wrong type, or the env
            function, policy or ``keep`` cannot be pickled for the workers.
        gymnasium.error.Error: When ``env`` is an id gymnasium does not know.

    Examples:
        >>> import tempfile
        >>> result = record_batch("CartPole-v1", lambda obs: int(obs[2] > 0), episodes=2, out=tempfile.mkdtemp(),
        ...                       keep=lambda episode: episode.index == 1, max_steps=20, workers=1, progress=False)
        >>> [row["steps"] for row in result.table], [path.name for path in result.files]
        ([20, 20], ['episode-0001.mp4'])
    """
    tag = {"mosaic": "videos/mosaic", "concat": "videos/episodes"}.get(layout, "videos/episode")
    log = _BatchLog(video_log(log_to, tag=tag, step_key="episode"), fps)  # a wrong log_to fails before any work
    job = _batch_spec(
        env,
        policy,
        keep,
        episodes,
        out,
        layout,
        seed,
        max_steps,
        fps,
        quality,
        crf,
        preset,
        tiles,
        vectorized,
        workers,
        executor,
    )
    run: Runner
    pool: RestartingPool | None = None
    if executor is None:
        pool = RestartingPool(_pool_size(workers))
        run = pool.results
    else:
        run = functools.partial(executor_results, executor)
    started = time.perf_counter()
    joining = _Joining(job) if layout == "concat" else None
    try:
        if joining is not None:  # joined in episode order as the rows come in, while the workers go on
            on_row: Callable[[dict[str, Any]], None] = joining.add
        elif layout == "per-episode":  # logged in episode order as the rows come in
            on_row = lambda row: log.file(row["file"], [row])  # noqa: E731
        else:
            on_row = lambda row: None  # noqa: E731
        rows = _simulate_all(run, job, episodes, seed, progress, on_row)
        files = _assemble(run, job, rows, progress, log, joining)
    finally:
        if joining is not None:
            joining.give_up()  # a batch that did not get to its end leaves no half-joined video
        if pool is not None:
            pool.shutdown()
        if job.parts and os.path.isdir(job.parts) and not os.listdir(job.parts):
            os.rmdir(job.parts)
    for row in rows:
        row.pop("states", None)
        row.pop("raw", None)
    return BatchResult(rows, files, Path(job.out), time.perf_counter() - started)


def _batch_spec(
    env,
    policy,
    keep,
    episodes,
    out,
    layout,
    seed,
    max_steps,
    fps,
    quality,
    crf,
    preset,
    tiles,
    vectorized,
    workers,
    executor,
) -> BatchSpec:
    if isinstance(env, str):
        make_env: Callable[[], gym.Env] = registered_env(env)  # an unknown id fails here, once
    elif callable(env):
        make_env = env
    else:
        raise TypeError(f"env must be an env id string or a function that makes the env; got {type(env).__name__}")
    if policy is not None and not callable(policy):
        raise TypeError(
            f"policy must be a function observation -> action, or None for random actions; got {type(policy).__name__}"
        )
    if keep is not None and not callable(keep):
        raise TypeError(
            f"keep must be a function Episode -> bool, or None to keep every episode; got {type(keep).__name__}"
        )
    check_int("seed", seed, minimum=0, hint=" (episode i uses seed + i)")
    from gymview.video.ffmpeg import fps_text

    fps_text(fps)  # a clear error now rather than one per episode
    check_int("episodes", episodes)
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(map(repr, LAYOUTS))}; got {layout!r}")
    check_optional_int("max_steps", max_steps, meaning_of_none="episodes end by themselves")
    if quality not in QUALITIES:
        raise ValueError(f"quality must be one of {', '.join(map(repr, QUALITIES))}; got {quality!r}")
    check_int("tiles", tiles, hint=" (episodes per mosaic video)")
    check_optional_int("workers", workers, meaning_of_none="one per core")
    if executor is not None and not isinstance(executor, concurrent.futures.Executor):
        raise TypeError(
            "executor must be a concurrent.futures.Executor (e.g. client.get_executor()); "
            f"got {type(executor).__name__}"
        )
    try:
        payload = pickled((make_env, policy, keep))
    except Exception as error:
        raise TypeError(
            f"could not pickle the env factory, policy or keep function for the workers: {error}"
        ) from error
    out_path = Path(os.fspath(out)).absolute()
    out_path.mkdir(parents=True, exist_ok=True)
    parts = ""
    if layout != "per-episode":
        parts = tempfile.mkdtemp(prefix=".gymview-parts-", dir=out_path)
    default_preset, default_crf = QUALITIES[quality]
    preset = default_preset if preset is None else preset
    threads = max(1, (os.cpu_count() or 1) // _pool_size(workers)) if executor is None else 1
    job = BatchSpec(
        payload=payload,
        out=str(out_path),
        layout=layout,
        max_steps=max_steps,
        fps=fps,
        crf=default_crf if crf is None else crf,
        preset=preset,
        # x264 ultrafast on one thread writes the same packets with zerolatency, which holds no
        # frame back: a worker's codec then stays open from one file to the next
        tune="zerolatency" if preset == "ultrafast" and threads == 1 else None,
        threads=threads,
        vectorized=vectorized,
        name_width=max(4, len(str(episodes - 1))),
        parts=parts,
        tiles=tiles,
        columns=int(np.ceil(np.sqrt(tiles))),
    )
    return job


def _pool_size(workers: int | None) -> int:
    """Worker processes of the default pool: one per core unless told (more only compete for the
    cores ffmpeg uses; docs/performance-log.md)."""
    return workers or (os.cpu_count() or 1)


def _progress_bar(total: int, description: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="ep", disable=not enabled, dynamic_ncols=True)


# RestartingPool.results, or executor_results on an executor
Runner = Callable[[list[Call]], Generator[Outcome, None, None]]


def _simulate_all(
    run: Runner, job: BatchSpec, episodes: int, seed: int, progress: bool, on_row: Callable[[dict[str, Any]], None]
) -> list[dict[str, Any]]:
    """Run every episode; ``on_row`` gets each row in episode order, as soon as it and those before it are in."""
    rows: list[dict[str, Any] | None] = [None] * episodes
    handed = 0  # rows before this one went to on_row
    calls: list[Call] = [(run_episode, (job, index, seed + index)) for index in range(episodes)]
    steps, started = 0, time.perf_counter()
    with _progress_bar(episodes, "episodes", progress) as bar, contextlib.closing(run(calls)) as outcomes:
        for index, outcome, error in outcomes:
            row = outcome
            if error is not None:  # the worker itself failed (run_episode reports the episode's own errors)
                row = finish_row(dict(episode=index, seed=seed + index, steps=0, total=0.0, terminated=False,
                                      truncated=False, file=None, frames=0,
                                      error=f"worker failed: {error}"))  # fmt: skip
            rows[index] = row
            while handed < episodes and (done := rows[handed]) is not None:
                on_row(done)
                handed += 1
            steps += row["steps"] + 1
            bar.set_postfix_str(f"{steps / max(time.perf_counter() - started, 1e-9):,.0f} steps/s", refresh=False)
            bar.update(1)
    return rows  # type: ignore[return-value]


def _assemble(
    run: Runner,
    job: BatchSpec,
    rows: list[dict[str, Any]],
    progress: bool,
    log: _BatchLog,
    joining: _Joining | None,
) -> list[Path]:
    """Files of the layout: per-episode files as they are, mosaics encoded, concat parts joined."""
    kept = [row for row in rows if row["frames"] and (row["file"] or "states" in row or "raw" in row)]
    if job.layout == "per-episode":
        return [Path(row["file"]) for row in kept]
    if not kept:
        return []
    if joining is not None:
        files = joining.finish(kept)
        if files and kept[0]["file"] == str(files[0]):  # joined: one video (else the parts stay, unlogged)
            log.file(str(files[0]), kept, joined=True)
        return files
    groups = [kept[start : start + job.tiles] for start in range(0, len(kept), job.tiles)]
    width = max(4, len(str(len(groups) - 1)))
    paths = [str(Path(job.out) / f"mosaic-{number:0{width}d}.mp4") for number in range(len(groups))]
    calls: list[Call] = [(encode_mosaic, (job, group, path)) for group, path in zip(groups, paths)]
    done: set[str] = set()
    logged = 0  # mosaics logged in order as they finish, like episodes
    with _progress_bar(len(groups), "mosaics", progress) as bar, contextlib.closing(run(calls)) as outcomes:
        for number, _, error in outcomes:
            group, path = groups[number], paths[number]
            for row in group:
                if error is None:
                    row["file"] = path
                else:  # reported per episode
                    row["error"] = (row["error"] + "; " if row["error"] else "") + f"mosaic failed: {error}"
            for row in group:
                if "raw" in row:
                    Path(row["raw"][0]).unlink(missing_ok=True)
            done.add(path)
            while logged < len(groups) and paths[logged] in done:
                if groups[logged][0]["file"] == paths[logged]:
                    log.file(paths[logged], groups[logged])
                logged += 1
            bar.update(1)
    return [Path(path) for group, path in zip(groups, paths) if group[0]["file"] == path]


class _Joining:
    """The concat layout's ``episodes.mp4`` and its step table: the kept episodes' parts (fragmented
    MP4s) appended in episode order as their rows come in, fragments as bytes and tables as lines,
    without re-encoding or demuxing. The rows of a part reach the disk before its frames, so after
    a kill what plays has its rows. Should joining fail, the per-episode parts stay where they are
    and are the files of the batch instead."""

    def __init__(self, job: BatchSpec) -> None:
        self.job = job
        self.target = Path(job.out) / "episodes.mp4"
        self.joiner: Joiner | None = None
        self.tables: TableJoiner | None = None
        self.failure: FFmpegError | None = None

    def add(self, row: dict[str, Any]) -> None:
        """Join the part of ``row``, if it has one."""
        if self.failure is not None or not (row["frames"] and row["file"]):
            return
        try:
            joiner, tables = self.joiner, self.tables
            if joiner is None or tables is None:  # the first part
                joiner = self.joiner = Joiner(self.target)
                tables = self.tables = TableJoiner(self.target)
            try:
                tables.add(row["file"])
            except (OSError, ValueError) as error:
                raise FFmpegError(f"could not add the step table of {row['file']!r}: {error}") from error
            joiner.add(row["file"])
        except FFmpegError as error:
            self.failure = error
            self.give_up()

    def finish(self, kept: list[dict[str, Any]]) -> list[Path]:
        """Finish ``episodes.mp4`` and delete the parts; or, where joining failed, keep them."""
        if self.failure is None and self.joiner is not None:
            try:
                self.joiner.close()
            except FFmpegError as error:
                self.failure = error
            else:
                self.joiner = self.tables = None
        if self.failure is not None or self.joiner is not None:
            self.give_up()
            note = (
                f"could not join the episodes into {str(self.target)!r} ({self.failure}); "
                f"the parts are kept in {self.job.parts!r}"
            )
            for row in kept:
                row["error"] = (row["error"] + "; " if row["error"] else "") + note
            return [Path(row["file"]) for row in kept]
        for row in kept:
            Path(row["file"]).unlink(missing_ok=True)
            row["file"] = str(self.target)
        shutil.rmtree(self.job.parts, ignore_errors=True)
        return [self.target]

    def give_up(self) -> None:
        """Close and delete an unfinished ``episodes.mp4`` and its table (idempotent)."""
        joiner, self.joiner = self.joiner, None
        if joiner is not None:
            with contextlib.suppress(FFmpegError):
                joiner.close()
            if self.target.is_file():  # not what was in the way, when that made joining fail
                self.target.unlink()
        tables, self.tables = self.tables, None
        if tables is not None and tables.path.is_file():
            tables.path.unlink()


class _BatchLog:
    """A batch's ``log_to``: each file logged in this (the caller's) process, failures noted in the rows."""

    def __init__(self, log: VideoLog | None, fps: float) -> None:
        self.log = log
        self.fps = fps
        self.warned = False

    def file(self, path: str | None, members: list[dict[str, Any]], joined: bool = False) -> None:
        """Log ``path``, the video of the rows ``members``; a failure goes in their ``error``."""
        if self.log is None or not path:
            return
        first = members[0]
        info = dict(step=first["episode"], episode=first["episode"], episodes=[row["episode"] for row in members],
                    seed=first["seed"], frames=(sum if joined else max)(row["frames"] for row in members), fps=self.fps,
                    returns=[row["return"] for row in members])  # fmt: skip
        try:
            self.log(path, info)
        except VideoLogError as error:  # the video is kept; the batch goes on
            for row in members:
                row["error"] = (row["error"] + "; " if row["error"] else "") + f"logging failed: {error.__cause__!r}"
            if not self.warned:
                warnings.warn(
                    f"{error} (noted in the rows' error column; the batch goes on)", RuntimeWarning, stacklevel=4
                )
                self.warned = True
