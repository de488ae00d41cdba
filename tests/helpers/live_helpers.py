"""Test seams for the live view: a LiveView as a notebook shows it, and messages from a browser."""

from gymview.live.widget import LiveView


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
