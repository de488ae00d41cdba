"""A peer's side of the handshake with the hub: a notebook, or a run whose process does not listen.

The peer stamps each message with its nonce, the hub's nonce once known, and its proof (:mod:`.tokens`).
A hub that does not know the nonce answers ``hub``; the peer checks the hub's proof and sends again.

>>> from gymview.remote import wire
>>> from gymview.remote.tokens import HUB, proof
>>> session = PeerSession("s3cret", "127.0.0.1:5555")
>>> session.stamp()["hub"] is None
True
>>> answer = wire.decode(wire.encode("hub", {"hub": "h1", "proof": proof("s3cret", HUB, session.nonce)}))
>>> session.hear(answer, now=1.0), session.hub, session.refused
(False, 'h1', None)
"""

from __future__ import annotations

from typing import Any

from gymview.remote.tokens import HUB, PEER, TOKEN_VARIABLE, new_nonce, proof, proves
from gymview.remote.wire import Message

__all__ = ["PeerSession"]


class PeerSession:
    """What a peer knows of the hub at ``address``: its nonce (None before the handshake), when it was last
    heard, and why it refused this peer (None while it has not)."""

    def __init__(self, token: str, address: str) -> None:
        self.token = token
        self.address = address
        self.nonce = new_nonce()
        self.hub: str | None = None
        self.refused: str | None = None
        self.heard_at = -float("inf")

    def stamp(self, **head: Any) -> dict[str, Any]:
        """``head`` with this peer's nonce, the hub's, and the proof."""
        auth = None if self.hub is None else proof(self.token, PEER, self.hub, self.nonce)
        return {**head, "nonce": self.nonce, "hub": self.hub, "auth": auth}

    def hear(self, message: Message, now: float) -> bool:
        """Take the hub's ``hub`` and ``refused`` messages; True for any other message of a hub that proved
        itself (the caller's to handle)."""
        if message.kind == "hub":
            hub = message.text("hub")
            if hub and proves(self.token, message.text("proof"), HUB, self.nonce):
                self.hub, self.refused, self.heard_at = hub, None, now
            else:
                self.refused = (
                    f"the process at {self.address} did not prove it knows this token: the runs there publish with "
                    f"another token (the one they printed, or their {TOKEN_VARIABLE})"
                )
            return False
        if message.kind == "refused":
            why = message.text("why") or "refused"
            self.refused = f"the run at {self.address} refused this peer: {why}"
            return False
        if self.hub is None:
            return False
        self.heard_at = now
        return True
