"""A peer's side of its link to the hub: a notebook, or a run whose process does not listen.

Who the hub is comes from the CurveZMQ handshake (:class:`.zmq_sockets.Handshakes`): one that succeeds is a
hub that knows the token (the first, or one that took over the address: it learns everything again); one that
fails, a process listening there that does not, once ``REFUSED_AFTER`` fail in a row (a connection may also
break in the middle of a handshake: a hub that ends, a tunnel that closes).

>>> session = PeerSession("127.0.0.1:5555")
>>> [session.handshake(False, now=1.0) for _ in range(REFUSED_AFTER)], session.refused is not None
([False, False, False], True)
>>> session.handshake(True, now=2.0), session.connected, session.refused
(True, True, None)
"""

from __future__ import annotations

from gymview.remote.tokens import TOKEN_VARIABLE

__all__ = ["REFUSED_AFTER", "PeerSession"]

REFUSED_AFTER = 3  # handshakes failed in a row (one every 0.1 s while the peer tries again) that mean "another token"


class PeerSession:
    """What a peer knows of the hub at ``address``: whether a handshake with it succeeded, when it was last
    heard, and why it cannot be reached (None while nothing says so)."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.connected = False
        self.refused: str | None = None
        self.heard_at = -float("inf")
        self._failed = 0  # handshakes failed since the last that succeeded

    def handshake(self, succeeded: bool, now: float) -> bool:
        """A handshake with the process at the address ended; True when it succeeded (a hub to tell everything)."""
        self.connected = succeeded
        self._failed = 0 if succeeded else self._failed + 1
        if succeeded:
            self.refused, self.heard_at = None, now
        elif self._failed >= REFUSED_AFTER:
            self.refused = (
                f"the process at {self.address} did not prove it knows this token (its handshake failed): the runs "
                f"there publish with another token (the one they printed, their {TOKEN_VARIABLE}, or their token file)"
            )
        return succeeded

    def hear(self, now: float) -> None:
        """A message came from the hub."""
        self.heard_at = now
