"""The messages between runs, their hub and notebooks: what travels on the zmq sockets, built and read.

A message is two or three zmq parts: a JSON head (what it is, who sends it), a JSON body (what the page
protocol says, a scene, the list of runs: may be empty), and for a frame its one binary buffer (the same
JPEG, PNG, H.264 or float32 bytes the widget takes). Nothing is ever unpickled. Every part has a size
limit, checked before it is parsed (the sockets also refuse longer parts: ``MAX_PART_BYTES``), and every
field read is checked for its type: a message that is not one of these is None, and dropped.

Peers (notebooks, and runs in other processes) to the hub::

    watch     {"run": id | null}            a notebook's heartbeat: which run it shows (null: none yet)
    page      {"run": id}  body: a page's message (ready, ack, a click...)
    bye       {}                            the notebook leaves
    announce  {}  body: [run, ...]          a run process's heartbeat: its runs
    to_page   {"run": id}  body: a message for the pages (frame, state), buffer: the frame's bytes
    scene     {"run": id}  body: the scene the page draws the run's frames with
    gone      {"run": id}                   that run ended

The hub to peers::

    runs      {"watching": id | null, "joined": bool}  body: [run, ...]  (to notebooks, for each watch; joined:
              the notebook was not watching that run until this watch)
    viewers   {}  body: {id: notebooks watching}            (to run processes)
    to_page, scene, page                    passed on
    ended     {"run": id}                   the run a notebook watched ended
    leaving   {}                            the hub's process ends: a run process takes its place

A run is ``{"id": ..., "name": ..., "host": ..., "pid": ...}``.

>>> parts = encode("page", {"run": "vm/12/1"}, {"type": "ack", "seq": 3})
>>> message = decode(parts)
>>> message.kind, message.text("run"), message.body
('page', 'vm/12/1', {'type': 'ack', 'seq': 3})
>>> decode([b"not json", b""]) is None, decode([b"{}"]) is None
(True, True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "KINDS",
    "MAX_BODY_BYTES",
    "MAX_HEAD_BYTES",
    "MAX_PART_BYTES",
    "Message",
    "RunInfo",
    "decode",
    "decode_body",
    "decode_head",
    "encode",
    "receive",
]

VERSION = 1
# The sockets' own limit on one part (zmq MAXMSGSIZE: a peer sending more is disconnected).
MAX_PART_BYTES = 8 * 1024 * 1024
MAX_HEAD_BYTES = 4096
MAX_BODY_BYTES = 64 * 1024  # any body but a scene's
MAX_SCENE_BYTES = MAX_PART_BYTES  # a MuJoCo scene with meshes and textures: tens of KB in gymnasium's envs
MAX_TEXT = 256  # characters in a head's text field (ids, names)
MAX_RUNS = 256  # runs in one list
# Which body each kind carries (a JSON object, a list, or none), and how many binary buffers
BODIES: dict[str, tuple[type | None, int]] = {
    "watch": (None, 0),
    "page": (dict, 0),
    "bye": (None, 0),
    "announce": (list, 0),
    "to_page": (dict, 1),
    "scene": (dict, 0),
    "gone": (None, 0),
    "runs": (list, 0),
    "viewers": (dict, 0),
    "ended": (None, 0),
    "leaving": (None, 0),
}
KINDS = frozenset(BODIES)


@dataclass(frozen=True)
class RunInfo:
    """A published run as notebooks see it.

    Args:
        id: Unique among the runs at an address.
        name: ``gymview.watch(..., run=...)``, or the env's id.
        host: The machine its process runs on.
        pid: Its process's id.

    Examples:
        >>> run = RunInfo("vm/12/1", "CartPole-v1", "vm", 12)
        >>> str(run), RunInfo.read(run.as_dict()) == run
        ("'CartPole-v1' on vm, pid 12", True)
    """

    id: str
    name: str
    host: str
    pid: int

    def as_dict(self) -> dict[str, Any]:
        """The run as it goes on the wire.

        Returns:
            Its fields by name.
        """
        return {"id": self.id, "name": self.name, "host": self.host, "pid": self.pid}

    @classmethod
    def read(cls, value: Any) -> RunInfo | None:
        """The run in ``value`` (a dict off the wire).

        Args:
            value: Anything a peer sent.

        Returns:
            The run, or None when ``value`` is not a well-formed one.
        """
        if not isinstance(value, dict):
            return None
        run_id, name, host, pid = (value.get(key) for key in ("id", "name", "host", "pid"))
        if not all(isinstance(text, str) and 0 < len(text) <= MAX_TEXT for text in (run_id, name, host)):
            return None
        if not isinstance(pid, int) or isinstance(pid, bool) or not 0 <= pid < 2**32:
            return None
        return cls(str(run_id), str(name), str(host), pid)

    def __str__(self) -> str:
        return f"{self.name!r} on {self.host}, pid {self.pid}"


@dataclass(frozen=True)
class Message:
    """A message read off the wire: its ``kind``, head fields, body (None when empty) and buffers."""

    kind: str
    head: dict[str, Any]
    body: Any = None
    buffers: list[bytes] = field(default_factory=list)

    def text(self, name: str) -> str | None:
        """Head field ``name`` if it is a string of at most ``MAX_TEXT`` characters, else None."""
        value = self.head.get(name)
        return value if isinstance(value, str) and len(value) <= MAX_TEXT else None

    def runs(self) -> list[RunInfo]:
        """The runs in a list body (``runs``, ``announce``): the well-formed ones, at most ``MAX_RUNS``."""
        if not isinstance(self.body, list):
            return []
        found = (RunInfo.read(value) for value in self.body[:MAX_RUNS])
        return [run for run in found if run is not None]

    def counts(self) -> dict[str, int]:
        """A ``viewers`` body: run id -> notebooks watching (well-formed entries only)."""
        if not isinstance(self.body, dict):
            return {}
        return {
            key: value
            for key, value in list(self.body.items())[:MAX_RUNS]
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31
        }


def encode(kind: str, head: dict[str, Any], body: Any = None, buffers: list[Any] | tuple[Any, ...] = ()) -> list[Any]:
    """The parts of one message. Raises ValueError when it breaks a limit (the receiver would drop it).

    >>> [len(part) for part in encode("to_page", {"run": "r"}, {"type": "frame"}, [b"jpeg"])]
    [34, 16, 4]
    """
    head_bytes = json.dumps({"v": VERSION, "kind": kind, **head}, separators=(",", ":")).encode()
    body_bytes = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
    limit = MAX_SCENE_BYTES if kind == "scene" else MAX_BODY_BYTES
    if len(head_bytes) > MAX_HEAD_BYTES or len(body_bytes) > limit:
        raise ValueError(f"a {kind} message of {len(head_bytes) + len(body_bytes)} bytes is over gymview's limit")
    if any(memoryview(buffer).nbytes > MAX_PART_BYTES for buffer in buffers):
        raise ValueError(f"a frame over {MAX_PART_BYTES // 2**20} MiB is over gymview's limit: lower max_size")
    return [head_bytes, body_bytes, *buffers]


def decode(parts: list[bytes]) -> Message | None:
    """The message in ``parts``, or None when it is not a well-formed one (see the module docstring).

    >>> decode(encode("page", {"run": "r"}, {"type": "ack", "seq": 3})).body
    {'type': 'ack', 'seq': 3}
    >>> decode(encode("page", {"run": "r"})) is None  # a page message without its page's message
    True
    """
    head = decode_head(parts)
    return None if head is None else decode_body(head, parts)


def decode_head(parts: list[bytes]) -> Message | None:
    """Only the head of the message in ``parts`` (its body not read yet: None), or None when the head is not
    well-formed or the parts do not fit its kind: what a message costs before its sender is known to be
    allowed (the body, up to ``MAX_SCENE_BYTES``, is parsed by :func:`decode_body` only then).

    >>> decode_head([encode("page", {"run": "r"}, {"type": "ack"})[0], b"not even JSON"]).kind
    'page'
    """
    if not 2 <= len(parts) <= 3 or len(parts[0]) > MAX_HEAD_BYTES:
        return None
    head = _json(parts[0])
    kind = head.get("kind") if isinstance(head, dict) else None
    if not isinstance(kind, str) or kind not in KINDS or head.get("v") != VERSION:
        return None
    limit = MAX_SCENE_BYTES if kind == "scene" else MAX_BODY_BYTES
    if len(parts) - 2 > BODIES[kind][1] or len(parts[1]) > limit:
        return None
    if any(name in head and head[name] is not None and not isinstance(head[name], str) for name in _TEXT_FIELDS):
        return None
    return Message(kind, head)


def decode_body(head: Message, parts: list[bytes]) -> Message | None:
    """The whole message whose head :func:`decode_head` read from ``parts``, or None when its body is not
    well-formed."""
    body_type = BODIES[head.kind][0]
    body = _json(parts[1]) if parts[1] else None
    if (body is None) != (body_type is None) or (body_type is not None and not isinstance(body, body_type)):
        return None
    return Message(head.kind, head.head, body, list(parts[2:]))


_TEXT_FIELDS = ("run", "watching")


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # not JSON (UnicodeDecodeError is a ValueError), or nested too deep
        return None


def receive(socket: Any, most: int) -> list[bytes] | None:
    """One multipart message from a zmq ``socket`` that has one ready: its parts, or None when it has more
    than ``most`` (the rest are read and dropped, never kept)."""
    import zmq

    parts, count = [socket.recv()], 1
    while socket.getsockopt(zmq.RCVMORE):
        part = socket.recv()
        count += 1
        if count <= most:
            parts.append(part)
    return parts if count <= most else None
