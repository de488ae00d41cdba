"""The encoder process itself, and the wire format it shares with :mod:`.encoder_process`.

It imports only numpy, Pillow and gymview's image functions (a painter's own modules arrive
with its pickle), so a start costs tens of milliseconds, not the kernel's thousand modules.

Parent → child, on the child's stdin: a 20-byte header of uint32 (kind, two sizes, max_size,
value | format << 16 | KEY << 20) and a payload, by kind. Format 0 = JPEG and 1 = PNG take the JPEG
quality as value; 2 = H.264 (:mod:`.h264`, one continuous stream) ignores it, and KEY asks for a key
frame. Kinds:
FRAME (height, width; the H*W*3 pixels); SHARED_FRAME (height, width; no payload: the pixels are at the
start of the shared frame file, a memory-backed file the parent passes to the child at its start); PAINTER
(byte count; a pickled painter, kept for the STATE requests that follow, no reply); SHARED_PAINTER (byte
count; no payload: a PAINTER's pickle, at the start of that file); STATE (byte count; the float64 state to
paint). The last few painters are kept by their pickles: one sent again (two views' painters taking turns) is the one
unpickled before, with its OpenGL context, not a new one.
Child → parent, on a descriptor of its own (what was its stdout when it started; from then on its
stdout goes where its stderr goes, so a painter's ``print`` or a library's banner cannot be read as a
reply): a 20-byte header (out width, out height, byte count, microseconds spent, flags: KEY for a key
frame, FAILED when the frame could not be made) and the bytes: the encoded frame, or with FAILED the
traceback's text, after which the child serves the next request.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import pickle
import struct
import sys
import time
import traceback
from typing import Any

import numpy as np

from gymview.image.codec import encode_frame
from gymview.image.frames import downsample, fit_size

REQUEST = struct.Struct("<5I")
FRAME, PAINTER, STATE, SHARED_FRAME, SHARED_PAINTER = range(5)
REPLY = struct.Struct("<5I")
FORMATS = ("jpeg", "png", "h264")
KEY = 1
FAILED = 2
KEPT_PAINTERS = 8


def write_all(fd: int, parts: list) -> None:
    """Write every byte of ``parts`` to ``fd``: one system call where the OS allows (so one GIL hand-over)."""
    views = [memoryview(part).cast("B") for part in parts]
    while views:
        written = os.writev(fd, views) if hasattr(os, "writev") else os.write(fd, views[0])
        while views and written >= len(views[0]):
            written -= len(views[0])
            views.pop(0)
        if views and written:
            views[0] = views[0][written:]


def read_exactly(fd: int, size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, remaining)
        if not chunk:
            raise EOFError(f"pipe closed with {remaining} of {size} bytes unread")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_reply(fd: int) -> tuple[bytes, int, int, int, int]:
    """Read one reply, usually in a single system call (each call is a GIL hand-over):
    (bytes, width, height, microseconds the child spent, flags)."""
    received = os.read(fd, 1 << 20)
    if len(received) < REPLY.size:
        received += read_exactly(fd, REPLY.size - len(received))
    width, height, size, microseconds, flags = REPLY.unpack_from(received)
    data = received[REPLY.size :]
    if len(data) < size:
        data += read_exactly(fd, size - len(data))
    return data, width, height, microseconds, flags


def serve(stdin: int | None = None, replies: int | None = None, shared: int | None = None) -> None:
    """The child's loop: answer requests until the parent closes the pipe. By default requests come
    on stdin and replies go out on a copy of stdout, which then takes stderr's place; ``shared`` is the
    descriptor of the shared frame file, if the parent passed one."""
    stdin = sys.stdin.fileno() if stdin is None else stdin
    if replies is None:
        replies = os.dup(sys.stdout.fileno())
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    painter: Any = None
    painters: dict[bytes, Any] = {}  # the painters taken last, by their pickles' digests, oldest first
    canvas, stream = None, None
    frames = SharedPixels(shared) if shared is not None else None
    while True:
        try:
            kind, size, width, max_size, packed = REQUEST.unpack(read_exactly(stdin, REQUEST.size))
            shared_payload = kind in (SHARED_FRAME, SHARED_PAINTER)
            payload = b"" if shared_payload else read_exactly(stdin, size * width * 3 if kind == FRAME else size)
        except EOFError:
            return
        if kind in (PAINTER, SHARED_PAINTER):
            pickled = frames.read_bytes(size) if kind == SHARED_PAINTER and frames is not None else payload
            painter, canvas = _taken(painters, pickled), None
            continue
        started = time.perf_counter()
        try:
            if kind == STATE:
                canvas = _paint(painter, np.frombuffer(payload, np.float64), canvas, max_size)
                frame = canvas
            elif kind == SHARED_FRAME and frames is not None:
                frame = frames.read(size, width)
            else:
                frame = np.frombuffer(payload, np.uint8).reshape(size, width, 3)
            data, width, height, flags, stream = _encode(frame, max_size, packed, stream)
        except Exception:
            data, width, height, flags = traceback.format_exc().encode(), 0, 0, FAILED
        microseconds = round((time.perf_counter() - started) * 1e6)
        write_all(replies, [REPLY.pack(width, height, len(data), microseconds, flags), data])


class SharedPixels:
    """The child's view of the shared frame file: the parent writes a frame's pixels at its start, then
    asks for it; the file only grows, and is mapped again when a frame is larger than the mapping."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._map: mmap.mmap | None = None

    def read(self, height: int, width: int) -> np.ndarray:
        """The frame at the start of the file (valid until the reply to it is written)."""
        size = height * width * 3
        return np.frombuffer(self._mapped(size), np.uint8, count=size).reshape(height, width, 3)

    def read_bytes(self, size: int) -> bytes:
        """A copy of the first ``size`` bytes (a painter's pickle: the next request may overwrite them)."""
        return self._mapped(size)[:size]

    def _mapped(self, size: int) -> mmap.mmap:
        if self._map is None or len(self._map) < size:  # the old mapping goes when no frame uses it
            self._map = mmap.mmap(self._fd, os.fstat(self._fd).st_size, access=mmap.ACCESS_READ)
        return self._map


def _taken(painters: dict[bytes, Any], pickled: bytes) -> Any:
    """The painter of ``pickled``: the one kept from the same pickle, else unpickled now and kept."""
    key = hashlib.blake2b(pickled, digest_size=16).digest()
    painter = painters.pop(key, None)
    if painter is None:
        try:
            painter = pickle.loads(pickled)
        except Exception:  # the painter's module may be missing here: each frame says so
            return _Unloadable(traceback.format_exc())
    painters[key] = painter
    if len(painters) > KEPT_PAINTERS:
        del painters[next(iter(painters))]
    return painter


class _Unloadable:
    """Stands for a painter that could not be unpickled here: drawing with it raises why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def paint(self, state: np.ndarray, canvas: Any) -> np.ndarray:
        raise RuntimeError(f"the painter could not be loaded in gymview's helper process:\n{self.reason}")


def _paint(painter: Any, state: np.ndarray, canvas: Any, max_size: int) -> np.ndarray:
    if getattr(painter, "draws_to_max_size", False):  # draws the frame as small as it is shown
        picture = painter.paint(state, canvas, max_size=max_size)
    else:
        picture = painter.paint(state, canvas)
    if not (
        isinstance(picture, np.ndarray)
        and picture.dtype == np.uint8
        and picture.ndim == 3
        and picture.shape[2] == 3
        and picture.size
    ):
        raise TypeError(
            f"{type(painter).__name__}.paint() must return an (H, W, 3) uint8 array; "
            f"got {getattr(picture, 'dtype', type(picture).__name__)} {getattr(picture, 'shape', '')}"
        )
    return picture


def _encode(frame: np.ndarray, max_size: int, packed: int, stream: Any) -> tuple[bytes, int, int, int, Any]:
    """(bytes, width, height, flags, the H.264 stream) of one frame."""
    value, image_format = packed & 0xFFFF, FORMATS[(packed >> 16) & 0xF]
    if image_format != "h264":
        small = downsample(frame, max_size)
        return encode_frame(small, image_format, value), small.shape[1], small.shape[0], 0, stream
    if stream is None:
        from gymview.live.encoding.h264 import H264Encoder  # PyAV loads only for a view that streams video

        stream = H264Encoder()
    height, width = fit_size(frame.shape[0], frame.shape[1], max_size)
    data, key = stream.encode(np.ascontiguousarray(frame), (width, height), bool(packed >> 20 & KEY))
    return data, width, height, KEY if key else 0, stream
