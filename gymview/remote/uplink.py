"""Uplink: the runs of a process that does not listen at the address, connected to the hub that does.

Every ``HEARTBEAT_SECONDS`` the process announces its runs; the hub answers how many notebooks watch
each and passes on their pages' messages. A run's frames and scenes go to the hub, which hands them
on. When the hub is silent for ``SILENT_SECONDS``, or says it is leaving, :attr:`Uplink.hub_lost` turns
True and the publisher tries to listen at the address itself. Like the hub it knows no socket.

>>> from gymview.remote import wire
>>> sent = []
>>> uplink = Uplink("127.0.0.1:5555", sent.append, dict)
>>> uplink.heartbeat(now=0.0)
>>> wire.decode(sent[-1]).kind
'announce'
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

from gymview.remote import wire
from gymview.remote.hub import SILENT_SECONDS, LocalRun
from gymview.remote.session import PeerSession

__all__ = ["Uplink"]


class Uplink:
    """See the module docstring. ``send(parts)`` sends to the hub; ``local_runs()``: this process's runs by id."""

    def __init__(
        self,
        address: str,
        send: Callable[[list[Any]], None],
        local_runs: Callable[[], Mapping[str, LocalRun]],
        now: float = 0.0,
        connected: bool = False,
    ) -> None:
        self.session = PeerSession(address)
        self.session.connected = connected  # an uplink made again over a connection that stays
        self._send = send
        self._local_runs = local_runs
        self._since = now  # hub_lost counts from here until the hub is first heard
        self._leaving = False
        self._warned: str | None = None

    def heartbeat(self, now: float) -> None:
        """Announce this process's runs (the hub's answer also says it is still there)."""
        runs = [run.info.as_dict() for run in self._local_runs().values()]
        self._send(wire.encode("announce", {}, runs))

    def handshake(self, succeeded: bool, now: float) -> None:
        """A handshake with the process at the address ended: a hub is told everything; one that failed is
        told once as a warning."""
        if self.session.handshake(succeeded, now):
            self._leaving = False
            self.heartbeat(now)
            self._send_scenes()
        elif self.session.refused is not None and self.session.refused != self._warned:
            self._warned = self.session.refused
            warnings.warn(f"gymview: this process's runs are not published: {self.session.refused}", stacklevel=1)

    def receive(self, parts: list[bytes], now: float) -> None:
        """One message from the hub; anything malformed is dropped."""
        message = wire.decode(parts)
        if message is None:
            return
        self.session.hear(now)
        runs = self._local_runs()
        if message.kind == "viewers":
            counts = message.counts()
            for run_id, run in runs.items():
                run.set_viewers(counts.get(run_id, 0))
        elif message.kind == "page":
            target = runs.get(message.text("run") or "")
            if target is not None:
                target.deliver(message.body)
        elif message.kind == "leaving":
            self._leaving = True

    def from_local(self, kind: str, run_id: str, parts: list[Any]) -> None:
        """A local run's ``to_page``, ``scene`` or ``gone`` message (``parts`` without the head), for the hub."""
        if self.session.connected:
            self._send([wire.encode(kind, {"run": run_id})[0], *parts])

    def hub_lost(self, now: float) -> bool:
        """Whether the hub left, or has not been heard for ``SILENT_SECONDS``; every run then counts no viewer."""
        heard = max(self.session.heard_at, self._since)
        lost = self._leaving or now - heard > SILENT_SECONDS
        if lost:
            for run in self._local_runs().values():
                run.set_viewers(0)
        return lost

    def leave(self) -> None:
        """This process stops publishing: its runs end."""
        for run_id in list(self._local_runs()):
            self.from_local("gone", run_id, [b""])

    def _send_scenes(self) -> None:
        for run_id, run in self._local_runs().items():
            if run.scene is not None:
                self.from_local("scene", run_id, list(run.scene))
