"""The errors gymview raises to the user, in one place.

>>> import gymview.errors
>>> issubclass(gymview.errors.FFmpegError, RuntimeError)
True
"""

__all__ = [
    "EncoderProcessError",
    "FFmpegError",
    "FFmpegNotFoundError",
    "FitnessError",
    "FrameError",
    "Stopped",
    "VideoLogError",
    "WorkerError",
]


class Stopped(Exception):
    """Raised by a watched env's ``step()`` or ``reset()`` after Stop: the loop ends at a step boundary.

    Stop is the view's button, ``run.stop()``, or a background job's stop. Catch it to end
    quietly; stable-baselines3's ``learn()`` ends with it.

    Args:
        message: The error's text; the default says where the stop came from and how to catch it.

    Examples:
        >>> try:
        ...     raise Stopped()
        ... except Stopped as stop:
        ...     print("ended:", stop)
        ended: stopped from the view (or run.stop()); catch gymview.Stopped to end the loop quietly
    """

    def __init__(
        self, message: str = "stopped from the view (or run.stop()); catch gymview.Stopped to end the loop quietly"
    ) -> None:
        super().__init__(message)


class WorkerError(RuntimeError):
    """Raised in the user's thread when a gymview background thread failed.

    The next call into the object whose thread failed raises it (a view's ``push()`` or
    ``stop()``, for one); the message names the thread and ``__cause__`` holds its own exception.

    Examples:
        >>> try:
        ...     raise WorkerError("gymview's stream thread failed: OSError('gone')") from OSError("gone")
        ... except RuntimeError as error:  # a WorkerError is a RuntimeError
        ...     print(type(error).__name__, repr(error.__cause__))
        WorkerError OSError('gone')
    """


class FitnessError(RuntimeError):
    """A genome's fitness could not be computed (the fitness function raised, or its worker died).

    The message names the genome, the generation and the error.

    Examples:
        >>> import gymview.neat
        >>> try:
        ...     gymview.neat.evolve("CartPole-v1", generations=1, fitness=lambda policy, env: 1 / 0,
        ...                         workers=0, panel=False)
        ... except FitnessError as error:
        ...     print(str(error).split(" (")[0])
        the fitness of genome 1 in generation 0 failed: ZeroDivisionError: division by zero
    """


class FFmpegNotFoundError(RuntimeError):
    """No ffmpeg binary could be found.

    The message says where gymview looked and how to point it at one.

    Examples:
        >>> import os
        >>> from unittest import mock
        >>> from gymview.video.ffmpeg import find_ffmpeg
        >>> with mock.patch.dict(os.environ, {"GYMVIEW_FFMPEG": "/no/such/ffmpeg"}):
        ...     try:
        ...         find_ffmpeg()
        ...     except FFmpegNotFoundError as error:
        ...         print(str(error).split(".")[0])
        GYMVIEW_FFMPEG='/no/such/ffmpeg' is not an executable file
    """


class FFmpegError(RuntimeError):
    """Encoding or writing a video failed; the message names the file and holds FFmpeg's own words.

    Examples:
        >>> import numpy as np, os, tempfile, gymview
        >>> recorder = gymview.VideoRecorder(os.path.join(tempfile.mkdtemp(), "a.mp4"), tune="no-such-tune")
        >>> try:
        ...     recorder.write(np.zeros((32, 32, 3), np.uint8))
        ... except FFmpegError as error:
        ...     print(str(error).split(" for ")[0])
        could not open the 'libx264' encoder
    """


class EncoderProcessError(RuntimeError):
    """The helper process that draws and encodes a view's frames could not be started, or died.

    The message says how it ended (an exit status or a signal) and what it printed last; the frame it
    held is lost, and the next frame starts a new helper.

    Examples:
        >>> try:
        ...     raise EncoderProcessError("gymview's helper process was killed by SIGABRT")
        ... except RuntimeError as error:  # an EncoderProcessError is a RuntimeError
        ...     print(type(error).__name__)
        EncoderProcessError
    """


class FrameError(RuntimeError):
    """A live view's frame could not be made: its painter raised, or returned no image.

    The frame is dropped; the message carries the traceback (from the helper process, where frames are
    made), so it names the painter's own line. The view's next ``push()``, ``flush()`` or ``stop()``
    raises it (``close()`` warns with it), and the frames after it are made as usual.

    Examples:
        >>> import numpy as np, gymview
        >>> class Broken:
        ...     def paint(self, state, canvas):
        ...         raise ValueError("painter bug 7")
        >>> class BrokenFrame:
        ...     painter, state = Broken(), np.zeros(1)
        ...     def draw(self): return self.painter.paint(self.state, None)
        ...     def checked(self): return self
        >>> view = gymview.LiveView(send=lambda header, buffers: None, in_kernel=True)
        >>> view.push(BrokenFrame(), force=True)
        True
        >>> try:
        ...     view.flush()
        ... except FrameError as error:
        ...     print(str(error).splitlines()[-1])
        ValueError: painter bug 7
        >>> view.close()
    """


class VideoLogError(RuntimeError):
    """A finished video could not be handed to its ``log_to=`` target (TensorBoard, W&B, a function).

    The video file is finished and kept; the message names it and the target, and ``__cause__``
    holds the target's own error. ``RecordVideo`` raises it where it raises a video's other
    errors (the next recording's start, or ``close()``); ``WatchCallback`` when training ends.

    Examples:
        >>> import numpy as np, os, tempfile, gymnasium as gym, gymview
        >>> def broken(path, info):
        ...     raise OSError("disk full")
        >>> env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"),
        ...                            os.path.join(tempfile.mkdtemp(), "videos"), log_to=broken)
        >>> _ = env.reset(seed=0)
        >>> try:
        ...     env.close()
        ... except VideoLogError as error:
        ...     print(repr(error.__cause__), os.path.exists(env.video_folder + "/rl-video-episode-0.mp4"))
        OSError('disk full') True
    """
