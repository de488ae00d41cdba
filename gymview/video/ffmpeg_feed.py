"""FFmpegFeed: one video being encoded, the bounded frame queue, the ffmpeg process and the
thread between them."""

from __future__ import annotations

import collections
import os
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
from gymview.video.ffmpeg import FFmpegProcess, remux_command

_QUEUE_BYTES = 64 * 2**20  # frames waiting for the encoder, at most (and at most 32 of them)
_POLL_SECONDS = 0.25  # how often a blocked write() looks whether the encoder thread has failed
_END = object()  # queued after the last frame


class FFmpegFeed:
    """One video being encoded: the queue, the ffmpeg process and the thread between them.

    Kept apart from :class:`VideoRecorder` so the garbage-collection / exit finalizer can finish
    the video without holding a reference to the recorder.

    Frames to fill (``spare_frame()``) come from a small set of arrays that go round: the caller
    fills one and queues it, this thread gives it back once ffmpeg has it (and, when converting,
    once the next frame no longer needs it to find what changed). A long recording so allocates
    no frame after its first few, instead of one per frame freed by another thread, which glibc
    keeps as fragmented free memory (hundreds of MiB in an hour-long soak).
    """

    def __init__(
        self,
        path: Path,
        command: list[str],
        ffmpeg: str,
        frame_shape: tuple[int, ...],
        max_queued_frames: int | None,
        remux: bool,
        converter: I420Converter | None,
        on_finished: Callable[[Path], None] | None = None,
    ) -> None:
        self.path = path
        self.ffmpeg = ffmpeg
        self.remux = remux
        self.converter = converter  # RGB -> I420 in this thread, or None: ffmpeg converts
        self.on_finished = on_finished  # called here, on this thread, once the file is finished
        depth = max_queued_frames or max(2, min(32, _QUEUE_BYTES // int(np.prod(frame_shape))))
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=depth)
        self.frame_shape = frame_shape
        self._spare: collections.deque[np.ndarray] = collections.deque()  # filled by this thread, taken by the caller's
        self._ours: dict[int, np.ndarray] = {}  # every array that goes round, by id
        self._most_ours = depth + 3  # the queue, the one being encoded, the previous one, the one being filled
        self.delivered = 0  # frames handed to ffmpeg; written by the encoder thread only
        self.end_queued = False
        self.failure: BaseException | None = None  # raised by every later call once seen
        self.ended = threading.Event()  # set when the thread is done with this video, well or not
        self.process = FFmpegProcess(command)
        self.worker = Worker(f"recorder ({path.name})", self._feed_ffmpeg)
        self.worker.start()

    def spare_frame(self) -> np.ndarray:
        """An (H, W, 3) uint8 array to fill with the next frame and ``put()``; its old pixels are stale."""
        try:
            return self._spare.pop()
        except IndexError:  # none back yet: the encoder is behind, or these are the first frames
            frame = np.empty(self.frame_shape, np.uint8)
            if len(self._ours) < self._most_ours:
                self._ours[id(frame)] = frame
            return frame

    def _give_back(self, frame: Any) -> None:
        ours = self._ours.get(id(frame))
        if ours is not None and ours is frame:
            self._spare.append(ours)

    def _feed_ffmpeg(self, stop: threading.Event) -> None:
        try:
            self._encode_and_finish(stop)
        finally:
            self.ended.set()

    def _encode_and_finish(self, stop: threading.Event) -> None:
        previous = None  # the converter compares the next frame with it: given back one frame later
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
                if self.converter is None:
                    self.process.write(item.data)
                    self._give_back(item)
                else:
                    self.process.write(self.converter.convert(item).data)
                    self._give_back(previous)
                    previous = item
                self.delivered += 1
                give_back_free_memory()
            if self.process.finish() != 0:
                raise self.process.error(f"ffmpeg failed while encoding {str(self.path)!r}")
        except BaseException:
            self.process.kill()
            raise
        finally:
            # This object lives on in a reference cycle (its worker's target) until a full garbage
            # collection, which may be minutes away: let go of the frames and the converter's
            # buffers now (tens of MiB per video when the encoder had fallen behind).
            self._spare.clear()
            self._ours.clear()
            self.converter = None
        if self.remux:
            self._make_plain_mp4()
        hook, self.on_finished = self.on_finished, None
        if hook is not None:  # its error is this thread's failure: raised to the user like ffmpeg's
            hook(self.path)

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
            self.process.kill()
