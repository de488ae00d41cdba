"""The step table beside a video: one row per frame, as CSV (``pandas.read_csv`` reads it in one
call), written as the video is, crash-safe like it.

``episode-3.mp4`` gets ``episode-3.steps.csv``. Its columns are ``frame`` (the frame's index in
the video), then those of :func:`gymview.episodes.rows.row_of`. A cell a row lacks (a value logged
from some step on) is empty.

Crash safety: a crash-safe video reaches the disk one fragment (about a second of frames) at a
time, and a fragment is written out when the encoder makes the key frame that starts the next. Just
before, on the encoder's thread, the table writes the rows of every frame encoded before that one
(``write_before``): after a kill, every frame that plays has its row on disk. The table may hold rows
of frames that were encoded but whose fragment never came out: :func:`read_steps` leaves them out.

>>> import os, tempfile
>>> video = os.path.join(tempfile.mkdtemp(), "episode-0.mp4")
>>> table = StepTable(video)
>>> from gymview.episodes.rows import RawStep
>>> table.add(RawStep(0, 0, 0.0, 0.0, False, False, None, {}))
>>> table.add(RawStep(0, 1, 1.0, 1.0, True, False, 1, {}, {"value": 2.5}))
>>> table.close()
>>> print(open(table.path).read())
frame,episode,step,reward,return,terminated,truncated,action,value
0,0,0,0.0,0.0,0,0,,
1,0,1,1.0,1.0,1,0,1.0,2.5
<BLANKLINE>
"""

from __future__ import annotations

import csv
import io
import math
import os
import sys
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gymview.episodes.rows import RawStep, columns_of, row_of

__all__ = ["STEPS_SUFFIX", "StepTable", "TableJoiner", "beside_video", "read_steps", "steps_path", "video_frame_count"]

STEPS_SUFFIX = ".steps.csv"
#: new columns past this many are left out (with one note in the table's ``dropped_columns``)
MAX_COLUMNS = 256


def beside_video(video: str | os.PathLike[str], suffix: str) -> Path:
    """The file of ``video``'s stem and ``suffix``, beside it.

    >>> beside_video("videos/episode-3.mp4", ".steps.csv").as_posix()
    'videos/episode-3.steps.csv'
    """
    path = Path(os.fspath(video))
    return path.with_name(path.stem + suffix)


def steps_path(video: str | os.PathLike[str]) -> Path:
    """The step table of ``video``: beside it, ``<stem>.steps.csv``."""
    return beside_video(video, STEPS_SUFFIX)


class StepTable:
    """The rows of one video's frames, written to ``steps_path(video)`` (see the module).

    ``add`` takes the row of each frame on the loop's thread, before the frame goes to the encoder;
    ``write_before`` writes rows out from any thread (the encoder's, before a fragment); ``close``
    writes the rest. A table never closed writes its rows when it is collected or at exit.

    Args:
        video: The video the rows belong to (the table goes beside it).
        row_of: What makes a row of a step added: ``keyed_row_of`` for an env of several sub-envs or agents.
    """

    def __init__(
        self, video: str | os.PathLike[str], row_of: Callable[[RawStep], dict[str, float | int]] = row_of
    ) -> None:
        self.path = steps_path(video)
        self.frames = 0  # rows added
        self._state = _TableState(self.path, row_of)
        self._finalizer = weakref.finalize(self, self._state.write_quietly)  # written even if never closed

    def add(self, raw: RawStep) -> None:
        """The row of the next frame; add it before that frame goes to the encoder."""
        with self._state.lock:
            self._state.pending.append(raw)
        self.frames += 1

    def write_before(self, frame: int) -> None:
        """Write the rows of the frames before ``frame`` that are not on disk yet. The loop may still
        add to the row of the frame it wrote last (``env.log``): write only rows of frames before it."""
        self._state.write(frame)

    @property
    def waiting(self) -> int:
        """Rows added and not on disk yet: about a second of frames while a crash-safe video records."""
        return len(self._state.pending)

    @property
    def dropped_columns(self) -> list[str]:
        """Columns left out: past ``MAX_COLUMNS``, new ones are not written."""
        return list(self._state.dropped)

    def close(self) -> None:
        """Write the rows still waiting; safe to call twice."""
        self._finalizer.detach()
        self._state.write(None)


class _TableState:
    """What a table's finalizer needs (not the table itself): the rows waiting and the file's header."""

    def __init__(self, path: Path, row_of: Callable[[RawStep], dict[str, float | int]]) -> None:
        self.path = path
        self.row_of = row_of
        self.lock = threading.Lock()
        self.pending: list[RawStep] = []
        self.header: list[str] | None = None
        self.written = 0  # rows on disk
        self.dropped: list[str] = []

    def write(self, before: int | None) -> None:
        """Write the rows waiting, of frames before ``before`` (None: all of them)."""
        with self.lock:
            count = len(self.pending) if before is None else min(len(self.pending), before - self.written)
            if count <= 0:
                return
            rows: list[dict[str, Any]] = [self.row_of(raw) for raw in self.pending[:count]]
            for index, row in enumerate(rows):
                row["frame"] = self.written + index
            columns = columns_of(rows, self.header or ["frame"])  # then the first row's, in its order
            if len(columns) > MAX_COLUMNS:
                self.dropped += [name for name in columns[MAX_COLUMNS:] if name not in self.dropped]
                columns = columns[:MAX_COLUMNS]
            if columns != self.header:
                self._rewrite(columns, rows)
            else:
                with open(self.path, "a", newline="", encoding="utf-8") as file:
                    file.write(_csv_text(columns, rows))
            self.header = columns
            self.written += count
            del self.pending[:count]

    def write_quietly(self) -> None:
        """The finalizer's write (a table never closed): report, never raise, a failure."""
        try:
            self.write(None)
        except OSError as error:  # at exit or in a GC pass nobody can catch it
            print(f"gymview: could not write the step table {str(self.path)!r}: {error}", file=sys.stderr)

    def _rewrite(self, columns: list[str], rows: list[dict[str, Any]]) -> None:
        """The file anew with ``columns`` (a new column appeared): its rows, then ``rows``; swapped in
        whole, so a kill meanwhile leaves the old file."""
        old = _read_rows(self.path) if self.header is not None and self.path.exists() else []
        _write_whole(self.path, columns, [*old, *rows])


def _write_whole(path: Path, columns: list[str], rows: list[dict[str, Any]]) -> None:
    """The table ``path`` written anew, swapped in whole: a kill meanwhile leaves the file as it was."""
    temporary = path.with_name(f".{path.name}.gymview-new")
    temporary.write_text(",".join(columns) + "\n" + _csv_text(columns, rows), encoding="utf-8")
    os.replace(temporary, path)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def _csv_text(columns: list[str], rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([_cell(row.get(name)) for name in columns] for row in rows)
    return out.getvalue()


def _number(text: str) -> float | int:
    if text == "":
        return math.nan
    try:
        return int(text)
    except ValueError:
        return float(text)


def _read_rows(path: Path) -> list[dict[str, float | int]]:
    """The table's whole lines as rows (a line cut short by a kill is left out)."""
    text = path.read_text(encoding="utf-8")
    if not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    reader = csv.DictReader(io.StringIO(text))
    return [{name: _number(value) for name, value in row.items()} for row in reader]


def read_steps(video: str | os.PathLike[str]) -> list[dict[str, float | int]]:
    """The rows of the step table beside ``video``: one dict of numbers per frame of the video.

    Every row has every column of the table; a value missing from a row is ``nan``. A recording cut
    short by a kill may have rows for up to a second more frames than its video plays: they are left
    out. ``pandas.read_csv(gymview.episodes.steps_path(video))`` reads the same table as a data frame.

    Args:
        video: A video recorded by ``gymview.RecordVideo``, ``gymview.watch(record=...)``,
            ``gymview.record_batch`` or ``gymview.compare``.

    Returns:
        The rows, in frame order: ``frame``, ``episode``, ``step``, ``reward``, ``return``,
            ``terminated``, ``truncated``, then the action's, ``info``'s and the logged values.

    Raises:
        FileNotFoundError: When the video has no step table beside it.

    Examples:
        >>> import gymnasium as gym, gymview, os, tempfile
        >>> folder = os.path.join(tempfile.mkdtemp(), "videos")
        >>> env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), folder)
        >>> _ = env.reset(seed=0)
        >>> for _ in range(3):
        ...     _ = env.step(1)
        ...     env.log(value=7.5)
        >>> env.close()
        >>> rows = read_steps(os.path.join(folder, "rl-video-episode-0.mp4"))
        >>> [(row["step"], row["reward"], row["value"]) for row in rows]
        [(0, 0.0, nan), (1, 1.0, 7.5), (2, 1.0, 7.5), (3, 1.0, 7.5)]
    """
    table = steps_path(video)
    if not table.is_file():
        raise FileNotFoundError(
            f"no step table beside {os.fspath(video)!r} (looked for {str(table)!r}): videos recorded by "
            "gymview.RecordVideo, gymview.watch(record=...), gymview.record_batch and gymview.compare have one"
        )
    rows = _read_rows(table)
    if Path(os.fspath(video)).is_file():
        frames = video_frame_count(video)
        if frames is not None and frames < len(rows):  # cut short by a kill: the frames that play
            del rows[frames:]
    return rows


class TableJoiner:
    """The step table of ``target``, a video joined from others one after another: each video's
    rows appended as it is joined (:meth:`add`), ``frame`` counted through. A video without a table
    leaves the target without one.

    Args:
        target: The joined video (its table goes beside it, replaced).

    Examples:
        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> for name, reward in (("a.mp4", 1.0), ("b.mp4", 2.0)):
        ...     table = StepTable(os.path.join(folder, name))
        ...     table.add(RawStep(0, 0, 0.0, 0.0, False, False, None, {}))
        ...     table.add(RawStep(0, 1, reward, reward, True, False, 1, {}))
        ...     table.close()
        >>> joined = TableJoiner(os.path.join(folder, "ab.mp4"))
        >>> joined.add(os.path.join(folder, "a.mp4")); joined.add(os.path.join(folder, "b.mp4"))
        >>> [(row["frame"], row["reward"]) for row in read_steps(os.path.join(folder, "ab.mp4"))]
        [(0, 0.0), (1, 1.0), (2, 0.0), (3, 2.0)]
    """

    def __init__(self, target: str | os.PathLike[str]) -> None:
        self.path = steps_path(target)
        self.frames = 0  # rows written
        self._columns: list[str] | None = None
        self._complete = True  # every video so far had a table

    def add(self, video: str | os.PathLike[str]) -> None:
        """Append the rows of the table beside ``video``: on disk when this returns."""
        source = steps_path(video)
        if not self._complete:
            return
        if not source.is_file():
            self._complete = False
            self.path.unlink(missing_ok=True)
            return
        text = source.read_text(encoding="utf-8")
        text = text[: text.rfind("\n") + 1]  # whole lines (a table is written whole before it is joined)
        head, _, body = text.partition("\n")
        columns = next(csv.reader([head]), [])
        if self._columns is None or columns == self._columns:  # as the worker wrote it, renumbered
            lines = body.splitlines()
            renumbered = "".join(f"{self.frames + i},{line.partition(',')[2]}\n" for i, line in enumerate(lines))
            with open(self.path, "w" if self._columns is None else "a", encoding="utf-8", newline="") as file:
                file.write(head + "\n" + renumbered if self._columns is None else renumbered)
            self._columns = self._columns or columns
            self.frames += len(lines)
            return
        rows = _read_rows(source)
        for index, row in enumerate(rows):
            row["frame"] = self.frames + index
        if set(columns) <= set(self._columns):  # fewer columns (a value not logged): theirs left empty
            with open(self.path, "a", encoding="utf-8", newline="") as file:
                file.write(_csv_text(self._columns, rows))
        else:  # a new column: the table anew, the rows before it empty there
            self._columns = columns_of(rows, self._columns)
            _write_whole(self.path, self._columns, [*_read_rows(self.path), *rows])
        self.frames += len(rows)


def video_frame_count(video: str | os.PathLike[str]) -> int | None:
    """Frames of the MP4 ``video`` that play (a fragmented file cut short counted to its last whole
    fragment); None when it cannot be read."""
    import av

    try:
        with av.open(os.fspath(video)) as container:
            stream = container.streams.video[0]
            if stream.frames:
                return int(stream.frames)
            count = 0
            try:
                for packet in container.demux(stream):
                    count += packet.size > 0
            except av.error.FFmpegError:  # the cut end of a killed recording
                pass
            return count
    except (av.error.FFmpegError, IndexError):
        return None
