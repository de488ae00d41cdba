"""The views' browser messages during a blocking cell, on kernels that deliver none then (ipykernel 6).

ipykernel 7 reads the shell channel on a thread of its own, where a view hears its clicks while a
cell runs (:mod:`gymview.live.kernels.page_requests`). ipykernel 6 reads it from its event loop only, which a cell
running a loop holds: Pause, acks and the page's ``ready`` would wait for the cell's end. There the
watched env, when it looks at its view, calls :meth:`Ipykernel6CommPoller.deliver`: it moves what waits on
the shell socket into the kernel's queue, hands the views' own custom messages (clicks, keys, acks)
straight to the views' handlers, answers a loading page's requests (:mod:`gymview.live.kernels.page_requests`),
and puts every other message back in its place, so the cells
queued after this one run after it, in order, as they would have. The kernel's comm handler is not
used: it fires IPython's pre/post-execute events, which would, for one, show and close the cell's
open matplotlib figures.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from gymview._internal.kernel import ipython_shell
from gymview._internal.private_apis import warn_missing
from gymview.live.kernels.page_requests import ANSWERED_TYPES, PageRequests

Handler = Callable[[Any], None]  # a view's handler of one custom message's content

__all__ = ["Ipykernel6CommPoller"]


class Ipykernel6CommPoller:
    """Hands the browser messages of live views to them from inside a blocking cell (ipykernel 6)."""

    def __init__(self, kernel: Any) -> None:
        self._kernel = kernel
        self._pid = os.getpid()
        # One per kernel, shared by every view's poller: a page's control comm is opened through one
        # and asked for the widgets' states through another. Only asked from inside a running cell:
        # the main shell is busy whenever it answers.
        if id(kernel) not in _page_requests:
            _page_requests[id(kernel)] = PageRequests(kernel, kernel.shell_stream, busy=lambda: True)
        self._page_requests = _page_requests[id(kernel)]
        self._busy = False  # a handler that steps a watched env must not deliver again from inside

    @classmethod
    def for_this_kernel(cls) -> Ipykernel6CommPoller | None:
        """One for the running kernel when it is an ipykernel 6, else None (nothing to do)."""
        ipykernel = sys.modules.get("ipykernel")
        shell = ipython_shell()
        if ipykernel is None or shell is None:
            return None
        try:
            major = int(str(getattr(ipykernel, "__version__", "0")).split(".")[0])
        except ValueError:
            return None
        kernel = getattr(shell, "kernel", None)
        if major != 6 or kernel is None:
            return None
        if not all(
            hasattr(kernel, name)
            for name in ("msg_queue", "shell_stream", "dispatch_shell", "session", "shell_handlers")
        ):
            warn_missing("ipykernel.kernelbase.Kernel.msg_queue and shell_stream")
            return None
        return cls(kernel)

    def deliver(self, handlers: Mapping[str, Handler]) -> int:
        """Hand the waiting custom messages addressed to the comm ids in ``handlers`` to them;
        returns how many.

        Only from the kernel's main thread (a loop in another thread leaves the shell free: the
        kernel delivers by itself) and only in the process that started the kernel.
        """
        if (
            self._busy
            or not handlers
            or threading.current_thread() is not threading.main_thread()
            or os.getpid() != self._pid
        ):
            return 0
        kernel = self._kernel
        self._busy = True
        waiting: list = []
        try:
            kernel.shell_stream.flush()  # the socket's messages, into msg_queue, in arrival order
            queue = kernel.msg_queue
            while queue.qsize():
                waiting.append(queue.get_nowait())
            addressed = [(index, self._addressed_to(item, handlers)) for index, item in enumerate(waiting)]
            mine = [(index, handle) for index, handle in addressed if handle is not None]
            for index, _ in reversed(mine):
                del waiting[index]
        finally:
            # Put the rest back before anything else can fail: an interrupt here must lose no cell.
            for item in waiting:
                kernel.msg_queue.put_nowait(item)
            self._busy = False
        if mine:
            self._page_requests.running_cell = kernel.get_parent("shell")  # this cell's request
        for _, handle in mine:
            try:
                handle()
            except Exception:  # as the kernel would: logged, and the user's loop goes on
                kernel.log.error("Exception in a gymview view's message handler", exc_info=True)
        if mine:
            import zmq  # ipykernel's own dependency

            kernel.shell_stream.flush(zmq.POLLOUT)  # replies go out now, not when the cell ends
        return len(mine)

    def _handle(self, handler: Handler, content: Any, message: dict[str, Any]) -> None:
        try:
            handler(content)
        finally:
            self._page_requests.done(message)  # the page keeps the message until an idle names it

    def _addressed_to(self, item: Any, handlers: Mapping[str, Handler]) -> Callable[[], None] | None:
        """What handles ``item`` now, when it is a custom message to one of ``handlers`` or a request
        of a page that is loading (:mod:`gymview.live.kernels.page_requests`); None for every other message,
        which stays queued.

        The others are only peeked at, never deserialized: the session remembers each signature it
        checks and would refuse the message as a replay when the kernel reads it later.
        """
        _, dispatch, args = item
        if dispatch != self._kernel.dispatch_shell or len(args) != 1:
            return None
        session = self._kernel.session
        try:
            idents, parts = session.feed_identities(list(args[0]), copy=False)
            msg_type = session.unpack(_bytes(parts[1])).get("msg_type")
            if msg_type not in ANSWERED_TYPES:
                return None
            peeked = session.unpack(_bytes(parts[4]))
            comm_id, data = peeked.get("comm_id"), peeked.get("data")
            if (
                msg_type == "comm_msg"
                and comm_id in handlers
                and isinstance(data, dict)
                and data.get("method") == "custom"
            ):
                message = session.deserialize(parts, content=True, copy=False)
                content = message["content"]["data"].get("content")
                return lambda: self._handle(handlers[comm_id], content, message)
            if not self._page_requests.wants(msg_type, peeked):
                return None
            message = session.deserialize(parts, content=True, copy=False)
            return lambda: self._page_requests.answer(idents, message)
        except Exception:  # not a message this can read: the kernel reads it later, as it would have
            return None


_page_requests: dict[int, PageRequests] = {}  # id(kernel) -> its answerer


def _bytes(part: Any) -> bytes:
    return part.bytes if hasattr(part, "bytes") else bytes(part)
