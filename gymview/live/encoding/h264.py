"""H.264 for the live view: a low-latency stream encoder (run in the helper process) and the decoder
that turns kept packets back into pictures (replay, ``save_clip``, the still image left on the page).

Each frame in gives one packet out at once (libx264 ``ultrafast``/``zerolatency``: no B-frames, no
look-ahead, one thread, so the helper never takes a second core). Key frames come on request (a new
page, a decoder error), when the size changes, and every ``KEY_INTERVAL`` frames,
so that any kept frame decodes from a key frame at most that many packets before it. Packets are
Annex B with the SPS and PPS before every key frame: a page configures its decoder from the key
frame alone. The encoder shrinks each frame (area averaging) and converts it to YUV in one pass of
FFmpeg's scaler, a fifth of the time Pillow takes to shrink it alone; a size of odd height or width
is scaled to one row or column more, which the page does not draw (the frame message gives the size
to show).

>>> import numpy as np
>>> encoder = H264Encoder()
>>> packet, key = encoder.encode(np.zeros((64, 96, 3), np.uint8), size=(96, 64))
>>> key, codec_string(packet), decode_h264([packet])[-1].shape
(True, 'avc1.42c00a', (64, 96, 3))
"""

from __future__ import annotations

import fractions
import functools
from typing import Any

import numpy as np

__all__ = ["H264", "KEY_INTERVAL", "H264Encoder", "codec_string", "decode_h264", "h264_unavailable"]

H264 = "h264"  # the format name in frame messages

# Frames between key frames: a kept frame decodes from at most this many packets.
KEY_INTERVAL = 60
# x264's constant rate factor: it looks like JPEG quality 80 at a tenth of its bytes.
CRF = 23


@functools.lru_cache(maxsize=1)
def h264_unavailable() -> str | None:
    """Why this Python cannot encode H.264 (PyAV missing, or its FFmpeg built without libx264), or None.

    >>> h264_unavailable() is None
    True
    """
    try:
        _av().CodecContext.create("libx264", "w")
    except ImportError as error:
        return str(error)
    except Exception as error:  # PyAV's FFmpeg lacks the encoder: av.codec.codec.UnknownCodecError
        return f"PyAV's FFmpeg has no libx264 encoder ({error}); reinstall PyAV from PyPI: pip install -U av"
    return None


def _av() -> Any:
    try:
        import av
    except ImportError as error:  # a dependency of gymview: an environment that lost it
        raise ImportError("H.264 live frames need PyAV: pip install av (or LiveView(codec='jpeg'))") from error
    return av


class H264Encoder:
    """One continuous H.264 stream of RGB frames; a new stream (from a key frame) when the size changes.

    Examples:
        >>> import numpy as np
        >>> encoder = H264Encoder()
        >>> [encoder.encode(np.full((40, 60, 3), i, np.uint8), size=(30, 20))[1] for i in range(3)]
        [True, False, False]
    """

    def __init__(self) -> None:
        self._context: Any = None
        self._scaler: Any = None
        self._size: tuple[int, int] | None = None
        self._count = 0  # frames since the stream's last key frame

    def encode(self, frame: np.ndarray, size: tuple[int, int], key: bool = False) -> tuple[bytes, bool]:
        """The packet of one (H, W, 3) uint8 RGB frame shown at ``size``, and whether it is a key frame.

        Args:
            frame: The picture, C-contiguous.
            size: (width, height) to show it at (``gymview.image.frames.fit_size``); odd sides are
                coded one pixel longer.
            key: Make it a key frame (a page that joins or lost the stream needs one).
        """
        av = _av()
        width, height = size[0] + size[0] % 2, size[1] + size[1] % 2
        if self._context is None or self._size != (width, height):
            self._context = self._open(av, width, height, CRF)
            self._scaler = av.video.reformatter.VideoReformatter()  # keeps its scaler from frame to frame
            self._size, self._count, key = (width, height), 0, True
        picture = self._scaler.reformat(
            av.VideoFrame.from_ndarray(frame, format="rgb24"),
            width=width,
            height=height,
            format="yuv420p",
            interpolation="AREA",
        )
        picture.pts = self._count
        key = key or self._count % KEY_INTERVAL == 0
        if key:
            picture.pict_type = av.video.frame.PictureType.I
        packets = self._context.encode(picture)
        self._count += 1
        return b"".join(bytes(packet) for packet in packets), any(packet.is_keyframe for packet in packets)

    @staticmethod
    def _open(av: Any, width: int, height: int, crf: int) -> Any:
        context = av.CodecContext.create("libx264", "w")
        context.width, context.height, context.pix_fmt = width, height, "yuv420p"
        context.time_base = fractions.Fraction(1, 30)
        context.thread_count = 1
        # ultrafast codes in the constrained baseline profile (no B-frames, no CABAC), which every
        # WebCodecs decoder takes; forced-idr: a requested key frame is an IDR (a decoder can start
        # there); repeat-headers: SPS and PPS before each of them
        context.options = {
            "preset": "ultrafast",
            "tune": "zerolatency",
            "crf": str(crf),
            "x264-params": "forced-idr=1:repeat-headers=1:keyint=infinite",
        }
        context.open()
        return context


def codec_string(packet: bytes) -> str | None:
    """The WebCodecs codec string (``avc1.PPCCLL``) of a key frame's SPS, None when it has none.

    >>> codec_string(bytes.fromhex("0000000167640028ac"))
    'avc1.640028'
    """
    start = packet.find(b"\x00\x00\x01")
    while start >= 0:
        header = start + 3
        if header + 3 < len(packet) and packet[header] & 0x1F == 7:
            return "avc1." + packet[header + 1 : header + 4].hex()
        start = packet.find(b"\x00\x00\x01", header)
    return None


def decode_h264(packets: list[bytes]) -> list[np.ndarray]:
    """The RGB pictures of ``packets``, a stream starting at a key frame (one picture per packet).

    Examples:
        >>> import numpy as np
        >>> encoder = H264Encoder()
        >>> packets = [encoder.encode(np.full((16, 16, 3), 100, np.uint8), size=(16, 16))[0] for _ in range(3)]
        >>> len(decode_h264(packets))
        3
    """
    av = _av()
    context = av.CodecContext.create("h264", "r")
    context.thread_count = 1
    pictures = []
    for data in packets:
        for picture in context.decode(av.Packet(data)):
            pictures.append(picture.to_ndarray(format="rgb24"))
    for picture in context.decode(None):
        pictures.append(picture.to_ndarray(format="rgb24"))
    return pictures
