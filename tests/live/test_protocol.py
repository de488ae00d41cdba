"""The protocol block atop js/widget.js mirrors gymview/live/protocol.py."""

import re

from gymview.live import protocol


def test_js_mirrors_the_protocol(repo_root):
    source = (repo_root / "js" / "widget.js").read_text()
    version = re.search(r"export const PROTOCOL_VERSION = (\d+);", source)
    assert version and int(version.group(1)) == protocol.PROTOCOL_VERSION
    for kind in (protocol.FRAME, protocol.READY, protocol.ACK, protocol.VISIBILITY):
        assert f'type: "{kind}"' in source or f'msg.type !== "{kind}"' in source, kind
    header = protocol.frame_header(3, "png", 10, 20, {"step": 1}, dropped=2)
    for key in header:  # read as a field of the message or header, not merely a substring
        assert re.search(rf"\b(?:msg|header)\.{key}\b", source), f"front-end never reads header field {key!r}"
