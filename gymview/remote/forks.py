"""What a child forked from a publishing process does with its parent's sockets: lets go of them.

zmq is not fork-safe: a forked child must never use its parent's context or sockets (its runs go inert,
and it publishes anew on sockets of its own, see :mod:`.publisher`). But the child also holds copies of
the file descriptors under them, and the one of a socket listening at the address keeps the port taken
after the parent lets it go: nobody could listen there again, and notebooks would connect into a queue
that nobody reads, while the child lives. :func:`let_go_of_listeners` closes the child's copies.

>>> let_go_of_listeners(set())
0
"""

from __future__ import annotations

import os
import socket

__all__ = ["let_go_of_listeners"]


def let_go_of_listeners(ports: set[int]) -> int:
    """Close this process's copies of the TCP sockets on ``ports`` (listening there, or accepted there);
    the parent's own stay open. Returns how many were closed."""
    if not ports:
        return 0
    folder = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    try:
        descriptors = [int(name) for name in os.listdir(folder) if name.isdigit()]
    except OSError:  # no list of this process's files here: nothing to close
        return 0
    closed = 0
    for descriptor in descriptors:
        if _local_port(descriptor) in ports:
            os.close(descriptor)
            closed += 1
    return closed


def _local_port(descriptor: int) -> int | None:
    """The local port of a TCP socket, else None (not a socket, another kind, or closed meanwhile)."""
    try:
        sock = socket.socket(fileno=descriptor)
    except OSError:
        return None
    try:
        if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
            return None
        return int(sock.getsockname()[1])
    except OSError:
        return None
    finally:
        sock.detach()  # the descriptor is not this object's to close
