"""The zmq sockets of publishers and notebooks, made in one place with the same limits.

Every socket refuses parts over ``wire.MAX_PART_BYTES`` (a peer sending one is disconnected), queues
at most ``QUEUED_MESSAGES`` messages each way, and closes without waiting for unsent messages (linger 0)
unless told otherwise. A peer's socket queues nothing while it is not connected (a hub that went away
gets no pile of stale frames when one comes back).
"""

from __future__ import annotations

import errno
import itertools
import time
from types import ModuleType
from typing import Any

from gymview.remote.address import Address
from gymview.remote.wire import MAX_PART_BYTES

__all__ = ["QUEUED_MESSAGES", "bind_hub", "close_quietly", "connect_peer", "inbox_pair", "zmq"]

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


def bind_hub(context: Any, address: Address, quiet: bool = False) -> Any | None:
    """A ROUTER listening at ``address``, or None when it cannot listen here (another process does, or the
    address is another machine's).

    Raises:
        ValueError: For any other reason it cannot listen (a port it may not use), unless ``quiet``.
    """
    z = zmq()
    sock = _limited(context, z.ROUTER, address)
    try:
        sock.bind(address.bind_endpoint)
    except z.ZMQError as error:
        sock.close(linger=0)
        if error.errno in _NOT_HERE or quiet:
            return None
        raise ValueError(f"cannot publish at {address.text}: {error}") from error
    return sock


def connect_peer(context: Any, address: Address) -> Any:
    """A DEALER connecting to ``address`` (again and again, every ``RECONNECT_SECONDS``, while nobody listens).

    Raises:
        ValueError: When ``address``'s host cannot be resolved.
    """
    z = zmq()
    sock = _limited(context, z.DEALER, address)
    sock.setsockopt(z.IMMEDIATE, 1)
    sock.setsockopt(z.RECONNECT_IVL, int(RECONNECT_SECONDS * 1000))
    try:
        sock.connect(address.connect_endpoint)
    except z.ZMQError as error:
        sock.close(linger=0)
        raise ValueError(f"cannot reach {address.text}: {error}") from error
    return sock


def inbox_pair(context: Any, name: str, queued: int) -> tuple[Any, Any]:
    """Two ends of an in-process pipe: (the thread's end, the end other threads send on under a lock).
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
    return inbox, outbox


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
