"""Published runs on a shared network, tried as an attacker would, with real sockets: a proxy between a notebook
and a run reads nothing and its recording replayed changes nothing; peers without the token flooding the port
neither grow the run's memory nor keep a notebook with the token out."""

import os
import secrets
import select
import socket
import threading
import time

import psutil
import pytest
import zmq
from waiting import wait_until

import gymview
from gymview.remote import runs_at, wire
from gymview.remote.tokens import curve_keys

pytestmark = pytest.mark.slow


class Proxy:
    """A TCP proxy at ``self.address`` to ``target``, keeping every byte each way."""

    def __init__(self, target):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.to_run, self.to_notebook = bytearray(), bytearray()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._relay, name="test-proxy", daemon=True)
        self._thread.start()

    def _relay(self):
        host, port = self.target.split(":")
        pairs = {}
        while not self._stop.is_set():
            ready, _, _ = select.select([self.listener, *pairs], [], [], 0.05)
            for sock in ready:
                if sock is self.listener:
                    client, _ = self.listener.accept()
                    try:
                        server = socket.create_connection((host, int(port)))
                    except OSError:  # nobody listens there (yet): the notebook tries again
                        client.close()
                        continue
                    pairs[client], pairs[server] = (server, self.to_run), (client, self.to_notebook)
                    continue
                other, kept = pairs[sock]
                data = sock.recv(65536)
                if not data:
                    for end in (sock, other):
                        pairs.pop(end, None)
                        end.close()
                    continue
                kept += data
                other.sendall(data)
        for sock in pairs:
            sock.close()

    def close(self):
        self._stop.set()
        self._thread.join(5)
        self.listener.close()


def test_a_proxy_reads_neither_frames_nor_the_run_s_name_and_its_recording_sent_again_changes_nothing(
        address, token, scripts, pages):
    name = f"secret-run-{secrets.token_hex(4)}"
    script = scripts("--publish", address, "--run", name)
    wait_until(lambda: runs_at(address, token=token, timeout=60), "the run to publish")
    proxy = Proxy(address)
    try:
        view = gymview.attach(proxy.address, token=token, timeout=60, display=False)
        page = pages(view)
        wait_until(lambda: len(page.frames()) > 5, "frames through the proxy")
        for action in ("pause", "play"):  # a session that paused the run, recorded
            click = page.click(action)
            wait_until(lambda click=click: page.heard(click), f"the run to hear {action}")
        view.close()
    finally:
        proxy.close()
    assert len(proxy.to_notebook) > 10_000, "frames went through the proxy"
    recorded = bytes(proxy.to_run + proxy.to_notebook)
    for clear in (name.encode(), b"CartPole", b'"frame"', b'"jpeg"', b'"control"', b'"pause"', token.encode()):
        assert clear not in recorded, f"{clear!r} can be read on the wire"
    host, port = address.split(":")
    with socket.create_connection((host, int(port))) as replay:  # what the notebook sent, from a new connection
        replay.sendall(proxy.to_run)
        replay.settimeout(0.2)
        answered, ends = b"", time.monotonic() + 3
        while time.monotonic() < ends:
            try:
                data = replay.recv(65536)
            except TimeoutError:
                continue
            if not data:
                break
            answered += data
    # The greeting and the handshake's WELCOME: the recorded INITIATE holds a cookie of another connection.
    assert len(answered) < 400, f"{len(answered)} bytes came back to a replay"
    steps = script.steps
    wait_until(lambda: script.steps > steps + 1000, "the run to step on: the replayed pause changed nothing")
    assert not script.held


def flood(address, token, seconds, stop):
    """Peers without the token, as hard as they can for ``seconds``: raw TCP bytes, zmq peers without CurveZMQ
    sending many-part messages (48 parts of 1 MiB), and CurveZMQ peers guessing the token."""
    host, port = address.split(":")
    junk = os.urandom(1 << 20)

    def raw():
        while not stop.is_set():
            try:
                with socket.create_connection((host, int(port)), timeout=1) as sock:
                    for _ in range(8):
                        sock.sendall(junk)
            except OSError:  # the run's process closed it, as it should
                pass

    def zmq_peers(guess):
        context = zmq.Context()
        try:
            peers = []
            for _ in range(4):
                peer = context.socket(zmq.DEALER)
                peer.setsockopt(zmq.LINGER, 0)
                peer.setsockopt(zmq.SNDHWM, 4)
                if guess:
                    keys = curve_keys(guess)
                    peer.curve_serverkey, peer.curve_publickey, peer.curve_secretkey = (
                        keys.hub_public, keys.peer_public, keys.peer_secret)
                peer.connect(f"tcp://{address}")
                peers.append(peer)
            while not stop.is_set():
                for peer in peers:
                    try:
                        peer.send_multipart([junk] * 48, flags=zmq.NOBLOCK)
                    except zmq.Again:
                        time.sleep(0.01)
        finally:
            context.destroy(linger=0)

    threads = [threading.Thread(target=raw, daemon=True) for _ in range(4)]
    threads += [threading.Thread(target=zmq_peers, args=(guess,), daemon=True) for guess in (None, "not-" + token)]
    for thread in threads:
        thread.start()
    return threads


def test_peers_without_the_token_flooding_the_port_neither_grow_the_run_nor_keep_a_notebook_with_it_out(
        address, token, scripts, pages):
    script = scripts("--publish", address)
    view = gymview.attach(address, token=token, timeout=60, display=False)
    page = pages(view)
    wait_until(lambda: len(page.frames()) > 5, "frames before the flood")
    run = psutil.Process(script.process.pid)
    memory = run.memory_info().rss
    stop = threading.Event()
    threads = flood(address, token, 10, stop)
    try:
        time.sleep(3)  # the flood at full force
        newcomer = gymview.attach(address, token=token, timeout=60, display=False)  # during the flood
        assert newcomer.run.pid == script.process.pid
        newcomer.close()
        steps, frames = script.steps, len(page.frames())
        wait_until(lambda: script.steps > steps + 1000 and len(page.frames()) > frames + 3,
                   "the run to step and its frames to reach the notebook during the flood")
        grown = (run.memory_info().rss - memory) / 2**20
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert grown < 64, f"the run's memory grew {grown:.0f} MiB under the flood"
    stop_click = page.click("stop")
    wait_until(lambda: page.heard(stop_click), "the run to hear Stop after the flood")
    assert script.wait(90) == 0 and "Traceback" not in script.output(), script.output()
    view.close()


def test_a_run_s_process_answers_nothing_but_the_handshake_to_a_peer_that_speaks_plain_zmq(address, token, scripts):
    scripts("--publish", address)
    wait_until(lambda: runs_at(address, token=token, timeout=60), "the run to publish")
    context = zmq.Context()
    try:
        peer = context.socket(zmq.DEALER)
        peer.setsockopt(zmq.LINGER, 0)
        peer.connect(f"tcp://{address}")
        # a watch with what a hand-made handshake would answer (a fresh nonce, no proof yet)
        peer.send_multipart(wire.encode("watch", {"run": None, "nonce": "n1", "hub": None, "auth": None}),
                            flags=zmq.NOBLOCK)
        assert not peer.poll(3000), "a peer without the token heard from the run"
    finally:
        context.destroy(linger=0)
