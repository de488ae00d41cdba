"""Episodes read step by step: every step's data kept with its picture (``rows``, ``table``: the
step table beside each video, ``read_steps``), and the views that show them.

Nothing here imports an env library: ``video`` (recording) and ``live`` (the live view) write and
keep the rows, this room says what a row is and where it goes.
"""

from typing import TYPE_CHECKING

from gymview._internal.lazy import lazy_exports

_EXPORTS = {
    "Clip": ".clips",
    "EpisodePlayer": ".player",
    "StepTable": ".table",
    "StepTracker": ".rows",
    "log": ".current",
    "read_steps": ".table",
    "show_episode": ".player",
    "steps_path": ".table",
}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what editors and the API reference see; at run time each name is imported on first use
    from gymview.episodes.clips import Clip
    from gymview.episodes.current import log
    from gymview.episodes.player import EpisodePlayer, show_episode
    from gymview.episodes.rows import StepTracker
    from gymview.episodes.table import StepTable, read_steps, steps_path

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
