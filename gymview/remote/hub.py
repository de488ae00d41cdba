"""Hub: the routing of the process that listens at the address, between notebooks and runs.

The first process to publish at an address listens there (a zmq ROUTER); the runs of other processes
connect to it as peers, as notebooks do. Only peers that know the token get past the CurveZMQ handshake
(:mod:`.zmq_sockets`), so every message comes from one of them; each is still checked before it is used
(:mod:`.wire`). The hub lists the runs (its own and its peers'), passes each run's frames to the notebooks
watching it and their pages' messages back, and tells each run how many notebooks watch it: a run no
notebook watches makes no frame.
A notebook or run process silent for ``SILENT_SECONDS`` is gone: its pages are told to the run as hidden,
its runs as ended. It knows no socket: ``send(identity, parts)`` sends, and time comes in as ``now``.

>>> from gymview.remote import wire
>>> sent = []
>>> hub = Hub(lambda identity, parts: sent.append((identity, wire.decode(parts))), dict)
>>> hub.receive(b"notebook", wire.encode("watch", {"run": None}), now=0.0)
>>> sent[-1][1].kind, sent[-1][1].runs()   # the runs there: none yet
('runs', [])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from gymview.live import protocol
from gymview.remote import wire
from gymview.remote.wire import Message, RunInfo

__all__ = ["SILENT_SECONDS", "Hub", "LocalRun"]

# A notebook or run process not heard from for this long is gone (each sends every HEARTBEAT_SECONDS).
SILENT_SECONDS = 3.0
MAX_PEERS = 256  # notebooks and run processes at once; more are not answered
MAX_CLIENTS = 16  # browser pages per notebook that the hub keeps track of


class LocalRun(Protocol):
    """A run of the hub's own process (a ``publisher.PublishedRun``)."""

    info: RunInfo
    scene: list[bytes] | None  # the parts of its latest scene message, for notebooks that come later

    def set_viewers(self, count: int) -> None:
        """How many notebooks watch it now."""
        ...

    def deliver(self, content: dict[str, Any]) -> None:
        """A page's message, for its view."""
        ...


@dataclass
class _Viewer:
    seen: float
    run: str | None = None
    clients: set[str] = field(default_factory=set)  # the pages that spoke through it


@dataclass
class _Member:
    seen: float
    runs: dict[str, RunInfo] = field(default_factory=dict)
    scenes: dict[str, list[bytes]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # what it was told last


class Hub:
    """See the module docstring. ``local_runs()``: this process's runs by id."""

    def __init__(
        self,
        send: Callable[[bytes, list[Any]], None],
        local_runs: Callable[[], Mapping[str, LocalRun]],
    ) -> None:
        self._send = send
        self._local_runs = local_runs
        self._viewers: dict[bytes, _Viewer] = {}
        self._members: dict[bytes, _Member] = {}
        self.dropped = 0  # messages that were not well-formed, or of a kind only the hub sends, or past MAX_PEERS

    # -- what peers send -------------------------------------------------------------------------
    def receive(self, identity: bytes, parts: list[bytes], now: float) -> None:
        """Handle one message from the peer ``identity``; anything malformed is dropped."""
        known = identity in self._viewers or identity in self._members
        head = wire.decode_head(parts)
        message = None if head is None else wire.decode_body(head, parts)
        if message is None or (not known and len(self._viewers) + len(self._members) >= MAX_PEERS):
            self.dropped += 1
            return
        handler = self._HANDLERS.get(message.kind)
        if handler is None:
            self.dropped += 1  # a kind only the hub sends
            return
        handler(self, identity, message, parts, now)

    def _watch(self, identity: bytes, message: Message, parts: list[bytes], now: float) -> None:
        viewer = self._viewers.setdefault(identity, _Viewer(now))
        viewer.seen = now
        wanted = message.text("run")
        joined = False  # the notebook joins the run now: its pages are told again (the hub may have forgotten it)
        if wanted != viewer.run:
            self._leave(identity, viewer)
            if wanted is not None and wanted in self._all_runs():
                viewer.run, joined = wanted, True
                scene = self._scene_of(wanted)
                if scene is not None:
                    self._send(identity, scene)
            self._recount()
        runs = [run.as_dict() for run in sorted(self._all_runs().values(), key=lambda run: (run.name, run.pid, run.id))]
        self._send(identity, wire.encode("runs", {"watching": viewer.run, "joined": joined}, runs))

    def _page(self, identity: bytes, message: Message, parts: list[bytes], now: float) -> None:
        viewer = self._viewers.get(identity)
        run_id = message.text("run")
        if viewer is None or run_id is None or run_id != viewer.run:
            return
        viewer.seen = now
        client = message.body.get("client")
        if isinstance(client, str) and len(client) <= wire.MAX_TEXT and len(viewer.clients) < MAX_CLIENTS:
            viewer.clients.add(client)
        self._to_run(run_id, message.body, parts[1])

    def _bye(self, identity: bytes, message: Message, parts: list[bytes], now: float) -> None:
        viewer = self._viewers.pop(identity, None)
        if viewer is not None:
            self._leave(identity, viewer)
            self._recount()

    def _announce(self, identity: bytes, message: Message, parts: list[bytes], now: float) -> None:
        member = self._members.setdefault(identity, _Member(now))
        member.seen = now
        taken = self._taken_ids(identity)
        runs = {run.id: run for run in message.runs() if run.id not in taken}
        for gone in set(member.runs) - set(runs):
            self._end(gone)
            member.scenes.pop(gone, None)
        member.runs = runs
        self._recount(always_tell=identity)

    def _from_member(self, identity: bytes, message: Message, parts: list[bytes], now: float) -> None:
        member = self._members.get(identity)
        run_id = message.text("run")
        if member is None or run_id not in member.runs:
            return
        member.seen = now
        forwarded = [_head(message.kind, run_id), *parts[1:]]
        if message.kind == "scene":
            member.scenes[run_id] = forwarded
        elif message.kind == "gone":
            del member.runs[run_id]
            member.scenes.pop(run_id, None)
            self._end(run_id)
            self._recount()
            return
        self._to_viewers(run_id, forwarded)

    _HANDLERS: ClassVar[dict[str, Callable[[Hub, bytes, Message, list[bytes], float], None]]] = {
        "watch": _watch,
        "page": _page,
        "bye": _bye,
        "announce": _announce,
        "to_page": _from_member,
        "scene": _from_member,
        "gone": _from_member,
    }

    # -- what this process's runs send -------------------------------------------------------------
    def from_local(self, kind: str, run_id: str, parts: list[Any]) -> None:
        """A local run's ``to_page``, ``scene`` or ``gone`` message (``parts`` without the head), for its viewers."""
        if kind == "gone":
            self._end(run_id)
            self._recount()
            return
        self._to_viewers(run_id, [_head(kind, run_id), *parts])

    def run_added(self) -> None:
        """A local run came (or went): notebooks see it at their next heartbeat; counts are redone now."""
        self._recount()

    # -- time, and the end ------------------------------------------------------------------------
    def expire(self, now: float) -> None:
        """Forget the notebooks and run processes silent for ``SILENT_SECONDS``."""
        changed = False
        for identity, viewer in list(self._viewers.items()):
            if now - viewer.seen > SILENT_SECONDS:
                del self._viewers[identity]
                self._leave(identity, viewer)
                changed = True
        for identity, member in list(self._members.items()):
            if now - member.seen > SILENT_SECONDS:
                del self._members[identity]
                for run_id in member.runs:
                    self._end(run_id)
                changed = True
        if changed:
            self._recount()

    def leave(self) -> None:
        """This process stops listening: its runs end for their notebooks, run processes are told to take over."""
        for run_id in self._local_runs():
            self._end(run_id)
        for identity in list(self._members):
            self._send(identity, wire.encode("leaving", {}))
        for identity in list(self._viewers):
            self._send(identity, wire.encode("leaving", {}))

    # -- with the tables -------------------------------------------------------------------------
    def _all_runs(self) -> dict[str, RunInfo]:
        runs = {run_id: run.info for run_id, run in self._local_runs().items()}
        for member in self._members.values():
            runs.update(member.runs)
        return runs

    def _taken_ids(self, identity: bytes) -> set[str]:
        """Run ids that another peer (or this process) publishes: a peer cannot take them over."""
        taken = set(self._local_runs())
        for other, member in self._members.items():
            if other != identity:
                taken.update(member.runs)
        return taken

    def _scene_of(self, run_id: str) -> list[Any] | None:
        local = self._local_runs().get(run_id)
        if local is not None:
            return None if local.scene is None else [_head("scene", run_id), *local.scene]
        for member in self._members.values():
            if run_id in member.scenes:
                return member.scenes[run_id]
        return None

    def _to_viewers(self, run_id: str, parts: list[Any]) -> None:
        for identity, viewer in self._viewers.items():
            if viewer.run == run_id:
                self._send(identity, parts)

    def _to_run(self, run_id: str, content: dict[str, Any], body: bytes) -> None:
        local = self._local_runs().get(run_id)
        if local is not None:
            local.deliver(content)
            return
        for identity, member in self._members.items():
            if run_id in member.runs:
                self._send(identity, [_head("page", run_id), body])

    def _leave(self, identity: bytes, viewer: _Viewer) -> None:
        """The viewer no longer shows its run: its pages are hidden, for the run's flow control and rate."""
        if viewer.run is not None and viewer.run in self._all_runs():
            # a page another viewer of the run speaks for stays (the same notebook, connected again)
            held = {
                client
                for other in self._viewers.values()
                if other is not viewer and other.run == viewer.run
                for client in other.clients
            }
            for client in viewer.clients - held:
                hidden = protocol.page_hidden(client)
                self._to_run(viewer.run, hidden, wire.encode("page", {}, hidden)[1])
        viewer.run, viewer.clients = None, set()

    def _end(self, run_id: str) -> None:
        for identity, viewer in self._viewers.items():
            if viewer.run == run_id:
                self._send(identity, wire.encode("ended", {"run": run_id}))
                viewer.run, viewer.clients = None, set()

    def _recount(self, always_tell: bytes | None = None) -> None:
        counts: dict[str, int] = {}
        for viewer in self._viewers.values():
            if viewer.run is not None:
                counts[viewer.run] = counts.get(viewer.run, 0) + 1
        for run_id, run in self._local_runs().items():
            run.set_viewers(counts.get(run_id, 0))
        for identity, member in self._members.items():
            told = {run_id: counts.get(run_id, 0) for run_id in member.runs}
            if told != member.counts or identity == always_tell:
                member.counts = told
                self._send(identity, wire.encode("viewers", {}, told))


def _head(kind: str, run_id: str) -> bytes:
    return wire.encode(kind, {"run": run_id})[0]
