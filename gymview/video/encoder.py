"""VideoEncoder: I420 frames to H.264 MP4 files in this process, through PyAV (FFmpeg's libraries).

Frames are encoded where they are made instead of being piped to an ffmpeg process: no process
started per file, no copy through a pipe, and one FFmpeg (PyAV's) for the whole package. PyAV lets
go of the GIL while the codec works, so a thread can encode while the loop steps
(docs/performance-log.md has the measurements).

A crash-safe file is a *fragmented* MP4: a header, then one self-contained fragment per key frame
(about one a second), each written out as soon as it is complete. If the process is killed, the
file plays up to its last whole fragment; :func:`gymview.video.mp4.faststart_copy` turns it into a
plain MP4 once it is finished.

>>> import numpy as np, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "grey.mp4")
>>> encoder = VideoEncoder(64, 48, fps=10)
>>> encoder.start(path, fragmented=False)
>>> for _ in range(5):
...     encoder.encode(np.full((72, 64), 128, np.uint8))
>>> encoder.finish()
5
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from gymview.errors import FFmpegError

__all__ = ["FRAGMENTED_MOVFLAGS", "VideoEncoder", "check_encoder"]

#: MP4 flags while recording crash-safe: a header without samples first, then one self-contained
#: fragment (moof + mdat) per key frame, so every finished fragment is playable on its own.
FRAGMENTED_MOVFLAGS = "+frag_keyframe+empty_moov+default_base_moof"
#: the encoders that take x264's rate factor, preset and tuning
X264_LIKE = ("libx264", "libx265")


def _av() -> Any:
    try:
        import av
    except ImportError as error:  # a dependency of gymview: an environment that lost it
        raise ImportError("gymview writes videos with PyAV: pip install av") from error
    return av


def check_encoder(codec: str) -> None:
    """Raise a ValueError that says what to do unless PyAV's FFmpeg has the video encoder ``codec``.

    >>> check_encoder("libx264")
    >>> try:
    ...     check_encoder("no-such-codec")
    ... except ValueError as error:
    ...     print(str(error).split(";")[0])
    PyAV's FFmpeg has no video encoder 'no-such-codec'

    """
    if not isinstance(codec, str):
        raise TypeError(f"codec must be an FFmpeg encoder name such as 'libx264'; got {codec!r}")
    av = _av()
    try:
        found = av.codec.Codec(codec, "w")
    except Exception:  # av.codec.codec.UnknownCodecError, or a decoder-only name
        found = None
    if found is None or found.type != "video":
        raise ValueError(
            f"PyAV's FFmpeg has no video encoder {codec!r}; use codec='libx264' (H.264, which every browser plays)"
        )


class VideoEncoder:
    """One video encoder writing MP4 files one after another, from I420 planes.

    ``start(path)`` opens a file, ``encode(planes)`` adds a frame, ``finish()`` completes the file.
    The codec is opened once and kept for the next file while it holds no frame back at the end of
    one (see :meth:`finish`); its settings stay those given here.

    Args:
        width: Frame width, even (``gymview.image.yuv.I420Converter`` pads odd frames).
        height: Frame height, even.
        fps: Frames per second; also one key frame (one fragment) per second.
        codec: An FFmpeg video encoder: ``"libx264"``, or ``"h264_nvenc"`` on an NVIDIA GPU.
        crf: x264/x265 quality; ignored by other encoders.
        preset: x264/x265 speed/size trade-off; ignored by other encoders.
        tune: x264/x265 tuning; ignored by other encoders.
        threads: Encoder threads; ``None`` lets the encoder choose.

    Examples:
        >>> import numpy as np, os, tempfile
        >>> encoder = VideoEncoder(32, 32, fps=30, preset="ultrafast")
        >>> folder = tempfile.mkdtemp()
        >>> for name in ("a.mp4", "b.mp4"):
        ...     encoder.start(os.path.join(folder, name), fragmented=True)
        ...     encoder.encode(np.zeros((48, 32), np.uint8))
        ...     _ = encoder.finish()
        >>> sorted(os.listdir(folder))
        ['a.mp4', 'b.mp4']
    """

    def __init__(
        self,
        width: int,
        height: int,
        fps: float | Fraction,
        codec: str = "libx264",
        crf: int | None = 23,
        preset: str | None = "veryfast",
        tune: str | None = None,
        threads: int | None = 1,
    ) -> None:
        if width < 2 or height < 2 or width % 2 or height % 2:
            raise ValueError(f"the encoder takes I420 frames of even width and height; got {width}x{height}")
        self.width, self.height = width, height
        self.rate = Fraction(fps).limit_denominator(1_000_000)
        self.codec = codec
        self.options = {}
        if codec in X264_LIKE:
            settings = {"crf": crf, "preset": preset, "tune": tune}
            self.options = {key: str(value) for key, value in settings.items() if value is not None}
        self.threads = threads
        self._av = _av()
        self._container: Any = None  # the file being written
        self._stream: Any = None  # its video stream
        self._codec: Any = None  # the open codec, kept across files while it holds no frame back
        self._home: Any = None  # the MP4 in memory whose stream is the template of every file's
        self._template: Any = None
        self._pts = 0  # of the next frame, counted across files
        self._first_pts = 0  # of the file's first frame
        self._held = 0  # frames of this file the codec holds back
        self._key_frame = self._av.video.frame.PictureType.I
        self._any_frame = self._av.video.frame.PictureType.NONE
        # one frame, refilled each time: the codec copies what it keeps
        self._frame = self._av.VideoFrame(width, height, "yuv420p")
        self._picture = tuple(
            np.frombuffer(plane, np.uint8).reshape(plane.height, plane.line_size)[:, : plane.width]
            for plane in self._frame.planes
        )
        self._count = 0
        self.path: str | None = None
        #: ``on_key_frame(frames)``, called before a key frame's packet is written (in a fragmented
        #: file it ends the fragment before it), with the frames encoded so far
        self.on_key_frame: Callable[[int], None] | None = None

    @property
    def picture(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The Y, U and V planes (writable uint8 arrays) of the frame ``encode()`` sends next:
        fill them in place and call ``encode()`` without planes to send the frame without a copy.
        They are the same arrays for every file, and ``encode(planes)`` overwrites them."""
        return self._picture  # type: ignore[return-value]

    @property
    def frames(self) -> int:
        """Frames encoded into the file being written (or the file finished last)."""
        return self._count

    def start(self, path: str | os.PathLike[str], fragmented: bool) -> None:
        """Open ``path`` for writing (replacing it); ``fragmented`` makes it crash-safe (see the module)."""
        if self._container is not None:
            raise RuntimeError(f"{self.path!r} is still being written; finish() it first")
        av = self._av
        self.path = os.fspath(path)
        flags = {"movflags": FRAGMENTED_MOVFLAGS, "flush_packets": "1"} if fragmented else {"movflags": "+faststart"}
        try:
            container = av.open(self.path, "w", format="mp4", container_options=flags)
        except av.error.FFmpegError as error:
            raise FFmpegError(f"could not open {self.path!r} for writing: {error}") from error
        try:
            if self._codec is None:
                self._open_codec()
            stream = container.add_stream_from_template(self._template)
        except Exception as error:
            container.close()
            hint = ""
            if "nvenc" in self.codec:  # FFmpeg has the encoder; the GPU or its driver may not
                hint = (
                    f"; {self.codec} needs an NVIDIA GPU with an NVENC engine and its driver (data-centre GPUs"
                    " such as the A100, H100 and H200 have none): use codec='libx264' there"
                )
            raise FFmpegError(f"could not open the {self.codec!r} encoder for {self.path!r}: {error}{hint}") from error
        self._container, self._stream, self._count, self._first_pts, self._held = container, stream, 0, self._pts, 0

    def _open_codec(self) -> None:
        """Open the codec, in a stream of an MP4 in memory whose header is written at once: every
        file's stream copies that stream's parameters (x264's SPS and PPS among them)."""
        home = self._av.open(io.BytesIO(), "w", format="mp4")
        try:
            stream = home.add_stream(self.codec, rate=self.rate)
            stream.width, stream.height, stream.pix_fmt = self.width, self.height, "yuv420p"
            context = stream.codec_context
            context.gop_size = max(1, round(self.rate))  # a key frame, and so a fragment, every second
            if self.threads is not None:
                context.thread_count = self.threads
            # each file's first frame a key frame that refers to no earlier one
            context.options = {**self.options, "forced-idr": "1"} if self.codec in X264_LIKE else dict(self.options)
            context.open()
            home.start_encoding()
        except BaseException:
            home.close()
            raise
        self._home, self._template, self._codec = home, stream, context

    def _close_codec(self) -> None:
        home, self._home, self._template, self._codec = self._home, None, None, None
        if home is not None:
            home.close()

    def encode(self, planes: np.ndarray | None = None) -> None:
        """Add one frame: I420 planes, Y then U then V, as one (height * 3 / 2, width) or flat uint8
        array; ``None`` sends :attr:`picture` as it is."""
        if self._container is None:
            raise RuntimeError("no file is open; start() one first")
        if planes is not None:
            luma = self.width * self.height
            flat = planes.reshape(-1)
            if flat.size != luma * 3 // 2:
                raise ValueError(
                    f"expected {self.width}x{self.height} I420 planes ({luma * 3 // 2} bytes); got {flat.size}"
                )
            y, u, v = self._picture
            y[...] = flat[:luma].reshape(y.shape)
            u[...] = flat[luma : luma * 5 // 4].reshape(u.shape)
            v[...] = flat[luma * 5 // 4 :].reshape(v.shape)
        frame = self._frame
        frame.pts = self._pts
        frame.pict_type = self._key_frame if self._count == 0 else self._any_frame
        self._pts += 1
        self._count += 1
        packets = self._codec.encode(frame)
        self._held += 1 - len(packets)
        self._mux(self._container, packets)

    def _mux(self, container: Any, packets: list[Any]) -> None:
        if self.on_key_frame is not None and any(packet.is_keyframe for packet in packets):
            self.on_key_frame(self._count)
        try:
            for packet in packets:  # the codec counts on across files: this file's time starts at 0
                packet.pts -= self._first_pts
                packet.dts -= self._first_pts
                if not packet.duration:  # a frame's length: without it PyAV 18.0 leaves the last frame out of an MP4
                    packet.duration = 1
                packet.stream = self._stream
                container.mux_one(packet)
        except self._av.error.FFmpegError as error:
            raise FFmpegError(f"could not write {self.path!r}: {error}") from error

    def finish(self) -> int:
        """Encode what the codec holds back, write the file's index and close it; the frames in it.

        A codec that holds no frame back at the end (x264 with ``tune="zerolatency"``) stays open
        for the next file, which starts with a key frame; one that does is drained, and so closed:
        the next file opens it again.
        """
        container, self._container = self._container, None
        if container is not None:
            try:
                if self._held:
                    try:
                        self._mux(container, self._codec.encode(None))
                    finally:
                        self._close_codec()
            finally:
                container.close()
        return self._count

    def abandon(self) -> None:
        """Close the file being written without waiting for the frames the codec holds back (the
        codec too: the next file opens it again)."""
        container, self._container = self._container, None
        if container is not None:
            try:
                self._close_codec()
                container.close()
            except Exception:  # the file is being given up anyway; the error that led here is raised
                pass
