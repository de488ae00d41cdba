"""Runs outside this notebook, watched from it: scripts, training workers and cluster jobs publish their
live view at an address (``gymview.watch(env, publish="127.0.0.1:5555")``, or ``GYMVIEW_PUBLISH``), and any
notebook that can reach it attaches (``gymview.attach("127.0.0.1:5555", token=...)``).

The frames are the view's own messages (JPEG, PNG, H.264, or the states of scenes the page draws), sent
over pyzmq as JSON heads and binary parts, never pickled; a run makes them only while a notebook watches.
:mod:`.publisher` is the run's side, :mod:`.hub` the routing at the address, :mod:`.attach` the notebook's
view, :mod:`.wire` the messages, :mod:`.tokens` who may watch.
"""

from typing import TYPE_CHECKING

from gymview._internal.lazy import lazy_exports

_EXPORTS = {
    "AttachedView": ".attached",
    "RunInfo": ".wire",
    "attach": ".attached",
    "runs_at": ".attached",
}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what editors and the API reference see; at run time each name is imported on first use
    from gymview.remote.attached import AttachedView, attach, runs_at
    from gymview.remote.wire import RunInfo

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
