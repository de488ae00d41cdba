"""What a page that just loaded asks the kernel, answered while a cell holds the main shell.

A reloaded notebook, or the same notebook in a second tab, asks the kernel for ``kernel_info``,
opens the widget manager's control comm, asks it for every widget's state (``request_states``),
then each live view says ``ready`` and acknowledges frames. On the main shell all of this waits
behind the running cell: the page shows "Loading widget..." for as long as the cell runs. These
requests change nothing in the kernel and their answers do not depend on the cell, so they are
answered at once: on ipykernel 7 by the shell-channel thread, before a message is queued for the
main shell (:func:`answer_on_shell_channel`); on ipykernel 6 by the watched loop, when it looks
for its views' messages (:class:`gymview.live.kernels.ipykernel6_poller.Ipykernel6CommPoller`).

Answered here: ``kernel_info_request``, ``comm_info_request``, the opening, ``request_states`` and
closing of a ``jupyter.widget.control`` comm, and a live view's own messages (its ``ready``, acks,
clicks, ``request_state``). Every other message keeps its place and order on the main shell.
After each answer the page gets the ``idle`` status its message waits for (a page keeps each
message it sent until then), then ``busy`` again: the cell still runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from gymview._internal.kernel import ipython_shell
from gymview._internal.private_apis import warn_missing
from gymview.live.kernels import registry

__all__ = ["PageRequests", "answer_on_shell_channel"]

CONTROL_TARGET = "jupyter.widget.control"
ANSWERED_TYPES = frozenset({"kernel_info_request", "comm_info_request", "comm_open", "comm_msg", "comm_close"})


class PageRequests:
    """Answers a loading page's requests for ``kernel`` (an ipykernel ``Kernel``).

    ``reply_stream``: where shell replies go (the shell stream). ``busy``: whether the main shell
    runs a cell now; nothing is answered when it does not (the main shell answers as usual).
    """

    def __init__(self, kernel: Any, reply_stream: Any, busy: Callable[[], bool]) -> None:
        self.kernel = kernel
        self.reply_stream = reply_stream
        self.busy = busy
        self.running_cell: dict[str, Any] = {}  # the request of the cell that holds the main shell
        self._control_comms: set[str] = set()  # control comms opened here
        self.answered = 0

    def wants(self, msg_type: str, content: dict[str, Any]) -> bool:
        """Whether a message of this type and content is one to answer now (from its header and
        content only: cheap, and it deserializes nothing)."""
        if msg_type not in ANSWERED_TYPES or not self.busy():
            return False
        if msg_type in ("kernel_info_request", "comm_info_request"):
            return True
        if msg_type == "comm_open":
            return content.get("target_name") == CONTROL_TARGET and _widget_states_handler() is not None
        comm_id = content.get("comm_id")
        if comm_id in self._control_comms:
            return True
        return msg_type == "comm_msg" and _view_of(comm_id) is not None and _view_message(content)

    def answer(self, idents: list[Any], message: dict[str, Any]) -> None:
        """Answer ``message`` (deserialized, one :meth:`wants` took); ``idents`` route the reply."""
        # The kernel's parent stays the running cell's: setting it here would move the cell's own
        # output (ipykernel sets it on the shell's streams and display hooks, for every thread). The
        # comm messages that answer carry the cell's parent; pages route them by comm id.
        try:
            self._answer(idents, message)
        finally:
            if message["header"]["msg_type"].startswith("comm_"):
                self.done(message)
            self.answered += 1

    def done(self, message: dict[str, Any]) -> None:
        """Tell the page that ``message``, a comm message handled while the cell runs, is done: the
        page keeps every message it sent until it sees the ``idle`` that names it as parent."""
        self._status("idle", message)
        if self.busy():  # the cell may have ended meanwhile: its own idle must stay the last status
            self._status("busy", self.running_cell or message)

    def _answer(self, idents: list[Any], message: dict[str, Any]) -> None:
        msg_type = message["header"]["msg_type"]
        content = message["content"]
        if msg_type == "kernel_info_request":
            self._reply(idents, message, "kernel_info_reply", {"status": "ok", **self.kernel.kernel_info})
        elif msg_type == "comm_info_request":
            self._reply(
                idents, message, "comm_info_reply", {"status": "ok", "comms": self._comms(content.get("target_name"))}
            )
        elif msg_type == "comm_open":
            self._control_comms.add(content["comm_id"])
            self.kernel.comm_manager.comm_open(self.reply_stream, idents, message)
        elif msg_type == "comm_close":
            self._control_comms.discard(content.get("comm_id"))
            self.kernel.comm_manager.comm_close(self.reply_stream, idents, message)
        elif content.get("comm_id") in self._control_comms:
            _send_widget_states(message)
        else:
            view = _view_of(content.get("comm_id"))
            if view is not None:
                # The widget's own handler, not the comm's: the comm's fires IPython's pre/post-execute
                # events, which would show and close the running cell's matplotlib figures.
                handle = getattr(view, "_handle_msg", None)
                if handle is None:
                    warn_missing("ipywidgets.Widget._handle_msg")
                    handle = view.comm.handle_msg
                handle(message)

    def _reply(self, idents: list[Any], parent: dict[str, Any], msg_type: str, content: dict[str, Any]) -> None:
        self._status("busy", parent)
        self.kernel.session.send(self.reply_stream, msg_type, content, parent, idents)
        self.done(parent)

    def _status(self, state: str, parent: dict[str, Any]) -> None:
        kernel = self.kernel
        topic = getattr(kernel, "_topic", None)
        ident = topic("status") if topic is not None else f"kernel.{kernel.ident}.status".encode()
        kernel.session.send(kernel.iopub_socket, "status", {"execution_state": state}, parent=parent, ident=ident)

    def _comms(self, target_name: str | None) -> dict[str, dict[str, str]]:
        comms = dict(self.kernel.comm_manager.comms)  # a copy: the cell may open comms meanwhile
        return {
            comm_id: {"target_name": comm.target_name}
            for comm_id, comm in comms.items()
            if target_name is None or comm.target_name == target_name
        }


def _view_message(content: dict[str, Any]) -> bool:
    """A live view's custom message, or the page asking for its state: never an ``update`` (the
    page setting a trait is left to the main shell, in its order)."""
    data = content.get("data")
    return isinstance(data, dict) and data.get("method") in ("custom", "request_state")


def _view_of(comm_id: Any) -> Any:
    for view in registry.live_views():
        comm = getattr(view, "comm", None)
        if comm is not None and getattr(comm, "comm_id", None) == comm_id:
            return view
    return None


def _widget_states_handler() -> Callable[[dict[str, Any]], None] | None:
    """ipywidgets' handler of the control comm (``request_states``), or None where it has none."""
    from ipywidgets import Widget

    handler = getattr(Widget, "_handle_control_comm_msg", None)
    if handler is None:
        warn_missing("ipywidgets.Widget._handle_control_comm_msg")
    return handler


def _send_widget_states(message: dict[str, Any]) -> None:
    """ipywidgets' answer to ``request_states``: every widget's state, in one message."""
    handler = _widget_states_handler()
    assert handler is not None  # control comms are taken only where ipywidgets has the handler
    for _ in range(3):
        try:
            handler(message)
            return
        except RuntimeError:  # the cell made or closed a widget while the states were read: read again
            continue
    raise RuntimeError("the widgets changed on every reading of their states")


_installed: dict[int, PageRequests] = {}
_install_lock = threading.Lock()


def answer_on_shell_channel() -> PageRequests | None:
    """Answer loading pages' requests on ipykernel 7's shell-channel thread while a cell runs;
    returns the answerer (one per kernel), or None where this kernel has no shell-channel thread
    (ipykernel 6, other kernels: nothing is installed).

    Call it from the cell that runs (a view does when it is made): it remembers that cell's request,
    to which the page's status returns after each reply.
    """
    shell = ipython_shell()
    kernel: Any = getattr(shell, "kernel", None)  # ipykernel's Kernel, read by duck typing
    thread = getattr(kernel, "shell_channel_thread", None)
    if thread is None or not hasattr(kernel, "comm_manager") or getattr(kernel, "shell_stream", None) is None:
        return None  # ipykernel 6 (its poller answers), or another kernel
    route = getattr(getattr(thread, "manager", None), "get_shell_channel_to_subshell_socket", None)
    lock = getattr(kernel, "_main_asyncio_lock", None)
    if route is None or lock is None:
        warn_missing(
            "ipykernel.shellchannel.ShellChannelThread.manager.get_shell_channel_to_subshell_socket"
            if route is None
            else "ipykernel.kernelbase.Kernel._main_asyncio_lock"
        )
        return None
    manager = thread.manager
    with _install_lock:
        answers = _installed.get(id(kernel))
        if answers is None:
            answers = PageRequests(kernel, kernel.shell_stream, busy=lock.locked)
            manager.get_shell_channel_to_subshell_socket = _answering_route(route, answers)
            _installed[id(kernel)] = answers
    parent = kernel.get_parent("shell")
    if parent.get("header", {}).get("msg_type") == "execute_request":
        answers.running_cell = parent
    return answers


def _answering_route(route: Callable[[Any], Any], answers: PageRequests) -> Callable[[Any], Any]:
    """``route(subshell_id)`` gives the socket a message goes out on; the main shell's now answers
    what :class:`PageRequests` takes instead of queueing it."""

    def answering(subshell_id: Any) -> Any:
        socket = route(subshell_id)
        return socket if subshell_id is not None else _AnsweringSocket(socket, answers)

    return answering


class _AnsweringSocket:
    """The main shell's inbound socket, as the shell-channel thread sends one message on it."""

    def __init__(self, socket: Any, answers: PageRequests) -> None:
        self._socket = socket
        self._answers = answers

    def send_multipart(self, msg: list[Any], copy: bool = False, **kwargs: Any) -> Any:
        answers = self._answers
        if not answers.busy():  # the main shell answers everything itself: read nothing
            return self._socket.send_multipart(msg, copy=copy, **kwargs)
        session = answers.kernel.session
        try:  # only peeked at: the session refuses a message it deserialized once as a replay
            idents, parts = session.feed_identities(msg, copy=False)
            header = session.unpack(_bytes(parts[1]))
            msg_type = header.get("msg_type")
            content = session.unpack(_bytes(parts[4])) if msg_type in ANSWERED_TYPES else {}
            wanted = answers.wants(msg_type, content)
        except Exception:  # a message this cannot read: the main shell reads it, as it would have
            wanted = False
        if not wanted:
            return self._socket.send_multipart(msg, copy=copy, **kwargs)
        try:
            answers.answer(idents, session.deserialize(parts, content=True, copy=False))
        except Exception:  # as the kernel would: logged, and the cell goes on
            answers.kernel.log.error("gymview could not answer a page's request", exc_info=True)
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._socket, name)


def _bytes(part: Any) -> bytes:
    return part.bytes if hasattr(part, "bytes") else bytes(part)
