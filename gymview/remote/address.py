"""Where runs publish: ``"HOST:PORT"`` checked and turned into zmq endpoints.

A port alone (``"5555"``, ``":5555"``) means the loopback interface: only this machine (and an SSH tunnel
into it) can reach it. Any other host is taken only when written out.

>>> address = parse_address("5555")
>>> address.host, address.port, address.loopback, address.bind_endpoint
('127.0.0.1', 5555, True, 'tcp://127.0.0.1:5555')
>>> parse_address("[::1]:6000").bind_endpoint
'tcp://[::1]:6000'
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

__all__ = ["LOOPBACK", "Address", "parse_address"]

LOOPBACK = "127.0.0.1"
_HOST = re.compile(r"[A-Za-z0-9_.:%-]+")  # a name, an IPv4 or IPv6 address
EXAMPLE = "'127.0.0.1:5555' (this machine only; from a laptop: ssh -L 5555:127.0.0.1:5555 server), or a port alone"


@dataclass(frozen=True)
class Address:
    """A checked ``HOST:PORT``. ``text`` is how the user wrote it (for messages)."""

    host: str
    port: int
    text: str

    @property
    def ipv6(self) -> bool:
        return ":" in self.host

    @property
    def loopback(self) -> bool:
        """Only this machine can reach it."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:  # a host name: it may resolve anywhere
            return False

    @property
    def bind_endpoint(self) -> str:
        """The endpoint a publisher binds (``localhost`` as the IPv4 loopback: zmq binds interfaces, not names)."""
        host = LOOPBACK if self.host == "localhost" else self.host
        return f"tcp://{self._bracketed(host)}:{self.port}"

    @property
    def connect_endpoint(self) -> str:
        """The endpoint a notebook (or another run) connects to."""
        return f"tcp://{self._bracketed(self.host)}:{self.port}"

    @staticmethod
    def _bracketed(host: str) -> str:
        return f"[{host}]" if ":" in host else host


def parse_address(text: object) -> Address:
    """``"HOST:PORT"``, ``"[IPv6]:PORT"``, or a port alone (``"5555"``, ``":5555"``, ``5555``: loopback).

    Raises:
        ValueError: When it is none of these, or the port is not in 1..65535; the message shows an example.

    Examples:
        >>> parse_address("0.0.0.0:5555").loopback
        False
        >>> parse_address("example.org:80").host
        'example.org'
        >>> parse_address("127.0.0.1")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: an address is HOST:PORT, like '127.0.0.1:5555' (...), or a port alone; got '127.0.0.1'
    """
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str):
        raise TypeError(f"an address is a string HOST:PORT, like {EXAMPLE}; got {type(text).__name__}")
    written = text.strip()
    if written.isdigit():
        host, port = LOOPBACK, written
    elif written.startswith("["):
        host, separator, port = written[1:].partition("]:")
        host = host if separator else ""
    else:
        host, separator, port = written.rpartition(":")
        host = "" if not separator or ":" in host else host or LOOPBACK  # ":" in host: IPv6 without brackets
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or not _HOST.fullmatch(host):
        raise ValueError(f"an address is HOST:PORT, like {EXAMPLE}; got {text!r}")
    return Address(host, int(port), written)
