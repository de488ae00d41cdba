"""Evaluation worker processes fed over pipes: the caller's thread writes each chunk of genomes
straight to a worker and reads the fitnesses back, with no helper threads (a process pool's feeder
threads wait for the GIL while neat breeds in the caller, and cost ~0.2 ms of it per chunk).
Workers make their env once, ignore Ctrl-C and die with the process that started them."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import pickle
import signal
import sys
from collections import deque
from multiprocessing.connection import Connection, wait
from typing import Any

import cloudpickle

from gymview.neat.evaluation import Evaluation
from gymview.video.batch_episode import error_text

DIED = object()  # what a worker "replies" when its process is gone


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
    out, in order, until the caller hangs up. Whatever stops a whole chunk (the env could not be made,
    a genome could not be unpickled) comes back as that chunk's error text."""
    die_with_parent(parent)
    evaluation: Evaluation | None = None
    try:
        evaluation = Evaluation(cloudpickle.loads(payload))
        failure = ""
    except Exception as error:  # noqa: BLE001 - reported for every chunk this worker is sent
        failure = error_text(error)
    try:
        while True:
            try:
                message = connection.recv_bytes()
            except EOFError:
                return
            reply: Any = failure
            if evaluation is not None:
                try:
                    reply = [evaluation.evaluate(genome, seed) for genome, seed in pickle.loads(message)]
                except Exception as error:  # noqa: BLE001 - the whole chunk's error, reported by the caller
                    reply = error_text(error)
            connection.send_bytes(pickle.dumps(reply, pickle.HIGHEST_PROTOCOL))
    finally:
        if evaluation is not None:
            evaluation.close()


class Workers:
    """``count`` worker processes for one task (``payload``: the cloudpickled Task), started on first use.

    Each slot holds one process and the tags of the chunks sent to it; a worker answers them in order.
    """

    def __init__(self, count: int, start_method: str | None, payload: bytes) -> None:
        self.count = count
        self.context = multiprocessing.get_context(start_method)
        self.payload = payload
        self._processes: list[Any] = [None] * count
        self._connections: list[Connection | None] = [None] * count
        self.sent: list[deque[Any]] = [deque() for _ in range(count)]  # the tags of chunks each slot holds
        self.last_death = ""

    def start(self) -> None:
        """Start every worker that is not running (idempotent)."""
        for slot in range(self.count):
            if self._processes[slot] is None:
                self._start(slot)

    def send(self, slot: int, tag: Any, chunk: list[tuple[Any, int]]) -> None:
        """Hand a chunk to a slot's worker (starting it first if needed); its reply comes with ``tag``."""
        if self._processes[slot] is None:
            self._start(slot)
        self.sent[slot].append(tag)
        try:
            self._connections[slot].send_bytes(pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL))
        except (BrokenPipeError, ConnectionResetError):
            pass  # it died: wait() reports it, with this chunk among the lost

    def wait(self) -> list[tuple[int, Any, Any]]:
        """Block until some slot has news: ``(slot, tag, reply)``, with ``DIED`` as the reply for each
        chunk a dead worker held (the slot is empty again and restarts on the next send)."""
        busy = [slot for slot in range(self.count) if self.sent[slot]]
        if not busy:
            return []
        waitables = {}
        for slot in busy:
            waitables[self._connections[slot]] = slot
            waitables[self._processes[slot].sentinel] = slot
        news: list[tuple[int, Any, Any]] = []
        for slot in sorted({waitables[ready] for ready in wait(list(waitables))}):
            connection, hung_up = self._connections[slot], False
            try:
                while self.sent[slot] and connection.poll():
                    reply = pickle.loads(connection.recv_bytes())
                    news.append((slot, self.sent[slot].popleft(), reply))
            except (EOFError, OSError):
                hung_up = True  # only by exiting
            if self.sent[slot] and (hung_up or not self._processes[slot].is_alive()):
                self._bury(slot)
                while self.sent[slot]:
                    news.append((slot, self.sent[slot].popleft(), DIED))
        return news

    def close(self) -> None:
        """End every worker now (idempotent), busy or not."""
        for slot in range(self.count):
            process = self._processes[slot]
            if process is not None and process.is_alive():
                process.kill()  # workers hold nothing worth saving; SIGKILL cannot be handled away
        for slot in range(self.count):
            if self._processes[slot] is not None:
                self._bury(slot)
            self.sent[slot].clear()

    def _start(self, slot: int) -> None:
        ours, theirs = self.context.Pipe()
        # A forkserver's children are the server's, not ours: they die with it (it ends with us).
        parent = None if self.context.get_start_method() == "forkserver" else os.getpid()
        # Not daemonic: a fitness may start processes of its own (an AsyncVectorEnv, say). close() ends
        # the workers, and they die with this process in any case.
        process = self.context.Process(target=serve, args=(theirs, parent, self.payload), name=f"gymview-neat-{slot}")
        process.start()
        theirs.close()
        self._processes[slot], self._connections[slot] = process, ours

    def _bury(self, slot: int) -> None:
        process, connection = self._processes[slot], self._connections[slot]
        self._processes[slot] = self._connections[slot] = None
        connection.close()
        process.join(5)
        if process.exitcode is None:
            process.kill()
            process.join()
        code = process.exitcode
        self.last_death = (f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}")
        process.close()
