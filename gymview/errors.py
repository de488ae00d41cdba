"""The errors gymview raises to the user, in one place.

>>> import gymview.errors
>>> issubclass(gymview.errors.FFmpegError, RuntimeError)
True
"""

__all__ = ["EncoderProcessError", "FFmpegError", "FFmpegNotFoundError", "FitnessError", "Stopped", "WorkerError"]


class Stopped(Exception):
    """Raised by a watched env's ``step()`` or ``reset()`` after Stop was clicked in its view (or
    ``run.stop()``, or a background job's stop): the loop ends at a step boundary. Catch it to end
    quietly; stable-baselines3's ``learn()`` ends with it.

    >>> try:
    ...     raise Stopped()
    ... except Stopped as stop:
    ...     print("ended:", stop)
    ended: stopped from the view (or run.stop()); catch gymview.Stopped to end the loop quietly
    """

    def __init__(self, message: str = "stopped from the view (or run.stop()); catch gymview.Stopped to end the loop quietly") -> None:
        super().__init__(message)


class WorkerError(RuntimeError):
    """Raised in the user's thread when a gymview background thread failed."""


class FitnessError(RuntimeError):
    """A genome's fitness could not be computed (the fitness function raised, or its worker died)."""


class FFmpegNotFoundError(RuntimeError):
    """No ffmpeg binary could be found."""


class FFmpegError(RuntimeError):
    """ffmpeg failed; the message holds its command line and its own error text."""


class EncoderProcessError(RuntimeError):
    """The helper process could not be started or stopped answering."""
