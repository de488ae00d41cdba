"""js/protocol.js (and the front-end that uses it) mirrors gymview/live/protocol.py."""

import re

from gymview._internal import frontend
from gymview.live import protocol


def test_js_mirrors_the_protocol(repo_root):
    source = frontend.ESM
    messages = (repo_root / "js" / "protocol.js").read_text()
    version = re.search(r"export const PROTOCOL_VERSION = (\d+);", messages)
    assert version and int(version.group(1)) == protocol.PROTOCOL_VERSION
    kinds = (protocol.FRAME, protocol.READY, protocol.ACK, protocol.VISIBILITY, protocol.CONTROL, protocol.KEY,
             protocol.REPLAY, protocol.STEPS, protocol.STATE, protocol.JOB_STOP)
    for kind in kinds:  # each message is built or read in protocol.js
        assert f'type: "{kind}"' in messages or f'msg.type === "{kind}"' in messages, kind
    header = protocol.frame_header(3, "png", 10, 20, {"step": 1}, dropped=2)
    for key in header:  # read as a field of the message or header, not merely a substring
        assert re.search(rf"\b(?:msg|header)\.{key}\b", source), f"front-end never reads header field {key!r}"


def test_messages_are_built_in_protocol_modules_only(repo_root):
    for path in sorted((repo_root / "js").glob("*.js")):
        if path.name != "protocol.js":
            code = re.sub(r"//.*|/\*.*?\*/", "", path.read_text(), flags=re.S)
            assert not re.search(r"\btype:\s*\"", code), f"{path.name} builds a message: build it in protocol.js"
    # renderers/ describe scenes (page_scene: geoms, textures and lights each have a "type"), not messages
    for path in sorted((repo_root / "gymview").rglob("*.py")):
        if path.name != "protocol.py" and "renderers" not in path.parts:
            code = re.sub(r'""".*?"""', "", path.read_text(), flags=re.S)
            assert not re.search(r"[\"']type[\"']\s*:", code), f"{path} builds a message: build it in protocol.py"


def test_a_page_message_is_read_with_each_field_checked():
    click = protocol.read({"type": "control", "action": "speed", "value": "max", "id": "page:3"})
    assert (click.type, click.action, click.value, click.id, click.is_click) == ("control", "speed", "max", "page:3", True)
    key = protocol.read({"type": "key", "key": "ArrowLeft", "down": True, "id": "page:4"})
    assert (key.key, key.down, key.is_click) == ("ArrowLeft", True, True)
    ack = protocol.read({"type": "ack", "seq": 12})
    assert (ack.seq, ack.is_click, ack.id) == (12, False, None)
    page = protocol.read({"type": "visibility", "visible": False, "client": "k3x9"})
    assert (page.client, page.visible) == ("k3x9", False)
    ready = protocol.read({"type": "ready", "v": protocol.PROTOCOL_VERSION, "client": "k3x9"})
    assert ready.version == protocol.PROTOCOL_VERSION
    assert protocol.read({"type": "replay", "index": -1, "id": "p:1"}).index == -1
    assert protocol.read({"type": "control", "action": "cancel", "of": "p:1", "id": "p:2"}).of == "p:1"


def test_malformed_page_messages_read_as_missing_fields_or_nothing():
    assert protocol.read({"type": "ack", "seq": True}).seq is None  # a bool is not a sequence number
    assert protocol.read({"type": "ack", "seq": "4"}).seq is None
    assert protocol.read({"type": "replay", "index": 1.0, "id": "p:1"}).index is None
    assert protocol.read({"type": "key", "key": 7, "id": "p:1"}).key is None
    assert protocol.read({"type": "control", "action": "pause", "id": 5}).id is None
    for junk in (None, [], "ack", {"seq": 1}, {"type": 3}):
        assert protocol.read(junk) is None


def test_a_job_status_stop_button_is_its_own_message():
    from gymview.live.job_status import JobStatus

    stops = []
    status = JobStatus(on_stop=lambda: stops.append(1), name="learn")
    assert f'type: "{protocol.JOB_STOP}"' in status._esm  # js/job_status.js, bundled
    for content in ({"type": "control", "action": "stop"}, {"type": "stop"}, "stop"):  # as a page sends it
        status.comm.handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})
    assert stops == [1]
    status.close()


def test_a_multi_agent_frame_names_the_agent_to_move_and_each_agents_return(repo_root):
    header = protocol.frame_header(5, "jpeg", 4, 2, {"step": 9, "episode": 1, "agent": "player_1",
                                                       "returns": {"player_0": 1.0, "player_1": -1.0}}, dropped=0)
    assert header["agent"] == "player_1" and header["returns"] == {"player_0": 1.0, "player_1": -1.0}
    assert header["episode_return"] is None
    single = protocol.frame_header(5, "jpeg", 4, 2, {"step": 9, "episode_return": 3.0}, dropped=0)
    assert single["agent"] is None and single["returns"] is None  # a single-agent env's frame: null, as before
    status = (repo_root / "js" / "status.js").read_text()
    assert "header.agent" in status and "header.returns" in status  # the status line shows them
