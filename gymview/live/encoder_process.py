"""Downsample and compress frames in a helper process, out of reach of the kernel's GIL.

A notebook loop holds the GIL almost all the time. A thread that shrinks and compresses frames
must win the GIL back after every C call that released it, and each time waits up to the
interpreter's switch interval (5 ms), which made milliseconds of work take tens of them
(docs/performance.md). In a helper process the same work costs the loop two pipe calls.

It also draws :class:`~gymview.live.deferred.DeferredFrame` s: the painter is pickled to the child
once, then each frame sends only its state, so the loop neither draws (on caches it has made cold)
nor copies hundreds of kilobytes of pixels into the pipe. The wire format is in
:mod:`.encoder_child`.

>>> import numpy as np
>>> encoder = EncoderProcess()
>>> data, width, height = encoder.encode(np.zeros((400, 600, 3), np.uint8), 300, "jpeg", 80)
>>> (width, height), data[:2] == b"\\xff\\xd8"
((300, 200), True)
>>> encoder.close()
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # Windows: pipes keep their size
    fcntl = None

from gymview._internal.user_code import pickled
from gymview.errors import EncoderProcessError
from gymview.live.deferred import DeferredFrame
from gymview.live.encoder_child import (
    FORMATS,
    FRAME,
    KEY,
    PAINTER,
    REQUEST,
    STATE,
    read_reply,
    write_all,
)

__all__ = ["EncoderProcess", "encoder_command"]

# Run by `python -c`: put the folder gymview was imported from on the path *after* the standard
# library (PYTHONPATH would put it first, and a module there named like a stdlib one would win),
# drop the working directory that `-c` puts first, then serve.
_BOOT = """\
import sys, sysconfig
root = sys.argv[1]
stdlib = tuple(p for p in {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")} if p)
sys.path[:] = [p for p in sys.path[1:] if p != root]
after = max((i + 1 for i, p in enumerate(sys.path) if p.startswith(stdlib) or p.endswith(".zip")), default=0)
sys.path.insert(after, root)
from gymview.live.encoder_child import serve
serve()
"""


def encoder_command(package_root: str | None = None) -> list[str]:
    """The command line that starts an encoder process importing gymview from ``package_root``
    (default: the folder this gymview was imported from)."""
    root = package_root or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return [sys.executable, "-c", _BOOT, root]


class EncoderProcess:
    """A helper process that turns (H, W, 3) uint8 frames, or DeferredFrames, into (bytes, width, height).

    Started on first use, in its own session so that interrupting the kernel (SIGINT to its
    process group) does not kill it; it ends when :meth:`close` is called or when its parent
    dies (its stdin closes). Not thread-safe: one caller at a time, one frame at a time.
    """

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._pending: tuple[bytes, memoryview, Any] | None = None
        self._child_painter: Any = None  # the painter the child holds
        self.last_encode_seconds = 0.0  # the child's time for the last frame
        self.last_was_key = False  # the last frame received is an H.264 key frame

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """The helper process's id while it runs (its CPU time is read against the loop's budget)."""
        process = self._process
        return process.pid if process is not None else None

    @property
    def busy(self) -> bool:
        """True between :meth:`submit` and :meth:`receive`."""
        return self._pending is not None

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ)
        env.setdefault("OMP_NUM_THREADS", "1")
        # Mesa's software GL (MuJoCo painters) would spread each frame over every core, the loop's too.
        env.setdefault("LP_NUM_THREADS", "1")
        try:
            process = subprocess.Popen(
                encoder_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                start_new_session=True, env=env,
            )
        except OSError as error:
            raise EncoderProcessError(f"could not start gymview's encoder process: {error}") from error
        _widen_pipe(process.stdin.fileno())
        return process

    def encode(self, frame: np.ndarray | DeferredFrame, max_size: int, image_format: str, quality: int,
               key: bool = False) -> tuple[bytes, int, int]:
        """Downsample ``frame`` to ``max_size`` and compress it: :meth:`submit`, then :meth:`receive`."""
        self.submit(frame, max_size, image_format, quality, key)
        return self.receive()

    def submit(self, frame: np.ndarray | DeferredFrame, max_size: int, image_format: str, quality: int,
               key: bool = False) -> None:
        """Hand ``frame`` to the child and return at once; :meth:`receive` collects the result.

        ``quality`` is the JPEG quality, or for ``"h264"`` the stream's quality level; ``key`` asks
        the H.264 stream for a key frame. With the child idle the pipe is empty and widened to
        hold a whole frame, so the write is one system call that does not wait. The request is
        kept until received, so that a child that died meanwhile can be replaced and asked again
        (a new child's stream starts with a key frame).
        """
        if self._pending is not None:
            raise RuntimeError("submit() while a frame is in the encoder: receive() it first")
        options = (max_size, quality | (FORMATS.index(image_format) << 16) | (KEY << 20 if key else 0))
        if isinstance(frame, np.ndarray):
            height, width = frame.shape[:2]
            pixels = memoryview(np.ascontiguousarray(frame)).cast("B")
            request = (REQUEST.pack(FRAME, height, width, *options), pixels, None)
        else:
            state = np.ascontiguousarray(frame.state, np.float64)
            request = (REQUEST.pack(STATE, state.nbytes, 0, *options), memoryview(state).cast("B"), frame.painter)
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
        data, width, height, microseconds, flags = read_reply(self._process.stdout.fileno())
        self.last_encode_seconds = microseconds / 1e6
        self.last_was_key = bool(flags & KEY)
        return data, width, height

    def _write(self, header: bytes, payload: memoryview, painter: Any) -> None:
        if self._process is None:
            self._process, self._child_painter = self._start(), None
        parts = [header, payload]
        if painter is not None and painter is not self._child_painter:
            # a painter defined in a notebook (__main__) travels by value
            payload_of_painter = pickled(painter)
            parts = [REQUEST.pack(PAINTER, len(payload_of_painter), 0, 0, 0), payload_of_painter, *parts]
            self._child_painter = painter
        write_all(self._process.stdin.fileno(), parts)

    def close(self, timeout: float = 5.0) -> None:
        """End the child: close its stdin, wait, kill as a last resort. Idempotent."""
        process, self._process, self._pending = self._process, None, None
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
