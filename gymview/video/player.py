"""Show recorded videos inline in a notebook: one HTML5 player, or a grid of them with captions.

Small files are embedded in the output (a base64 ``data:`` URI), so the notebook plays them even
after it is saved, moved or shared. Large files are linked by a path relative to the notebook's
working folder, so saved notebooks stay small; JupyterLab and Notebook 7 serve such links. In
Colab and VS Code a linked file cannot be fetched by the page, so there every file is embedded.

>>> import numpy as np, tempfile, os
>>> from gymview.video.recorder import VideoRecorder
>>> folder = tempfile.mkdtemp()
>>> with VideoRecorder(os.path.join(folder, "a.mp4")) as recorder:
...     recorder.write(np.zeros((16, 16, 3), np.uint8))
>>> "<video" in show_video(folder)._repr_html_()
True
"""

from __future__ import annotations

import base64
import html
import os
import sys
import urllib.parse
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gymview._internal.checks import check_int
from gymview._internal.natural import natural_key

if TYPE_CHECKING:
    from gymview.episodes.listing import EpisodeBrowser

__all__ = ["VideoGrid", "show_video"]

_MIME_TYPES = {".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg"}
DEFAULT_EMBED_LIMIT = 4 * 2**20  # bytes; files up to this size are embedded in the notebook


class VideoGrid:
    """Videos laid out in a grid of HTML5 players, as ``show_video`` returns them.

    A notebook shows it when it is the last expression of a cell (through ``_repr_html_``).

    Args:
        html_text: The HTML of the grid.
        paths: The video files, in display order.
        embedded: For each file, whether it is embedded in the HTML (``True``) or linked.

    Attributes:
        html: The HTML of the grid.
        paths: The video files, in display order.
        embedded: For each file, whether it is embedded in the HTML (``True``) or linked.

    Examples:
        >>> from pathlib import Path
        >>> grid = VideoGrid("<div></div>", [Path("a.mp4")], [True])
        >>> grid
        <VideoGrid of 1 video(s)>
        >>> grid._repr_html_()
        '<div></div>'
    """

    def __init__(self, html_text: str, paths: list[Path], embedded: list[bool]) -> None:
        self.html = html_text
        self.paths = paths
        self.embedded = embedded

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<VideoGrid of {len(self.paths)} video(s)>"


def show_video(
    videos: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    captions: Sequence[str] | None = None,
    width: int = 320,
    columns: int | None = None,
    embed: bool | None = None,
    embed_limit: int = DEFAULT_EMBED_LIMIT,
    autoplay: bool = True,
    loop: bool = True,
    episodes: bool | None = None,
) -> VideoGrid | EpisodeBrowser:
    """Show one video file, every video in a folder, or a list of files as inline players.

    A folder of recordings with step tables (``gymview.RecordVideo``, ``watch(record=...)``,
    ``record_batch``) shows as a table of its episodes instead, with their return and length,
    sortable by any column; a click on an episode opens it in the episode player
    (``gymview.show_episode``) under the table.

    Small files are embedded in the notebook, so it plays them even after it is saved, moved or
    shared; larger ones are linked by a path relative to the notebook's folder. The players start
    by themselves, muted, as browsers require. The returned object shows itself when it is the
    last expression of a cell.

    Args:
        videos: A video file, a folder (its ``.mp4``/``.webm`` files, in natural order:
            ``episode-2`` before ``episode-10``), or a list of files.
        captions: One caption per video; defaults to the file names. Shown as text, never HTML.
        width: Width of each player in CSS pixels.
        columns: Videos per row; defaults to up to 4.
        embed: ``True`` embeds every file, ``False`` links every file, ``None`` (the default)
            embeds files up to ``embed_limit`` bytes and links larger ones (and embeds all in
            Colab and VS Code, where linked files cannot be played).
        embed_limit: The largest file, in bytes, that ``embed=None`` embeds (4 MiB by default).
        autoplay: Start the players by themselves (muted).
        loop: Repeat the videos.
        episodes: ``None`` (the default): a folder with step tables shows as a table of episodes;
            ``False``: as players always; ``True``: as a table of episodes (an error without tables).

    Returns:
        A ``VideoGrid`` of the players (``.paths`` lists the files shown), or for a folder of
            episodes a ``gymview.episodes.listing.EpisodeBrowser``.

    Raises:
        FileNotFoundError: When a file does not exist.
        ValueError: When a folder holds no videos (or ``episodes=True`` and no step tables), the list
            is empty, a file is not a video browsers play, the captions are not one per video, or
            ``width`` or ``columns`` is not a positive integer.
        TypeError: When ``videos`` is not a path, a folder or a list of paths.

    Examples:
        >>> import numpy as np, os, tempfile
        >>> from gymview import VideoRecorder
        >>> folder = tempfile.mkdtemp()
        >>> for name in ("episode-10.mp4", "episode-2.mp4"):
        ...     with VideoRecorder(os.path.join(folder, name)) as recorder:
        ...         recorder.write(np.zeros((16, 16, 3), np.uint8))
        >>> grid = show_video(folder, width=240)
        >>> [path.name for path in grid.paths], grid.embedded
        (['episode-2.mp4', 'episode-10.mp4'], [True, True])
        >>> show_video("missing.mp4")
        Traceback (most recent call last):
        ...
        FileNotFoundError: no video at 'missing.mp4'
    """
    if episodes is not False and isinstance(videos, (str, os.PathLike)) and Path(os.fspath(videos)).is_dir():
        from gymview.episodes.listing import EpisodeBrowser  # anywidget: imported when used

        browser = EpisodeBrowser.of_folder(videos)
        if browser.entries:
            return browser
        if episodes:
            raise ValueError(f"no video in {os.fspath(videos)!r} has a step table (<video>.steps.csv) beside it")
    paths = _video_paths(videos)
    if captions is None:
        captions = [path.name for path in paths]
    elif isinstance(captions, str) or len(captions) != len(paths):
        count = 1 if isinstance(captions, str) else len(captions)
        raise ValueError(f"got {count} caption(s) for {len(paths)} video(s); give one caption per video")
    check_int("width", width, hint=" (pixels)")
    columns = min(len(paths), 4) if columns is None else columns
    check_int("columns", columns)
    links_work = _linked_files_are_served()
    cells, embedded = [], []
    for path, caption in zip(paths, captions):
        size = path.stat().st_size
        embed_this = embed if embed is not None else (size <= embed_limit or not links_work)
        source = _data_uri(path) if embed_this else _relative_url(path)
        embedded.append(embed_this)
        attributes = "controls muted playsinline" + (" autoplay" if autoplay else "") + (" loop" if loop else "")
        cells.append(
            '<figure style="margin:0">'
            f'<video {attributes} width="{width}" style="max-width:100%;display:block">'
            f'<source src="{html.escape(source, quote=True)}" type="{_MIME_TYPES[path.suffix.lower()]}">'
            "Your browser cannot play this video.</video>"
            f'<figcaption style="font:12px sans-serif;text-align:center;overflow-wrap:anywhere;max-width:{width}px">'
            f"{html.escape(str(caption))}</figcaption></figure>"
        )
    grid = (
        f'<div class="gymview-videos" style="display:grid;gap:8px;'
        f'grid-template-columns:repeat({columns},max-content)">' + "".join(cells) + "</div>"
    )
    return VideoGrid(grid, paths, embedded)


def _video_paths(videos: object) -> list[Path]:
    if isinstance(videos, (str, os.PathLike)):
        path = Path(os.fspath(videos))
        if path.is_dir():
            found = sorted(
                (p for p in path.iterdir() if p.suffix.lower() in _MIME_TYPES and not p.name.startswith(".")),
                key=natural_key,
            )
            if not found:
                raise ValueError(f"no video files ({', '.join(_MIME_TYPES)}) in the folder {str(path)!r}")
            return found
        candidates = [path]
    elif isinstance(videos, Iterable):
        candidates = [Path(os.fspath(v)) for v in videos]
        if not candidates:
            raise ValueError("show_video got an empty list; give at least one video file")
    else:
        raise TypeError(f"show_video takes a path, a folder or a list of paths; got {type(videos).__name__}")
    for path in candidates:
        if not path.is_file():
            raise FileNotFoundError(f"no video at {str(path)!r}")
        if path.suffix.lower() not in _MIME_TYPES:
            raise ValueError(f"{str(path)!r} is not a video browsers play; expected one of {', '.join(_MIME_TYPES)}")
    return candidates


def _data_uri(path: Path) -> str:
    encoded = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"data:{_MIME_TYPES[path.suffix.lower()]};base64,{encoded}"


def _relative_url(path: Path) -> str:
    relative = os.path.relpath(path.absolute(), Path.cwd())
    if relative.startswith(os.pardir):
        warnings.warn(
            f"{str(path)!r} is outside the notebook's folder, where Jupyter may not serve it; "
            "pass embed=True or move the video under the notebook's folder",
            stacklevel=3,
        )
    return urllib.parse.quote(Path(relative).as_posix())


def _linked_files_are_served() -> bool:
    """False in Colab and VS Code, whose output frames cannot fetch files by a relative URL."""
    return "google.colab" not in sys.modules and "VSCODE_PID" not in os.environ
