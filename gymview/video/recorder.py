"""Full-resolution recording: ``VideoRecorder``, which the drop-in ``RecordVideo`` wrapper uses.

Frames go from ``write()`` through a bounded queue to a background thread that feeds ffmpeg's
stdin, so memory stays flat however long the episode, and ``write()`` waits when the encoder
falls behind instead of dropping frames.

How the file on disk looks:

* while recording, ``path`` is a *fragmented* MP4: a header, then one self-contained fragment per
  keyframe (about one a second), each flushed as soon as it is encoded. If Python and ffmpeg are
  both killed, the file still plays up to its last whole fragment. If only Python dies, ffmpeg
  (in its own process group) reads end-of-input and finishes the file itself.
* ``close()`` finishes ffmpeg, then copies the streams (no re-encoding) into a plain MP4 with
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
from gymview.image.yuv import I420Converter
from gymview.video.ffmpeg import encode_command, find_ffmpeg, fps_text
from gymview.video.ffmpeg_feed import FFmpegFeed


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
        codec: The ffmpeg video encoder; ``"libx264"`` gives H.264, which every browser plays.
        crf: x264/x265 quality, 0 (lossless) to 51 (worst); 23 is ffmpeg's default, 18 looks
            visually lossless.
        preset: x264/x265 speed/size trade-off, ``"ultrafast"`` to ``"veryslow"``.
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
            plain MP4 directly, one ffmpeg process instead of two: for batch jobs where a crash
            means re-running the episode anyway.
        on_finished: ``on_finished(path)``, called once the file is finished (after ``close()``),
            on the recorder's encoder thread, so a ``close(wait=False)`` does not wait for it: to
            hand the video on (``gymview.video.log_sinks``). What it raises is raised like an
            ffmpeg failure, by ``close()``; the file stays. Not called when encoding failed.

    Raises:
        ValueError: When ``path`` does not end in ``.mp4`` or is a folder, or ``fps``, ``crf``,
            ``threads`` or ``max_queued_frames`` is out of range.
        TypeError: When ``tune`` is not a string or ``None``, or ``fps`` is not a number.
        PermissionError: When no file can be written in the folder of ``path``.
        gymview.errors.FFmpegNotFoundError: When no ffmpeg is found.

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
        preset: str | None = "veryfast",
        threads: int | None = None,
        max_queued_frames: int | None = None,
        tune: str | None = "zerolatency",
        crash_safe: bool = True,
        on_finished: Callable[[Path], None] | None = None,
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
        self._ffmpeg = find_ffmpeg()
        check_writable_folder(self._path.parent)
        if threads is None:
            threads = max(1, (os.cpu_count() or 1) - 1)
        self._settings: dict[str, Any] = dict(fps=fps, codec=codec, crf=crf, preset=preset, threads=threads, tune=tune)
        self._max_queued_frames = max_queued_frames
        self._crash_safe = crash_safe
        self._on_finished = on_finished
        self.fps = fps
        self._shape: tuple[int, ...] | None = None
        self._accepted = 0
        self._closed = False
        self._feed: FFmpegFeed | None = None
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
            gymview.errors.FFmpegError: When ffmpeg failed on the frames before.

        Examples:
            >>> import numpy as np, tempfile, os
            >>> with VideoRecorder(os.path.join(tempfile.mkdtemp(), "a.mp4")) as recorder:
            ...     recorder.write(np.zeros((32, 48), np.uint8))  # gray is fine
        """
        if self._closed:
            raise ValueError(f"this VideoRecorder is closed ({str(self._path)!r}); create a new one to record more")
        if (
            copy
            and self._feed is not None
            and isinstance(frame, np.ndarray)
            and frame.dtype == np.uint8
            and frame.shape == self._shape
        ):
            rgb = self._feed.spare_frame()  # no allocation per frame: see FFmpegFeed
            np.copyto(rgb, frame)
        else:
            rgb = to_rgb_uint8(frame, copy=copy)
        if self._feed is None:
            self._start(rgb.shape)
        elif rgb.shape != self._shape:
            height, width = self._shape[:2]  # type: ignore[index]
            raise ValueError(
                f"frame size changed from {width}x{height} to {rgb.shape[1]}x{rgb.shape[0]} "
                f"(width x height) in {self._path.name}; a video has one size: resize the frame, "
                f"or close this recorder and start another for the new size"
            )
        self._feed.put(rgb)  # type: ignore[union-attr]
        self._accepted += 1

    def frame_to_fill(self) -> np.ndarray | None:
        """An array to draw the next frame into, then pass to ``write(frame, copy=False)``.

        The arrays go round between this recorder and its encoder thread, so a long recording
        allocates no memory per frame. The array's pixels are stale: draw every one of them.

        Returns:
            An (H, W, 3) uint8 array of the frames' size; ``None`` before the first ``write`` (the
                size is not known yet) and once the recorder is closed.

        Examples:
            >>> import numpy as np, tempfile, os
            >>> with VideoRecorder(os.path.join(tempfile.mkdtemp(), "a.mp4")) as recorder:
            ...     recorder.write(np.zeros((32, 48, 3), np.uint8))
            ...     frame = recorder.frame_to_fill()
            ...     frame[...] = 255
            ...     recorder.write(frame, copy=False)
            >>> recorder.frames_written
            2
        """
        return None if self._feed is None or self._closed else self._feed.spare_frame()

    def _start(self, shape: tuple[int, ...]) -> None:
        height, width = shape[:2]
        # Even sizes: frames go to ffmpeg as I420 converted here, only where they changed (half
        # the bytes, and ffmpeg's own conversion costs as much as ultrafast encoding). Odd sizes
        # need ffmpeg's padding, which works on RGB input.
        converter = I420Converter(width, height) if width % 2 == 0 and height % 2 == 0 else None
        command = encode_command(
            self._ffmpeg,
            self._path,
            width=width,
            height=height,
            fragmented=self._crash_safe,
            input_format="rgb24" if converter is None else "yuv420p",
            **self._settings,
        )
        self._feed = FFmpegFeed(
            self._path,
            command,
            self._ffmpeg,
            (height, width, 3),
            self._max_queued_frames,
            remux=self._crash_safe,
            converter=converter,
            on_finished=self._on_finished,
        )
        self._shape = shape
        self._finalizer = weakref.finalize(self, self._feed.finish_quietly)

    def close(self, wait: bool = True) -> None:
        """Finish the video: encode what is queued, stop ffmpeg, write the plain MP4.

        Calling ``close`` again is harmless.

        Args:
            wait: Wait until the file is finished. ``False`` lets the finishing go on in the
                background; a later ``close()`` waits for it and raises its error, if any.

        Raises:
            gymview.errors.FFmpegError: When ffmpeg could not finish the video.
        """
        self._closed = True
        feed = self._feed
        if feed is None:
            return
        if feed.failure is not None:  # already raised to the user; ffmpeg is gone
            self._finalizer.detach()  # type: ignore[union-attr]
            return
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
        recorder.close(wait=False)
        self._recorders.append(recorder)
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
