"""The live view: frames from a running loop to a notebook, throttled, compressed and flow-controlled.

``LiveView`` (the widget) takes frames on ``push``; a ``ViewFeed`` connects a stepping loop to it
(:mod:`.feed`); :mod:`.throttle` decides which frames are due,
:mod:`.encoder_process` downsamples and compresses them in a helper process, :mod:`.streamer`
sends them under the browser's acks and a process-wide message budget, and :mod:`.protocol` is
the wire format the front-end (``js/``, bundled and read by :mod:`gymview._internal.frontend`) speaks. IPython and
anywidget are imported only when ``LiveView`` is first used.
"""

from typing import TYPE_CHECKING

from gymview._internal.lazy import lazy_exports

_EXPORTS = {
    "LiveView": ".widget",
    "live_views": ".kernels.registry",
    "DeferredFrame": ".encoding.deferred",
    "FrameStreamer": ".streamer",
    "FrameThrottle": ".pacing.throttle",
    "MessageBudget": ".pacing.throttle",
    "RunControls": ".controls",
    "Stopped": "gymview.errors",
    "ViewFeed": ".feed",
    "FrameHistory": ".encoding.replay",
}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what editors and the API reference see; at run time each name is imported on first use
    from gymview.errors import Stopped
    from gymview.live.controls import RunControls
    from gymview.live.encoding.deferred import DeferredFrame
    from gymview.live.encoding.replay import FrameHistory
    from gymview.live.feed import ViewFeed
    from gymview.live.kernels.registry import live_views
    from gymview.live.pacing.throttle import FrameThrottle, MessageBudget
    from gymview.live.streamer import FrameStreamer
    from gymview.live.widget import LiveView

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
