"""Full-resolution recording: :class:`VideoRecorder` and the drop-in :class:`RecordVideo` wrapper.

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

import gc
import os
import queue
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import logger

from gymview._worker import Worker, WorkerError
from gymview.ffmpeg import FFmpegError, FFmpegProcess, encode_command, find_ffmpeg, fps_text, remux_command
from gymview.frames import to_rgb_uint8
from gymview.renderers import renderer_for
from gymview.yuv import I420Converter

__all__ = ["VideoRecorder", "RecordVideo"]

_QUEUE_BYTES = 64 * 2**20  # frames waiting for the encoder, at most (and at most 32 of them)
_POLL_SECONDS = 0.25  # how often a blocked write() looks whether the encoder thread has failed
_END = object()  # queued after the last frame


class _Encoding:
    """One video being encoded: the queue, the ffmpeg process and the thread between them.

    Kept apart from :class:`VideoRecorder` so the garbage-collection / exit finalizer can finish
    the video without holding a reference to the recorder.
    """

    def __init__(
        self, path: Path, command: list[str], ffmpeg: str, frame_bytes: int, max_queued_frames: int | None,
        remux: bool, converter: I420Converter | None,
    ) -> None:
        self.path = path
        self.ffmpeg = ffmpeg
        self.remux = remux
        self.converter = converter  # RGB -> I420 in this thread, or None: ffmpeg converts
        depth = max_queued_frames or max(2, min(32, _QUEUE_BYTES // frame_bytes))
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=depth)
        self.delivered = 0  # frames handed to ffmpeg; written by the encoder thread only
        self.end_queued = False
        self.failure: BaseException | None = None  # raised by every later call once seen
        self.process = FFmpegProcess(command)
        self.worker = Worker(f"recorder ({path.name})", self._feed_ffmpeg)
        self.worker.start()

    def _feed_ffmpeg(self, stop: threading.Event) -> None:
        try:
            while True:
                try:
                    item = self.queue.get(timeout=_POLL_SECONDS)
                except queue.Empty:
                    if stop.is_set():
                        break
                    continue
                if item is _END:
                    break
                self.process.write(item.data if self.converter is None else self.converter.convert(item).data)
                self.delivered += 1
            if self.process.finish() != 0:
                raise self.process.error(f"ffmpeg failed while encoding {str(self.path)!r}")
        except BaseException:
            self.process.kill()
            raise
        if self.remux:
            self._make_plain_mp4()

    def _make_plain_mp4(self) -> None:
        """Copy the fragmented file into a faststart MP4, then swap it in atomically."""
        temporary = self.path.with_name(f".{self.path.name}.gymview-remux.mp4")
        remux = FFmpegProcess(remux_command(self.ffmpeg, self.path, temporary))
        try:
            if remux.finish() != 0:
                raise remux.error(
                    f"could not rewrite {str(self.path)!r} as a plain MP4; the fragmented MP4 "
                    f"written while recording is still there, complete and playable"
                )
            os.replace(temporary, self.path)
        finally:
            if temporary.exists():
                temporary.unlink()

    def put(self, item: Any) -> None:
        """Queue ``item``, waiting while the queue is full (back-pressure); raise if the thread died."""
        while True:
            self.check()
            try:
                self.queue.put(item, timeout=_POLL_SECONDS)
                return
            except queue.Full:
                continue  # the next check() raises if the encoder thread has ended

    def end(self) -> None:
        if not self.end_queued:
            self.put(_END)
            self.end_queued = True

    def check(self) -> None:
        """Raise the encoder thread's failure (ffmpeg's own errors as FFmpegError), every time."""
        if self.failure is None:
            try:
                self.worker.check()
                if not self.worker.running and not self.end_queued:
                    raise FFmpegError(f"the encoder thread for {str(self.path)!r} has stopped")
            except WorkerError as failure:
                self._keep(failure)
            except FFmpegError as failure:
                self.failure = failure
        if self.failure is not None:
            raise self.failure

    def _keep(self, failure: WorkerError) -> None:
        cause = failure.__cause__
        self.failure = cause if isinstance(cause, (FFmpegError, OSError)) else failure
        self.failure.__suppress_context__ = True

    def wait(self, timeout: float) -> None:
        try:
            self.worker.stop(timeout)
        except WorkerError as failure:
            self._keep(failure)
            raise self.failure from None

    def finish_quietly(self) -> None:
        """The finalizer: end the video and wait for it; report (never raise) a failure."""
        if self.failure is not None:
            return
        try:
            self.end()
            self.wait(timeout=300.0)
        except BaseException as error:  # at exit or in a GC pass nobody can catch it
            print(f"gymview: could not finish the video {str(self.path)!r}: {error}", file=sys.stderr)
            self.process.kill()


class VideoRecorder:
    """Write frames to an H.264 MP4 file at full resolution, encoding in the background.

    Args:
        path: the ``.mp4`` file to write; missing parent folders are created.
        fps: frames per second of the video (a float or Fraction such as 30000/1001 works).
        codec: ffmpeg video encoder; ``"libx264"`` gives H.264, which every browser plays.
        crf: x264/x265 quality, 0 (lossless) .. 51 (worst); 23 is ffmpeg's default, 18 looks
            visually lossless.
        preset: x264/x265 speed/size trade-off, ``"ultrafast"`` .. ``"veryslow"``.
        tune: x264/x265 tuning. ``"zerolatency"`` (the default) encodes each frame as it comes,
            without B-frames or look-ahead: on MountainCar frames 40% less encoder CPU than
            plain ``veryfast`` for files about a third larger; ``None`` gives the smaller files.
        threads: encoder threads; ``None``: one per core but one (at least one), leaving a
            core to the loop that makes the frames (x264's own choice, 1.5 per core, costs
            more CPU per frame where cores are few).
        max_queued_frames: frames that may wait for the encoder before ``write`` blocks;
            ``None`` picks up to 32 frames within 64 MiB.
        crash_safe: write a fragmented MP4 while recording (playable up to about the last
            second if the process dies) and rewrite it as a plain MP4 on close. ``False`` writes
            the plain MP4 directly, one ffmpeg process instead of two: for batch jobs where a
            crash means re-running the episode anyway.

    Frames may be any image :func:`gymview.to_rgb_uint8` accepts (uint8/float/bool, gray, RGB
    or RGBA); all must have the first frame's size. An odd width or height gets one black
    column or row on the right or bottom (H.264 in yuv420p needs even sizes); nothing is
    scaled. Closing a recorder that got no frames writes no file.

    >>> import numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "noise.mp4")
    >>> recorder = VideoRecorder(path, fps=30, crf=18)
    >>> recorder.write(np.random.randint(0, 255, (64, 64, 3), np.uint8))
    >>> recorder.close()
    >>> recorder.frames_written, os.path.exists(path)
    (1, True)
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
    ) -> None:
        self._path = Path(os.fspath(path)).absolute()
        if self._path.suffix.lower() != ".mp4":
            raise ValueError(f"VideoRecorder writes MP4 files; give a path ending in .mp4, not {str(path)!r}")
        if self._path.is_dir():
            raise ValueError(f"{str(path)!r} is a folder; give the path of the .mp4 file to write")
        fps_text(fps)  # validates
        if crf is not None and (isinstance(crf, bool) or not isinstance(crf, int) or not 0 <= crf <= 51):
            raise ValueError(f"crf must be an integer from 0 (lossless) to 51 (worst), or None; got {crf!r}")
        if threads is not None and (not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be a positive integer or None (one per core but one); got {threads!r}")
        if max_queued_frames is not None and (not isinstance(max_queued_frames, int) or max_queued_frames < 1):
            raise ValueError(f"max_queued_frames must be a positive integer or None; got {max_queued_frames!r}")
        if tune is not None and not isinstance(tune, str):
            raise TypeError(f"tune must be an x264 tuning name such as 'zerolatency', or None; got {tune!r}")
        self._ffmpeg = find_ffmpeg()
        _check_writable_folder(self._path.parent)
        if threads is None:
            threads = max(1, (os.cpu_count() or 1) - 1)
        self._settings = dict(fps=fps, codec=codec, crf=crf, preset=preset, threads=threads, tune=tune)
        self._max_queued_frames = max_queued_frames
        self._crash_safe = crash_safe
        self.fps = fps
        self._shape: tuple[int, ...] | None = None
        self._accepted = 0
        self._closed = False
        self._encoding: _Encoding | None = None
        self._finalizer: weakref.finalize | None = None

    @property
    def path(self) -> Path:
        """The absolute path of the video file."""
        return self._path

    @property
    def frames_written(self) -> int:
        """Frames accepted by :meth:`write` (after ``close()``: frames in the file)."""
        return self._accepted

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def size(self) -> tuple[int, int] | None:
        """(width, height) of the frames, known after the first ``write``."""
        return None if self._shape is None else (self._shape[1], self._shape[0])

    def write(self, frame: object, copy: bool = True) -> None:
        """Queue one frame for encoding; waits while the encoder is behind, never drops a frame.

        The frame is copied, so its array may be reused at once. ``copy=False`` skips that copy
        for a uint8 RGB frame when nothing will write into the array again (``env.render()``
        usually returns a new array each call), saving a little time per frame.

        >>> import numpy as np, tempfile, os
        >>> with VideoRecorder(os.path.join(tempfile.mkdtemp(), "a.mp4")) as recorder:
        ...     recorder.write(np.zeros((32, 48), np.uint8))  # gray is fine
        """
        if self._closed:
            raise ValueError(f"this VideoRecorder is closed ({str(self._path)!r}); create a new one to record more")
        rgb = to_rgb_uint8(frame, copy=copy)
        if self._encoding is None:
            self._start(rgb.shape)
        elif rgb.shape != self._shape:
            height, width = self._shape[:2]  # type: ignore[index]
            raise ValueError(
                f"frame size changed from {width}x{height} to {rgb.shape[1]}x{rgb.shape[0]} "
                f"(width x height) in {self._path.name}; a video has one size: resize the frame, "
                f"or close this recorder and start another for the new size"
            )
        self._encoding.put(rgb)  # type: ignore[union-attr]
        self._accepted += 1

    def _start(self, shape: tuple[int, ...]) -> None:
        height, width = shape[:2]
        # Even sizes: frames go to ffmpeg as I420 converted here, only where they changed (half
        # the bytes, and ffmpeg's own conversion costs as much as ultrafast encoding). Odd sizes
        # need ffmpeg's padding, which works on RGB input.
        converter = I420Converter(width, height) if width % 2 == 0 and height % 2 == 0 else None
        command = encode_command(
            self._ffmpeg, self._path, width=width, height=height, fragmented=self._crash_safe,
            input_format="rgb24" if converter is None else "yuv420p", **self._settings,
        )
        self._encoding = _Encoding(
            self._path, command, self._ffmpeg, height * width * 3, self._max_queued_frames, remux=self._crash_safe,
            converter=converter,
        )
        self._shape = shape
        self._finalizer = weakref.finalize(self, self._encoding.finish_quietly)

    def close(self, wait: bool = True) -> None:
        """Finish the video: encode what is queued, stop ffmpeg, write the plain MP4.

        With ``wait=False`` the finishing goes on in the background; a later ``close()`` waits
        for it and raises its error, if any. Calling ``close`` again is harmless.
        """
        self._closed = True
        encoding = self._encoding
        if encoding is None:
            return
        if encoding.failure is not None:  # already raised to the user; ffmpeg is gone
            self._finalizer.detach()  # type: ignore[union-attr]
            return
        encoding.end()
        if wait:
            self._finalizer.detach()  # type: ignore[union-attr]
            encoding.wait(timeout=300.0)
            self._accepted = encoding.delivered

    def __enter__(self) -> VideoRecorder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<VideoRecorder {str(self._path)!r} {state}, {self._accepted} frames>"


def _check_writable_folder(folder: Path) -> None:
    """Create ``folder`` if needed and prove a file can be written there, now rather than later."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".gymview-probe-"):
            pass
    except OSError as error:
        raise PermissionError(
            f"cannot write videos into {str(folder)!r}: {error.strerror or error}. "
            f"Choose a folder you can write to."
        ) from error


class RecordVideo(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Drop-in replacement for :class:`gymnasium.wrappers.RecordVideo`, streaming to ffmpeg.

    Same arguments, triggers, file names (``{name_prefix}-episode-{n}.mp4``,
    ``{name_prefix}-step-{n}.mp4``) and ``video_length`` rule as gymnasium's wrapper, but each
    frame is encoded as it comes instead of being kept until the episode ends, so memory stays
    flat. Differences: ``disable_logger`` has nothing to silence (there is no progress bar);
    ``gc_trigger`` defaults to ``None`` because no frames are kept to free; a finished video
    is finalized in the background while the next episode runs (``close()`` waits for all);
    ``crf``, ``preset``, ``tune`` and ``threads`` set the encoder (see :class:`VideoRecorder`).
    With ``fast_render`` (the default), the classic-control envs (CartPole, MountainCar,
    Acrobot, Pendulum) in ``rgb_array`` mode are recorded through :mod:`gymview.renderers`,
    which draw the same picture from the env's state about 3x faster than pygame (within 36 dB
    PSNR of it); ``env.render()`` itself is unchanged. A wrapper in between that overrides
    ``render`` (it may draw on the frames) turns this off.

    >>> import gymnasium as gym, tempfile
    >>> env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), tempfile.mkdtemp())
    >>> _ = env.reset(seed=0)
    >>> _ = env.step(0)
    >>> env.close()
    """

    def __init__(
        self,
        env: gym.Env,
        video_folder: str,
        episode_trigger: Callable[[int], bool] | None = None,
        step_trigger: Callable[[int], bool] | None = None,
        video_length: int = 0,
        name_prefix: str = "rl-video",
        fps: int | None = None,
        disable_logger: bool = True,
        gc_trigger: Callable[[int], bool] | None = None,
        *,
        crf: int | None = 23,
        preset: str | None = "veryfast",
        threads: int | None = None,
        fast_render: bool = True,
        tune: str | None = "zerolatency",
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            video_folder=video_folder,
            episode_trigger=episode_trigger,
            step_trigger=step_trigger,
            video_length=video_length,
            name_prefix=name_prefix,
            fps=fps,
            disable_logger=disable_logger,
            gc_trigger=gc_trigger,
            crf=crf,
            preset=preset,
            threads=threads,
            fast_render=fast_render,
            tune=tune,
        )
        gym.Wrapper.__init__(self, env)
        if env.render_mode in {None, "human", "ansi"}:
            raise ValueError(
                f"Render mode is {env.render_mode}, which is incompatible with RecordVideo. "
                "Initialize your environment with a render_mode that returns an image, such as rgb_array."
            )
        if isinstance(video_length, bool) or not isinstance(video_length, int) or video_length < 0:
            raise ValueError(f"video_length must be 0 (whole episodes) or a positive number of frames; got {video_length!r}")
        if episode_trigger is None and step_trigger is None:
            from gymnasium.utils.save_video import capped_cubic_video_schedule

            episode_trigger = capped_cubic_video_schedule
        self.episode_trigger = episode_trigger
        self.step_trigger = step_trigger
        self.disable_logger = disable_logger
        self.gc_trigger = gc_trigger

        self.video_folder = os.path.abspath(video_folder)
        if os.path.isdir(self.video_folder):
            logger.warn(
                f"Overwriting existing videos at {self.video_folder} folder "
                f"(try specifying a different `video_folder` for the `RecordVideo` wrapper if this is not desired)"
            )
        _check_writable_folder(Path(self.video_folder))
        find_ffmpeg()  # fail now, not at the first recorded episode

        self.frames_per_sec: int = fps if fps is not None else self.metadata.get("render_fps", 30)
        self.name_prefix = name_prefix
        self.video_length: float = video_length if video_length != 0 else float("inf")
        self.recording = False
        self.render_history: list[Any] = []
        self.step_id = -1
        self.episode_id = -1
        self._video_name: str | None = None
        self._encoder_options = dict(crf=crf, preset=preset, threads=threads, tune=tune)
        self._renderer = renderer_for(env) if fast_render and env.render_mode == "rgb_array" else None
        self._recorder: VideoRecorder | None = None
        self._finishing: list[VideoRecorder] = []  # closed, still finalizing in the background
        self.last_frame: np.ndarray | None = None  # the frame recorded last; a live view reuses it

    @property
    def frames_recorded(self) -> int:
        """Frames in the video being recorded now (0 when not recording)."""
        return 0 if self._recorder is None else self._recorder.frames_written

    def _capture_frame(self) -> None:
        if not self.recording:
            raise RuntimeError("Cannot capture a frame, recording wasn't started.")
        if self._renderer is not None:  # a new array each time, never written again: no copy needed
            self.last_frame = self._renderer.render(self._renderer.state_of(self.env)[None])[0]
            self._recorder.write(self.last_frame, copy=False)  # type: ignore[union-attr]
            return
        frame = self.env.render()
        if isinstance(frame, list):
            if len(frame) == 0:
                logger.warn(
                    "Trying to capture render frame but 'env.render()' has just been called. The frame cannot be captured."
                )
                return
            self.render_history += frame
            frame = frame[-1]
        if isinstance(frame, np.ndarray):
            self._recorder.write(frame)  # type: ignore[union-attr]
            self.last_frame = frame
        else:
            self.stop_recording()
            logger.warn(
                f"Recording stopped: expected type of frame returned by render to be a numpy array, got instead {type(frame)}."
            )

    def _capture_while_recording(self) -> None:
        """Record the current frame if a recording runs; end it past ``video_length`` frames."""
        if self.recording:
            self._capture_frame()
            if self.frames_recorded > self.video_length:
                self.stop_recording()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the environment and start a new recording if the episode trigger says so."""
        obs, info = super().reset(seed=seed, options=options)
        self.episode_id += 1
        if self.recording and self.video_length == float("inf"):
            self.stop_recording()
        if self.episode_trigger and self.episode_trigger(self.episode_id):
            self.start_recording(f"{self.name_prefix}-episode-{self.episode_id}")
        self._capture_while_recording()
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the environment, recording the rendered frame while a recording runs."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.step_id += 1
        if self.step_trigger and self.step_trigger(self.step_id):
            self.start_recording(f"{self.name_prefix}-step-{self.step_id}")
        self._capture_while_recording()
        return obs, reward, terminated, truncated, info

    def render(self) -> Any:
        """Render the environment; frames from list render modes are recorded too."""
        render_out = super().render()
        if self.recording and isinstance(render_out, list):
            for frame in render_out:
                self._recorder.write(frame)  # type: ignore[union-attr]
        if self.render_history:
            history, self.render_history = self.render_history, []
            return history + render_out
        return render_out

    def start_recording(self, video_name: str) -> None:
        """Start recording ``{video_folder}/{video_name}.mp4``, ending a recording in progress."""
        if self.recording:
            self.stop_recording()
        self._recorder = VideoRecorder(
            os.path.join(self.video_folder, f"{video_name}.mp4"), fps=self.frames_per_sec, **self._encoder_options
        )
        self.recording = True
        self._video_name = video_name

    def stop_recording(self) -> None:
        """Stop the current recording; its file is finished in the background."""
        if not self.recording or self._recorder is None:
            raise RuntimeError("stop_recording was called, but no recording was started")
        recorder, self._recorder = self._recorder, None
        self.recording = False
        self._video_name = None
        if recorder.frames_written == 0:
            logger.warn("Ignored saving a video as there were zero frames to save.")
        recorder.close(wait=False)
        self._finishing.append(recorder)
        while len(self._finishing) > 1:  # at most one video finishing behind the one recording
            self._finishing.pop(0).close()
        if self.gc_trigger and self.gc_trigger(self.episode_id):
            gc.collect()

    def close(self) -> None:
        """Close the environment, then finish every video (raises the first failure, if any)."""
        try:
            super().close()
        finally:
            if self.recording:
                self.stop_recording()
            failures = []
            while self._finishing:
                try:
                    self._finishing.pop(0).close()
                except Exception as failure:  # finish the others before reporting
                    failures.append(failure)
            if failures:
                raise failures[0]
