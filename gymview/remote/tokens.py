"""Tokens: who may watch and steer a published run.

The token never travels. A peer that connects sends a fresh nonce; the hub (the process that listens at
the address) answers with its own nonce and a proof that it knows the token (an HMAC of the peer's nonce).
From then on each of the peer's messages carries its own proof (an HMAC of both nonces). A peer that does
not know the token is refused; a hub that does not know it is not believed (another program, or runs
started with another token, listening there).

>>> hub_nonce, peer_nonce = new_nonce(), new_nonce()
>>> answer = proof("s3cret", HUB, peer_nonce)
>>> proves("s3cret", answer, HUB, peer_nonce), proves("guess", answer, HUB, peer_nonce)
(True, False)
>>> proves("s3cret", None, PEER, hub_nonce, peer_nonce)
False
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

__all__ = ["HUB", "PEER", "TOKEN_VARIABLE", "new_nonce", "proof", "proves", "publisher_token", "viewer_token"]

TOKEN_VARIABLE = "GYMVIEW_TOKEN"
HUB, PEER = "hub", "peer"  # who proves: the roles are part of what is signed, so one proof never serves as the other


def publisher_token() -> tuple[str, bool]:
    """The token this process's runs publish with, and whether it was made now.

    ``GYMVIEW_TOKEN`` when set; else a new random one, put into ``GYMVIEW_TOKEN`` so that the processes this
    one starts (``SubprocVecEnv`` workers, a local Ray instance) publish with the same token.

    Examples:
        >>> import os
        >>> os.environ["GYMVIEW_TOKEN"] = "s3cret"
        >>> publisher_token()
        ('s3cret', False)
        >>> del os.environ["GYMVIEW_TOKEN"]
    """
    token = os.environ.get(TOKEN_VARIABLE, "")
    if token:
        return token, False
    token = secrets.token_urlsafe(18)
    os.environ[TOKEN_VARIABLE] = token
    return token, True


def viewer_token(token: str | None, address: str) -> str:
    """The token a notebook attaches with: ``token``, or ``GYMVIEW_TOKEN``.

    Raises:
        ValueError: When neither is given: the message says where the token comes from.
        TypeError: When ``token`` is not a string.

    Examples:
        >>> viewer_token("s3cret", "127.0.0.1:5555")
        's3cret'
    """
    if token is not None and not isinstance(token, str):
        raise TypeError(f"token must be a string (the one the run printed); got {type(token).__name__}")
    token = token or os.environ.get(TOKEN_VARIABLE, "")
    if not token:
        raise ValueError(
            f"no token to attach to {address} with: pass token='...' (the run printed it when it started "
            f"publishing), or set {TOKEN_VARIABLE} to the value the run has"
        )
    return token


def new_nonce() -> str:
    """A fresh random nonce (hex)."""
    return secrets.token_hex(16)


def proof(token: str, role: str, *nonces: str) -> str:
    """``role``'s proof over ``nonces`` that it knows ``token``: an HMAC-SHA256, hex."""
    return hmac.new(token.encode(), ":".join((role, *nonces)).encode(), hashlib.sha256).hexdigest()


def proves(token: str, claimed: object, role: str, *nonces: str) -> bool:
    """Whether ``claimed`` (anything a peer sent) is ``role``'s proof over ``nonces``; compared in constant time."""
    if not isinstance(claimed, str):
        return False
    return hmac.compare_digest(claimed.encode(), proof(token, role, *nonces).encode())
