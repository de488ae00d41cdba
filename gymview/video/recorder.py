"""Full-resolution recording: ``VideoRecorder``, which the drop-in ``RecordVideo`` wrapper uses.

Frames go from ``write()`` through a bounded queue to a background thread that encodes them in
this process (PyAV, see ``gymview.video.encoder``), so memory stays flat however long the episode,
and ``write()`` waits when the encoder falls behind instead of dropping frames.

How the file on disk looks:

* while recording, ``path`` is a *fragmented* MP4: a header, then one self-contained fragment per
  keyframe (about one a second), each written out as soon as it is encoded. If the process is
  killed, the file still plays up to its last whole fragment.
* ``close()`` finishes the encoder, then copies the stream (no re-encoding) into a plain MP4 with
  its index at the front ("faststart") and atomically replaces ``path`` with it: a normal H.264
  yuv420p file every browser and player handles. Should that copy fail, the fragmented file is
  left in place (it plays too) and the error says so.

>>> import numpy as np, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "ramp.mp4")
>>> with VideoRecorder(path, fps=10) as recorder:
...     for i in range(20):
...         recorder.write(np.full((48, 64, 3), i * 10, np.uint8))
>>> recorder.frames_written
20
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from gymview._internal.checks import check_int, check_optional_int
from gymview.image.frames import to_rgb_uint8
from gymview.renderers import BatchRenderer
from gymview.video.drawn import RENDER_CHUNK, drawn_frames
from gymview.video.encoder import VideoEncoder, check_encoder
from gymview.video.encoder_feed import EncoderFeed
from gymview.video.ffmpeg import fps_text


class VideoRecorder:
    """Write frames to an H.264 MP4 file at full resolution, encoding in the background.

    Frames may be any image ``gymview.to_rgb_uint8`` accepts (uint8, float or bool; gray, RGB or
    RGBA); all must have the first frame's size. An odd width or height gets one black column or
    row on the right or bottom (H.264 in yuv420p needs even sizes); nothing is scaled. Closing a
    recorder that got no frames writes no file. Used as a context manager, it closes itself.

    Args:
        path: The ``.mp4`` file to write; missing parent folders are created.
        fps: Frames per second of the video; a float or a ``Fraction`` such as
            ``Fraction(30000, 1001)`` works.
        codec: The FFmpeg video encoder (PyAV's FFmpeg); ``"libx264"`` gives H.264, which every
            browser plays; ``"h264_nvenc"`` encodes H.264 on an NVIDIA GPU where PyAV's FFmpeg has it.
        crf: x264/x265 quality, 0 (lossless) to 51 (worst); 23 is ffmpeg's default, 18 looks
            visually lossless.
        preset: x264/x265 speed/size trade-off, ``"ultrafast"`` (the default, the fastest) to ``"veryslow"``;
            ``"veryfast"`` writes files about half as large, more slowly (see the performance page).
        threads: Encoder threads; ``None`` uses one per core but one (at least one), leaving a
            core to the loop that makes the frames (x264's own choice, 1.5 threads per core, costs
            more CPU per frame where cores are few).
        max_queued_frames: Frames that may wait for the encoder before ``write`` blocks; ``None``
            picks up to 32 frames within 64 MiB.
        tune: x264/x265 tuning. ``"zerolatency"`` (the default) encodes each frame as it comes,
            without B-frames or look-ahead: less encoder CPU for somewhat larger files (see the
            performance page); ``None`` gives the smaller files.
        crash_safe: Write a fragmented MP4 while recording (playable up to about the last second
            if the process dies) and rewrite it as a plain MP4 on close. ``False`` writes the
            plain MP4 directly: for batch jobs where a crash means re-running the episode anyway.
        on_finished: ``on_finished(path)``, called once the file is finished (after ``close()``),
            on the recorder's encoder thread, so a ``close(wait=False)`` does not wait for it: to
            hand the video on (``gymview.video.log_sinks``). What it raises is raised like an
            encoder failure, by ``close()``; the file stays. Not called when encoding failed.
        before_fragment: ``before_fragment(frame)``, called on the encoder thread while
            ``crash_safe`` just before a fragment goes to disk, with the index of the frame encoded
            last: every frame of the fragment comes before it. A step table writes its rows there
            (``gymview.episodes.table.StepTable.write_before``), so the rows of the frames that play
            are on disk whenever the frames are. What it raises is raised like an encoder failure.

    Raises:
        ValueError: When ``path`` does not end in ``.mp4`` or is a folder, ``codec`` is not a video
            encoder of PyAV's FFmpeg, or ``fps``, ``crf``, ``threads`` or ``max_queued_frames`` is
            out of range.
        TypeError: When ``tune`` is not a string or ``None``, or ``fps`` is not a number.
        PermissionError: When no file can be written in the folder of ``path``.

    Examples:
        >>> import numpy as np, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "noise.mp4")
        >>> recorder = VideoRecorder(path, fps=30, crf=18)
        >>> recorder.write(np.random.randint(0, 255, (64, 64, 3), np.uint8))
        >>> recorder.close()
        >>> recorder.frames_written, recorder.size, os.path.exists(path)
        (1, (64, 64), True)
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        fps: float | Fraction = 30,
        codec: str = "libx264",
        crf: int | None = 23,
        preset: str | None = "ultrafast",
        threads: int | None = None,
        max_queued_frames: int | None = None,
        tune: str | None = "zerolatency",
        crash_safe: bool = True,
        on_finished: Callable[[Path], None] | None = None,
        before_fragment: Callable[[int], None] | None = None,
    ) -> None:
        self._path = Path(os.fspath(path)).absolute()
        if self._path.suffix.lower() != ".mp4":
            raise ValueError(f"VideoRecorder writes MP4 files; give a path ending in .mp4, not {str(path)!r}")
        if self._path.is_dir():
            raise ValueError(f"{str(path)!r} is a folder; give the path of the .mp4 file to write")
        fps_text(fps)  # validates
        if crf is not None:
            check_int("crf", crf, minimum=0, maximum=51, hint=" (0 lossless, 51 worst), or None")
        check_optional_int("threads", threads, meaning_of_none="one per core but one")
        check_optional_int("max_queued_frames", max_queued_frames, meaning_of_none="up to 32 frames within 64 MiB")
        if tune is not None and not isinstance(tune, str):
            raise TypeError(f"tune must be an x264 tuning name such as 'zerolatency', or None; got {tune!r}")
        check_encoder(codec)
        check_writable_folder(self._path.parent)
        if threads is None:
            threads = max(1, (os.cpu_count() or 1) - 1)
        self._settings: dict[str, Any] = dict(fps=fps, codec=codec, crf=crf, preset=preset, threads=threads, tune=tune)
        self._max_queued_frames = max_queued_frames
        self._crash_safe = crash_safe
        self._on_finished = on_finished
        self._before_fragment = before_fragment if crash_safe else None
        self.fps = fps
        self._shape: tuple[int, ...] | None = None
        self._accepted = 0
        self._closed = False
        self._feed: EncoderFeed | None = None
        self._pending = _PendingStates()  # write_state()'s states, drawn a chunk at a time
        self._finalizer: weakref.finalize | None = None

    @property
    def path(self) -> Path:
        """The absolute path of the video file."""
        return self._path

    @property
    def frames_written(self) -> int:
        """Frames accepted by ``write``; after ``close()``, the frames in the file."""
        return self._accepted

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called; a closed recorder takes no more frames."""
        return self._closed

    @property
    def finished(self) -> threading.Event | None:
        """Set once the background finishing has ended, well or not (``on_finished`` included);
        ``None`` before the first frame (there is nothing to finish)."""
        return None if self._feed is None else self._feed.ended

    @property
    def size(self) -> tuple[int, int] | None:
        """``(width, height)`` of the frames; ``None`` until the first ``write``."""
        return None if self._shape is None else (self._shape[1], self._shape[0])

    def write(self, frame: object, copy: bool = True) -> None:
        """Queue one frame for encoding; waits while the encoder is behind, never drops a frame.

        Args:
            frame: The image, (H, W), (H, W, 3) or (H, W, 4), of the first frame's size.
            copy: Copy the frame, so its array may be reused at once. ``False`` skips that copy for
                a uint8 RGB frame when nothing will write into the array again (``env.render()``
                usually returns a new array each call), saving a little time per frame.

        Raises:
            ValueError: When the recorder is closed, or the frame's size differs from the first
                frame's.
            gymview.errors.FFmpegError: When the encoder failed on the frames before.

        Examples:
            >>> import numpy as np, tempfile, os
            >>> with VideoRecorder(os.path.join(tempfile.mkdtemp(), "a.mp4")) as recorder:
            ...     recorder.write(np.zeros((32, 48), np.uint8))  # gray is fine
        """
        if self._pending.states:  # in the order written
            self._pending.draw_into(self._feed)  # type: ignore[arg-type]
        if isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == self._shape:
            self._queue(frame, frame.shape, copy=copy)  # into an array that goes round
        else:
            rgb = to_rgb_uint8(frame, copy=copy)  # the first frame, or one converted: a new array anyway
            self._queue(rgb, rgb.shape, copy=False)

    def _queue(self, array: np.ndarray | None, shape: tuple[int, ...], copy: bool) -> None:
        """Queue the RGB frame ``array`` of ``shape``, after checking the recorder may take it
        (``None``: only check, and start the encoder for frames of ``shape``)."""
        if self._closed:
            raise ValueError(f"this VideoRecorder is closed ({str(self._path)!r}); create a new one to record more")
        if self._feed is None:
            self._start(shape)
        elif shape != self._shape:
            height, width = self._shape[:2]  # type: ignore[index]
            raise ValueError(
                f"frame size changed from {width}x{height} to {shape[1]}x{shape[0]} "
                f"(width x height) in {self._path.name}; a video has one size: resize the frame, "
                f"or close this recorder and start another for the new size"
            )
        if array is None:
            return
        if copy:  # into an array that goes round: no allocation per frame (see EncoderFeed)
            spare = self._feed.spare(array.shape)  # type: ignore[union-attr]
            np.copyto(spare, array)
            array = spare
        self._feed.put(array)  # type: ignore[union-attr]
        self._accepted += 1

    def write_state(self, renderer: BatchRenderer, state: np.ndarray) -> None:
        """Queue the frame ``renderer`` draws of ``state``; the cheapest way to record an env that
        has a vectorized renderer. States are drawn many per call, converted for the encoder only
        where the drawing changed; ``close()`` (or the end of the process) draws those still waiting.

        Args:
            renderer: A vectorized renderer (``gymview.renderers.renderer_for(env)``), the same one
                for every state of this recorder.
            state: One state, from ``renderer.state_of(env)``.

        Raises:
            ValueError: When the recorder is closed, the renderer differs from the one before, or
                its frames differ in size from the frames written before.
            gymview.errors.FFmpegError: When the encoder failed on the frames before.

        Examples:
            >>> import numpy as np, tempfile, os
            >>> from gymview.renderers import renderer_for
            >>> renderer = renderer_for("CartPole-v1")
            >>> with VideoRecorder(os.path.join(tempfile.mkdtemp(), "a.mp4")) as recorder:
            ...     for x in np.linspace(-1, 1, 40):
            ...         recorder.write_state(renderer, np.array([x, 0.0, 0.1, 0.0]))
            >>> recorder.frames_written
            40
        """
        pending = self._pending
        if pending.renderer is not renderer:
            if pending.renderer is not None:
                raise ValueError("write_state() got another renderer; record with one renderer per video")
            shape = (renderer.height, renderer.width, 3)
            self._queue(None, shape, copy=False)  # checks and starts the encoder; queues nothing
            pending.renderer = renderer
        elif self._closed:
            self._queue(None, (), copy=False)  # raises
        pending.states.append(state)
        self._accepted += 1
        if len(pending.states) >= RENDER_CHUNK:  # more when an earlier draw was interrupted
            pending.draw_into(self._feed)  # type: ignore[arg-type]

    def _start(self, shape: tuple[int, ...]) -> None:
        height, width = shape[:2]
        even_width, even_height = width + width % 2, height + height % 2
        encoder = VideoEncoder(even_width, even_height, **self._settings)
        before_fragment = self._before_fragment
        if before_fragment is not None:
            encoder.on_key_frame = lambda frames: before_fragment(frames - 1)
        self._feed = EncoderFeed(
            self._path,
            encoder,
            (width, height),
            self._max_queued_frames,
            crash_safe=self._crash_safe,
            on_finished=self._on_finished,
        )
        self._shape = shape
        self._finalizer = weakref.finalize(self, _finish_quietly, self._feed, self._pending)

    def close(self, wait: bool = True) -> None:
        """Finish the video: encode what is queued, finish the file, write the plain MP4.

        Calling ``close`` again is harmless.

        Args:
            wait: Wait until the file is finished. ``False`` lets the finishing go on in the
                background; a later ``close()`` waits for it and raises its error, if any.

        Raises:
            gymview.errors.FFmpegError: When the encoder could not finish the video.
        """
        self._closed = True
        feed = self._feed
        if feed is None:
            return
        if feed.failure is not None:  # already raised to the user; the encoder is gone
            self._finalizer.detach()  # type: ignore[union-attr]
            return
        self._pending.draw_into(feed)
        feed.end()
        if wait:
            self._finalizer.detach()  # type: ignore[union-attr]
            feed.wait(timeout=300.0)
            self._accepted = feed.delivered

    def __enter__(self) -> VideoRecorder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<VideoRecorder {str(self._path)!r} {state}, {self._accepted} frames>"


class _PendingStates:
    """``write_state()``'s states not drawn yet; shared with the recorder's finalizer, which draws
    them before it finishes the video (the recorder is gone by then)."""

    def __init__(self) -> None:
        self.states: list[np.ndarray] = []
        self.renderer: BatchRenderer | None = None

    def draw_into(self, feed: EncoderFeed) -> None:
        """Draw the states waiting and queue their I420 planes on ``feed``."""
        if not self.states:
            return
        queued = 0
        try:
            for planes in drawn_frames(self.renderer).planes(np.stack(self.states)):  # type: ignore[arg-type]
                spare = feed.spare(planes.shape)  # arrays that go round (see EncoderFeed)
                np.copyto(spare, planes)
                feed.put(spare)
                queued += 1
        finally:  # a Ctrl-C leaves the states not queued for the next call (none lost, one at most twice)
            del self.states[:queued]


def _finish_quietly(feed: EncoderFeed, pending: _PendingStates) -> None:
    """The recorder's finalizer (garbage collection, interpreter exit): its last frames, then its file."""
    try:
        if feed.failure is None:
            pending.draw_into(feed)
    except BaseException as error:  # at exit or in a GC pass nobody can catch it
        print(f"gymview: could not draw the last frames of {str(feed.path)!r}: {error}", file=sys.stderr)
    feed.finish_quietly()


class FinishingVideos:
    """Videos that finish in the background while the next one records.

    Each recorder added is closed without waiting; at most one finishes behind the recording in
    progress: adding the next one waits for it, and raises its failure. ``close`` waits for the last.

    Examples:
        >>> import numpy as np, os, tempfile
        >>> finishing = FinishingVideos()
        >>> for name in ("a.mp4", "b.mp4"):
        ...     recorder = VideoRecorder(os.path.join(tempfile.mkdtemp(), name), fps=10)
        ...     recorder.write(np.zeros((16, 16, 3), np.uint8))
        ...     finishing.add(recorder)
        >>> finishing.newest is recorder
        True
        >>> finishing.close(); finishing.newest is None
        True
    """

    def __init__(self) -> None:
        self._recorders: list[VideoRecorder] = []

    @property
    def newest(self) -> VideoRecorder | None:
        """The recorder added last, while it may still be finishing; None when none is."""
        return self._recorders[-1] if self._recorders else None

    def add(self, recorder: VideoRecorder) -> None:
        """Let ``recorder``'s video finish in the background.

        Args:
            recorder: A recorder whose last frame was written.

        Raises:
            gymview.errors.FFmpegError: When the video finishing behind it failed.
        """
        self._recorders.append(recorder)  # first: a Ctrl-C as it starts finishing leaves it for close() to finish
        try:
            recorder.close(wait=False)
        except Exception:
            self._recorders.remove(recorder)  # its own failure, raised now: its finalizer finishes what it can
            raise
        while len(self._recorders) > 1:
            # Dropped only once finished: a Ctrl-C during the wait leaves it for close() to wait for.
            self._recorders[0].close()
            del self._recorders[0]

    def close(self) -> None:
        """Wait until the video still finishing is finished.

        Raises:
            gymview.errors.FFmpegError: When that video could not be finished.
        """
        while self._recorders:
            self._recorders[0].close()
            del self._recorders[0]


def check_writable_folder(folder: Path) -> None:
    """Create ``folder`` if needed and prove a file can be written there, now rather than later.

    Args:
        folder: The folder the files will go to.

    Raises:
        PermissionError: When the folder cannot be created or written to.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> folder = Path(tempfile.mkdtemp()) / "videos"
        >>> check_writable_folder(folder)
        >>> folder.is_dir(), list(folder.iterdir())
        (True, [])
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".gymview-probe-"):
            pass
    except OSError as error:
        raise PermissionError(
            f"cannot write videos into {str(folder)!r}: {error.strerror or error}. Choose a folder you can write to."
        ) from error
