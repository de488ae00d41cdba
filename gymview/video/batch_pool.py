"""How record_batch runs its calls: on gymview's own process pool, which outlives a worker's death,
or on the caller's executor. Either way each call ends as its result or as the text of what failed.

A worker that dies (a native crash, ``os._exit``, out of memory) breaks a ``ProcessPoolExecutor``:
every call the pool still holds fails, and it takes no more. ``RestartingPool`` then runs each call that had
started again alone, in a process of its own, so that a second death is surely that call's (its
exit code or signal is named); the calls that had not started go to a fresh pool.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from collections.abc import Callable, Generator
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from gymview._internal.exits import how_it_ended
from gymview._internal.user_code import error_text

Call = tuple[Callable[..., Any], tuple[Any, ...]]
#: ``(index of the call, its result, None)``, or ``(index, None, what went wrong)``
Outcome = tuple[int, Any, str | None]

_started: Any = None  # in a pool's worker: one flag per call, set as the call starts


def _remember(started: Any) -> None:
    global _started
    _started = started


def _run_marked(index: int, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    _started[index] = 1
    return function(*args)


def _run_and_send(connection: Any, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
    reply: tuple[Any, str | None]
    try:
        reply = (function(*args), None)
    except Exception as error:
        reply = (None, error_text(error))
    connection.send(reply)


def _outcome(index: int, future: concurrent.futures.Future) -> Outcome:
    try:
        error = future.exception()
    except concurrent.futures.CancelledError as cancelled:  # by the executor (a dask client closing)
        error = cancelled
    return (index, None, error_text(error)) if error is not None else (index, future.result(), None)


class RestartingPool:
    """``size`` worker processes that outlive a worker's death; see the module docstring.

    Args:
        size: Worker processes in the pool.

    Examples:
        >>> pool = RestartingPool(1)
        >>> sorted(pool.results([(abs, (-2,)), (divmod, (1, 0))]))
        [(0, 2, None), (1, None, 'ZeroDivisionError: integer division or modulo by zero')]
        >>> pool.shutdown()
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.context = multiprocessing.get_context()
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._started: Any = None  # the flags the pool's workers set

    def results(self, calls: list[Call]) -> Generator[Outcome, None, None]:
        """Run ``function(*args)`` for every ``(function, args)`` of ``calls`` and yield their
        outcomes as they end. A call is run at most twice: the second time alone, after its worker
        died; dying then too is its error. Closing the iterator cancels the calls not started."""
        waiting = list(range(len(calls)))
        while waiting:
            pool = self._pool_for(len(calls))
            futures = {pool.submit(_run_marked, index, *calls[index]): index for index in waiting}
            suspects: list[int] = []
            waiting, ended = [], 0
            try:
                for future in concurrent.futures.as_completed(futures):
                    index = futures[future]
                    if isinstance(future.exception(), BrokenProcessPool):  # its worker, or another one, died
                        (suspects if self._started[index] else waiting).append(index)
                        continue
                    ended += 1
                    yield _outcome(index, future)
            finally:
                for future in futures:
                    future.cancel()
            if suspects or waiting:
                self.shutdown()  # broken: it takes no more calls
            for index in sorted(suspects):
                yield self._alone(index, calls[index])
            if waiting and not suspects and not ended:  # the pool broke before running anything
                yield from ((index, None, "the worker processes died before running it") for index in waiting)
                return

    def _pool_for(self, calls: int) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None or len(self._started) < calls:
            self.shutdown()
            self._started = self.context.RawArray("b", calls)
            self._pool = concurrent.futures.ProcessPoolExecutor(
                self.size, mp_context=self.context, initializer=_remember, initargs=(self._started,)
            )
        self._started[:calls] = bytes(calls)
        return self._pool

    def _alone(self, index: int, call: Call) -> Outcome:
        receiving, sending = self.context.Pipe(duplex=False)
        process = self.context.Process(target=_run_and_send, args=(sending, *call), name="gymview-batch-retry")
        process.start()
        sending.close()
        try:
            result, error = receiving.recv()
        except EOFError:
            process.join()
            assert process.exitcode is not None  # joined
            return index, None, f"its worker process died ({how_it_ended(process.exitcode)}), also when run again alone"
        except BaseException:
            process.kill()  # an interrupt: nothing is left running
            process.join()
            raise
        finally:
            receiving.close()
        process.join()
        return index, result, error

    def shutdown(self) -> None:
        """End the pool's workers once their calls are done (idempotent); the next call starts a fresh pool."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def executor_results(executor: concurrent.futures.Executor, calls: list[Call]) -> Generator[Outcome, None, None]:
    """Like :meth:`RestartingPool.results` on the caller's executor, run once each: what a call
    raises or the executor fails it with (a lost worker, a broken pool) is its error.

    >>> with concurrent.futures.ThreadPoolExecutor(2) as executor:
    ...     sorted(executor_results(executor, [(abs, (-2,)), (divmod, (1, 0))]))  # doctest: +ELLIPSIS
    [(0, 2, None), (1, None, 'ZeroDivisionError: integer division or modulo by zero...')]
    """
    futures = {}
    try:
        for index, (function, args) in enumerate(calls):
            try:
                futures[executor.submit(function, *args)] = index
            except Exception as error:
                yield index, None, error_text(error)
        for future in concurrent.futures.as_completed(futures):
            yield _outcome(futures[future], future)
    finally:
        for future in futures:
            future.cancel()
