"""The protocol block atop js/widget.js mirrors gymview/_protocol.py."""

import re

from gymview import _protocol


def test_js_mirrors_the_protocol(repo_root):
    source = (repo_root / "js" / "widget.js").read_text()
    version = re.search(r"export const PROTOCOL_VERSION = (\d+);", source)
    assert version and int(version.group(1)) == _protocol.PROTOCOL_VERSION
    for kind in (_protocol.FRAME, _protocol.READY, _protocol.ACK, _protocol.VISIBILITY):
        assert f'type: "{kind}"' in source or f'msg.type !== "{kind}"' in source, kind
    header = _protocol.frame_header(3, "png", 10, 20, {"step": 1}, dropped=2)
    for key in header:
        assert key in source, f"front-end never mentions header field {key!r}"
