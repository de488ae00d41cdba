"""Test seams for the live view: a LiveView as a notebook shows it, messages from a browser, and the
feed a loop uses."""

import numpy as np

from gymview.live.feed import ViewFeed
from gymview.live.widget import LiveView


STREAMERS = []  # every FrameStreamer a test made: tests/live/conftest.py stops them after it


class ShownView(LiveView):
    """A LiveView in a kernel, displayed, whose frame messages land in ``self.sent`` and whose
    state messages (answers to the buttons) in ``self.states``."""

    def __init__(self, **kwargs):
        self.sent = []
        self.states = []
        super().__init__(send=self._deliver, in_kernel=True, **kwargs)
        self._repr_mimebundle_()  # what IPython's display() calls

    def _deliver(self, header, buffers):
        (self.states if header.get("type") == "state" else self.sent).append((header, buffers))


def browser_says(view, content):
    """Deliver ``content`` as the front-end does: a custom message through the widget's comm."""
    view.comm.handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


def feed_of(view, frame=lambda: np.zeros((8, 8, 3), np.uint8)):
    """A loop's connection to ``view``, as watch() makes one: its controls are the view's buttons."""
    return ViewFeed(view, frame=frame, info=dict)


def sent_frames(sent):
    """Each frame's header in ``sent`` (a ShownView's messages), the frames of a message of several scene
    frames one by one."""
    return [{**header, **fields} for header, _ in sent for fields in header.get("frames", [{}])]
