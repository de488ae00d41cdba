"""LatestFrame: the last frame a view sent, and a picture of it for whoever asks for one.

A page that has just opened has no decoder state and no scene yet, and the still image a view leaves in the
notebook must be a JPEG or PNG: an H.264 frame is decoded from the packets since its key frame, a frame the
page drew from a state is drawn here. Either may take tens of milliseconds, so :meth:`LatestFrame.picture`
returns the function that makes it, which the owner calls outside its lock, then hands the picture back to
:meth:`LatestFrame.keep` (kept unless a newer frame went out meanwhile). Guarded by its owner's lock.

>>> from gymview.live.encoding.video_stream import VideoStream
>>> latest = LatestFrame(VideoStream("jpeg", 10.0))
>>> latest.picture(512, "jpeg", 80) is None
True
>>> latest.went_out({"seq": 0, "format": "jpeg"}, b"...", None)
>>> latest.picture(512, "jpeg", 80)
({'seq': 0, 'format': 'jpeg'}, b'...')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymview.image.codec import encode_frame
from gymview.live.encoding.deferred import DeferredFrame
from gymview.live.encoding.drawn_here import draw_frame_here
from gymview.live.encoding.video_stream import VideoStream

__all__ = ["Image", "LatestFrame"]

Image = tuple[dict[str, Any], bytes]  # a frame's header and its JPEG, PNG or H.264 bytes


class LatestFrame:
    """The last frame sent (``sent``: its header and bytes, None before the first) and its picture once made."""

    def __init__(self, video: VideoStream) -> None:
        self._video = video
        self.sent: Image | None = None
        # the last frame if the page drew it, and that frame as a picture once asked for
        self._scene: tuple[DeferredFrame, Image | None] | None = None

    def went_out(self, header: dict[str, Any], data: bytes, drawn_by_page: DeferredFrame | None) -> None:
        """A frame was sent; ``drawn_by_page``: the state the page draws it from (None for pictures)."""
        self.sent = (header, data)
        self._scene = (drawn_by_page, None) if drawn_by_page is not None else None

    def picture(self, max_size: int, image_format: str, quality: int) -> Image | Callable[[], Image | None] | None:
        """The last frame as a picture (``image_format``), or the function that makes it (call it without the
        owner's lock, then :meth:`keep`); None before the first frame."""
        sent = self.sent
        if sent is None:
            return None
        if self._scene is not None:  # drawn here once, for a page that has just rendered or the still image
            frame, image = self._scene
            if image is not None:
                return image
            header = {**sent[0], "format": image_format, "scene": None}
            return lambda: (header, encode_frame(draw_frame_here(frame, max_size), image_format, quality))
        return self._video.image_of(sent, image_format, quality)

    def keep(self, sent: Image | None, image: Image) -> None:
        """Keep ``image``, made of the frame ``sent``, unless a newer frame went out meanwhile."""
        if sent is None or self.sent is not sent:
            return
        if self._scene is not None:
            self._scene = (self._scene[0], image)
        else:
            self._video.keep_still(sent, image)
