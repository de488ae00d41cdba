"""The live view: frames from a running loop to a notebook, throttled, compressed and flow-controlled.

``LiveView`` (the widget) takes frames on ``push``, arrays or ``DeferredFrame`` s (a state and the painter that
draws it elsewhere): those two are this package's public names. Inside, a ``ViewFeed`` connects a stepping loop
to its view (:mod:`.feed`); :mod:`.pacing.throttle` decides which frames are due,
:mod:`.encoding.encoder_process` downsamples and compresses them in a helper process, :mod:`.streamer`
sends them under the browser's acks and a process-wide message budget, and :mod:`.protocol` is
the wire format the front-end (``js/``, bundled and read by :mod:`gymview._internal.frontend`) speaks. IPython and
anywidget are imported only when ``LiveView`` is first used.
"""

from typing import TYPE_CHECKING

from gymview._internal.lazy import lazy_exports

_EXPORTS = {
    "LiveView": ".widget",
    "DeferredFrame": ".encoding.deferred",
}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what editors and the API reference see; at run time each name is imported on first use
    from gymview.live.encoding.deferred import DeferredFrame
    from gymview.live.widget import LiveView

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
