"""Tokens: who may watch and steer a published run.

The token never travels. It stands for two CurveZMQ key pairs (:func:`curve_keys`): every connection to the
process that listens at the address (the hub) is encrypted and authenticated by libzmq's CURVE mechanism, with
keys of its own for each connection, so nothing on the wire can be read, changed or sent again on another
connection, and a process that does not know the token never gets past the handshake.

Where the token comes from: ``GYMVIEW_TOKEN``, else the address's token file, made when there is none.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import pathlib
import re
import secrets
import stat
import tempfile
from dataclasses import dataclass, field

__all__ = [
    "TOKEN_VARIABLE",
    "CurveKeys",
    "curve_keys",
    "publisher_token",
    "read_token_file",
    "runtime_dir",
    "token_file",
    "viewer_token",
    "write_token_file",
]

TOKEN_VARIABLE = "GYMVIEW_TOKEN"
CURVE_SALT = b"gymview curve keys 1"  # what the token's keys are made with: a new salt, new keys


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
    try:  # never through a link, never waiting on a pipe put there
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise PermissionError(f"gymview: the token file {path} is a symbolic link: delete it") from error
        raise
    with os.fdopen(descriptor) as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise PermissionError(f"gymview: the token file {path} is not a plain file: delete it")
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
    folder = os.lstat(path.parent)
    mine = not hasattr(os, "getuid") or folder.st_uid == os.getuid()
    if not stat.S_ISDIR(folder.st_mode) or not mine or folder.st_mode & 0o077:
        raise PermissionError(
            f"gymview: the folder for token files {path.parent} must be a folder of yours that only you may use "
            f"(chmod 700 {path.parent}), or set {RUNTIME_VARIABLE} to one"
        )
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


@dataclass(frozen=True)
class CurveKeys:
    """The CurveZMQ key pairs (Z85 text) that a token stands for: the hub's, which listens at the address, and
    the peers', which connect to it (notebooks, runs of other processes)."""

    hub_public: bytes = field(repr=False)  # as secret as the token: a peer must know it to start a handshake
    hub_secret: bytes = field(repr=False)
    peer_public: bytes = field(repr=False)
    peer_secret: bytes = field(repr=False)


@functools.lru_cache(maxsize=8)
def curve_keys(token: str) -> CurveKeys:
    """The key pairs of ``token``: scrypt (slow on purpose, and run once per process and token, so that a
    recorded handshake does not let anyone try guesses of a weak token quickly) makes both secret keys, and
    Curve25519 their public keys. A peer must know the hub's public key to start a handshake, and only the
    hub holds its secret key: only processes that know the token get past the handshake, either way.

    >>> keys = curve_keys("s3cret")
    >>> keys == curve_keys("s3cret"), keys.hub_public == curve_keys("other").hub_public, len(keys.hub_public)
    (True, False, 40)
    """
    import zmq
    import zmq.utils.z85

    material = hashlib.scrypt(token.encode(), salt=CURVE_SALT, n=2**14, r=8, p=1, maxmem=64 * 1024 * 1024, dklen=64)
    hub_secret, peer_secret = zmq.utils.z85.encode(material[:32]), zmq.utils.z85.encode(material[32:])
    return CurveKeys(zmq.curve_public(hub_secret), hub_secret, zmq.curve_public(peer_secret), peer_secret)
