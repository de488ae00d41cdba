"""BrowserMessages: each message a page sends a view, applied once, on whichever thread hears it."""

import warnings
from types import SimpleNamespace

import pytest

from gymview.live import protocol
from gymview.live import browser_messages
from gymview.live.browser_messages import BrowserMessages
from gymview.live.controls import RunControls


class Streamer:
    """What BrowserMessages asks of a FrameStreamer: acks, kept frames, posts."""

    def __init__(self, kept=()):
        self.acked, self.pages, self.posted, self.history = [], [], [], History(kept)
        self.ready, self.key_frames_wanted = [], 0
        self.scene_id = 0

    def page_ready(self, page, codecs):
        self.ready.append((page, codecs))

    def want_key_frame(self):
        self.key_frames_wanted += 1

    def acknowledge(self, seq, page=""):
        self.acked.append(seq)
        self.pages.append(page)

    def post(self, header, buffers=()):
        self.posted.append((header, list(buffers)))


class History(list):
    def get(self, index, scene=None):
        return self[index]


def messages_for(kept=(), loop_runs_elsewhere=lambda: False):
    controls, streamer, pages, posts = RunControls(), Streamer(kept), [], []
    link = SimpleNamespace(streamer=streamer, steps=None, loop_runs_elsewhere=loop_runs_elsewhere)
    view = SimpleNamespace(post_state=lambda: posts.append("state"), page_seen=lambda *seen: pages.append(seen),
                           send_module=lambda name: None)
    messages = BrowserMessages(controls, link, view)
    return messages, controls, streamer, pages, posts


def control(action, number, **extra):
    return {"type": protocol.CONTROL, "action": action, "id": f"page:{number}", **extra}


def test_each_button_acts_on_the_controls_and_is_named_as_heard():
    messages, controls, _, _, posts = messages_for()
    messages.receive(control("pause", 1))
    assert controls.state == "paused"
    messages.receive(control("play", 2))
    assert controls.state == "running"
    messages.receive(control("speed", 3, value=2.0))
    assert controls.speed == 2.0
    messages.receive(control("speed", 4, value="warp"))  # not a speed: kept, and the page told so
    assert controls.speed == 2.0 and posts == ["state"]
    messages.receive(control("step", 5))
    assert controls.state == "paused"
    messages.receive(control("stop", 6))
    assert controls.state == "stopped"
    messages.receive(control("rewind", 7))  # an action of a newer page: nothing happens
    assert messages.heard == [f"page:{n}" for n in range(1, 7)]


def test_a_cancelled_click_is_undone():
    messages, controls, _, _, _ = messages_for()
    messages.receive(control("pause", 1))
    messages.receive(control("cancel", 2, of="page:1"))
    assert controls.state == "running"
    messages.receive(control("stop", 3))
    messages.receive(control("cancel", 4, of="page:3"))
    assert controls.state == "running" and not controls.engaged


class Held(Exception):
    pass


def hold(seconds):
    raise Held  # the loop would wait here for the next click


def test_a_click_heard_again_is_applied_once_and_answered_again():
    messages, controls, streamer, _, posts = messages_for(kept=[({"seq": 0}, b"a"), ({"seq": 1}, b"b")])
    messages.receive(control("pause", 1))
    messages.receive(control("step", 2))
    assert controls.state == "paused" and posts == []
    messages.receive(control("step", 2))  # the page heard no answer and sent it again
    controls.before_step(None)  # one Step lets one step through ...
    with pytest.raises(Held):
        controls.before_step(None, wait=hold)  # ... and the next waits
    assert posts == ["state"] and messages.heard == ["page:1", "page:2"]
    messages.receive(control("pause", 1))
    assert posts == ["state", "state"]
    messages.receive(control("play", 4))
    messages.receive(control("cancel", 5, of="page:4"))
    messages.receive(control("cancel", 5, of="page:4"))
    assert controls.state == "running"


def test_a_click_older_than_the_ids_kept_is_applied_again():
    messages, controls, _, _, _ = messages_for()
    messages.receive(control("pause", 0))
    for number in range(1, 1000):  # keys and replays are never sent again: they take no room
        messages.receive({"type": protocol.KEY, "key": "a", "down": False, "id": f"page:k{number}"})
    messages.receive(control("pause", 0))
    assert controls.state == "paused" and messages.heard == ["page:0"]
    messages.receive(control("play", 1))
    messages.receive(control("pause", 0))  # repeated: the loop goes on
    assert controls.state == "running"
    for number in range(2, browser_messages.SEEN_IDS + 2):
        messages.receive(control("speed", number, value=1.0))
    messages.receive(control("pause", 0))  # forgotten: a page never repeats a click this late
    assert controls.state == "paused"


def test_a_cancelled_click_that_a_loop_running_elsewhere_heard_stays():
    loop_runs = [True]
    messages, controls, _, _, _ = messages_for(loop_runs_elsewhere=lambda: loop_runs[0])
    messages.receive(control("pause", 1))
    messages.receive(control("cancel", 2, of="page:1"))
    assert controls.state == "paused"
    messages.receive(control("stop", 3))
    loop_runs[0] = False  # the loop ended after the click came: the click was in time all the same
    messages.receive(control("cancel", 4, of="page:3"))
    assert controls.state == "stopped"
    messages.receive(control("play", 5))
    messages.receive(control("pause", 6))  # came with no loop running: the cancel undoes it
    messages.receive(control("cancel", 7, of="page:6"))
    assert controls.state == "running"


def test_keys_go_down_and_up():
    messages, controls, _, _, _ = messages_for()
    messages.receive({"type": protocol.KEY, "key": "ArrowLeft", "down": True, "id": "page:1"})
    messages.receive({"type": protocol.KEY, "key": "a", "down": True, "id": "page:2"})
    messages.receive({"type": protocol.KEY, "key": "a", "down": False, "id": "page:3"})
    messages.receive({"type": protocol.KEY, "key": 7, "down": True, "id": "page:4"})  # not a key name
    assert controls.keys_down == frozenset({"ArrowLeft"})


def test_a_replay_request_posts_the_kept_frame_marked_as_replay():
    kept = [({"type": "frame", "seq": n}, f"jpeg {n}".encode()) for n in range(3)]
    messages, _, streamer, _, _ = messages_for(kept)
    messages.receive({"type": protocol.REPLAY, "index": 1, "id": "page:1"})
    messages.receive({"type": protocol.REPLAY, "index": -1, "id": "page:2"})  # the newest, counted from the end
    messages.receive({"type": protocol.REPLAY, "index": 3, "id": "page:3"})  # out of range: ignored
    messages.receive({"type": protocol.REPLAY, "index": "1", "id": "page:4"})
    assert streamer.posted == [({"type": "frame", "seq": 1, "replay": 1}, [b"jpeg 1"]),
                               ({"type": "frame", "seq": 2, "replay": 2}, [b"jpeg 2"])]


def test_ready_ack_and_visibility_reach_the_view_and_the_streamer():
    messages, _, streamer, pages, _ = messages_for()
    messages.receive({"type": protocol.READY, "v": protocol.PROTOCOL_VERSION, "client": "A"})
    messages.receive({"type": protocol.VISIBILITY, "visible": False, "client": "A"})
    messages.receive({"type": protocol.ACK, "seq": 4, "client": "A"})
    messages.receive({"type": protocol.ACK, "seq": "4", "client": "A"})  # not a sequence number
    messages.receive({"type": protocol.ACK, "seq": 2})  # a page of an older front-end names none
    assert pages == [("A", True, True), ("A", False, False)]
    assert streamer.acked == [4, 2] and streamer.pages == ["A", ""]


def test_a_page_names_the_video_codecs_it_decodes_and_asks_for_key_frames():
    messages, _, streamer, _, _ = messages_for()
    messages.receive({"type": protocol.READY, "v": protocol.PROTOCOL_VERSION, "client": "A", "codecs": ["h264", 7]})
    messages.receive({"type": protocol.READY, "v": protocol.PROTOCOL_VERSION, "client": "B"})  # an older page
    messages.receive({"type": protocol.KEYFRAME, "client": "A"})
    assert streamer.ready == [("A", ("h264",)), ("B", None)]
    assert streamer.key_frames_wanted == 1


def test_a_page_of_another_protocol_version_is_told_to_reload():
    messages, _, _, pages, _ = messages_for()
    with pytest.warns(UserWarning, match="reload the browser page"):
        messages.receive({"type": protocol.READY, "v": protocol.PROTOCOL_VERSION + 1, "client": "A"})
    assert pages == [("A", True, True)]
    with pytest.warns(UserWarning) as said:  # a peer's version of any length: the warning stays a line
        messages.receive({"type": protocol.READY, "v": "9" * 5000, "client": "A"})
    assert len(str(said[0].message)) < 200


def test_garbage_is_ignored():
    messages, _, streamer, _, _ = messages_for()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        messages.receive("garbage")  # not a dict: ignored
    assert streamer.acked == []
