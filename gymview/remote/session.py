"""A peer's side of its link to the hub: a notebook, or a run whose process does not listen.

Who the hub is comes from the CurveZMQ handshake (:class:`.zmq_sockets.Handshakes`): one that succeeds is a
hub that knows the token (the first, or one that took over the address: it learns everything again); one that
fails, a process listening there that does not know the token; but a connection also breaks in the middle
of a handshake when the hub ends, or an SSH tunnel has nothing behind it, and libzmq tells these apart by
nothing. So the peer counts as refused once its handshakes have failed, one after another with none that
succeeded, for ``REFUSED_SECONDS``, and says both.

>>> session = PeerSession("127.0.0.1:5555")
>>> session.handshake(False, now=1.0), session.refused
(False, None)
>>> session.handshake(False, now=1.0 + REFUSED_SECONDS), session.refused is not None
(False, True)
>>> session.handshake(True, now=5.0), session.connected, session.refused
(True, True, None)
"""

from __future__ import annotations

from gymview.remote.tokens import TOKEN_VARIABLE

__all__ = ["REFUSED_SECONDS", "PeerSession"]

REFUSED_SECONDS = 2.0  # handshakes failing this long (one every 0.1 s while the peer tries again): refused


class PeerSession:
    """What a peer knows of the hub at ``address``: whether a handshake with it succeeded, when it was last
    heard, and why it cannot be reached (None while nothing says so)."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.connected = False
        self.refused: str | None = None
        self.heard_at = -float("inf")
        self._failing_since: float | None = None  # the first of the handshakes failed since one succeeded

    def handshake(self, succeeded: bool, now: float) -> bool:
        """A handshake with the process at the address ended; True when it succeeded (a hub to tell everything)."""
        self.connected = succeeded
        if succeeded:
            self.refused, self.heard_at, self._failing_since = None, now, None
            return True
        if self._failing_since is None:
            self._failing_since = now
        if now - self._failing_since >= REFUSED_SECONDS:
            self.refused = (
                f"the process at {self.address} did not prove it knows this token (every handshake failed for "
                f"{REFUSED_SECONDS:g} s): the runs there publish with another token (the one they printed, "
                f"their {TOKEN_VARIABLE}, or their token file), or nothing answers behind an SSH tunnel (is the script "
                "running, and does the tunnel lead to its address?)"
            )
        return False

    def hear(self, now: float) -> None:
        """A message came from the hub."""
        self.heard_at = now
