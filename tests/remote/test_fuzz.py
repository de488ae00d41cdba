"""A hostile peer cannot crash a run or a notebook: random bytes, parts over the limit, wrong part counts,
bad JSON, wrong types, messages of the wrong kind, with and without the token (without it, nothing gets past
the CurveZMQ handshake: tests/remote/test_secure_wire.py)."""

import json
import queue
import random
import socket
import threading
import time

import psutil
import pytest
import zmq
from waiting import wait_until

import gymview
from gymview.remote import wire
from gymview.remote.relay import for_page
from gymview.remote.tokens import curve_keys

pytestmark = pytest.mark.slow

KINDS = sorted(wire.KINDS) + ["launch", "", "x" * 300]
ODD_VALUES = [None, True, -1, 2**70, 1.5, float("nan"), "", "x" * 5000, [], [1, [2, [3]]], {}, {"a": {"b": None}},
              "\u0000\udcff".encode("utf-8", "surrogatepass").decode("utf-8", "replace")]


def odd(rng):
    return rng.choice(ODD_VALUES)


def junk_json(rng):
    """JSON that is the wrong shape, or not JSON at all."""
    choice = rng.randrange(6)
    if choice == 0:
        return rng.randbytes(rng.randrange(1, 300))
    if choice == 1:
        return b"{" * rng.randrange(1, 50_000)
    if choice == 2:
        return json.dumps(odd(rng)).encode()
    if choice == 3:
        return json.dumps({odd_key(rng): odd(rng) for _ in range(rng.randrange(8))}).encode()
    if choice == 4:
        return b'{"v": 1, "kind": "watch", "run": ' + rng.randbytes(20) + b"}"
    return json.dumps([odd(rng) for _ in range(rng.randrange(10))]).encode()


def odd_key(rng):
    return rng.choice(["v", "kind", "run", "watching", "type", "seq", "client", "action", "id", "value",
                       "index", "key", "codecs", "scene", "frames", "width", "height", "format"])


def page_junk(rng):
    """What a page never sends but a hostile peer with the token may: every field of the wrong type."""
    content = {"type": rng.choice(["ready", "ack", "visibility", "keyframe", "key", "replay", "control", odd(rng)])}
    for _ in range(rng.randrange(1, 6)):
        content[odd_key(rng)] = odd(rng)
    if content["type"] == "control":
        content["action"] = rng.choice(["launch", "speed", None, 3, ["stop"]])  # never a plain stop or pause
        if content["action"] == "speed":
            content["value"] = rng.choice(["fast", -2, 0, [1], {"x": 1}, None, 1e308])
    return content


def unauthenticated(rng):
    """One message from a peer without the token."""
    choice = rng.randrange(7)
    if choice == 0:
        return [rng.randbytes(rng.randrange(0, 2000)) for _ in range(rng.randrange(1, 7))]
    if choice == 1:
        return [junk_json(rng), junk_json(rng)]
    if choice == 2:
        return [b"x"] * rng.randrange(5, 64)  # more parts than any message has (thousands: see docs/remote.md)
    if choice == 3:
        kind = rng.choice(KINDS)
        head = {"v": rng.choice([1, 2, "1", None]), "kind": kind, "run": odd(rng)}
        return [json.dumps(head).encode(), junk_json(rng)]
    if choice == 4:
        return wire.encode("page", {"run": "any"}, {"type": "control", "action": "stop", "id": "x"})
    if choice == 5:
        return wire.encode("watch", {"run": None})
    return [b"{}", b"", b"", b""]


class HostilePeer:
    """A zmq DEALER at ``address``: with ``token`` it speaks CurveZMQ with the token's keys, as notebooks do, and
    waits for the hub's first answer; without, a peer that does not know the token (plain zmq, or CurveZMQ with
    another token's keys: ``guess``)."""

    def __init__(self, context, address, token=None, guess=None):
        self.socket = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        if token or guess:
            keys = curve_keys(token or guess)
            self.socket.curve_serverkey, self.socket.curve_publickey = keys.hub_public, keys.peer_public
            self.socket.curve_secretkey = keys.peer_secret
        self.socket.connect(f"tcp://{address}")
        self.heard = 0  # messages the run's process sent it
        self._next_try = 0.0
        if token is not None:
            wait_until(self._answered, "the hub's first answer")

    def _answered(self):
        """Asks again at each heartbeat until the hub answers, as notebooks do."""
        if time.monotonic() >= self._next_try:
            self.send(wire.encode("watch", {"run": None}))
            self._next_try = time.monotonic() + 0.5
        return self.heard > 0

    def _hear(self):
        while self.socket.poll(0):
            self.socket.recv_multipart()
            self.heard += 1
        return True

    def send(self, parts):
        try:
            self.socket.send_multipart(parts, flags=zmq.NOBLOCK)
        except zmq.Again:
            pass
        self._hear()

    def deliver(self, parts, why=None):
        """Send, waiting while the run's process reads slower than this peer sends (every message arrives);
        ``why``: what to say if it stops reading (a function, called then)."""
        wait_until(lambda: self._hear() and self.socket.poll(0, zmq.POLLOUT), why or "the run's process to read")
        self.socket.send_multipart(parts)
        self._hear()

    def authenticated(self, kind, body=None, buffers=(), **head):
        """A message of a peer that knows the token, its body as given (bytes: sent as they are)."""
        parts = [json.dumps({"v": 1, "kind": kind, **head}).encode()]  # no limit checked here
        parts.append(body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else b"")
        self.send(parts + list(buffers))


def with_token_junk(peer, rng, run_id):
    """Messages from a peer that knows the token, each malformed in its own way."""
    choice = rng.randrange(9)
    if choice == 0:
        peer.authenticated("page", page_junk(rng), run=run_id)
    elif choice == 1:
        peer.authenticated("page", junk_json(rng), run=rng.choice([run_id, odd(rng)]))
    elif choice == 2:
        peer.authenticated("announce", [odd(rng), {"id": run_id, "name": "stolen", "host": "h", "pid": 1}])
    elif choice == 3:
        peer.authenticated("to_page", {"type": "frame", "seq": 0}, [rng.randbytes(100)], run=run_id)  # not its run
    elif choice == 4:
        peer.authenticated(rng.choice(["runs", "viewers", "ended", "leaving"]), junk_json(rng))
    elif choice == 5:
        peer.authenticated("scene", {"kind": "x", "nest": json.loads("[" * 500 + "]" * 500)}, run=odd(rng))
    elif choice == 6:
        peer.authenticated("watch", run=rng.choice([odd(rng), "no-such-run", run_id]))
    elif choice == 7:
        peer.authenticated("gone", run=run_id)  # not its run either
    else:
        peer.authenticated("page", {"type": "ack", "seq": rng.choice([-5, 2**62, 0]), "client": "fuzz"}, run=run_id)


def where(script, page, view):
    """Where a run and its view are, for a failure's message."""
    ended = script.process.poll()
    return (f"now steps {script.steps}, frames {len(page.frames())}, run {view.run}, the script's process "
            f"{'running' if ended is None else f'ended ({ended})'}; its output: {script.output()[-2000:]}")


def test_a_run_keeps_running_and_publishing_whatever_peers_send(address, token, scripts, pages):
    script = scripts("--publish", address)
    view = gymview.attach(address, timeout=60, display=False)
    page = pages(view)
    wait_until(lambda: len(page.frames()) > 3, "frames before the fuzzing")
    run_id = view.run.id  # a view that stops hearing its hub for a moment (a loaded machine) shows no run meanwhile
    rng = random.Random(37)
    host, port = address.split(":")
    for _ in range(20):  # raw TCP: not even zmq's greeting
        with socket.create_connection((host, int(port))) as raw:
            raw.sendall(rng.randbytes(rng.randrange(1, 3000)))
    context = zmq.Context()
    try:
        strangers = [HostilePeer(context, address), HostilePeer(context, address, guess="not-" + token)]
        for _ in range(1500):
            rng.choice(strangers).send(unauthenticated(rng))
        oversized = HostilePeer(context, address)
        oversized.send([b"x" * (wire.MAX_PART_BYTES + 1), b""])  # over MAXMSGSIZE: disconnected
        insider = HostilePeer(context, address, token=token)
        for _ in range(1500):
            with_token_junk(insider, rng, run_id)
        steps, frames = script.steps, len(page.frames())
        wait_until(lambda: script.steps > steps + 1000 and len(page.frames()) > frames + 3,
                   lambda: f"the run to step and its frames to reach the notebook after the fuzzing (from steps "
                   f"{steps}, frames {frames}: {where(script, page, view)})")
    finally:
        context.destroy(linger=0)
    wait_until(lambda: view.run is not None and view.run.id == run_id, "the view to show the run again")
    stop = page.click("stop")  # the buttons still act
    wait_until(lambda: page.heard(stop), f"the run to hear Stop: {script.output()[-3000:]} {page.states()[-3:]}")
    assert script.wait(90) == 0
    output = script.output()
    assert "STOPPED" in output and "THREADS []" in output and "Traceback" not in output, output
    view.close()


class HostileHub:
    """A ROUTER listening at ``address`` in place of a run's process, with the CurveZMQ keys of ``token``."""

    def __init__(self, context, address, token):
        self.socket = context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.curve_server, self.socket.curve_secretkey = True, curve_keys(token).hub_secret
        self.socket.bind(f"tcp://{address}")
        self.peer = None
        self.run = {"id": "h/1/1", "name": "CartPole-v1", "host": "h", "pid": 1}
        self._outgoing = queue.Queue()  # a zmq socket is used by one thread: its own
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._answer, name="test-hostile-hub", daemon=True)
        self._thread.start()

    def _answer(self):
        """Answers as a hub would: the runs, watching what is asked for."""
        while not self._stop.is_set():
            while not self._outgoing.empty():
                parts = self._outgoing.get()
                if self.peer is not None:
                    self.socket.send_multipart([self.peer, *parts])
            if not self.socket.poll(5):
                continue
            identity, *parts = self.socket.recv_multipart()
            message = wire.decode(parts)
            if message is None:
                continue
            self.peer = identity
            if message.kind == "watch":
                watching = message.text("run")
                self.socket.send_multipart([identity, *wire.encode("runs", {"watching": watching}, [self.run])])

    def send(self, parts):
        self._outgoing.put(parts)

    def close(self):
        self._stop.set()
        self._thread.join(5)


def raw_head(kind, **fields):
    """A head as a hostile peer writes it: any field, any length."""
    return json.dumps({"v": 1, "kind": kind, **fields}).encode()


def frame(seq, **fields):
    return {"type": "frame", "v": 2, "seq": seq, "format": "jpeg", "width": 4, "height": 2, **fields}


def test_a_notebook_shows_only_well_formed_frames_whatever_the_run_sends(address, token, pages):
    context = zmq.Context()
    hub = HostileHub(context, address, token)
    try:
        view = gymview.attach(address, timeout=60, display=False)
        page = pages(view)
        rng = random.Random(38)
        run = hub.run["id"]
        for _ in range(2000):
            choice = rng.randrange(8)
            if choice == 0:
                hub.send([rng.randbytes(rng.randrange(0, 500)) for _ in range(rng.randrange(1, 6))])
            elif choice == 1:
                hub.send([raw_head("to_page", run=run), junk_json(rng), rng.randbytes(10)])
            elif choice == 2:
                bad = {**frame(rng.randrange(100)), odd_key(rng): odd(rng)}
                hub.send([raw_head("to_page", run=run), json.dumps(bad).encode(), b"img"])
            elif choice == 3:
                hub.send([raw_head("scene", run=run), junk_json(rng)])
            elif choice == 4:
                hub.send([raw_head("runs", watching=run), junk_json(rng)])  # still watching: the frames go on
            elif choice == 5:
                hub.send([raw_head("ended", run=odd(rng) if rng.random() < 0.9 else "other"), b""])
            elif choice == 6:
                hub.send([raw_head("to_page", run=run), json.dumps(frame(1)).encode(), b"a", b"b"])
            else:
                hub.send([b"x" * 10] * rng.randrange(4, 300))

        def last_frame_shown():  # sent again and again, as a run sends frames: the notebook's budget may skip some
            hub.send(wire.encode("to_page", {"run": run}, frame(10**6), [b"last"]))
            time.sleep(0.05)
            return any(buffers == [b"last"] for content, buffers in page.messages if content.get("type") == "frame")

        wait_until(last_frame_shown, "a well-formed frame to reach the page after the fuzzing")
        assert view._runs_link._worker.running, "the notebook's link is alive"
        for content, buffers in page.messages:  # the page never got a malformed message
            assert content.get("type") in ("frame", "state") and for_page(content, buffers), content
        assert view.stats["skipped"] > 0, (view.stats["skipped"], view.stats["relayed"], len(page.messages))
        view.close()  # on a loaded machine the link's thread may finish the burst it reads after close() returned
        wait_until(lambda: not [t for t in threading.enumerate() if t.name == "gymview-attach"], "the link's thread to end")
    finally:
        hub.close()
        context.destroy(linger=0)


def test_a_hub_that_does_not_know_the_token_is_not_believed(address, token):
    context = zmq.Context()
    hub = HostileHub(context, address, "another-token")
    try:
        with pytest.raises(PermissionError, match="did not prove it knows this token"):
            gymview.attach(address, timeout=60, display=False)
    finally:
        hub.close()
        context.destroy(linger=0)
