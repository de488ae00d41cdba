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
import pathlib
import re
import secrets
import stat
import tempfile

__all__ = [
    "HUB",
    "PEER",
    "TOKEN_VARIABLE",
    "new_nonce",
    "proof",
    "proves",
    "publisher_token",
    "read_token_file",
    "runtime_dir",
    "token_file",
    "viewer_token",
    "write_token_file",
]

TOKEN_VARIABLE = "GYMVIEW_TOKEN"
HUB, PEER = "hub", "peer"  # who proves: the roles are part of what is signed, so one proof never serves as the other


RUNTIME_VARIABLE = "GYMVIEW_RUNTIME_DIR"


def runtime_dir() -> pathlib.Path:
    """Where this user's token files live: ``GYMVIEW_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/gymview``, else
    ``~/.local/share/gymview/runtime`` (as Jupyter keeps its connection files)."""
    if os.environ.get(RUNTIME_VARIABLE):
        return pathlib.Path(os.environ[RUNTIME_VARIABLE])
    if os.environ.get("XDG_RUNTIME_DIR"):
        return pathlib.Path(os.environ["XDG_RUNTIME_DIR"]) / "gymview"
    return pathlib.Path.home() / ".local" / "share" / "gymview" / "runtime"


def token_file(address: str) -> pathlib.Path:
    """The file that keeps the token of the runs published at ``address`` (``HOST:PORT``) from this machine.

    >>> token_file("127.0.0.1:5555").name
    'token-127.0.0.1-5555'
    """
    return runtime_dir() / ("token-" + re.sub(r"[^A-Za-z0-9.-]", "_", address.replace(":", "-")))


def read_token_file(path: pathlib.Path) -> str | None:
    """The token in ``path``, or None when there is none.

    Raises:
        PermissionError: When others than its owner may read or write it, or another user owns it: the message
            says how to make it private.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    with os.fdopen(descriptor) as file:
        status = os.fstat(file.fileno())
        if hasattr(os, "getuid") and status.st_uid != os.getuid():
            raise PermissionError(
                f"gymview: the token file {path} belongs to another user: delete it, or attach with token='...'"
            )
        if status.st_mode & 0o077:
            raise PermissionError(
                f"gymview: others may read the token file {path} (mode "
                f"{stat.S_IMODE(status.st_mode):o}): make it private (chmod 600 {path}), or delete "
                "it to have a new token made"
            )
        return file.read().strip() or None


def write_token_file(path: pathlib.Path, token: str) -> str:
    """Write ``token`` to ``path``, readable by this user only, unless a token is there already (another
    process publishing at the same address came first); returns the token that is there now."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".token-")  # mode 0600
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(token + "\n")
        try:
            os.link(temporary, path)  # whole or not at all, and never over another process's token
        except FileExistsError:
            return read_token_file(path) or token
        return token
    finally:
        os.unlink(temporary)


def publisher_token(address: str) -> tuple[str, bool]:
    """The token this process's runs at ``address`` publish with, and whether it was made now.

    ``GYMVIEW_TOKEN`` when set; else the one in :func:`token_file` (the processes this one starts, such as
    ``SubprocVecEnv`` workers or a local Ray instance, and a restarted script publish with the same token);
    else a new random one, written there. Neither is put into the environment.

    Raises:
        PermissionError: When the token file may be read by others (see :func:`read_token_file`).

    Examples:
        >>> import os
        >>> os.environ["GYMVIEW_TOKEN"] = "s3cret"
        >>> publisher_token("127.0.0.1:5555")
        ('s3cret', False)
        >>> del os.environ["GYMVIEW_TOKEN"]
    """
    token = os.environ.get(TOKEN_VARIABLE, "")
    if token:
        return token, False
    path = token_file(address)
    token = read_token_file(path) or ""
    if token:
        return token, False
    made = secrets.token_urlsafe(18)
    token = write_token_file(path, made)
    return token, token == made


def viewer_token(token: str | None, address: str) -> str:
    """The token a notebook attaches with: ``token``, else ``GYMVIEW_TOKEN``, else the token file a run on this
    machine wrote for ``address``.

    Raises:
        ValueError: When none is there: the message says where the token comes from.
        TypeError: When ``token`` is not a string.
        PermissionError: When the token file may be read by others.

    Examples:
        >>> viewer_token("s3cret", "127.0.0.1:5555")
        's3cret'
    """
    if token is not None and not isinstance(token, str):
        raise TypeError(f"token must be a string (the one the run printed); got {type(token).__name__}")
    token = token or os.environ.get(TOKEN_VARIABLE, "") or read_token_file(token_file(address)) or ""
    if not token:
        raise ValueError(
            f"no token to attach to {address} with: pass token='...' (the run printed it when it started "
            f"publishing), or set {TOKEN_VARIABLE} to the value the run has; on the run's machine gymview reads it "
            f"from {token_file(address)}"
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
