"""A table of episodes with the player under it: ``gymview.show_video`` of a folder of recordings,
and a ``record_batch`` result. A click on a column's heading sorts the table (in the page), a click
on an episode opens it in the player (the kernel reads its video and step table then).

>>> import gymnasium as gym, gymview, os, tempfile
>>> folder = os.path.join(tempfile.mkdtemp(), "videos")
>>> env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), folder,
...                           episode_trigger=lambda episode: True)
>>> for seed in (0, 1):
...     _ = env.reset(seed=seed)
...     for step in range(5 + seed):
...         _ = env.step(step % 2)
>>> env.close()
>>> browser = EpisodeBrowser.of_folder(folder)
>>> [(row["file"], row["steps"], row["return"]) for row in browser.rows]
[('rl-video-episode-0.mp4', 5, 5.0), ('rl-video-episode-1.mp4', 6, 6.0)]
>>> browser.open(1).readout(6)
'step 6 · reward 1 · return 6 · action 1'
"""

from __future__ import annotations

import dataclasses
import html
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from gymview._internal import frontend
from gymview._internal.natural import natural_key
from gymview.episodes.clips import clips_in
from gymview.episodes.player import EpisodePlayer, show_episode
from gymview.episodes.rows import jsonable
from gymview.episodes.table import steps_path

__all__ = ["EpisodeBrowser", "EpisodeEntry", "EpisodeTable"]

FOLDER_COLUMNS = ("file", "episode", "steps", "return", "terminated", "truncated")


@dataclasses.dataclass(frozen=True)
class EpisodeEntry:
    """One row of the table: its cells, and where its episode is (``video`` None: not recorded)."""

    cells: dict[str, Any]
    video: Path | None = None
    episode: int | None = None  # which episode of a video that holds several; None: the whole video


class EpisodeTable(anywidget.AnyWidget):
    """The table of episodes in the page (``js/episode_list.js``): sorted there, ``selected`` set by a click."""

    _esm = frontend.EPISODES_ESM  # text, not a path: see LiveView
    _css = frontend.CSS
    _view = traitlets.Unicode("list").tag(sync=True)
    _rows = traitlets.List(traitlets.Dict()).tag(sync=True)
    _columns = traitlets.List(traitlets.Unicode()).tag(sync=True)
    selected = traitlets.Int(-1, help="The row opened in the player (-1: none).").tag(sync=True)


class EpisodeBrowser:
    """A table of episodes, sortable by any column, and under it the player of the one clicked.

    Args:
        entries: The rows.
        columns: The cells shown, in order.
        values: The columns the player charts (``None``: its default).

    Attributes:
        rows: Each entry's cells, in order.
        player: The player of the episode opened last, or None.

    Examples:
        >>> browser = EpisodeBrowser([EpisodeEntry({"episode": 0, "return": 9.0})], ["episode", "return"])
        >>> browser.rows, browser.player
        ([{'episode': 0, 'return': 9.0}], None)
    """

    def __init__(self, entries: Sequence[EpisodeEntry], columns: Sequence[str], values: Sequence[str] | None = None):
        self.entries = list(entries)
        self.columns = list(columns)
        self.values = values
        self.player: EpisodePlayer | None = None
        self._widget: Any = None

    @classmethod
    def of_folder(cls, folder: str | os.PathLike[str], values: Sequence[str] | None = None) -> EpisodeBrowser:
        """Every episode of the folder's videos that have a step table, in natural file order.

        Args:
            folder: The folder of recordings.
            values: The columns the player charts (``None``: its default).

        Returns:
            The browser; a video of several episodes gives a row for each.
        """
        entries = []
        videos = sorted((path for path in Path(os.fspath(folder)).glob("*.mp4") if not path.name.startswith(".")),
                        key=natural_key)  # fmt: skip
        for video in videos:
            if not steps_path(video).is_file():
                continue
            clips = clips_in(video)
            for clip in clips:
                cells = {"file": video.name, **clip.summary()}
                entries.append(EpisodeEntry(cells, video, clip.episode if len(clips) > 1 else None))
        return cls(entries, FOLDER_COLUMNS, values)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Each entry's cells, in order."""
        return [entry.cells for entry in self.entries]

    def open(self, index: int) -> EpisodePlayer:
        """Open a row's episode in the player (under the table, when it is displayed).

        Args:
            index: The row, in the table's own order (before any sorting in the page).

        Returns:
            The episode's player.

        Raises:
            ValueError: When that episode was not recorded.
        """
        entry = self.entries[index]
        if entry.video is None:
            raise ValueError(f"episode {entry.cells.get('episode', index)} was not recorded (it was not kept)")
        title = entry.video.name if entry.episode is None else f"{entry.video.name} · episode {entry.episode}"
        player = show_episode(entry.video, values=self.values, episode=entry.episode, title=title)
        if self._widget is not None:
            table, box = self._widget.children
            table.selected = index
            if self.player is not None:
                self.player.close()
            box.children = (player,)
        self.player = player
        return player

    def widget(self) -> Any:
        """The table and the player under it, as one widget.

        Returns:
            An ``ipywidgets.VBox`` (made once): the table, then a box that holds the player.
        """
        if self._widget is None:
            import ipywidgets

            rows = [{**_jsonable(entry.cells), "index": index, "openable": entry.video is not None}
                    for index, entry in enumerate(self.entries)]  # fmt: skip
            table = EpisodeTable(_rows=rows, _columns=self.columns)
            self._widget = ipywidgets.VBox([table, ipywidgets.Box()])
            table.observe(lambda change: self.open(change["new"]) if change["new"] >= 0 else None, "selected")
        return self._widget

    def html(self, max_rows: int = 50) -> str:
        """The table as HTML: what a saved notebook shows.

        Args:
            max_rows: The rows shown, at most.

        Returns:
            An HTML table.
        """
        head = "".join(f"<th>{html.escape(column)}</th>" for column in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_text(entry.cells.get(c)))}</td>" for c in self.columns) + "</tr>"
            for entry in self.entries[:max_rows]
        )
        more = f"<p>… {len(self.entries) - max_rows} more</p>" if len(self.entries) > max_rows else ""
        return f"<table><tr>{head}</tr>{body}</table>{more}"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = self.widget()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        return {**data, "text/html": self.html()}

    def __repr__(self) -> str:
        return f"<EpisodeBrowser of {len(self.entries)} episodes>"


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _jsonable(cells: dict[str, Any]) -> dict[str, Any]:
    """Cells the page can read: paths as names, NaN as None."""
    return {name: value.name if isinstance(value, Path) else jsonable(value) for name, value in cells.items()}
