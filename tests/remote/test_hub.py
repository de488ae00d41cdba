"""The hub's routing and the uplink of a run process that does not listen, without sockets: messages in,
messages out, time as a number."""

from dataclasses import dataclass, field

from gymview.remote import wire
from gymview.remote.hub import SILENT_SECONDS, Hub
from gymview.remote.uplink import Uplink
from gymview.remote.wire import RunInfo


@dataclass
class Run:
    """A run of the hub's own process."""

    info: RunInfo
    scene: list | None = None
    viewers: int = 0
    delivered: list = field(default_factory=list)

    def set_viewers(self, count):
        self.viewers = count

    def deliver(self, content):
        self.delivered.append(content)


class Wire:
    """The hub, its own runs, and what it sent to each peer."""

    def __init__(self, *runs):
        self.runs = {run.info.id: run for run in runs}
        self.sent = []
        self.hub = Hub(lambda identity, parts: self.sent.append((identity, parts)), lambda: self.runs)

    def to(self, identity):
        """The messages sent to ``identity`` since the last call, read."""
        mine = [wire.decode(parts) for who, parts in self.sent if who == identity]
        self.sent = [(who, parts) for who, parts in self.sent if who != identity]
        return mine


class Peer:
    """A notebook (or a run process) past the handshake (the socket's: tests/remote/test_secure_wire.py), talking
    to the hub as the real ones do."""

    def __init__(self, line, identity):
        self.line, self.identity = line, identity

    def send(self, kind, body=None, buffers=(), now=0.0, **head):
        """Send a message; the hub's answers to this peer."""
        self.line.hub.receive(self.identity, wire.encode(kind, head, body, list(buffers)), now)
        return self.line.to(self.identity)


def run_info(n):
    return RunInfo(f"vm/{n}/1", f"run-{n}", "vm", n)


def test_a_notebook_sees_the_runs_and_watches_one():
    local = Run(run_info(1), scene=[wire.encode("scene", {}, {"kind": "cartpole", "id": 1})[1]])
    line = Wire(local)
    notebook = Peer(line, b"nb")
    (runs,) = notebook.send("watch", run=None)
    assert runs.kind == "runs" and runs.runs() == [local.info] and runs.text("watching") is None
    scene, runs = notebook.send("watch", run=local.info.id)
    assert scene.kind == "scene" and scene.body["kind"] == "cartpole"  # what to draw with, before any frame
    assert runs.text("watching") == local.info.id and local.viewers == 1
    line.hub.from_local("to_page", local.info.id, [b'{"type":"frame"}', b"jpeg"])
    (frame,) = [wire.decode(parts) for _, parts in line.sent]
    assert frame.kind == "to_page" and frame.buffers == [b"jpeg"]
    notebook.send("page", {"type": "ready", "client": "k3x9", "v": 2}, run=local.info.id)
    assert local.delivered == [{"type": "ready", "client": "k3x9", "v": 2}]


def test_messages_only_the_hub_sends_and_malformed_ones_are_dropped_and_counted():
    local = Run(run_info(1))
    line = Wire(local)
    for kind in ("runs", "viewers", "ended", "leaving"):
        line.hub.receive(b"x", wire.encode(kind, {}, [] if kind == "runs" else {} if kind == "viewers" else None), 0.0)
    line.hub.receive(b"x", [b"not json", b""], 0.0)
    assert line.hub.dropped == 5 and line.sent == [] and local.viewers == 0


def test_frames_go_only_to_the_notebooks_watching_that_run():
    first, second = Run(run_info(1)), Run(run_info(2))
    line = Wire(first, second)
    Peer(line, b"a").send("watch", run=first.info.id)
    Peer(line, b"b").send("watch", run=second.info.id)
    line.sent.clear()
    line.hub.from_local("to_page", first.info.id, [b'{"type":"frame"}', b"one"])
    assert [who for who, _ in line.sent] == [b"a"]
    assert (first.viewers, second.viewers) == (1, 1)


def test_a_notebook_that_goes_silent_is_forgotten_and_its_pages_hidden():
    local = Run(run_info(1))
    line = Wire(local)
    notebook = Peer(line, b"nb")
    notebook.send("watch", run=local.info.id)
    notebook.send("page", {"type": "ready", "client": "k3x9"}, run=local.info.id)
    line.hub.expire(now=SILENT_SECONDS / 2)
    assert local.viewers == 1
    line.hub.expire(now=SILENT_SECONDS + 0.1)
    assert local.viewers == 0  # the run makes no more frames
    assert local.delivered[-1] == {"type": "visibility", "visible": False, "client": "k3x9"}


def test_a_notebook_the_hub_forgot_is_told_it_joins_its_run_again_so_that_it_tells_the_run_of_its_pages():
    local = Run(run_info(1))
    line = Wire(local)
    notebook = Peer(line, b"nb")
    assert [m.head["joined"] for m in notebook.send("watch", run=local.info.id)] == [True]
    assert [m.head["joined"] for m in notebook.send("watch", run=local.info.id, now=0.5)] == [False]
    line.hub.expire(now=0.5 + SILENT_SECONDS + 0.1)  # its link was kept from the interpreter: silent
    assert [m.head["joined"] for m in notebook.send("watch", run=local.info.id, now=5.0)] == [True]


def test_a_notebook_connected_again_keeps_its_pages_shown_when_its_old_connection_is_forgotten():
    local = Run(run_info(1))
    line = Wire(local)
    old, new = Peer(line, b"old"), Peer(line, b"new")  # the same notebook, before and after a tunnel's blip
    for peer in (old, new):
        peer.send("watch", run=local.info.id)
        peer.send("page", {"type": "ready", "client": "k3x9", "v": 2}, run=local.info.id)
    new.send("watch", run=local.info.id, now=SILENT_SECONDS)
    line.hub.expire(now=SILENT_SECONDS + 0.1)  # the old connection is forgotten
    assert [m.get("visible") for m in local.delivered if m["type"] == "visibility"] == []
    assert local.viewers == 1


def test_a_notebook_that_says_bye_is_forgotten_at_once():
    local = Run(run_info(1))
    line = Wire(local)
    notebook = Peer(line, b"nb")
    notebook.send("watch", run=local.info.id)
    notebook.send("bye")
    assert local.viewers == 0


def test_a_page_message_for_another_run_than_the_one_watched_goes_nowhere():
    first, second = Run(run_info(1)), Run(run_info(2))
    line = Wire(first, second)
    notebook = Peer(line, b"nb")
    notebook.send("watch", run=first.info.id)
    notebook.send("page", {"type": "control", "action": "stop", "id": "k:1"}, run=second.info.id)
    assert second.delivered == []


def test_a_run_process_that_connects_is_listed_and_hears_its_pages():
    line = Wire(Run(run_info(1)))
    remote = run_info(2)
    member = Peer(line, b"member")
    (viewers,) = member.send("announce", [remote.as_dict()])
    assert viewers.kind == "viewers" and viewers.counts() == {remote.id: 0}
    notebook = Peer(line, b"nb")
    (runs,) = notebook.send("watch", run=remote.id)
    assert {run.id for run in runs.runs()} == {run_info(1).id, remote.id} and runs.text("watching") == remote.id
    assert line.to(b"member")[0].counts() == {remote.id: 1}  # told at once: it starts making frames
    notebook.send("page", {"type": "control", "action": "pause", "id": "k:1"}, run=remote.id)
    (page,) = line.to(b"member")
    assert page.kind == "page" and page.body["action"] == "pause"
    member.send("to_page", {"type": "frame", "seq": 0}, [b"jpeg"], run=remote.id)
    (frame,) = line.to(b"nb")
    assert frame.buffers == [b"jpeg"] and frame.head == {"v": 1, "kind": "to_page", "run": remote.id}
    member.send("gone", run=remote.id)
    assert line.to(b"nb")[0].kind == "ended"


def test_a_run_process_cannot_take_over_another_ones_run():
    local = Run(run_info(1))
    line = Wire(local)
    Peer(line, b"member").send("announce", [local.info.as_dict(), run_info(3).as_dict()])
    notebook = Peer(line, b"nb")
    notebook.send("watch", run=local.info.id)
    Peer(line, b"member").send("to_page", {"type": "frame"}, [b"fake"], run=local.info.id)
    assert [m.buffers for m in line.to(b"nb") if m.kind == "to_page"] == []


def test_a_silent_run_process_ends_its_runs_for_the_notebooks():
    line = Wire()
    remote = run_info(2)
    Peer(line, b"member").send("announce", [remote.as_dict()])
    notebook = Peer(line, b"nb")
    notebook.send("watch", run=remote.id, now=SILENT_SECONDS)
    line.hub.expire(now=SILENT_SECONDS + 0.5)
    assert [m.kind for m in line.to(b"nb")] == ["ended"]


def test_a_hub_that_leaves_ends_its_runs_and_tells_the_others():
    local = Run(run_info(1))
    line = Wire(local)
    Peer(line, b"member").send("announce", [run_info(2).as_dict()])
    Peer(line, b"nb").send("watch", run=local.info.id)
    line.hub.leave()
    assert [m.kind for m in line.to(b"nb")] == ["ended", "leaving"]
    assert [m.kind for m in line.to(b"member")] == ["leaving"]


def test_an_uplink_announces_its_runs_and_follows_what_the_hub_says():
    local = Run(run_info(5), scene=[wire.encode("scene", {}, {"kind": "cartpole", "id": 1})[1]])
    line = Wire()
    sent = []
    uplink = Uplink("127.0.0.1:5555", sent.append, lambda: {local.info.id: local})

    def exchange(now=0.0):
        """Until both are quiet: the hub's messages to the uplink, then the uplink's to the hub."""
        while True:
            for parts in [parts for who, parts in line.sent if who == b"up"]:
                uplink.receive(parts, now)
            line.sent = [item for item in line.sent if item[0] != b"up"]
            if not sent:
                return
            line.hub.receive(b"up", sent.pop(0), now)

    uplink.from_local("to_page", local.info.id, [b'{"type":"frame"}', b"jpeg"])
    assert sent == []  # nothing goes out before a handshake succeeded
    uplink.handshake(True, 0.0)  # a hub: it hears the runs and their scenes
    exchange()
    notebook = Peer(line, b"nb")
    scene, runs = notebook.send("watch", run=local.info.id)
    assert scene.kind == "scene" and runs.text("watching") == local.info.id
    exchange()
    assert local.viewers == 1
    notebook.send("page", {"type": "control", "action": "step", "id": "k:2"}, run=local.info.id)
    exchange()
    assert local.delivered[-1]["action"] == "step"
    assert not uplink.hub_lost(1.0) and uplink.hub_lost(1.0 + SILENT_SECONDS + 0.1)
    assert local.viewers == 0  # no hub, no notebook: no frames


def test_an_uplink_whose_handshake_failed_says_so_once_and_sends_nothing(recwarn):
    sent = []
    uplink = Uplink("127.0.0.1:5555", sent.append, dict)
    for attempt in range(40):  # one every 0.1 s, for 4 s
        uplink.handshake(False, attempt / 10)
    assert sent == [] and len(recwarn) == 1 and "did not prove it knows this token" in str(recwarn[0].message)
