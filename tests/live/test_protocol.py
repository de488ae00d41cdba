"""js/protocol.js (and the front-end that uses it) mirrors gymview/live/protocol.py."""

import re

from gymview.live import frontend, protocol


def test_js_mirrors_the_protocol(repo_root):
    source = frontend.ESM
    messages = (repo_root / "js" / "protocol.js").read_text()
    version = re.search(r"export const PROTOCOL_VERSION = (\d+);", messages)
    assert version and int(version.group(1)) == protocol.PROTOCOL_VERSION
    kinds = (protocol.FRAME, protocol.READY, protocol.ACK, protocol.VISIBILITY, protocol.CONTROL, protocol.KEY,
             protocol.REPLAY, protocol.STATE)
    for kind in kinds:  # each message is built or read in protocol.js
        assert f'type: "{kind}"' in messages or f'msg.type === "{kind}"' in messages, kind
    header = protocol.frame_header(3, "png", 10, 20, {"step": 1}, dropped=2)
    for key in header:  # read as a field of the message or header, not merely a substring
        assert re.search(rf"\b(?:msg|header)\.{key}\b", source), f"front-end never reads header field {key!r}"
