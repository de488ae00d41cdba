"""The views' browser messages during a blocking cell in marimo (``marimo edit``, ``marimo run``).

marimo's kernel handles the page's widget messages (``model.send`` in the browser: clicks, keys,
acks, a view's ready) one by one on the thread that runs the cells: while a cell runs a watched
loop, they wait until it ends. Each message waits twice, on the kernel's control queue and on its
UI-element queue, with one token; the kernel drains the second to merge what piled up and skips
the first copy of every token it drained. A :class:`MarimoCommPoller`, called by the watched env
when it looks at its view, drains that second queue the same way from inside the cell: it hands
the custom messages addressed to live views to their handlers and marks their tokens as drained
(the kernel skips them later); every other message still waits on the control queue, where the
kernel handles it after the cell, as it would have.

It finds the queue through the kernel's control loop on the stack of the thread that made the
view (a cell runs on it). A marimo without that loop (before 0.24, or a later layout) gets no
poller: its buttons act when the cell ends, and at once for loops in a thread (``gymview.play``).
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any

from gymview._internal.kernel import in_marimo
from gymview._internal.private_apis import warn_missing

Handler = Callable[[Any], None]  # a view's handler of one custom message's content

__all__ = ["MarimoCommPoller"]

# (module, function) of marimo's control loop -> its local holding the batcher (SetUIElementRequestManager):
# marimo 0.24 and later (tests/browser/test_marimo_browser.py passes on 0.24.0 and 0.25.2)
_CONTROL_LOOPS: dict[tuple[str | None, str], str] = {
    ("marimo._runtime.kernel_lifecycle", "listen_messages"): "ui_request_mgr"
}


class MarimoCommPoller:
    """Hands the browser messages of live views to them from inside a blocking marimo cell."""

    def __init__(self, batcher: Any, thread: int) -> None:
        self._batcher = batcher  # marimo's SetUIElementRequestManager of this kernel
        self._thread = thread  # the kernel's thread: the one that runs cells
        self._busy = False  # a handler that steps a watched env must not deliver again from inside

    @classmethod
    def for_this_kernel(cls) -> MarimoCommPoller | None:
        """One for the marimo kernel running this thread's cell, or None (not in a marimo cell, or
        a marimo whose control loop is laid out otherwise)."""
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            local = _CONTROL_LOOPS.get((frame.f_globals.get("__name__"), frame.f_code.co_name))
            if local is not None:
                batcher = frame.f_locals.get(local)
                if all(hasattr(batcher, name) for name in ("_set_ui_element_queue", "_processed_tokens")):
                    return cls(batcher, threading.get_ident())
                break
            frame = frame.f_back
        if in_marimo() and threading.current_thread() is threading.main_thread():  # where marimo runs cells
            warn_missing("marimo._runtime.kernel_lifecycle.listen_messages (ui_request_mgr)")
        return None

    def deliver(self, handlers: Mapping[str, Handler]) -> int:
        """Hand the waiting custom messages addressed to the comm ids in ``handlers`` to them;
        returns how many. Only on the kernel's thread (elsewhere the kernel delivers by itself)."""
        if self._busy or not handlers or threading.get_ident() != self._thread:
            return 0
        self._busy = True
        mine = []
        try:
            waiting, drained = self._batcher._set_ui_element_queue, self._batcher._processed_tokens
            while True:
                try:
                    command = waiting.get_nowait()
                except queue.Empty:
                    break
                message = _custom_message_to(command, handlers)
                if message is not None:
                    drained.add(command.token)  # the kernel skips the control queue's copy
                    mine.append(message)
        except Exception:  # a queue this cannot read: the kernel delivers after the cell, as it would have
            pass
        finally:
            self._busy = False
        for comm_id, content in mine:
            try:
                handlers[comm_id](content)
            except Exception:  # as the kernel would: logged, and the user's loop goes on
                logging.getLogger("gymview").exception("a live view's message handler failed")
        return len(mine)


def _custom_message_to(command: Any, handlers: Mapping[str, Handler]) -> tuple[str, Any] | None:
    """(comm id, content) when ``command`` is a widget's custom message to one of ``handlers``;
    None for every other command (another widget's, a state update, a UI element's value)."""
    model_id: Any = getattr(command, "model_id", None)  # marimo's command objects, read by duck typing
    message: Any = getattr(command, "message", None)
    if model_id not in handlers or not hasattr(command, "token") or hasattr(message, "state"):
        return None
    if not hasattr(message, "content"):
        return None
    return model_id, message.content
