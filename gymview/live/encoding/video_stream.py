"""VideoStream: a view's H.264 side, for its FrameStreamer (which holds the lock around every call; the decoding
of a still image is handed back to be done outside it):
which format each frame goes as, when one must be a key frame, and the packets
since the last key frame (from which the latest frame is shown as an image).

>>> stream = VideoStream("auto")
>>> stream.format_for("jpeg", now=0.0)  # no page has said what it decodes
'jpeg'
>>> stream.page_ready("k3x9", ("h264",), now=1.0)
>>> stream.format_for("jpeg", now=2.0), stream.next_is_key("h264")
('h264', True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gymview.image.codec import encode_frame
from gymview.live.encoding import h264
from gymview.live.encoding.h264 import H264, H264Encoder, codec_string, decode_h264

__all__ = ["CODECS", "VideoStream", "check_codec"]

CODECS = ("auto", "h264", "jpeg", "png")


def check_codec(codec: str) -> str:
    """Return the codec's name; ValueError listing the choices, or RuntimeError for ``"h264"`` where
    this Python cannot encode H.264.

    >>> check_codec("H264"), check_codec("jpg")
    ('h264', 'jpeg')
    """
    name = str(codec).lower()
    name = {"jpg": "jpeg", "h.264": "h264", "avc": "h264"}.get(name, name)
    if name not in CODECS:
        raise ValueError(f"codec must be one of {CODECS}; got {codec!r}")
    if name == H264 and (why := h264.h264_unavailable()) is not None:
        raise RuntimeError(f"codec='h264' cannot stream here: {why}; codec='auto' falls back to JPEG")
    return name


class VideoStream:
    """The stream's state between frames; ``forget_after``: seconds after which a silent page no longer
    counts for the choice of format."""

    def __init__(self, codec: str, forget_after: float = 60.0) -> None:
        self.codec = check_codec(codec)
        self.forget_after = forget_after
        self._pages: dict[str, tuple[frozenset[str], float]] = {}  # page -> (codecs it decodes, last heard)
        self._key_wanted = False
        self._submitted_as: str | None = None  # the format of the last frame handed to the encoder
        self._packets: list[bytes] = []  # from the last key frame to the latest
        self._codec_string: str | None = None  # from the last key frame's SPS
        self._still: tuple[dict[str, Any], bytes] | None = None  # the latest frame as an image, once asked
        self._here: H264Encoder | None = None  # the stream when frames are encoded in the kernel

    def page_ready(self, page: str, codecs: tuple[str, ...] | None, now: float) -> None:
        """A page rendered a view and decodes ``codecs``; it starts from the next frame, a key frame."""
        self._pages[page] = (frozenset(codecs or ()), now)
        self._key_wanted = True

    def every_page_has(self, capability: str, now: float) -> bool:
        """Whether every page heard from lately decodes or draws ``capability`` (``"webgl"``); True before any."""
        return all(capability in codecs for codecs, last in self._pages.values() if now - last < self.forget_after)

    def heard_from(self, page: str, now: float) -> None:
        """A page acked: it is still there."""
        if page in self._pages:
            self._pages[page] = (self._pages[page][0], now)

    def want_key_frame(self) -> None:
        """A page cannot decode the stream from here (it joined it, or its decoder failed)."""
        self._key_wanted = True

    def format_for(self, image_format: str, now: float) -> str:
        """What the next frame goes as: ``"h264"``, or ``image_format`` (or the codec's image format).
        With ``"auto"`` a view asked for lossless PNG images keeps them."""
        if self.codec == "auto":
            for page in [page for page, (_, last) in self._pages.items() if now - last >= self.forget_after]:
                del self._pages[page]  # closed or reloaded long ago
            heard = [codecs for codecs, _ in self._pages.values()]
            if (
                image_format != "png"
                and heard
                and all(H264 in codecs for codecs in heard)
                and h264.h264_unavailable() is None
            ):
                return H264
            return image_format
        return self.codec

    def next_is_key(self, frame_format: str) -> bool:
        """Whether the frame handed to the encoder now, as ``frame_format``, must be a key frame: one was
        asked for, or the stream starts again after images (pages may have joined meanwhile)."""
        key = self._key_wanted or self._submitted_as != frame_format
        self._key_wanted, self._submitted_as = False, frame_format
        return key

    def sent(self, header: dict[str, Any], data: bytes, key: bool) -> None:
        """A frame went out: an H.264 frame's header gets ``key`` and ``codec``, its packet is kept."""
        self._still = None
        if header["format"] != H264:
            return
        if key:
            self._packets.clear()
            self._codec_string = codec_string(data) or self._codec_string
        elif not self._packets:  # a stream that lost its key frame (a new helper process): start one
            self._key_wanted = True
        self._packets.append(data)
        header.update(key=key, codec=self._codec_string)

    def image_of(
        self, latest: tuple[dict[str, Any], bytes], image_format: str, quality: int
    ) -> tuple[dict[str, Any], bytes] | Callable[[], tuple[dict[str, Any], bytes] | None]:
        """``latest`` (the last frame sent) as an image, or, for an H.264 frame not decoded yet, the function
        that decodes it from its key frame on, to call outside the streamer's lock and give to :meth:`keep_still`
        (it returns None when the packets do not decode: they always start at a key frame; a last guard)."""
        if latest[0]["format"] != H264:
            return latest
        if self._still is not None:
            return self._still
        header = {**latest[0], "format": image_format, "key": None, "codec": None}
        packets = list(self._packets)

        def decode() -> tuple[dict[str, Any], bytes] | None:
            try:
                picture = decode_h264(packets)[-1][: header["height"], : header["width"]]
            except Exception:  # av.error.InvalidDataError, or no picture at all (IndexError)
                return None
            return header, encode_frame(np.ascontiguousarray(picture), image_format, quality)

        return decode

    def keep_still(self, latest: tuple[dict[str, Any], bytes], image: tuple[dict[str, Any], bytes]) -> None:
        """Keep ``image``, decoded from ``latest``, unless a frame went out since."""
        if self._packets and self._packets[-1] is latest[1]:
            self._still = image

    def encode_here(self, picture: np.ndarray, size: tuple[int, int], key: bool) -> tuple[bytes, bool]:
        """Encode in the kernel (the helper process could not start): the same stream."""
        if self._here is None:
            self._here = H264Encoder()
        return self._here.encode(np.ascontiguousarray(picture), size, key)
