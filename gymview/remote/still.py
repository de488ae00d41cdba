"""LastFrame: the last frame a notebook got from a run elsewhere, as a picture: the still image an attached
view leaves in the notebook (saved with it) when the run ends or the view is closed.

JPEG and PNG frames are pictures already. H.264 frames are kept from their key frame on and decoded when
the picture is asked for (at most ``MAX_VIDEO_BYTES`` of them: past that they are dropped and a key frame
is asked for). A scene's states are drawn by the page, not here: the picture is then the last one the run
sent as a picture (it sends its last frame as one when its view ends, and to a page that has just opened).

>>> last = LastFrame()
>>> last.keep({"type": "frame", "seq": 3, "format": "jpeg", "width": 4, "height": 2}, [b"jpeg"])
False
>>> last.picture()
({'type': 'frame', 'seq': 3, 'format': 'jpeg', 'width': 4, 'height': 2}, b'jpeg')
>>> last.keep({"type": "frame", "seq": 4, "format": "scene", "width": 4, "height": 2}, [b"state"]), last.drawn_by_page
(False, True)
"""

from __future__ import annotations

import threading
from typing import Any

from gymview.live import protocol
from gymview.live.encoding.h264 import H264
from gymview.live.encoding.scene_frames import SCENE
from gymview.live.encoding.video_stream import VideoStream

__all__ = ["MAX_VIDEO_BYTES", "LastFrame"]

MAX_VIDEO_BYTES = 32 * 2**20  # H.264 packets kept since the last key frame (the run sends one when asked)
STILL_FORMAT, STILL_QUALITY = "jpeg", 85  # what a decoded H.264 frame is encoded as, for the still image


class LastFrame:
    """See the module docstring. ``drawn_by_page``: the last frame is a scene's state (no picture of it here);
    ``pictured`` is set when a picture (JPEG or PNG) arrives."""

    def __init__(self, max_video_bytes: int = MAX_VIDEO_BYTES) -> None:
        self.drawn_by_page = False
        self._max_video_bytes = max_video_bytes
        self.pictured = threading.Event()
        self._lock = threading.Lock()
        self._picture: tuple[dict[str, Any], bytes] | None = None  # the last JPEG or PNG
        self._video = VideoStream("auto")
        self._video_latest: tuple[dict[str, Any], bytes] | None = None  # the last H.264 frame, after any picture
        self._video_bytes = 0

    def keep(self, content: dict[str, Any], buffers: list[bytes]) -> bool:
        """Keep a frame the page takes (``relay.for_page``: checked); True when the run should send a key frame
        (the H.264 packets since the last one are over ``max_video_bytes``: dropped)."""
        if content.get("type") != protocol.FRAME or "replay" in content:
            return False
        kind, data = content["format"], bytes(buffers[0])
        with self._lock:
            self.drawn_by_page = kind == SCENE
            if kind == SCENE:
                return False
            if kind != H264:
                self._picture, self._video_latest = (dict(content), data), None
                self.pictured.set()
                return False
            key = bool(content.get("key"))
            self._video_bytes = len(data) + (0 if key else self._video_bytes)
            if self._video_bytes > self._max_video_bytes:
                self._video, self._video_latest, self._video_bytes = VideoStream("auto"), None, 0
                return True
            header = dict(content)
            self._video.sent(header, data, key)
            self._video_latest = (header, data)
            return False

    def picture(self) -> tuple[dict[str, Any], bytes] | None:
        """The last frame as a picture (header, JPEG or PNG bytes), or None when none came."""
        with self._lock:
            latest, picture = self._video_latest, self._picture
            if latest is None:
                return picture
            image = self._video.image_of(latest, STILL_FORMAT, STILL_QUALITY)
        if not callable(image):
            return image
        decoded = image()  # outside the lock: the link's thread never waits for it
        if decoded is None:
            return picture
        with self._lock:
            self._video.keep_still(latest, decoded)
        return decoded
