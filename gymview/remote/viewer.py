"""ViewerLink: a notebook's link to the runs published at an address, in a thread of its own.

Every ``HEARTBEAT_SECONDS`` it tells the hub which run it watches (none at first) and hears back the list
of runs; it passes the watched run's frames, scenes and end to ``on_message`` (on its thread) and the
pages' messages to the run. A hub not heard from for ``SILENT_SECONDS`` counts as gone: ``on_message``
gets a ``lost`` message, and the link goes on asking, so a run that starts again is found.

>>> from gymview.remote.address import parse_address
>>> from gymview.remote.tokens import curve_keys
>>> link = ViewerLink(parse_address("127.0.0.1:5572"), curve_keys("s3cret"), on_message=lambda message: None).start()
>>> link.runs, link.watching, link.answered
([], None, False)
>>> link.close()
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from gymview._internal.worker import Worker
from gymview.remote import wire
from gymview.remote.address import Address
from gymview.remote.hub import SILENT_SECONDS
from gymview.remote.publisher import HEARTBEAT_SECONDS, POLL_SECONDS
from gymview.remote.session import PeerSession
from gymview.remote.tokens import CurveKeys
from gymview.remote.wire import Message, RunInfo
from gymview.remote.zmq_sockets import close_quietly, connect_peer, end_worker, inbox_pair, zmq

__all__ = ["LOST", "ViewerLink"]

LOST = Message("lost", {})  # what on_message gets when the hub stops answering
PASSED_ON = frozenset({"to_page", "scene", "ended", "runs"})
_links: weakref.WeakSet[ViewerLink] = weakref.WeakSet()


class ViewerLink:
    """See the module docstring. ``runs``: the runs the hub listed last; ``watching``: the run the hub says
    this link watches (None: none); ``refused``: why the hub (or the link) refused, else None.

    Raises:
        ValueError: When ``address``'s host cannot be resolved.
    """

    def __init__(self, address: Address, keys: CurveKeys, on_message: Callable[[Message], None]) -> None:
        self.address = address
        self.session = PeerSession(address.text)
        self.runs: list[RunInfo] = []
        self.watching: str | None = None
        self.answered = False  # the hub has listed its runs at least once
        self.changed = threading.Condition()  # notified after each message from the hub
        self._wanted: str | None = None
        self._on_message = on_message
        self._context = zmq().Context()
        self._inbox, self._outbox = inbox_pair(self._context, "attach", 256)
        self._socket, self._handshakes = connect_peer(self._context, address, keys)  # may raise: before the thread
        self._lost = False
        self._closed = False
        self._worker = Worker("attach", self._serve, wake=lambda: self._post(b"stop", b""))
        self._started = False
        _links.add(self)

    def start(self) -> ViewerLink:
        """Start the link's thread (``on_message`` may be called from then on); returns the link."""
        if self._closed:
            raise RuntimeError("this link is closed")
        self._worker.start()
        self._started = True
        return self

    @property
    def refused(self) -> str | None:
        return self.session.refused

    def silent_for(self) -> float:
        """Seconds since the hub last said something (infinity before it ever did)."""
        return time.monotonic() - self.session.heard_at

    def watch(self, run_id: str | None) -> None:
        """Watch run ``run_id`` from now on (None: none); said to the hub at once."""
        self._wanted = run_id
        self._post(b"watch", b"")

    def to_run(self, content: dict[str, Any]) -> None:
        """A page's message for the run watched (dropped while none is, or when it breaks a limit)."""
        try:
            body = wire.encode("page", {}, content)[1]
        except (TypeError, ValueError):
            return
        self._post(b"page", body)

    def close(self, timeout: float = 5.0) -> None:
        """Tell the hub this notebook leaves, end the thread and close the sockets; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if not self._started:  # the thread closes the sockets it owns; there was none
            self._handshakes.close()
            close_quietly(self._inbox)
            close_quietly(self._socket)
        end_worker(self._worker, self._outbox, self._context, timeout)

    def _post(self, kind: bytes, body: bytes) -> None:
        self._outbox.send([kind, body])  # full (the thread far behind): dropped; the next heartbeat says it again

    # -- the thread --------------------------------------------------------------------------------
    def _serve(self, stop: threading.Event) -> None:
        sock, z = self._socket, zmq()
        poller = z.Poller()
        poller.register(self._inbox, z.POLLIN)
        poller.register(sock, z.POLLIN)
        poller.register(self._handshakes.socket, z.POLLIN)
        next_beat = 0.0
        try:
            while not stop.is_set():
                ready = dict(poller.poll(POLL_SECONDS * 1000))
                now = time.monotonic()
                if self._inbox in ready and not self._take_inbox():
                    return
                if self._handshakes.socket in ready:
                    for succeeded in self._handshakes.read():
                        self._handshake(succeeded, now)
                if sock in ready:
                    for _ in range(64):
                        parts = wire.receive(sock, most=3)
                        if parts is not None:
                            self._hear(parts, now)
                        if not sock.getsockopt(z.EVENTS) & z.POLLIN:
                            break
                if now >= next_beat:
                    self._send("watch", run=self._wanted)
                    next_beat = now + HEARTBEAT_SECONDS
                self._check_silence(now)
        finally:
            self._send("bye")
            close_quietly(self._inbox)
            self._handshakes.close()
            close_quietly(sock, 0.2)

    def _take_inbox(self) -> bool:
        for _ in range(256):
            try:
                kind, body = self._inbox.recv_multipart(flags=zmq().NOBLOCK)
            except zmq().Again:
                return True
            if kind == b"stop":
                return False
            if kind == b"watch":
                self._send("watch", run=self._wanted)
            elif kind == b"page" and self.watching is not None:
                self._send("page", body, run=self.watching)
        return True

    def _send(self, kind: str, body: bytes = b"", **head: Any) -> None:
        try:
            self._socket.send_multipart([wire.encode(kind, head)[0], body], flags=zmq().NOBLOCK)
        except zmq().Again:  # not connected (nobody listens yet): the next heartbeat tries again
            pass

    def _handshake(self, succeeded: bool, now: float) -> None:
        if self.session.handshake(succeeded, now):  # a hub (the first, or one that took over): it learns what we watch
            self.watching = None
            self._send("watch", run=self._wanted)
        self._notify(None)

    def _hear(self, parts: list[bytes], now: float) -> None:
        message = wire.decode(parts)
        if message is None:
            return
        self.session.hear(now)
        self._lost = False
        if message.kind == "runs":
            self.runs, self.watching, self.answered = message.runs(), message.text("watching"), True
        elif message.kind == "ended" and message.text("run") == self.watching:
            self.watching = None
        elif message.kind not in PASSED_ON or message.text("run") not in (self.watching, None):
            return  # leaving (what it means comes as ended, or as silence), or a run not watched
        self._notify(message)

    def _check_silence(self, now: float) -> None:
        if self.answered and not self._lost and now - self.session.heard_at > SILENT_SECONDS:
            self._lost, self.watching = True, None
            self._notify(LOST)

    def _notify(self, message: Message | None) -> None:
        if message is not None:
            self._on_message(message)
        with self.changed:
            self.changed.notify_all()


def _close_all() -> None:
    for link in list(_links):
        link.close(timeout=1.0)


atexit.register(_close_all)
