"""JobStatus: the one-line status of a background job (state, elapsed time, a Stop button).

Its front-end is ``js/job_status.js`` (bundled as :mod:`gymview._internal.frontend` describes); the browser counts the
elapsed time itself from ``started``, so no thread ticks in the kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from gymview._internal import frontend
from gymview._internal.kernel import in_kernel
from gymview.live import protocol

__all__ = ["JobStatus", "show_in_notebook"]


class JobStatus(anywidget.AnyWidget):
    """Shows a background job; its Stop button calls ``on_stop()``."""

    _esm = frontend.JOB_STATUS_ESM  # text, not a path: see LiveView
    _css = frontend.CSS  # the live view's, for the same buttons
    name = traitlets.Unicode("").tag(sync=True)
    state = traitlets.Unicode("running").tag(sync=True)
    started = traitlets.Float(0.0).tag(sync=True)
    ended = traitlets.Float(0.0).tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)

    def __init__(self, on_stop: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_stop = on_stop
        self.on_msg(self._on_browser_message)

    def _on_browser_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if protocol.is_job_stop(content):
            self._on_stop()

    def stopping(self) -> None:
        self.state = "stopping"

    def finish(self, state: str, ended: float, message: str = "") -> None:
        with self.hold_sync():
            self.state, self.ended, self.message = state, ended, message


def show_in_notebook(widget: Any) -> None:
    """Display ``widget`` when running in a notebook kernel; nothing elsewhere."""
    if in_kernel():
        from IPython.display import display

        display(widget)
