"""Finished videos handed to TensorBoard, Weights & Biases or a function of yours (``log_to=``).

``RecordVideo``, ``record_batch`` and SB3's ``WatchCallback`` take ``log_to=``: a TensorBoard
``SummaryWriter`` (``torch.utils.tensorboard`` or ``tensorboardX``), a W&B run (or the ``wandb``
module while a run is active), or a function ``log_to(path, info)``. Neither TensorBoard nor W&B
is imported here: the target is recognised by what it has (``add_video``) or where its class comes
from (``wandb``), so ``import gymview`` stays light and either library is optional.

* TensorBoard shows videos as animated GIFs, which grow fast with the picture: the MP4 is read back
  and its frames are shrunk (area averaging) to at most ``max_size`` pixels on the long side
  (256 by default) before they go in as one GIF summary at the video's own fps.
* W&B gets the MP4 itself (``wandb.Video(path, format="mp4")``): its fps is the file's, not W&B's
  default of 4 frames per second for arrays. The step goes in as a metric of its own (``env_step``
  or ``episode``) that the video is plotted against, so W&B never drops it for being below the
  run's step.

>>> import numpy as np, os, tempfile
>>> from gymview.video.recorder import VideoRecorder
>>> path = os.path.join(tempfile.mkdtemp(), "a.mp4")
>>> with VideoRecorder(path, fps=10) as recorder:
...     for i in range(3):
...         recorder.write(np.full((32, 48, 3), 80 * i, np.uint8))
>>> seen = []
>>> log = video_log(lambda path, info: seen.append((os.path.basename(path), info["step"])), tag="videos/a")
>>> log(path, {"step": 7, "fps": 10, "frames": 3})
>>> seen
[('a.mp4', 7)]
"""

from __future__ import annotations

import collections
import io
import math
import os
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gymview.errors import VideoLogError
from gymview.image.frames import downsample

__all__ = ["VideoLog", "video_log"]

TENSORBOARD_MAX_SIZE = 256  # long side of the GIF frames TensorBoard gets

LogTarget = Any  # a SummaryWriter, a wandb run or module, or a function (path, info) -> None


class VideoLog:
    """Hand each finished video to one target; see the module docstring.

    Args:
        target: A TensorBoard ``SummaryWriter``, a ``wandb`` run or the ``wandb`` module, or a
            function ``target(path, info)``.
        tag: The name the videos go under (TensorBoard's tag, W&B's key).
        step_key: What the step counts, ``"env_step"`` or ``"episode"``: W&B's x-axis for ``tag``.
        max_size: Long side of the frames TensorBoard gets, in pixels.

    Raises:
        TypeError: When ``target`` is none of these.
        ValueError: When ``target`` is the ``wandb`` module and no run is active.

    Examples:
        >>> log = VideoLog(print, tag="videos/eval")
        >>> log.kind, log.describe()
        ('function', 'print')
    """

    def __init__(
        self, target: LogTarget, tag: str, step_key: str = "env_step", max_size: int = TENSORBOARD_MAX_SIZE
    ) -> None:
        self.kind = _kind_of(target)
        if self.kind == "wandb" and isinstance(target, types.ModuleType) and target.run is None:
            raise ValueError("log_to=wandb needs an active run: call wandb.init(...) first, or pass the run it returns")
        self.target = target
        self.tag = tag
        self.step_key = step_key
        self.max_size = max_size
        self._axis_defined = False
        self._lock = threading.Lock()  # one video at a time, whichever thread hands it over
        self._queued: collections.deque[tuple[Path, dict[str, Any]]] = collections.deque()
        self._queue_changed = threading.Condition()
        self._logging = False  # a thread is logging what was queued
        self._failures: list[VideoLogError] = []  # from log_later, not raised yet

    def describe(self) -> str:
        """The target, in a few words, for messages.

        Returns:
            ``"TensorBoard (SummaryWriter)"``, ``"W&B"`` or the function's name.

        Examples:
            >>> VideoLog(lambda path, info: None, tag="v").describe()
            '<lambda>'
        """
        if self.kind == "tensorboard":
            return f"TensorBoard ({type(self.target).__name__})"
        if self.kind == "wandb":
            return "W&B"
        return getattr(self.target, "__qualname__", None) or type(self.target).__name__

    def __call__(self, path: str | os.PathLike[str], info: dict[str, Any]) -> None:
        """Log the finished video ``path``; ``info`` holds at least ``step`` and ``fps``.

        Raises:
            VideoLogError: When the target failed; the video stays where it is.
        """
        try:
            with self._lock:
                self._log(Path(path), info)
        except Exception as error:
            raise VideoLogError(
                f"logging the video {str(path)!r} to {self.describe()} failed: {type(error).__name__}: {error}. "
                f"The video itself is finished and kept there."
            ) from error

    def log_later(self, path: str | os.PathLike[str], info: dict[str, Any]) -> None:
        """Log ``path`` on a thread of its own, after the videos queued before it; returns at once.
        A failure is kept for :meth:`raise_failure` and :meth:`finish`. While the interpreter exits
        (a video finished by its finalizer) the video is logged here, now: a thread started then
        would never be waited for.

        Raises:
            VideoLogError: Only while the interpreter exits, when logging failed.
        """
        exiting = not threading.main_thread().is_alive()
        with self._queue_changed:
            self._queued.append((Path(path), dict(info)))
            started, self._logging = self._logging, True
        if started:
            if exiting:  # a logging thread still at work as the interpreter exits: see this video through too
                self.finish()
            return
        if not exiting:
            try:
                # not a daemon (it may be started from one): an exit waits for the videos queued
                threading.Thread(target=self._log_queued, name="gymview-video-log", daemon=False).start()
                return
            except RuntimeError:  # the interpreter has begun to exit
                pass
        self._log_queued()
        self.raise_failure()

    def on_finished(self, info: dict[str, Any], after: threading.Event | None) -> Callable[[Path], None]:
        """A recorder's ``on_finished`` that queues its video with ``info`` (as it is once the file is
        finished) after the previous video's finishing, ``after``, has ended: videos are queued, and
        so logged, in the order they were recorded. The recorder's thread waits, never the loop.
        It holds no recorder, so a recorder's finalizer can still run.

        Args:
            info: What :meth:`log_later` gets with the path; updated by the caller until the file is finished.
            after: The previous recorder's ``finished`` event, or ``None``.

        Returns:
            The function to pass as ``VideoRecorder(on_finished=...)``.
        """

        def queue(path: Path) -> None:
            if after is not None:
                after.wait()
            self.log_later(path, info)

        return queue

    def raise_failure(self) -> None:
        """Raise the first failure of a video queued with :meth:`log_later` that has not been raised
        yet, naming any others; return at once if there is none.

        Raises:
            VideoLogError: The first failure not raised before.
        """
        with self._queue_changed:
            failures, self._failures = self._failures, []
        if len(failures) == 1:
            raise failures[0]
        if failures:
            others = " ".join(f"Also: {other}" for other in failures[1:])
            raise VideoLogError(f"{failures[0]} {others}") from failures[0].__cause__

    def finish(self, timeout: float = 300.0) -> None:
        """Wait until every video queued with :meth:`log_later` is logged, then :meth:`raise_failure`.

        Args:
            timeout: Seconds to wait for the logging to end.

        Raises:
            VideoLogError: When one of them failed to log, or logging took longer than ``timeout``.
        """
        with self._queue_changed:
            if not self._queue_changed.wait_for(lambda: not self._logging, timeout):
                raise VideoLogError(
                    f"logging videos to {self.describe()} still runs after {timeout:g} s; "
                    "the videos themselves are finished and kept"
                )
        self.raise_failure()

    def _log_queued(self) -> None:
        while True:
            with self._queue_changed:
                if not self._queued:
                    self._logging = False
                    self._queue_changed.notify_all()
                    return
                path, info = self._queued.popleft()
            try:
                self(path, info)
            except VideoLogError as error:
                with self._queue_changed:
                    self._failures.append(error)

    def _log(self, path: Path, info: dict[str, Any]) -> None:
        if self.kind == "tensorboard":
            self._to_tensorboard(path, info)
        elif self.kind == "wandb":
            self._to_wandb(path, info)
        else:
            self.target(path, dict(info))

    def _to_tensorboard(self, path: Path, info: dict[str, Any]) -> None:
        frames = read_frames(path, self.max_size)
        if not len(frames):
            return
        fps = float(info["fps"])
        summary_of = _summary_maker(self.target)
        if summary_of is None:  # another writer with add_video: its own GIF encoder (moviepy)
            self.target.add_video(self.tag, frames.transpose(0, 3, 1, 2)[None], global_step=info["step"], fps=fps)
            return
        writer = self.target._get_file_writer()
        writer.add_summary(summary_of(self.tag, frames, gif_bytes(frames, fps)), info["step"])

    def _to_wandb(self, path: Path, info: dict[str, Any]) -> None:
        wandb = sys.modules["wandb"]
        run = self.target.run if isinstance(self.target, types.ModuleType) else self.target
        if run is None:
            raise ValueError("no W&B run is active any more (wandb.finish() was called)")
        if not self._axis_defined:
            run.define_metric(self.step_key)
            run.define_metric(self.tag, step_metric=self.step_key)
            self._axis_defined = True
        video = wandb.Video(str(path), format="mp4")  # plays at the file's own fps
        run.log({self.tag: video, self.step_key: info["step"]})


def video_log(log_to: LogTarget | None, tag: str, step_key: str = "env_step") -> VideoLog | None:
    """The ``VideoLog`` for a ``log_to=`` argument; ``None`` for ``None``.

    Args:
        log_to: What the caller was given (see ``VideoLog``), or ``None``.
        tag: The name the videos go under.
        step_key: What the step counts (``"env_step"`` or ``"episode"``).

    Returns:
        A ``VideoLog``, or ``None`` when ``log_to`` is ``None``.

    Raises:
        TypeError: When ``log_to`` is not a writer, a run or a function.

    Examples:
        >>> video_log(None, tag="v") is None
        True
        >>> video_log(42, tag="v")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        TypeError: log_to takes a TensorBoard SummaryWriter, a wandb run (...) or a function log_to(path, info); got int
    """
    return None if log_to is None else VideoLog(log_to, tag, step_key)


def _kind_of(target: object) -> str:
    if callable(getattr(target, "add_video", None)):
        return "tensorboard"
    module = target.__name__ if isinstance(target, types.ModuleType) else type(target).__module__
    if module.split(".")[0] == "wandb" and callable(getattr(target, "log", None)):
        return "wandb"
    if callable(target) and not isinstance(target, types.ModuleType):
        return "function"
    raise TypeError(
        "log_to takes a TensorBoard SummaryWriter, a wandb run (or the wandb module after wandb.init()) "
        f"or a function log_to(path, info); got {type(target).__name__}"
    )


def read_frames(path: str | os.PathLike[str], max_size: int) -> np.ndarray:
    """The frames of a video file as one (T, H, W, 3) uint8 array, shrunk to ``max_size``.

    Args:
        path: The video file.
        max_size: Long side of the frames returned, in pixels; smaller frames stay as they are.

    Returns:
        The frames, in order.

    Examples:
        >>> import numpy as np, os, tempfile
        >>> from gymview.video.recorder import VideoRecorder
        >>> path = os.path.join(tempfile.mkdtemp(), "a.mp4")
        >>> with VideoRecorder(path) as recorder:
        ...     for _ in range(4):
        ...         recorder.write(np.zeros((100, 200, 3), np.uint8))
        >>> read_frames(path, 50).shape
        (4, 25, 50, 3)
    """
    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    width, height = meta["size"]
    frames = []
    for data in reader:
        frame = np.frombuffer(data, np.uint8).reshape(height, width, 3)
        frames.append(np.ascontiguousarray(downsample(frame, max_size)))
    return np.stack(frames) if frames else np.empty((0, height, width, 3), np.uint8)


def gif_bytes(frames: np.ndarray, fps: float) -> bytes:
    """An endlessly looping GIF of ``frames`` (T, H, W, 3) playing at ``fps``, made with Pillow.

    Args:
        frames: The frames, uint8 RGB.
        fps: Frames per second; above 50, every k-th frame is kept (see :func:`gif_timing`).

    Returns:
        The GIF file's bytes.

    Examples:
        >>> gif_bytes(np.zeros((2, 8, 8, 3), np.uint8), fps=10)[:6]
        b'GIF89a'
    """
    from PIL import Image

    every, durations = gif_timing(len(frames), fps)
    pictures = [Image.fromarray(frame) for frame in frames[::every]]
    out = io.BytesIO()
    pictures[0].save(out, format="GIF", save_all=True, append_images=pictures[1:], duration=durations, loop=0)
    return out.getvalue()


def gif_timing(count: int, fps: float) -> tuple[int, list[int]]:
    """Which frames a GIF of ``count`` frames at ``fps`` keeps (every k-th) and each one's delay in ms.

    GIF delays are whole hundredths of a second, and browsers play a delay under 20 ms as 100 ms:
    above 50 fps frames are dropped instead, and the delays alternate so the GIF keeps the video's
    speed (30 fps: 30, 40, 30 ms...).

    Args:
        count: Frames in the video.
        fps: The video's frames per second.

    Returns:
        (k, the delays of frames 0, k, 2k... in milliseconds, multiples of 10, each at least 20).

    Examples:
        >>> gif_timing(3, 30)
        (1, [30, 40, 30])
        >>> gif_timing(4, 60)
        (2, [30, 40])
        >>> gif_timing(6, 125)
        (3, [20, 30])
    """
    every = max(1, math.ceil(fps / 50))
    ends = [round(100 * every * (index + 1) / fps) for index in range(math.ceil(count / every))]
    return every, [10 * (end - start) for start, end in zip([0, *ends], ends)]


def _summary_maker(writer: object) -> Callable[[str, np.ndarray, bytes], Any] | None:
    """A function making the GIF image summary for ``writer``'s own protobuf classes, or None.

    torch's ``add_video`` encodes its GIF with ``moviepy.editor``, which moviepy 2 removed: it prints
    a message and logs nothing. The summary is the same one ``add_video`` makes, encoded here.
    """
    module = type(writer).__module__
    if not callable(getattr(writer, "_get_file_writer", None)):
        return None
    if module.startswith("torch.utils.tensorboard"):
        from tensorboard.compat.proto.summary_pb2 import Summary
    elif module.startswith("tensorboardX"):
        from tensorboardX.proto.summary_pb2 import Summary
    else:
        return None

    def summary(tag: str, frames: np.ndarray, gif: bytes) -> Any:
        _, height, width, channels = frames.shape
        image = Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=gif)
        return Summary(value=[Summary.Value(tag=tag, image=image)])

    return summary
