"""Downsample and compress frames in a helper process, out of reach of the kernel's GIL.

A notebook loop holds the GIL almost all the time. A thread that shrinks and compresses frames
must win the GIL back after every C call that released it, and each time waits up to the
interpreter's switch interval (5 ms): measured in a kernel, a 2 ms downsample took 69 ms and a
0.3 ms JPEG encode 33 ms, capping the view near 13 fps while the handovers slowed the loop. In a
helper process the same work costs the stream thread two pipe calls.

It also draws: a :class:`gymview.renderers.Drawing` travels as its renderer (pickled, once per
child) and then a few floats of state per frame, so the loop neither draws (0.9 ms a frame on a
cache the loop has made cold) nor copies 720 KB of pixels into the pipe.

Parent → child, on the child's stdin: a 20-byte header of uint32 (kind, two sizes, max_size,
quality | format << 16 with format 0 = JPEG, 1 = PNG) and a payload, by kind:
FRAME (height, width; the H*W*3 pixels), RENDERER (byte count; a pickled BatchRenderer, kept for
the STATE requests that follow, no reply), STATE (byte count; float64 state to draw).
Child → parent, on its stdout: a 16-byte header (out width, out height, byte count, microseconds
spent) and the bytes.

>>> import numpy as np
>>> encoder = EncoderProcess()
>>> data, width, height = encoder.encode(np.zeros((400, 600, 3), np.uint8), 300, "jpeg", 80)
>>> (width, height), data[:2] == b"\\xff\\xd8"
((300, 200), True)
>>> encoder.close()
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time

import numpy as np

try:
    import fcntl
except ImportError:  # Windows: pipes keep their size
    fcntl = None

from gymview.encode import encode_frame
from gymview.frames import downsample
from gymview.renderers import BatchRenderer, Drawing

__all__ = ["EncoderProcess", "EncoderProcessError"]

_REQUEST = struct.Struct("<5I")
_FRAME, _RENDERER, _STATE = range(3)
_REPLY = struct.Struct("<4I")
_FORMATS = ("jpeg", "png")


class EncoderProcessError(RuntimeError):
    """The helper process could not be started or stopped answering."""


class EncoderProcess:
    """A helper process that turns (H, W, 3) uint8 frames, or Drawings, into (bytes, width, height).

    Started on first use, in its own session so that interrupting the kernel (SIGINT to its
    process group) does not kill it; it ends when :meth:`close` is called or when its parent
    dies (its stdin closes). Use from one thread at a time, one frame at a time.
    """

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._pending: tuple[bytes, memoryview, BatchRenderer | None] | None = None
        self._child_renderer: BatchRenderer | None = None  # the renderer the child holds
        self.last_encode_seconds = 0.0  # the child's time for the last frame
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _start(self) -> subprocess.Popen:
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "gymview._encoder"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                start_new_session=True, env=_child_environment(),
            )
        except OSError as error:
            raise EncoderProcessError(f"could not start gymview's encoder process: {error}") from error
        _widen_pipe(process.stdin.fileno())
        return process

    def encode(self, frame: np.ndarray | Drawing, max_size: int, image_format: str, quality: int) -> tuple[bytes, int, int]:
        """Downsample ``frame`` to ``max_size`` and compress it: :meth:`submit`, then :meth:`receive`."""
        self.submit(frame, max_size, image_format, quality)
        return self.receive()

    def submit(self, frame: np.ndarray | Drawing, max_size: int, image_format: str, quality: int) -> None:
        """Hand ``frame`` (an (H, W, 3) uint8 array, or a Drawing for the child to draw) to the child
        and return at once; :meth:`receive` collects the result.

        The request is kept until then, so that a child that died meanwhile can be replaced and
        asked again.
        """
        options = (max_size, quality | (_FORMATS.index(image_format) << 16))
        if isinstance(frame, Drawing):
            state = np.ascontiguousarray(frame.state, np.float64)
            request = (_REQUEST.pack(_STATE, state.nbytes, 0, *options), memoryview(state).cast("B"), frame.renderer)
        else:
            height, width = frame.shape[:2]
            pixels = memoryview(np.ascontiguousarray(frame)).cast("B")
            request = (_REQUEST.pack(_FRAME, height, width, *options), pixels, None)
        with self._lock:
            self._pending = request
            try:
                self._write(*request)
            except OSError:
                self._kill()  # it died since the last frame: receive() asks a fresh child

    def receive(self) -> tuple[bytes, int, int]:
        """The (bytes, width, height) of the frame submitted last, waiting for it if need be.

        A child that died is replaced once per frame; EncoderProcessError if that fails too. The
        child's liveness is learnt from the pipes, not polled: every system call here is a GIL
        hand-over that a busy loop makes slow.
        """
        with self._lock:
            if self._pending is None:
                raise RuntimeError("receive() needs a frame handed over with submit() first")
            request, self._pending = self._pending, None
            try:
                if self._process is not None:
                    return self._read()
            except (OSError, EOFError):
                self._kill()
            try:
                self._write(*request)
                return self._read()
            except (OSError, EOFError) as error:
                self._kill()
                raise EncoderProcessError(f"gymview's encoder process stopped answering: {error!r}") from error

    def reply_ready(self) -> bool:
        """True when :meth:`receive` would not wait: the reply (or the news of a dead child) is there."""
        process = self._process
        if process is None:
            return True
        try:
            return bool(select.select([process.stdout], [], [], 0)[0])
        except (OSError, ValueError):  # a pipe select() cannot watch (Windows), or closed meanwhile
            return True

    def _read(self) -> tuple[bytes, int, int]:
        data, width, height, microseconds = _read_reply(self._process.stdout.fileno())
        self.last_encode_seconds = microseconds / 1e6
        return data, width, height

    def _write(self, header: bytes, payload: memoryview, renderer: BatchRenderer | None) -> None:
        if self._process is None:
            self._process, self._child_renderer = self._start(), None
        parts = [header, payload]
        if renderer is not None and renderer is not self._child_renderer:
            pickled = pickle.dumps(renderer, protocol=pickle.HIGHEST_PROTOCOL)
            parts = [_REQUEST.pack(_RENDERER, len(pickled), 0, 0, 0), pickled, *parts]
            self._child_renderer = renderer
        _write_all(self._process.stdin.fileno(), parts)

    def close(self, timeout: float = 5.0) -> None:
        """End the child: close its stdin, wait, kill as a last resort. Idempotent."""
        with self._lock:
            process, self._process = self._process, None
            if process is None:
                return
            for stream in (process.stdin, process.stdout):
                stream.close()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout)

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                stream.close()


def _widen_pipe(fd: int) -> None:
    """Let a whole frame fit in the pipe, so writing it is one system call that never waits
    for the child (Linux; elsewhere a large frame is written in pieces)."""
    set_pipe_size = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if set_pipe_size is None:
        return
    for size in (8 << 20, 1 << 20):
        try:
            fcntl.fcntl(fd, set_pipe_size, size)
            return
        except OSError:  # above /proc/sys/fs/pipe-max-size for this user
            continue


def _child_environment() -> dict[str, str]:
    """The parent's environment, with the folder gymview was imported from on the path."""
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    return env


def _write_all(fd: int, parts: list) -> None:
    """Write every byte of ``parts`` to ``fd``: one system call where the OS allows (so one GIL hand-over)."""
    views = [memoryview(part).cast("B") for part in parts]
    while views:
        written = os.writev(fd, views) if hasattr(os, "writev") else os.write(fd, views[0])
        while views and written >= len(views[0]):
            written -= len(views[0])
            views.pop(0)
        if views and written:
            views[0] = views[0][written:]


def _read_reply(fd: int) -> tuple[bytes, int, int, int]:
    """Read one reply, usually in a single system call (each call is a GIL hand-over):
    (bytes, width, height, microseconds the child spent)."""
    received = os.read(fd, 1 << 20)
    if len(received) < _REPLY.size:
        received += _read_exactly(fd, _REPLY.size - len(received))
    width, height, size, microseconds = _REPLY.unpack_from(received)
    data = received[_REPLY.size :]
    if len(data) < size:
        data += _read_exactly(fd, size - len(data))
    return data, width, height, microseconds


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, remaining)
        if not chunk:
            raise EOFError(f"pipe closed with {remaining} of {size} bytes unread")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _serve(stdin: int, stdout: int) -> None:
    """The child's loop: read requests until the parent closes the pipe."""
    renderer, drawn = None, None
    while True:
        try:
            kind, size, width, max_size, packed = _REQUEST.unpack(_read_exactly(stdin, _REQUEST.size))
            payload = _read_exactly(stdin, size * width * 3 if kind == _FRAME else size)
        except EOFError:
            return
        if kind == _RENDERER:
            renderer, drawn = pickle.loads(payload), None
            continue
        started = time.perf_counter()
        if kind == _STATE:
            # Drawing into the previous frame repaints only what moved.
            drawn = renderer.render(np.frombuffer(payload, np.float64)[None], out=drawn)
            frame = drawn[0]
        else:
            frame = np.frombuffer(payload, np.uint8).reshape(size, width, 3)
        small = downsample(frame, max_size)
        data = encode_frame(small, _FORMATS[packed >> 16], packed & 0xFFFF)
        microseconds = round((time.perf_counter() - started) * 1e6)
        _write_all(stdout, [_REPLY.pack(small.shape[1], small.shape[0], len(data), microseconds), data])


if __name__ == "__main__":
    _serve(sys.stdin.fileno(), sys.stdout.fileno())
