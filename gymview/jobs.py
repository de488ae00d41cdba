"""``background(fn, ...)``: any long call (``model.learn``, ``neat`` evolution, a loop) in a thread,
with a small status line in the notebook, so the cell, and the views' buttons, are free at once.

A job's Stop asks, it does not kill: watched envs stepping in the job's thread raise
``gymview.Stopped`` at their next ``step()``, and code of your own can poll
``should_stop()``.

>>> import time, gymview
>>> def count(n):
...     total = 0
...     for i in range(n):
...         if gymview.should_stop():
...             break
...         total += i
...     return total
>>> job = gymview.background(count, 1000, display=False)
>>> job.wait()
499500
>>> job.state
'finished'
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from gymview._internal.background import ActiveSet, BackgroundTask
from gymview.errors import Stopped
from gymview.live.controls import request_thread_stop, thread_stop_requested

__all__ = ["Job", "background", "running_jobs", "should_stop"]

_running: ActiveSet[Job] = ActiveSet()


def running_jobs() -> list[Job]:
    """List the ``background`` jobs of this process that have not ended.

    Returns:
        The jobs still running, oldest first.

    Examples:
        >>> import threading
        >>> go = threading.Event()
        >>> job = background(go.wait, display=False)
        >>> job in running_jobs()
        True
        >>> go.set(); job.wait()
        True
        >>> job in running_jobs()
        False
    """
    return _running.now()


def should_stop() -> bool:
    """Tell whether the ``background`` job running this code was asked to stop.

    Long loops of your own check it and return early. Stop is asked by the job's Stop button,
    ``job.stop()`` or ``job.request_stop()``.

    Returns:
        True in a job whose stop was requested; False otherwise, and outside any job.

    Examples:
        >>> should_stop()
        False
    """
    return thread_stop_requested()


class Job(BackgroundTask):
    """A call running in a background thread, made by ``background``.

    Attributes:
        name: The function's name, shown in the status line.
        state: ``"running"``, ``"finished"``, ``"stopped"`` (it ended after a stop request, or
            with ``gymview.Stopped``) or ``"failed"``.
        result: The call's return value once finished.
        error: The call's exception once failed.
        started: When it started (``time.time()``).
        ended: When it ended, or None.

    Args:
        fn: The function to call.
        args: Its positional arguments.
        kwargs: Its keyword arguments.
        display: Show a status line with a Stop button in the notebook.

    Examples:
        >>> import time, gymview
        >>> def spin():
        ...     while not gymview.should_stop():
        ...         time.sleep(0.01)
        ...     return "asked to stop"
        >>> job = gymview.background(spin, display=False)
        >>> job.stop(); job.state, job.wait()
        ('stopped', 'asked to stop')
    """

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], display: bool) -> None:
        self.name = getattr(fn, "__qualname__", None) or type(fn).__name__
        self.state = "running"
        self.result: Any = None
        self.error: BaseException | None = None
        self.started = time.time()
        self.ended: float | None = None
        self._stop_requested = False
        self._status = None
        self._ending = False
        self._stop_lock = threading.Lock()  # a stop request never outlives the thread it names
        if display:
            from gymview.live.job_status import JobStatus, show_in_notebook

            self._status = JobStatus(name=self.name, started=self.started, on_stop=self.request_stop)
            show_in_notebook(self._status)
        self._thread = threading.Thread(
            target=self._main, args=(fn, args, kwargs), name=f"gymview-job-{self.name}", daemon=True
        )
        self.begin(_running)
        self._thread.start()

    def _main(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        try:
            self.result = fn(*args, **kwargs)
            self.state = "stopped" if self._stop_requested else "finished"
        except Stopped:
            self.state = "stopped"
        except BaseException as error:  # kept for wait(), shown in the status line now
            self.error, self.state = error, "failed"
        finally:
            self.ended = time.time()
            with self._stop_lock:
                self._ending = True
                request_thread_stop(threading.get_ident(), stop=False)
            try:
                if self._status is not None:
                    message = f"{type(self.error).__name__}: {self.error}" if self.error is not None else ""
                    self._status.finish(self.state, self.ended, message)
            finally:
                self.end()

    def request_stop(self) -> None:
        """Ask the job to end, without waiting: its watched envs raise ``Stopped``, ``should_stop()`` turns True."""
        with self._stop_lock:
            if self._ending:
                return
            self._stop_requested = True
            thread_id = self._thread.ident
            assert thread_id is not None  # started in __init__
            request_thread_stop(thread_id)
        if self._status is not None:
            self._status.stopping()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the job to end (``request_stop()``), then wait for the call to return.

        Args:
            timeout: Seconds to wait at most.

        Raises:
            TimeoutError: When the call has not returned in time: it steps no watched env and does
                not check ``gymview.should_stop()``.
        """
        self.request_stop()
        if not self._finished.wait(timeout):
            raise TimeoutError(
                f"{self.name} did not end within {timeout} s of the stop request: it steps no watched env "
                f"and does not check gymview.should_stop()"
            )

    @property
    def elapsed(self) -> float:
        """Seconds from the start to the end, or to now while running."""
        return (self.ended or time.time()) - self.started

    def wait(self, timeout: float | None = None) -> Any:
        """Wait for the call to end.

        A kernel interrupt (or Ctrl-C) while waiting asks the job to stop, as its Stop button does.

        Args:
            timeout: Seconds to wait at most (None: until it ends).

        Returns:
            The call's result (None if it ended with ``gymview.Stopped``).

        Raises:
            TimeoutError: When the call is still running after ``timeout``.
            Exception: The call's own error, re-raised.
        """
        self.wait_for_end(
            timeout,
            on_interrupt=self.request_stop,
            still_running=f"{self.name} is still running after {timeout} s; job.stop() asks it to end",
        )
        if self.error is not None:
            raise self.error
        return self.result

    def __repr__(self) -> str:
        return f"<gymview.Job {self.name}: {self.state}, {self.elapsed:.1f} s>"


def background(fn: Callable[..., Any], *args: Any, display: bool = True, **kwargs: Any) -> Job:
    """Run ``fn(*args, **kwargs)`` in a background thread; returns at once.

    ``job.wait()`` (or ``await job``) returns ``fn``'s result or re-raises its error. Because the
    cell ends at once, the kernel hears every view's buttons in every front-end while the job runs.

    Args:
        fn: The function to call, e.g. ``model.learn``.
        *args: Passed to ``fn``.
        display: In a notebook, show a status line: running, finished or failed, the elapsed time,
            and a Stop button (``job.stop()``).
        **kwargs: Passed to ``fn``.

    Returns:
        A ``Job``, already running.

    Raises:
        TypeError: When ``fn`` is not callable.

    Examples:
        >>> job = background(sum, [1, 2, 3], display=False)
        >>> job.wait()
        6
    """
    if not callable(fn):
        raise TypeError(
            f"background() runs a callable, e.g. background(model.learn, total_timesteps=10_000); got {fn!r}"
        )
    return Job(fn, args, kwargs, display)
