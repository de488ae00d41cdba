"""The zmq sockets of publishers and notebooks, made in one place with the same limits and keys.

Every connection between a peer and the hub is a CurveZMQ one, keyed by the token (:func:`.tokens.curve_keys`):
encrypted and authenticated, and a process without the token never gets past its handshake, so nothing it
sends is read or kept. Every socket refuses parts over ``wire.MAX_PART_BYTES`` (a peer sending one is
disconnected), queues at most ``QUEUED_MESSAGES`` messages each way, and closes without waiting for unsent
messages (linger 0) unless told otherwise. A peer's socket queues nothing while it is not connected (a hub
that went away gets no pile of stale frames when one comes back).
"""

from __future__ import annotations

import errno
import itertools
import threading
import time
from types import ModuleType
from typing import Any

from gymview._internal.worker import Worker
from gymview.remote.address import Address
from gymview.remote.tokens import CurveKeys
from gymview.remote.wire import MAX_PART_BYTES

__all__ = [
    "QUEUED_MESSAGES",
    "Handshakes",
    "Outbox",
    "bind_hub",
    "close_quietly",
    "connect_peer",
    "end_worker",
    "inbox_pair",
    "zmq",
]

QUEUED_MESSAGES = 64  # a link slower than the frames fills this, then frames are dropped (flow control catches up)
RECONNECT_SECONDS = 0.1  # a peer tries to reach the address again this often (a run that restarts)
# bind() errors that mean "not here": another process listens there, or the host is another machine's
_NOT_HERE = {errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.ENODEV, errno.EINVAL}
_names = itertools.count()


def zmq() -> ModuleType:
    """The ``zmq`` module (pyzmq), with an install hint when it is missing."""
    try:
        import zmq
    except ImportError as error:  # pragma: no cover - pyzmq is a dependency; a broken install
        raise ImportError("publishing and attaching need pyzmq: pip install pyzmq") from error
    return zmq


def _limited(context: Any, kind: int, address: Address | None = None) -> Any:
    z = zmq()
    sock = context.socket(kind)
    sock.setsockopt(z.LINGER, 0)
    sock.setsockopt(z.MAXMSGSIZE, MAX_PART_BYTES)
    sock.setsockopt(z.SNDHWM, QUEUED_MESSAGES)
    sock.setsockopt(z.RCVHWM, QUEUED_MESSAGES)
    if address is not None and address.ipv6:
        sock.setsockopt(z.IPV6, 1)
    return sock


def bind_hub(context: Any, address: Address, keys: CurveKeys, quiet: bool = False) -> Any | None:
    """A ROUTER listening at ``address`` for peers that know ``keys``' token, or None when it cannot listen here
    (another process does, or the address is another machine's).

    Raises:
        ValueError: For any other reason it cannot listen (a port it may not use), unless ``quiet``.
    """
    z = zmq()
    sock = _limited(context, z.ROUTER, address)
    sock.setsockopt(z.CURVE_SERVER, 1)
    sock.setsockopt(z.CURVE_SECRETKEY, keys.hub_secret)
    try:
        sock.bind(address.bind_endpoint)
    except z.ZMQError as error:
        sock.close(linger=0)
        if error.errno in _NOT_HERE or quiet:
            return None
        raise ValueError(f"cannot publish at {address.text}: {error}") from error
    return sock


def connect_peer(context: Any, address: Address, keys: CurveKeys) -> tuple[Any, Handshakes]:
    """A DEALER connecting to the hub at ``address`` with ``keys`` (again and again, every ``RECONNECT_SECONDS``,
    while nobody listens, or a process that does not know the token does), and its :class:`Handshakes`,
    watched from before it connects; messages go out only on a connection whose handshake succeeded.

    Raises:
        ValueError: When ``address``'s host cannot be resolved.
    """
    z = zmq()
    sock = _limited(context, z.DEALER, address)
    sock.setsockopt(z.IMMEDIATE, 1)
    sock.setsockopt(z.RECONNECT_IVL, int(RECONNECT_SECONDS * 1000))
    sock.setsockopt(z.CURVE_SERVERKEY, keys.hub_public)
    sock.setsockopt(z.CURVE_PUBLICKEY, keys.peer_public)
    sock.setsockopt(z.CURVE_SECRETKEY, keys.peer_secret)
    handshakes = Handshakes(sock)  # before connecting: no handshake goes unseen
    try:
        sock.connect(address.connect_endpoint)
    except z.ZMQError as error:
        handshakes.close()
        sock.close(linger=0)
        raise ValueError(f"cannot reach {address.text}: {error}") from error
    return sock, handshakes


class Handshakes:
    """How a peer socket's handshakes with the hub end (libzmq's socket monitor, read on the socket's thread):
    one that succeeded is a hub that knows the token (maybe a new one, after a restart); one that failed, a
    process listening there that does not (or an older gymview)."""

    def __init__(self, sock: Any) -> None:
        z = zmq()
        self._sock = sock
        failed = z.EVENT_HANDSHAKE_FAILED_NO_DETAIL | z.EVENT_HANDSHAKE_FAILED_PROTOCOL | z.EVENT_HANDSHAKE_FAILED_AUTH
        self._failed = failed
        self.socket = sock.get_monitor_socket(z.EVENT_HANDSHAKE_SUCCEEDED | failed)

    def read(self) -> list[bool]:
        """The handshakes that ended since the last call, oldest first: True for each that succeeded."""
        from zmq.utils.monitor import parse_monitor_message

        ended = []
        while self.socket.poll(0):
            event = parse_monitor_message(self.socket.recv_multipart())["event"]
            ended.append(not event & self._failed)
        return ended

    def close(self) -> None:
        """Stop watching (before the socket closes)."""
        if not self._sock.closed:
            self._sock.disable_monitor()
        close_quietly(self.socket)


class Outbox:
    """The end of an in-process pipe (:func:`inbox_pair`) that any thread sends on, under a lock."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self._lock = threading.Lock()

    def send(self, parts: list[Any]) -> bool:
        """Send ``parts`` without waiting; False when the pipe is full (they are dropped). Once closed: nothing."""
        with self._lock:
            if self._sock is None:
                return True
            try:
                self._sock.send_multipart(parts, flags=zmq().NOBLOCK)
            except zmq().Again:
                return False
            return True

    def close(self) -> None:
        """Close the socket; later sends do nothing. Safe to call twice."""
        with self._lock:
            close_quietly(self._sock)
            self._sock = None


def inbox_pair(context: Any, name: str, queued: int) -> tuple[Any, Outbox]:
    """Two ends of an in-process pipe: (the thread's end, the end other threads send on).
    The sending end holds at most ``queued`` messages."""
    z = zmq()
    endpoint = f"inproc://gymview-{name}-{next(_names)}"
    inbox = context.socket(z.PAIR)
    inbox.setsockopt(z.LINGER, 0)
    inbox.setsockopt(z.RCVHWM, queued)
    inbox.bind(endpoint)
    outbox = context.socket(z.PAIR)
    outbox.setsockopt(z.LINGER, 0)
    outbox.setsockopt(z.SNDHWM, queued)
    outbox.connect(endpoint)
    return inbox, Outbox(outbox)


def close_quietly(sock: Any, linger_seconds: float = 0.0) -> None:
    """Close ``sock`` (None: nothing), after ``linger_seconds`` in which what waits goes out.

    Meanwhile what peers send is read and dropped: a TCP connection closed with bytes unread is reset,
    and a reset throws away what was still on its way to the peer (the runs' last words: "ended")."""
    if sock is None or sock.closed:
        return
    z = zmq()
    ends = time.monotonic() + linger_seconds
    while (left := ends - time.monotonic()) > 0:
        if sock.poll(left * 1000, z.POLLIN):
            sock.recv_multipart()
    sock.close(linger=0)


def end_worker(worker: Worker, outbox: Outbox, context: Any, timeout: float) -> bool:
    """Stop ``worker`` (the thread that owns the sockets of ``context``, and closes them as it ends), close
    ``outbox``, and end ``context``.

    Returns:
        False when the thread did not stop within ``timeout`` seconds: its sockets are still open, and
        ending the context would wait for them forever, so it is left.

    Raises:
        gymview.WorkerError: When the thread failed.
    """
    try:
        worker.stop(timeout)
    except TimeoutError:
        return False
    finally:
        outbox.close()
    context.term()
    return True
