"""Evaluation worker processes fed over pipes: the caller's thread writes each chunk of genomes
straight to a worker and reads the fitnesses back, with no helper threads in the caller (a process
pool's feeder threads wait for the GIL while neat breeds, and cost it time per chunk).
Workers make their env once, ignore Ctrl-C and die with the process that started them."""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.util
import os
import pickle
import queue
import signal
import sys
import threading
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from gymview._internal.exits import how_it_ended
from gymview._internal.user_code import error_text
from gymview.neat.worker_side import Evaluation

NOT_STARTED = object()  # what a dead worker "replies" for the chunks it had not begun
CLOSED = "these NEAT workers were closed (the evolution ended or the interpreter is exiting)"


def die_with_parent(parent: int | None) -> None:
    """In a worker: killed when the process that started it dies, even by SIGKILL (on Linux), so an
    interrupted or killed kernel leaves no workers behind; Ctrl-C is the caller's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked worker may inherit a handler that ignores it
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if parent is not None and os.getppid() != parent:  # it died before the line above ran
            os._exit(1)


def serve(connection: Connection, parent: int | None, payload: bytes) -> None:
    """A worker's life: its env made at once, then chunks of ``(genome, seed)`` in and their results
    out, in order, until the caller ends it (or hangs up, where the worker holds no copy of the
    caller's end, as under fork it does). Whatever stops a whole chunk (the env could not be made, a
    genome could not be unpickled) comes back as that chunk's error text."""
    die_with_parent(parent)
    # A thread takes every chunk off the pipe as it comes: the caller's writes never wait for this
    # worker to finish a chunk, so neither side can block writing to the other.
    inbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    threading.Thread(target=_read_into, args=(connection, inbox), name="gymview-neat-inbox", daemon=True).start()
    evaluation: Evaluation | None = None
    try:
        evaluation = Evaluation(pickle.loads(payload))
        failure = ""
    except Exception as error:
        failure = error_text(error)
    try:
        while (message := inbox.get()) is not None:
            reply: Any = failure
            if evaluation is not None:
                try:
                    reply = [evaluation.evaluate(genome, seed) for genome, seed in pickle.loads(message)]
                except Exception as error:
                    reply = error_text(error)
            connection.send_bytes(pickle.dumps(reply, pickle.HIGHEST_PROTOCOL))
    finally:
        if evaluation is not None:
            evaluation.close()


def _read_into(connection: Connection, inbox: queue.SimpleQueue[bytes | None]) -> None:
    try:
        while True:
            inbox.put(connection.recv_bytes())
    except (EOFError, OSError):
        pass
    finally:
        inbox.put(None)  # the worker ends: the caller sees it die


@dataclass(frozen=True)
class Died:
    """What a worker "replies" for the chunk it was evaluating when its process ended."""

    reason: str


class Workers:
    """``count`` worker processes for one task (``payload``: the pickled Task), started by
    :meth:`start` or by the first chunk sent to each. Each slot holds one process and the tags of the
    chunks sent to it; a worker answers them in order.
    """

    def __init__(self, count: int, start_method: str | None, payload: bytes) -> None:
        self.count = count
        self.context = multiprocessing.get_context(start_method)
        self.payload = payload
        self._processes: list[Any] = [None] * count
        self._connections: list[Connection | None] = [None] * count
        self.sent: list[deque[Any]] = [deque() for _ in range(count)]  # the tags of chunks each slot holds
        self._closed = False
        self._lock = threading.Lock()  # starting a worker against ending them all at exit
        # The workers are not daemonic (a fitness may start processes of its own, an AsyncVectorEnv say),
        # so at exit multiprocessing would wait for them: this kills them first, even mid-evolution in a
        # background job (whose thread, still running, reaps them and can start no more).
        self._at_exit = multiprocessing.util.Finalize(None, self._kill_all, exitpriority=10)

    def start(self) -> None:
        """Start every worker that is not running (idempotent)."""
        for slot in range(self.count):
            if self._processes[slot] is None:
                self._start(slot)

    def send(self, slot: int, tag: Any, chunk: list[tuple[Any, int]]) -> None:
        """Hand a chunk to a slot's worker (a fresh one if it is not running); its reply comes with ``tag``."""
        if self._processes[slot] is not None and not self._processes[slot].is_alive() and not self.sent[slot]:
            self._bury(slot)  # it died between chunks: this chunk goes to a fresh worker, not blamed on it
        if self._processes[slot] is None:
            self._start(slot)
        message = pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL)
        self.sent[slot].append(tag)
        connection = self._connections[slot]
        assert connection is not None  # its worker runs: started above
        try:
            connection.send_bytes(message)
        except (BrokenPipeError, ConnectionResetError):
            pass  # it died while busy: wait() reports it

    def wait(self) -> list[tuple[int, Any, Any]]:
        """Block until some slot has news: ``(slot, tag, reply)``. When a worker's process has ended,
        the chunk it was evaluating gets a :class:`Died` reply and the ones it had not begun
        ``NOT_STARTED``; the slot starts a fresh worker at its next chunk."""
        if not any(self.sent):
            return []
        return self._news(wait(list(self._waitables())))

    def _waitables(self) -> dict[Any, int]:
        waitables = {}
        for slot in range(self.count):
            if self.sent[slot]:
                waitables[self._connections[slot]] = slot
                waitables[self._processes[slot].sentinel] = slot
        return waitables

    def _news(self, ready: list[Any]) -> list[tuple[int, Any, Any]]:
        waitables, news = self._waitables(), []
        for slot in sorted({waitables[item] for item in ready}):
            # A ready sentinel: the process has let go of everything and is ending (it may take a
            # moment more before it can be reaped, which _bury waits for).
            connection, ended = self._connections[slot], self._processes[slot].sentinel in ready
            assert connection is not None  # a slot with chunks sent has its worker
            try:
                while self.sent[slot] and connection.poll():
                    reply = pickle.loads(connection.recv_bytes())
                    news.append((slot, self.sent[slot].popleft(), reply))
            except (EOFError, OSError):
                ended = True  # a worker hangs up only by ending
            if self.sent[slot] and ended:
                reason = self._bury(slot)
                news.append((slot, self.sent[slot].popleft(), Died(reason)))
                while self.sent[slot]:
                    news.append((slot, self.sent[slot].popleft(), NOT_STARTED))
        return news

    def close(self) -> None:
        """End every worker now, busy or not, and reap them (idempotent); nothing can be sent afterwards."""
        self._at_exit.cancel()
        self._kill_all()
        for slot in range(self.count):
            if self._processes[slot] is not None:
                self._bury(slot)
            self.sent[slot].clear()

    def _kill_all(self) -> None:
        with self._lock:
            self._closed = True
            for process in self._processes:
                try:
                    process.kill()  # workers hold nothing worth saving; SIGKILL cannot be handled away
                except (AttributeError, ValueError):
                    pass  # an empty slot, or a process already reaped

    def _start(self, slot: int) -> None:
        # Called from the thread that runs the evolution only: a worker's PR_SET_PDEATHSIG fires when
        # the thread that started it ends.
        with self._lock:
            if self._closed:
                raise RuntimeError(CLOSED)
            ours, theirs = self.context.Pipe()
            # A forkserver's children are the server's, not ours: they die with it (it ends with us).
            parent = None if self.context.get_start_method() == "forkserver" else os.getpid()
            # typeshed's BaseContext has no Process; each start method's context has
            process = self.context.Process(  # type: ignore[attr-defined]
                target=serve, args=(theirs, parent, self.payload), name=f"gymview-neat-{slot}"
            )
            process.start()
            theirs.close()
            self._processes[slot], self._connections[slot] = process, ours

    def _bury(self, slot: int) -> str:
        """Reap a slot's worker (ending it if it is still exiting) and say how it ended."""
        process, connection = self._processes[slot], self._connections[slot]
        self._processes[slot] = self._connections[slot] = None
        assert connection is not None  # a slot's worker and its connection come and go together
        connection.close()
        process.join(5)
        if process.exitcode is None:
            process.kill()
            process.join()
        code = process.exitcode  # (not process.close(): at exit multiprocessing may be joining it too)
        return how_it_ended(code)
