"""JobStatus: the one-line status of a background job (state, elapsed time, a Stop button).

The browser counts the elapsed time itself from ``started``, so no thread ticks in the kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from gymview._internal.kernel import in_kernel
from gymview.live import protocol

__all__ = ["JobStatus", "show_in_notebook"]

_ESM = """
const STOP = {"type": "%s"};
function render({ model, el }) {
  el.classList.add("gymview-job");
  const label = document.createElement("span");
  const button = document.createElement("button");
  button.textContent = "Stop";
  button.setAttribute("aria-label", "Stop");
  button.className = "gymview-button";
  el.append(label, button);
  const show = () => {
    const state = model.get("state");
    const end = model.get("ended") || Date.now() / 1000;
    const seconds = Math.max(0, end - model.get("started"));
    const message = model.get("message");
    label.textContent = `${model.get("name")}: ${state} · ${seconds.toFixed(0)} s` + (message ? ` · ${message}` : "");
    el.dataset.state = state;
    button.disabled = state !== "running";
  };
  button.addEventListener("click", () => model.send(STOP));
  model.on("change", show);
  show();
  const timer = setInterval(show, 1000);
  return () => { clearInterval(timer); model.off("change", show); };
}
export default { render };
""" % protocol.JOB_STOP


class JobStatus(anywidget.AnyWidget):
    """Shows a background job; its Stop button calls ``on_stop()``."""

    _esm = _ESM
    _css = ".gymview-job { display: flex; gap: 8px; align-items: center; font-size: 12px; }"
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
