"""EncoderFeed: one video being encoded, the bounded frame queue, the encoder and the thread that
runs it (the codec lets go of the GIL while it works, so the loop steps meanwhile)."""

from __future__ import annotations

import collections
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gymview._internal.memory import give_back_free_memory
from gymview._internal.worker import Worker
from gymview.errors import FFmpegError, VideoLogError, WorkerError
from gymview.image.yuv import I420Converter
from gymview.video.encoder import VideoEncoder
from gymview.video.mp4 import faststart_copy

_QUEUE_BYTES = 64 * 2**20  # frames waiting for the encoder, at most (and at most 32 of them)
_POLL_SECONDS = 0.25  # how often a blocked write() looks whether the encoder thread has failed
_END = object()  # queued after the last frame


class EncoderFeed:
    """One video being encoded: the queue, the encoder and the thread between them.

    Kept apart from :class:`VideoRecorder` so the garbage-collection / exit finalizer can finish
    the video without holding a reference to the recorder.

    The queue holds RGB frames, converted to I420 in this thread only where they changed, or I420
    planes converted by the caller (who knew where its frames changed). The arrays go round: the
    caller fills a spare one (``spare(shape)``) and queues it, this thread gives it back once
    encoded (an RGB frame once the next frame no longer needs it to find what changed). A long
    recording so allocates no frame after its first few, instead of one per frame freed by another
    thread, which glibc keeps as fragmented free memory (hundreds of MiB in an hour-long soak).
    """

    def __init__(
        self,
        path: Path,
        encoder: VideoEncoder,
        frame_size: tuple[int, int],
        max_queued_frames: int | None,
        crash_safe: bool,
        on_finished: Callable[[Path], None] | None = None,
    ) -> None:
        self.path = path
        self.encoder = encoder
        self.crash_safe = crash_safe
        self.converter: I420Converter | None = I420Converter(*frame_size)  # RGB -> I420 in this thread
        self.on_finished = on_finished  # called here, on this thread, once the file is finished
        width, height = frame_size
        depth = max_queued_frames or max(2, min(32, _QUEUE_BYTES // (width * height * 3)))
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=depth)
        self._spare: dict[tuple[int, ...], collections.deque[np.ndarray]] = collections.defaultdict(collections.deque)
        self._ours: dict[int, np.ndarray] = {}  # every array that goes round, by id
        self._most_ours = depth + 3  # the queue, the one being encoded, the previous one, the one being filled
        self.delivered = 0  # frames encoded; written by the encoder thread only
        self.end_queued = False
        self.failure: BaseException | None = None  # raised by every later call once seen
        self.ended = threading.Event()  # set when the thread is done with this video, well or not
        encoder.start(path, fragmented=crash_safe)
        self.worker = Worker(f"recorder ({path.name})", self._encode)
        self.worker.start()

    def spare(self, shape: tuple[int, ...]) -> np.ndarray:
        """A uint8 array of ``shape`` to fill with the next frame and ``put()``; its old pixels are stale."""
        try:
            return self._spare[shape].pop()
        except IndexError:  # none back yet: the encoder is behind, or these are the first frames
            frame = np.empty(shape, np.uint8)
            if len(self._ours) < self._most_ours:
                self._ours[id(frame)] = frame
            return frame

    def _give_back(self, frame: Any) -> None:
        ours = self._ours.get(id(frame))
        if ours is not None and ours is frame:
            self._spare[ours.shape].append(ours)

    def _encode(self, stop: threading.Event) -> None:
        try:
            self._encode_and_finish(stop)
        finally:
            self.ended.set()

    def _encode_and_finish(self, stop: threading.Event) -> None:
        previous = None  # the converter compares the next RGB frame with it: given back one frame later
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
                if item.ndim == 1:  # I420 planes
                    self.encoder.encode(item)
                    self._give_back(item)
                else:
                    self.encoder.encode(self.converter.convert(item))  # type: ignore[union-attr]
                    self._give_back(previous)
                    previous = item
                self.delivered += 1
                give_back_free_memory()
            self.encoder.finish()
        except BaseException:
            self.encoder.abandon()
            raise
        finally:
            # This object lives on in a reference cycle (its worker's target) until a full garbage
            # collection, which may be minutes away: let go of the frames and the converter's
            # buffers now (tens of MiB per video when the encoder had fallen behind).
            self._spare.clear()
            self._ours.clear()
            self.converter = None
        if self.delivered == 0:  # stopped before its first frame (Ctrl-C between the start and it): no video
            Path(self.path).unlink(missing_ok=True)
            return
        if self.crash_safe:
            faststart_copy(self.path)
        hook, self.on_finished = self.on_finished, None
        if hook is not None:  # its error is this thread's failure: raised to the user like an encoder's
            hook(self.path)

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
        """Queue the end of the video; never raises: a failure of the thread is raised by ``wait()``
        (a ``close(wait=False)`` leaves it to the ``close()`` that waits)."""
        while not self.end_queued and self.worker.running:
            try:
                self.queue.put(_END, timeout=_POLL_SECONDS)
            except queue.Full:
                continue  # the thread may have ended meanwhile: nothing would take the end then
            self.end_queued = True
        self.end_queued = True

    def check(self) -> None:
        """Raise the encoder thread's failure (the encoder's own errors as FFmpegError), every time."""
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

    def _keep(self, failure: WorkerError) -> BaseException:
        cause = failure.__cause__
        kept = self.failure = cause if isinstance(cause, (FFmpegError, OSError, VideoLogError)) else failure
        kept.__suppress_context__ = True
        return kept

    def wait(self, timeout: float) -> None:
        try:
            self.worker.stop(timeout)
        except WorkerError as failure:
            kept = self._keep(failure)
            raise kept from kept.__cause__  # a VideoLogError keeps the logger's own error

    def finish_quietly(self) -> None:
        """The finalizer: end the video and wait for it; report (never raise) a failure."""
        if self.failure is not None:
            return
        try:
            self.end()
            self.wait(timeout=300.0)
        except BaseException as error:  # at exit or in a GC pass nobody can catch it
            print(f"gymview: could not finish the video {str(self.path)!r}: {error}", file=sys.stderr)
