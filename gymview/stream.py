"""FrameStreamer: buffer → downsample → encode → an injected ``send``, in one background thread.

It knows no widget: ``send(header, buffers)`` is whatever delivers a message (the LiveView's
custom message in a notebook, a list in tests). Flow control lives here too: acknowledgements
from the browser bound the frames in flight while they arrive; when they do not (a blocking cell
on a kernel without comms over subshells), the buffer's time throttle alone bounds the rate.

The loop that produces frames holds the GIL nearly all the time, and a thread that waits for it
is woken on every release the loop makes (numpy releases it in each ``action_space.sample()``):
each wake-up costs the loop a system call; waiting threads slowed a CartPole loop by ~8%.
So the stream thread only runs while the producer lets it: :meth:`FrameStreamer.hand_over`
after a frame is offered (the thread writes it to the encoder process), and :meth:`pump` once
the encoded frame is back (the thread sends it); the producer blocks for those few hundred
microseconds, and the thread never waits for the GIL. A producer that stops pumping costs at
most ``PUMP_WAIT_SECONDS`` of latency: the thread then goes on by itself.

>>> import numpy as np
>>> sent = []
>>> streamer = FrameStreamer(FrameBuffer(fps=30), lambda header, buffers: sent.append(header))
>>> streamer.buffer.offer(np.zeros((400, 600, 3), np.uint8), {"step": 1})
True
>>> streamer.start(); _ = streamer.flush(); streamer.stop()
>>> sent[0]["width"], sent[0]["height"], sent[0]["seq"]
(512, 341, 0)
"""

from __future__ import annotations

import collections
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from gymview._protocol import frame_header
from gymview._encoder import EncoderProcess, EncoderProcessError
from gymview._worker import Worker
from gymview.buffer import PROCESS_BUDGET, FrameBuffer, MessageBudget
from gymview.encode import check_format, check_quality, encode_frame
from gymview.frames import downsample
from gymview.renderers import Drawing

__all__ = ["FrameStreamer"]

Send = Callable[[dict[str, Any], list[bytes]], None]

# Acknowledgements count as "arriving" while the last one is younger than this; after that the
# browser is either gone, hidden or unable to answer during the cell, and the time throttle rules.
ACK_FRESH_SECONDS = 1.0
# While acks arrive and too many frames are in flight, a frame waits this long for an ack before
# it is skipped (the next one will be newer anyway).
ACK_WAIT_SECONDS = 0.25
# How long the producer waits for the stream thread to take up a frame, or to send one: the
# thread needs a few hundred microseconds; this only bounds a stall.
HAND_OVER_SECONDS = 0.005
# While a frame is in the encoder process, the producer looks for its reply this often.
POLL_SECONDS = 0.001
# An encoded frame waits this long for the producer's pump() before the thread sends it anyway
# (the loop stopped, or frames come from code that never pumps).
PUMP_WAIT_SECONDS = 0.05
# A stream thread with nothing to do for this long ends; the next push starts a new one, so views
# whose env was never closed (a re-run cell) leave no thread behind.
IDLE_EXIT_SECONDS = 10.0


def check_max_size(max_size: int) -> int:
    """Return ``max_size`` if it is an integer of at least 16 pixels, else raise ValueError."""
    if isinstance(max_size, bool) or not isinstance(max_size, (int, np.integer)) or max_size < 16:
        raise ValueError(f"max_size must be an integer of at least 16 pixels; got {max_size!r}")
    return int(max_size)


class FrameStreamer:
    """Send frames offered to ``buffer`` through ``send``; see the module docstring."""

    def __init__(
        self,
        buffer: FrameBuffer,
        send: Send,
        max_size: int = 512,
        image_format: str = "jpeg",
        quality: int = 80,
        max_in_flight: int = 2,
        budget: MessageBudget = PROCESS_BUDGET,
        offload: bool = True,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1; got {max_in_flight!r}")
        self.buffer = buffer
        self.max_size = check_max_size(max_size)
        self.image_format = check_format(image_format)
        self.quality = check_quality(quality)
        self.max_in_flight = max_in_flight
        self._send = send
        self._budget = budget
        # Downsampling and compressing in a helper process keeps that work clear of the GIL,
        # which a busy loop holds (see gymview._encoder); in-thread is the fallback.
        self._encoder: EncoderProcess | None = EncoderProcess() if offload else None
        self._worker = Worker("stream", self._run, wake=self._wake)
        self._lock = threading.Lock()
        # Hand-over state, in tickets (FrameBuffer.accepted at each offer); see the module docstring.
        self._turn = threading.Condition()
        self._parked = 0  # the thread needs nothing until an outside event, for tickets up to this
        self._encoding = 0  # the ticket whose frame is in the encoder process, 0 if none
        self._go = 0  # tickets up to this may be received and sent
        self._finished = 0  # tickets up to this were sent, skipped or failed
        self._stop = threading.Event()  # the running thread's, set by _run
        self._start_lock = threading.Lock()
        self._acked_event = threading.Event()
        self._failed = threading.Event()
        self._latest: tuple[dict[str, Any], bytes] | None = None
        self._resend = False
        self._seq = -1
        self._acked = -1
        self._last_ack = -float("inf")
        self._send_times: collections.deque[float] = collections.deque(maxlen=512)  # > 3 s at 120 fps
        self.sent = 0
        self.skipped = 0
        self.bytes_sent = 0
        self.last_encode_ms = 0.0

    # -- the user's side -------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._worker.running

    def start(self) -> None:
        """Start the stream thread unless it runs; idempotent, callable from any thread."""
        with self._start_lock:
            if self.buffer.retired:  # the last thread ended after idling (or is about to)
                self._worker.stop()
                self.buffer.retired = False
            self._worker.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._worker.stop(timeout)

    def check(self) -> None:
        """Re-raise an error that ended (or is ending) the stream thread."""
        if self._failed.is_set():  # the thread is on its way out with an error: wait for it
            self._failed.clear()
            self._worker.stop()
        self._worker.check()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until the frame waiting in the buffer (if any) was handled; True if it was."""
        with self._turn:
            self._go = max(self._go, self.buffer.accepted)
            self._turn.notify_all()
        handled = self.buffer.join(timeout if self._worker.running else 0.0)
        self.check()
        return handled

    def can_send(self, now: float | None = None) -> bool:
        """False while the browser acknowledges frames and ``max_in_flight`` are unacknowledged."""
        now = time.perf_counter() if now is None else now
        acks_arriving = now - self._last_ack < ACK_FRESH_SECONDS
        return not acks_arriving or self._seq - self._acked < self.max_in_flight

    def acknowledge(self, seq: int, now: float | None = None) -> None:
        """Record that the browser drew frame ``seq`` (safe from any thread)."""
        with self._lock:
            self._acked = max(self._acked, int(seq))
            self._last_ack = time.perf_counter() if now is None else now
        self._acked_event.set()

    def resend_latest(self) -> None:
        """Send the last frame again from the stream thread (a view that just appeared needs it),
        starting the thread if it had ended."""
        with self._lock:
            self._resend = self._latest is not None
        if self._resend:
            self.buffer.wake()
            self.start()

    @property
    def reply_expected(self) -> bool:
        """True while a frame is in the encoder process, waiting for :meth:`pump` to send it."""
        return self._encoding > self._finished

    def hand_over(self, timeout: float = HAND_OVER_SECONDS) -> None:
        """Call after a frame was offered: let the stream thread take it up (for at most ``timeout``).

        Does nothing while the thread still holds an earlier frame (it takes the new one after
        sending that one), or when it is not running.
        """
        if self._encoding > self._finished or not self._worker.running:
            return
        ticket = self.buffer.accepted
        with self._turn:
            self._turn.wait_for(lambda: self._parked >= ticket, timeout)

    def pump(self, timeout: float = HAND_OVER_SECONDS) -> bool:
        """If the encoded frame is back, let the stream thread send it now; True if it was sent.

        Call it every ``POLL_SECONDS`` or so while :attr:`reply_expected`; it never waits longer
        than ``timeout`` (twice, when a newer frame is waiting to be taken up).
        """
        ticket = self._encoding
        if ticket <= self._finished or self._encoder is None or not self._encoder.reply_ready():
            return False
        with self._turn:
            self._go = max(self._go, ticket)
            self._turn.notify_all()
            sent = self._turn.wait_for(lambda: self._finished >= ticket, timeout)
        if sent and self.buffer.accepted > ticket:
            self.hand_over(timeout)
        return sent

    def messages_per_second(self, window: float = 3.0, now: float | None = None) -> float:
        """Frame messages sent over the last ``window`` seconds, per second."""
        now = time.perf_counter() if now is None else now
        return sum(1 for t in list(self._send_times) if now - t <= window) / window

    # -- the stream thread -----------------------------------------------------------------
    def _wake(self) -> None:
        self.buffer.wake()
        with self._turn:
            self._turn.notify_all()

    def _park(self, ticket: int) -> None:
        """Tell a producer in hand_over() or pump() that this thread is about to wait."""
        with self._turn:
            self._parked = max(self._parked, ticket)
            self._turn.notify_all()

    def _run(self, stop: threading.Event) -> None:
        self._stop = stop
        try:
            while not stop.is_set():
                item = self.buffer.take(timeout=IDLE_EXIT_SECONDS, retire=True)
                if item is None and self.buffer.retired:
                    return
                ticket = self.buffer.taken
                try:
                    if self._resend:
                        self._send_latest_again()
                    if item is not None:
                        self._handle(*item, ticket)
                except BaseException:
                    self._failed.set()  # before task_done, so a flush() that returns sees it
                    raise
                finally:
                    with self._turn:
                        self._encoding = 0
                        self._finished = max(self._finished, ticket)
                        self._parked = max(self._parked, ticket)
                        self._turn.notify_all()
                    self.buffer.task_done()
        finally:
            if self._encoder is not None:
                self._encoder.close()

    def _compress(self, frame: np.ndarray | Drawing, ticket: int) -> tuple[bytes, int, int]:
        """(image bytes, width, height) of ``frame`` shrunk to max_size and encoded.

        With the encoder process, the thread parks while the frame is encoded and goes on when
        the producer pumps (or after PUMP_WAIT_SECONDS without a pump).
        """
        if self._encoder is not None:
            try:
                self._encoder.submit(frame, self.max_size, self.image_format, self.quality)
                with self._turn:
                    self._encoding = ticket
                    self._parked = max(self._parked, ticket)
                    self._turn.notify_all()
                    self._turn.wait_for(lambda: self._go >= ticket or self._stop.is_set(), PUMP_WAIT_SECONDS)
                data, width, height = self._encoder.receive()
                self.last_encode_ms = self._encoder.last_encode_seconds * 1000.0
                return data, width, height
            except EncoderProcessError as error:
                warnings.warn(f"{error}; gymview encodes frames in its stream thread from now on", stacklevel=1)
                self._encoder = None
        started = time.perf_counter()
        small = downsample(frame.draw() if isinstance(frame, Drawing) else frame, self.max_size)
        data = encode_frame(small, self.image_format, self.quality)
        self.last_encode_ms = (time.perf_counter() - started) * 1000.0
        return data, small.shape[1], small.shape[0]

    def _send_latest_again(self) -> None:
        with self._lock:
            self._resend = False
            header, data = self._latest
        self._send(header, [data])

    def _wait_for_room(self, ticket: int) -> bool:
        """True once a frame may go out, waiting up to ACK_WAIT_SECONDS for an ack if needed."""
        if self.can_send():
            return True
        self._park(ticket)
        deadline = time.perf_counter() + ACK_WAIT_SECONDS
        while not self.can_send():
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return False
            self._acked_event.clear()
            if not self.can_send():
                self._acked_event.wait(remaining)
        return True

    def _handle(self, frame: np.ndarray | Drawing, info: dict[str, Any], ticket: int) -> None:
        if not self._wait_for_room(ticket) or not self._budget.try_acquire():
            self.skipped += 1
            return
        data, width, height = self._compress(frame, ticket)
        dropped = self.buffer.replaced + self.skipped
        with self._lock:
            self._seq += 1
            header = frame_header(self._seq, self.image_format, width, height, info, dropped, self._acked)
            self._latest = (header, data)
        self._send(header, [data])
        self.sent += 1
        self.bytes_sent += len(data)
        self._send_times.append(time.perf_counter())
