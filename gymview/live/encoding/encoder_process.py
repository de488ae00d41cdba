"""Downsample and compress frames in a helper process, out of reach of the kernel's GIL.

A notebook loop holds the GIL almost all the time. A thread that shrinks and compresses frames
must win the GIL back after every C call that released it, and each time waits up to the
interpreter's switch interval (5 ms), which made milliseconds of work take tens of them
(docs/performance-log.md). In a helper process the same work costs the loop two pipe calls.

It also draws :class:`~gymview.live.encoding.deferred.DeferredFrame` s: the painter is pickled to the child
once, then each frame sends only its state, so the loop neither draws (on caches it has made cold)
nor copies hundreds of kilobytes of pixels into the pipe. Pixels go through a memory-backed file both
processes map (POSIX): the loop copies a frame there and writes 20 bytes to the pipe, so a frame of any
size is handed over without waiting for the child to read it. The wire format is in :mod:`.encoder_child`.

>>> import numpy as np
>>> encoder = EncoderProcess()
>>> data, width, height = encoder.encode(np.zeros((400, 600, 3), np.uint8), 300, "jpeg", 80)
>>> (width, height), data[:2] == b"\\xff\\xd8"
((300, 200), True)
>>> encoder.close()
"""

from __future__ import annotations

import mmap
import os
import select
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # Windows: pipes keep their size
    fcntl = None  # type: ignore[assignment]

from gymview._internal.exits import how_it_ended
from gymview._internal.user_code import pickled
from gymview.errors import EncoderProcessError, FrameError
from gymview.live.encoding.deferred import DeferredFrame
from gymview.live.encoding.encoder_child import (
    FAILED,
    FORMATS,
    FRAME,
    KEY,
    PAINTER,
    REQUEST,
    SHARED_FRAME,
    SHARED_PAINTER,
    STATE,
    read_reply,
    write_all,
)

__all__ = ["EncoderProcess", "HelperEnding", "encoder_command"]

# In a forked child, the parent's helpers, held so that nothing here ever waits for or kills them.
_PARENTS_HELPERS: list[subprocess.Popen] = []

OUTPUT_LIMIT = 1 << 20  # bytes of the child's output kept, at least
# A helper whose pipe closed is given this long to end on its own before it is killed (off the caller's thread).
DYING_SECONDS = 2.0

# Run by `python -c`: move the replies off the descriptor print writes to before anything is imported,
# put the folder gymview was imported from on the path *after* the standard library (PYTHONPATH would
# put it first, and a module there named like a stdlib one would win),
# drop the working directory that `-c` puts first, then serve.
_BOOT = """\
import os, sys, sysconfig
replies = os.dup(1)  # the protocol's own descriptor; from here on anything printed goes where stderr goes
os.dup2(2, 1)
root = sys.argv[1]
stdlib = tuple(p for p in {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")} if p)
sys.path[:] = [p for p in sys.path[1:] if p != root]
after = max((i + 1 for i, p in enumerate(sys.path) if p.startswith(stdlib) or p.endswith(".zip")), default=0)
sys.path.insert(after, root)
from gymview.live.encoding.encoder_child import serve
serve(replies=replies, shared=int(sys.argv[2]) if len(sys.argv) > 2 else None)
"""


def encoder_command(package_root: str | None = None) -> list[str]:
    """The command line that starts an encoder process importing gymview from ``package_root``
    (default: the folder this gymview was imported from); the shared frame file's descriptor, if any, follows."""
    root = package_root or str(Path(__file__).resolve().parents[3])  # gymview/live/encoding/ -> the folder above
    return [sys.executable, "-c", _BOOT, root]


class HelperEnding(EncoderProcessError):
    """The helper closed its pipe and had not ended yet: how it ended is told later, to ``on_ended``."""


class EncoderProcess:
    """A helper process that turns (H, W, 3) uint8 frames, or DeferredFrames, into (bytes, width, height).

    Started on first use, in its own session so that interrupting the kernel (SIGINT to its
    process group) does not kill it; it ends when :meth:`close` is called or when its parent
    dies (its stdin closes). Not thread-safe: one caller at a time, one frame at a time.

    A frame the child could not make (its painter raised) comes back as :class:`~gymview.errors.FrameError`
    with the child's traceback; a child that died is reported as :class:`~gymview.errors.EncoderProcessError`
    with its exit status and its last output, and the next frame starts a new one. Nothing is ever
    drawn in the caller's process. No call waits for the child: one found dying (its pipe closed, its
    exit status not known yet) raises :class:`HelperEnding` at once, and ``on_ended`` gets the full
    error from a thread that waits for the child.
    """

    def __init__(self, on_ended: Callable[[EncoderProcessError], None] | None = None) -> None:
        self._on_ended = on_ended
        self._process: subprocess.Popen[bytes] | None = None
        self._output: Any = None  # the child's stdout and stderr: a temporary file
        self._pending: tuple[bytes, memoryview, Any] | None = None
        self._died: EncoderProcessError | None = None  # the child was found dead while handing a frame over
        # the last painter taken, and its pickle: kept, so that a new child (the last one died) gets it without the
        # loop pickling it again (a renderer's pickle can be megabytes)
        self._pickled: tuple[Any, bytes] | None = None
        self._child_painter: Any = None  # the painter the child holds
        self._replies = 0
        self._has_run = False
        self.last_encode_seconds = 0.0  # the child's time for the last frame
        self.last_was_key = False  # the last frame received is an H.264 key frame
        self._pixels: SharedPixels | None = None  # made with the first child; none on Windows (pixels go by pipe)

    @property
    def has_run(self) -> bool:
        """True once a helper started here: a later start that fails is not a reason to draw elsewhere."""
        return self._has_run

    @property
    def busy(self) -> bool:
        """True between :meth:`submit` and :meth:`receive`."""
        return self._pending is not None

    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        env.setdefault("OMP_NUM_THREADS", "1")
        # Mesa's software GL (MuJoCo painters) would spread each frame over every core, the loop's too.
        env.setdefault("LP_NUM_THREADS", "1")
        self._output = tempfile.TemporaryFile()  # noqa: SIM115 -- the helper's output, open while it lives
        if fcntl is not None:  # appended to, so that emptying it (see _read) leaves no hole
            fcntl.fcntl(
                self._output.fileno(), fcntl.F_SETFL, fcntl.fcntl(self._output.fileno(), fcntl.F_GETFL) | os.O_APPEND
            )
        pixels = self._shared()
        shared = pixels.fd if pixels is not None else None
        try:
            process = subprocess.Popen(
                [*encoder_command(), *([] if shared is None else [str(shared)])],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._output,
                start_new_session=True,
                env=env,
                pass_fds=() if shared is None else (shared,),
            )
        except OSError as error:
            raise EncoderProcessError(f"could not start gymview's encoder process: {error}") from error
        assert process.stdin is not None  # stdin=PIPE
        _widen_pipe(process.stdin.fileno())
        return process

    def encode(
        self, frame: np.ndarray | DeferredFrame, max_size: int, image_format: str, quality: int, key: bool = False
    ) -> tuple[bytes, int, int]:
        """Downsample ``frame`` to ``max_size`` and compress it: :meth:`submit`, then :meth:`receive`."""
        self.submit(frame, max_size, image_format, quality, key)
        return self.receive()

    def take_painter(self, painter: Any) -> None:
        """Pickle ``painter`` for the child now, unless it is the one taken last; a painter that cannot be
        pickled raises TypeError naming what in it could not be, and nothing else changes."""
        if self._pickled is None or self._pickled[0] is not painter:
            self._pickled = (painter, _pickled_painter(painter))

    def submit(
        self, frame: np.ndarray | DeferredFrame, max_size: int, image_format: str, quality: int, key: bool = False
    ) -> None:
        """Hand ``frame`` to the child and return at once; :meth:`receive` collects the result.

        ``quality`` is the JPEG quality (H.264 ignores it); ``key`` asks
        the H.264 stream for a key frame. With the child idle the pipe is empty and widened to
        hold a whole frame, so the write is one system call that does not wait.
        """
        if self._pending is not None:
            raise RuntimeError("submit() while a frame is in the encoder: receive() it first")
        options = (max_size, quality | (FORMATS.index(image_format) << 16) | (KEY << 20 if key else 0))
        shared = self._shared() if isinstance(frame, np.ndarray) else None
        if isinstance(frame, np.ndarray) and shared is not None:
            height, width = frame.shape[:2]
            shared.write(frame)
            request = (REQUEST.pack(SHARED_FRAME, height, width, *options), memoryview(b""), None)
        elif isinstance(frame, np.ndarray):
            height, width = frame.shape[:2]
            pixels = np.ascontiguousarray(frame).data.cast("B")
            request = (REQUEST.pack(FRAME, height, width, *options), pixels, None)
        else:
            self.take_painter(frame.painter)
            state = np.ascontiguousarray(frame.state, np.float64)
            request = (REQUEST.pack(STATE, state.nbytes, 0, *options), state.data.cast("B"), frame.painter)
        if self._process is None:
            self._process, self._child_painter = self._start(), None
            self._has_run = True
        self._pending = request
        try:
            self._write(*request)
        except OSError:
            self._died = self._death()

    def _shared(self) -> SharedPixels | None:
        if self._pixels is None:
            self._pixels = SharedPixels.make()
        return self._pixels

    def receive(self) -> tuple[bytes, int, int]:
        """The (bytes, width, height) of the frame submitted last, waiting for it if need be.

        Raises FrameError when the child could not make the frame, EncoderProcessError when it died;
        either way the frame is done with, and the next :meth:`submit` may follow.
        """
        if self._pending is None:
            raise RuntimeError("receive() needs a frame handed over with submit() first")
        self._pending, died, self._died = None, self._died, None
        if died is not None:
            raise died
        try:
            return self._read()
        except (OSError, EOFError):
            raise self._death() from None

    def reply_ready(self) -> bool:
        """True when :meth:`receive` would not wait: the reply (or the news of a dead child) is there."""
        process = self._process
        if process is None or self._died is not None:
            return True
        assert process.stdout is not None  # stdout=PIPE
        try:
            if hasattr(select, "poll"):  # any descriptor number (select() stops at 1024)
                poller = select.poll()
                poller.register(process.stdout, select.POLLIN)
                return bool(poller.poll(0))
            return bool(select.select([process.stdout], [], [], 0)[0])
        except (OSError, ValueError):  # a pipe it cannot watch (Windows), or closed meanwhile: read it
            return True

    def _read(self) -> tuple[bytes, int, int]:
        process = self._process
        assert process is not None and process.stdout is not None  # started by submit(), stdout=PIPE
        data, width, height, microseconds, flags = read_reply(process.stdout.fileno())
        self.last_encode_seconds = microseconds / 1e6
        self._replies += 1
        if self._replies % 256 == 0 and os.fstat(self._output.fileno()).st_size > OUTPUT_LIMIT:
            os.ftruncate(self._output.fileno(), 0)  # a painter that prints every frame fills no disk
        if flags & FAILED:
            raise FrameError(f"gymview's helper process could not make a frame:\n{data.decode(errors='replace')}")
        self.last_was_key = bool(flags & KEY)
        return data, width, height

    def _write(self, header: bytes, payload: memoryview, painter: Any) -> None:
        parts = [header, payload]
        if painter is not None and painter is not self._child_painter:
            taken = self._pickled
            if taken is None or taken[0] is not painter:  # a painter taken before the last one
                taken = self._pickled = (painter, _pickled_painter(painter))
            pickled_painter = taken[1]
            if self._pixels is not None:  # a renderer's pickle can be megabytes: a new child reads it when it can
                self._pixels.write_bytes(pickled_painter)
                parts = [REQUEST.pack(SHARED_PAINTER, len(pickled_painter), 0, 0, 0), *parts]
            else:
                parts = [REQUEST.pack(PAINTER, len(pickled_painter), 0, 0, 0), pickled_painter, *parts]
            self._child_painter = painter
        process = self._process
        assert process is not None and process.stdin is not None  # started by submit(), stdin=PIPE
        write_all(process.stdin.fileno(), parts)

    def _death(self) -> EncoderProcessError:
        """The error that says how the child ended and what it printed last; the next frame starts a new one.

        Never waits: a child whose exit status is not known yet is waited for (and killed after
        ``DYING_SECONDS``) by a thread of its own, which hands the full error to ``on_ended``."""
        process, output, self._process, self._output = self._process, self._output, None, None
        assert process is not None  # the child that failed to take or give a frame
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        status = process.poll()
        if status is not None:
            return _ended(status, output)
        on_ended = self._on_ended

        def wait_for_it() -> None:
            try:
                status = process.wait(DYING_SECONDS)
            except subprocess.TimeoutExpired:  # it closed its pipe but lives on: end it
                process.kill()
                status = process.wait()
            error = _ended(status, output)
            if on_ended is not None:
                on_ended(error)

        threading.Thread(target=wait_for_it, name="gymview-helper-ending", daemon=True).start()
        return HelperEnding(
            "gymview's helper process closed its pipe: the frame it was given is lost, and the next one starts a "
            "new helper"
        )

    def forget_after_fork(self) -> None:
        """In a child forked from this process: close the child's copies of the helper's pipes, so that the
        parent's ``close()`` still ends the helper at once, and leave the helper to the parent."""
        process, output, self._process, self._output = self._process, self._output, None, None
        self._pending = self._died = None
        pixels, self._pixels = self._pixels, None
        if pixels is not None:
            pixels.close()
        if process is not None:
            _PARENTS_HELPERS.append(process)  # never collected here: its finalizer would reap the parent's child
        for stream in (process.stdin, process.stdout, output) if process is not None else (output,):
            if stream is not None:
                stream.close()

    def let_go(self) -> Callable[[float], None]:
        """Forget the child now, without waiting for anything (safe under the caller's lock), and return what
        ends it: call that with a timeout outside any lock. The next frame starts a new child."""
        process, output, self._process, self._output = self._process, self._output, None, None
        self._pending = self._died = None
        return lambda timeout: _end(process, output, timeout)

    def close(self, timeout: float = 5.0) -> None:
        """End the child: close its stdin, wait ``timeout`` s, kill as a last resort. Idempotent; the
        shared frame file stays for the next child."""
        self.let_go()(timeout)


class SharedPixels:
    """The parent's side of the shared frame file: a memory-backed file (``memfd`` on Linux, a temporary
    file elsewhere on POSIX) the parent writes each frame's pixels into; it only grows."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._map: mmap.mmap | None = None

    @classmethod
    def make(cls) -> SharedPixels | None:
        """A new shared frame file, or None where a child cannot be given a descriptor (Windows)."""
        if os.name != "posix":
            return None
        if hasattr(os, "memfd_create"):
            return cls(os.memfd_create("gymview-frames", os.MFD_CLOEXEC))
        with tempfile.TemporaryFile() as file:
            return cls(os.dup(file.fileno()))

    def write(self, frame: np.ndarray) -> None:
        """Copy ``frame``'s pixels to the start of the file, growing it first if need be."""
        size = frame.shape[0] * frame.shape[1] * 3
        np.copyto(np.frombuffer(self._room(size), np.uint8, count=size).reshape(frame.shape), frame, casting="no")

    def write_bytes(self, data: bytes) -> None:
        """Copy ``data`` to the start of the file, growing it first if need be."""
        self._room(len(data))[: len(data)] = data

    def _room(self, size: int) -> mmap.mmap:
        if self._map is None or len(self._map) < size:
            capacity = -(-size // (1 << 20)) << 20  # whole MiB: a frame a little larger does not grow it again
            if self._map is not None:
                self._map.close()
            os.ftruncate(self.fd, capacity)
            self._map = mmap.mmap(self.fd, capacity)
        return self._map

    def close(self) -> None:
        """Unmap and close the file; idempotent."""
        if self._map is not None:
            self._map.close()
            self._map = None
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        self.close()


def _end(process: subprocess.Popen[bytes] | None, output: Any, timeout: float) -> None:
    """Close a child's pipes and its output file, wait ``timeout`` s for it to end, then kill it."""
    if output is not None:
        output.close()
    if process is None:
        return
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _ended(status: int, output: Any) -> EncoderProcessError:
    return EncoderProcessError(
        f"gymview's helper process ended ({how_it_ended(status)}): the frame it was given is lost, and the "
        f"next one starts a new helper{_last_lines(output)}"
    )


def _last_lines(output: Any) -> str:
    """The end of what the child printed (its traceback, a library's message), as a sentence's tail."""
    if output is None:
        return ""
    with output:
        output.seek(max(0, os.fstat(output.fileno()).st_size - 2000))
        text = output.read().decode(errors="replace").strip()
    return f". Its last output:\n{text}" if text else ""


def _pickled_painter(painter: Any) -> bytes:
    """``painter`` pickled for the child (one defined in a notebook travels by value), or TypeError naming
    the attribute that could not be pickled."""
    try:
        return pickled(painter)
    except Exception as error:
        culprit = ""
        for name, value in getattr(painter, "__dict__", {}).items():
            try:
                pickled(value)
            except Exception:
                culprit = f": its attribute {name!r} ({type(value).__module__}.{type(value).__qualname__}) cannot be"
                break
        raise TypeError(
            f"the painter {type(painter).__qualname__} cannot be pickled for gymview's helper process{culprit} "
            f"({type(error).__name__}: {error}). Keep only plain data in a painter and make locks, files and "
            f"simulators inside paint(), or push pixels instead"
        ) from error


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
