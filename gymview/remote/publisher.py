"""Publisher: this process's runs, published at one address; a thread that owns the sockets.

``gymview.watch(env, publish="HOST:PORT")`` (or ``GYMVIEW_PUBLISH=HOST:PORT`` in the environment) makes
its view a :class:`PublishedRun` of the process's :class:`Publisher` for that address. The first process to
publish at an address listens there and routes for the others (:mod:`.hub`); later ones connect to it
(:mod:`.uplink`), and one of them takes its place when it ends. A run whose view no notebook watches makes
no frame (``LiveView`` asks :meth:`PublishedRun.attached`, one attribute); its frames, once made, are the
view's own messages, handed to the publisher's thread through an in-process socket that never waits.

>>> run = publication("127.0.0.1:5571", "CartPole-v1")  # prints, on stderr, how to attach (and the token)
>>> run.info.name, run.attached()
('CartPole-v1', False)
>>> run.close()
"""

from __future__ import annotations

import atexit
import os
import socket
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from gymview._internal.forks import after_fork_in_child
from gymview._internal.worker import Worker
from gymview.remote import wire
from gymview.remote.address import Address, parse_address
from gymview.remote.forks import let_go_of_listeners
from gymview.remote.hub import Hub
from gymview.remote.tokens import curve_keys, publisher_token, token_file
from gymview.remote.uplink import Uplink
from gymview.remote.wire import RunInfo
from gymview.remote.zmq_sockets import (
    bind_hub,
    close_quietly,
    connect_peer,
    end_worker,
    inbox_pair,
    zmq,
)

__all__ = ["HEARTBEAT_SECONDS", "PUBLISH_VARIABLE", "PublishedRun", "Publisher", "Turns", "publication"]

PUBLISH_VARIABLE = "GYMVIEW_PUBLISH"
HEARTBEAT_SECONDS = 0.5  # how often peers say they are there (notebooks: which run they watch)
POLL_SECONDS = 0.25  # the thread's longest sleep: how late a heartbeat or an expiry may come
INBOX_MESSAGES = 256  # messages that may wait for the thread; more are dropped (the loop never waits)
GOODBYE_SECONDS = 0.2  # at the end, how long the last messages (runs ended) may take to go out
# A publisher's thread that has not gone round its loop for this long is kept from the interpreter by the run's
# loop: its view's next check (a few times a second) waits until the thread has gone round, TURN_SECONDS at most.
LATE_SECONDS = 2 * POLL_SECONDS
TURN_SECONDS = 0.02

_publishers: dict[str, Publisher] = {}
_inherited: list[Publisher] = []  # in a forked child: the parent's, never used
_lock = threading.Lock()


def publication(publish: str | bool | None, name: str) -> PublishedRun | None:
    """The run that publishes a view named ``name`` at ``publish`` (``"HOST:PORT"``); None when nothing is published.

    ``publish=None`` takes ``GYMVIEW_PUBLISH`` from the environment (unset: nothing), ``False`` never publishes.

    Raises:
        ValueError: When the address is not ``HOST:PORT``, or this machine cannot listen there nor reach it.
    """
    if publish is None:
        publish = os.environ.get(PUBLISH_VARIABLE) or False
    if publish is False:
        return None
    if publish is True:
        raise ValueError(f"publish= takes an address, like publish='127.0.0.1:5555'; or set {PUBLISH_VARIABLE}")
    address = parse_address(publish)
    with _lock:
        publisher = _publishers.get(address.text)
        if publisher is None or publisher.closed:
            publisher = _publishers[address.text] = Publisher(address)
        return publisher.add_run(name)


class Turns:
    """When the thread that owns a publisher's sockets last went round its loop, and a way for the run's loop to
    let it: CPython hands the interpreter over badly to a thread that waits for it while the thread holding it lets
    go and takes it back at every step (CartPole's step does), and on some machines such a loop keeps the
    publisher's thread out long enough for notebooks to find the run silent (docs/performance-log.md).

    >>> now = [10.0]
    >>> def sleep(seconds):  # the thread, kept out, never goes round here
    ...     now[0] += seconds
    >>> turns = Turns(clock=lambda: now[0], sleep=sleep)
    >>> turns.went_round(); now[0] += 0.1
    >>> turns.give()  # the thread went round 0.1 s ago: nothing to wait for
    False
    >>> now[0] += 1.0
    >>> turns.give()  # 1.1 s ago: the loop waited for it (TURN_SECONDS at most)
    True
    """

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._round = 0
        self._at = clock()

    def went_round(self) -> None:
        """The thread went round its loop (on that thread)."""
        self._round += 1
        self._at = self._clock()

    def give(self) -> bool:
        """On the run's loop: when the thread is ``LATE_SECONDS`` behind, sleep (letting go of the interpreter)
        until it has gone round once more, ``TURN_SECONDS`` at most. True when it waited."""
        now = self._clock()
        if now - self._at < LATE_SECONDS:
            return False
        behind, ends = self._round, now + TURN_SECONDS
        while self._round == behind and self._clock() < ends:
            self._sleep(0.0005)
        return True


class PublishedRun:
    """One published view: what its ``LiveView`` asks (``live.far_pages.FarPages``) and what the hub asks
    (``hub.LocalRun``)."""

    def __init__(self, publisher: Publisher, info: RunInfo) -> None:
        self.info = info
        self.scene: list[bytes] | None = None  # its latest scene message's body, for notebooks that come later
        self.viewers = 0  # notebooks watching it: set by the publisher's thread
        self._publisher = publisher
        self._receive: Callable[[], Callable[[Any], None] | None] = lambda: None
        self._closed = False

    def attached(self) -> bool:
        """Whether a notebook watches this run now."""
        return self.viewers > 0

    def send(self, header: dict[str, Any], buffers: list[bytes]) -> None:
        """A message for the pages, if a notebook watches; one over gymview's limits is dropped, with a warning."""
        if self.viewers > 0 and not self._closed:
            parts = self._publisher.checked("to_page", header, buffers[:1])
            if parts is not None:
                self._publisher.post("to_page", self.info.id, *parts)

    def show_scene(self, scene: dict[str, Any]) -> None:
        """The scene the pages draw this run's frames with, kept for notebooks that attach later."""
        parts = self._publisher.checked("scene", scene)
        self.scene = parts
        if parts is not None and not self._closed:
            self._publisher.post("scene", self.info.id, *parts)

    def give_turn(self) -> None:
        """The run's loop lets the publisher's thread go round its loop if it fell behind (:class:`Turns`); a run
        that ended, or a forked child's copy, has no thread to wait for."""
        if not self._closed:
            self._publisher.turns.give()

    def listen(self, receive: Callable[[Any], None]) -> None:
        """Where the pages' messages go (held weakly: a view is not kept alive by its publisher)."""
        self._receive = weakref.WeakMethod(receive) if hasattr(receive, "__self__") else lambda: receive

    def deliver(self, content: dict[str, Any]) -> None:
        """A page's message (on the publisher's thread)."""
        receive = self._receive()
        if receive is not None and not self._closed:
            receive(content)

    def set_viewers(self, count: int) -> None:
        self.viewers = count

    def close(self) -> None:
        """The run ended: notebooks watching it are told; the publisher ends with its last run."""
        if not self._closed:
            self._closed = True
            self.viewers = 0
            self._publisher.remove(self)

    def go_inert(self) -> None:
        """In a forked child: this run is the parent's; nothing is sent from here."""
        self._closed = True
        self.viewers = 0


class Publisher:
    """The runs of this process at ``address`` (see the module docstring); made by :func:`publication`.

    Raises:
        ValueError: When this machine can neither listen at ``address`` nor connect to it.
    """

    def __init__(self, address: Address) -> None:
        self.address = address
        self.token, made = publisher_token(address.text)
        self._keys = curve_keys(self.token)
        self.closed = False
        self._runs: dict[str, PublishedRun] = {}
        self._runs_lock = threading.Lock()
        self._count = 0
        self._host = socket.gethostname()
        self._context = zmq().Context()
        self._inbox, self._outbox = inbox_pair(self._context, "publisher", INBOX_MESSAGES)
        self.dropped = 0  # messages for notebooks dropped: the thread fell behind, or one broke a limit
        self._warned_limit = False
        self._hub_socket = bind_hub(self._context, address, self._keys)  # may raise: before the thread starts
        self._peer_socket: Any = None
        self.turns = Turns()
        self._worker = Worker("publish", self._serve, wake=lambda: self.post("stop", ""))
        self._worker.start()
        if made:  # once: the job's log keeps it no longer than it must
            print(
                f"gymview: runs at {address.text} publish with a new token, kept in {token_file(address.text)} "
                f"(readable by you only): gymview.attach({address.text!r}) finds it on this machine; elsewhere "
                f"attach with token={self.token!r}",
                file=sys.stderr,
            )
        if not address.loopback:
            print(
                f"gymview: publishing on {address.text}, which other machines may reach: whoever has the token can "
                "watch and stop these runs (127.0.0.1 and an SSH tunnel keep it on this machine)",
                file=sys.stderr,
            )

    # -- runs --------------------------------------------------------------------------------------
    def add_run(self, name: str) -> PublishedRun:
        """A new run named ``name`` (what ``attach(run=...)`` finds it by)."""
        with self._runs_lock:
            self._count += 1
            info = RunInfo(f"{self._host}/{os.getpid()}/{self._count}", name or "run", self._host, os.getpid())
            run = self._runs[info.id] = PublishedRun(self, info)
        self.post("added", info.id)
        text = self.address.text
        print(
            f"gymview: publishing {info.name!r} (pid {info.pid}) at {text}: gymview.attach({text!r})", file=sys.stderr
        )
        return run

    def remove(self, run: PublishedRun) -> None:
        """``run`` ended; with the last run the thread ends and the sockets close."""
        with self._runs_lock:
            self._runs.pop(run.info.id, None)
            last = not self._runs
        self.post("gone", run.info.id, b"")
        if last:
            self.close()

    def local_runs(self) -> dict[str, PublishedRun]:
        with self._runs_lock:
            return dict(self._runs)

    # -- any thread --------------------------------------------------------------------------------
    def checked(self, kind: str, body: dict[str, Any], buffers: list[bytes] | tuple[()] = ()) -> list[Any] | None:
        """A message's body and buffers as parts, or None (dropped, counted, and said once) over gymview's limits."""
        try:
            return wire.encode(kind, {}, body, buffers)[1:]
        except ValueError as error:
            self.dropped += 1
            if not self._warned_limit:
                self._warned_limit = True
                warnings.warn(f"gymview: not published: {error}", stacklevel=3)
            return None

    def post(self, kind: str, run_id: str, *parts: Any) -> None:
        """Hand a message to the thread; never waits (dropped, and counted, when the thread is far behind).

        Raises:
            gymview.WorkerError: When the publisher's thread failed.
        """
        self._worker.check()
        if not self._outbox.send([kind.encode(), run_id.encode(), *parts]):
            self.dropped += 1

    def close(self, timeout: float = 5.0) -> None:
        """End the thread (its runs end for their notebooks) and close every socket; safe to call twice."""
        with _lock:
            if self.closed:
                return
            self.closed = True
            if _publishers.get(self.address.text) is self:
                del _publishers[self.address.text]
        if not end_worker(self._worker, self._outbox, self._context, timeout):
            warnings.warn(f"gymview: the publisher at {self.address.text} did not stop in {timeout} s", stacklevel=2)

    # -- the thread --------------------------------------------------------------------------------
    def _serve(self, stop: threading.Event) -> None:
        try:
            while not stop.is_set():
                if self._hub_socket is not None:
                    self._serve_as_hub(stop)
                else:
                    self._serve_as_peer(stop)
        finally:  # the goodbyes (runs ended, the hub leaving) get a moment to go out
            close_quietly(self._inbox)
            close_quietly(self._hub_socket, GOODBYE_SECONDS)
            close_quietly(self._peer_socket, GOODBYE_SECONDS)

    def _serve_as_hub(self, stop: threading.Event) -> None:
        sock = self._hub_socket
        assert sock is not None  # _serve calls this while the process listens
        hub = Hub(lambda identity, parts: _send(sock, [identity, *parts]), self.local_runs)
        poller = zmq().Poller()
        poller.register(self._inbox, zmq().POLLIN)
        poller.register(sock, zmq().POLLIN)
        try:
            while not stop.is_set():
                ready = dict(poller.poll(POLL_SECONDS * 1000))
                now = time.monotonic()
                if self._inbox in ready and not self._take_inbox(hub.from_local, hub.run_added):
                    return
                if sock in ready:
                    for _ in range(64):  # a burst at most, then the inbox again
                        parts = wire.receive(sock, most=4)
                        if parts is not None and len(parts) > 1:
                            hub.receive(parts[0], parts[1:], now)
                        if not sock.getsockopt(zmq().EVENTS) & zmq().POLLIN:
                            break
                hub.expire(now)
                self.turns.went_round()
        finally:
            self._take_inbox(hub.from_local, hub.run_added)  # what the runs posted last (a run ended) goes first
            hub.leave()

    def _serve_as_peer(self, stop: threading.Event) -> None:
        sock, handshakes = connect_peer(self._context, self.address, self._keys)
        self._peer_socket = sock

        def send(parts: list[Any]) -> None:
            _send(sock, parts)

        uplink = Uplink(self.address.text, send, self.local_runs, time.monotonic())
        poller = zmq().Poller()
        poller.register(self._inbox, zmq().POLLIN)
        poller.register(sock, zmq().POLLIN)
        poller.register(handshakes.socket, zmq().POLLIN)
        next_beat = 0.0
        try:
            while not stop.is_set():
                ready = dict(poller.poll(POLL_SECONDS * 1000))
                now = time.monotonic()
                if self._inbox in ready and not self._take_inbox(uplink.from_local, lambda: None):
                    return
                if handshakes.socket in ready:
                    for succeeded in handshakes.read():
                        uplink.handshake(succeeded, now)
                if sock in ready:
                    for _ in range(64):
                        parts = wire.receive(sock, most=3)
                        if parts is not None:
                            uplink.receive(parts, now)
                        if not sock.getsockopt(zmq().EVENTS) & zmq().POLLIN:
                            break
                if now >= next_beat:
                    uplink.heartbeat(now)
                    next_beat = now + HEARTBEAT_SECONDS
                if uplink.hub_lost(now):
                    self._hub_socket = bind_hub(self._context, self.address, self._keys, quiet=True)
                    if self._hub_socket is not None:  # this process listens now: the other runs come to it
                        return
                    uplink = Uplink(self.address.text, send, self.local_runs, now, uplink.session.connected)
                self.turns.went_round()
        finally:
            if stop.is_set():
                self._take_inbox(uplink.from_local, lambda: None)
                uplink.leave()
            handshakes.close()
            if self._hub_socket is not None:  # listening now: the connection to the old hub is done with
                close_quietly(sock)
                self._peer_socket = None

    def _take_inbox(self, forward: Callable[[str, str, list[Any]], None], added: Callable[[], None]) -> bool:
        """Pass on what this process's runs posted; False once told to stop."""
        for _ in range(INBOX_MESSAGES):
            try:
                kind, run_id, *parts = self._inbox.recv_multipart(flags=zmq().NOBLOCK)
            except zmq().Again:
                return True
            if kind == b"stop":
                return False
            if kind == b"added":
                added()
            else:
                forward(kind.decode(), run_id.decode(), parts)
        return True


def _send(sock: Any, parts: list[Any]) -> None:
    try:
        sock.send_multipart(parts, flags=zmq().NOBLOCK)
    except zmq().Again:  # the peer's queue is full (a slow link): this frame is lost, flow control slows the rest
        pass


def _close_all() -> None:
    for publisher in list(_publishers.values()):
        try:
            publisher.close()
        except Exception:  # at exit: nothing left to tell
            pass


@after_fork_in_child
def _forget_after_fork() -> None:
    """A forked child publishes anew: its parent's publishers, sockets and threads are not its own.

    They are kept (never collected, so nothing here ends the parent's zmq context) and never used: their
    runs are inert (``LiveView``'s registry tells them). The child's copies of their listening sockets are
    closed: the address is free again when the parent lets it go, even while the child lives on."""
    global _lock
    _lock = threading.Lock()
    for publisher in _publishers.values():
        publisher.closed = True
        _inherited.append(publisher)
    let_go_of_listeners({publisher.address.port for publisher in _inherited})
    _publishers.clear()


atexit.register(_close_all)
