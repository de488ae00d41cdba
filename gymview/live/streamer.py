"""FrameStreamer: frames → encoder process → an injected ``send``, done by the producer itself.

It knows no widget: ``send(header, buffers)`` is whatever delivers a message (the LiveView's
custom message in a notebook, a list in tests). The producer (the user's loop) does the work,
under one lock:

* :meth:`FrameStreamer.offer` keeps the newest frame and, when the encoder process is idle and
  the browser has room, submits it there (one pipe write that does not wait);
* :meth:`FrameStreamer.pump`, once the encoded frame is back, reads it, sends it and submits the
  frame that waited meanwhile.

No other thread runs while the producer pumps: on CPython a thread waiting for the GIL is woken
on every release a busy loop makes (numpy releases it in each ``action_space.sample()``), and
those wake-ups slow the loop (docs/performance.md). One watcher thread looks in every
``PUMP_WAIT_SECONDS`` for what the producer left: an encoded frame nobody pumped for (the loop
ended or stalls), a frame waiting for an ack, a resend the browser asked for.

Flow control: while acks arrive from a browser page (at most four a second, each for the newest
frame it drew), frames go out as long as the oldest one that page has not acknowledged left less
than ``max_lag`` seconds ago and its last ack said it drew its frame less than ``max_lag`` after it
was sent (on a slow link frames queue: new ones wait until they drain); each page counts until its
acks stop for ``ACK_FRESH_SECONDS`` (or twice its lag, for a page behind a slow link); when acks do
not arrive (a blocking cell on a kernel without comms over subshells), the producer's time
throttle alone bounds the rate. An H.264 stream also steps its quality level down when frames
queue (:class:`~gymview.live.video_quality.VideoQuality`). Every message, resends included,
takes a token from a process-wide :class:`~gymview.live.throttle.MessageBudget`.

>>> import numpy as np
>>> sent = []
>>> streamer = FrameStreamer(lambda header, buffers: sent.append(header))
>>> streamer.offer(np.zeros((400, 600, 3), np.uint8), {"step": 1})
>>> streamer.flush(), streamer.stop()
(True, None)
>>> sent[0]["width"], sent[0]["height"], sent[0]["seq"], sent[0]["step"]
(512, 341, 0, 1)
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from gymview._internal.checks import check_int
from gymview._internal.memory import give_back_free_memory
from gymview._internal.worker import Worker
from gymview.image.codec import check_format, check_quality, encode_frame
from gymview.image.frames import downsample, fit_size
from gymview.live.deferred import DeferredFrame
from gymview.errors import EncoderProcessError
from gymview.live.encoder_process import EncoderProcess
from gymview.live import h264
from gymview.live.h264 import H264, H264Encoder, codec_string, decode_h264
from gymview.live.protocol import frame_header
from gymview.live.replay import FrameHistory
from gymview.live.video_quality import VideoQuality
from gymview.live.throttle import PROCESS_BUDGET, MessageBudget

__all__ = ["CODECS", "FrameStreamer", "check_codec", "check_max_size"]

Send = Callable[[dict[str, Any], list[bytes]], None]
Frame = np.ndarray | DeferredFrame

# Acknowledgements count as "arriving" while the last one is younger than this; after that the
# browser is either gone, hidden or unable to answer during the cell, and the time throttle rules.
ACK_FRESH_SECONDS = 1.0
# A page silent this long is gone (closed, reloaded): it is forgotten.
PAGE_FORGOTTEN_SECONDS = 60.0
# While acks arrive and the browser lags, a frame waits this long for an ack before it is skipped
# (the next one will be newer anyway): longer than the browser's 250 ms between acks, so that the
# last frame of a run is not lost to the wait for the next one.
ACK_WAIT_SECONDS = 0.5
# While a frame is in the encoder process, the producer looks for its reply this often once it is
# likely back (see FrameStreamer.seconds_until_reply).
POLL_SECONDS = 0.001
# The watcher thread looks this often for work the producer left (see the module docstring); an
# encoded frame nobody pumped for goes out after at most about twice this.
PUMP_WAIT_SECONDS = 0.05
# A watcher with nothing to do for this long ends, and closes the encoder process; the next frame
# starts both again, so views whose env was never closed (a re-run cell) leave nothing behind.
IDLE_EXIT_SECONDS = 10.0


CODECS = ("auto", "h264", "jpeg", "png")


def check_codec(codec: str) -> str:
    """Return the codec's name or raise ValueError listing the choices.

    >>> check_codec("H264"), check_codec("jpg")
    ('h264', 'jpeg')
    """
    name = str(codec).lower()
    name = {"jpg": "jpeg", "h.264": "h264", "avc": "h264"}.get(name, name)
    if name not in CODECS:
        raise ValueError(f"codec must be one of {CODECS}; got {codec!r}")
    return name


def check_max_size(max_size: int) -> int:
    """Return ``max_size`` if it is an integer of at least 16 pixels, else raise ValueError."""
    return check_int("max_size", max_size, minimum=16, hint=" (pixels)")


class FrameStreamer:
    """Encode and send offered frames through ``send``; see the module docstring."""

    def __init__(
        self,
        send: Send,
        max_size: int = 512,
        image_format: str = "jpeg",
        quality: int = 80,
        max_lag: float = 0.5,
        budget: MessageBudget = PROCESS_BUDGET,
        offload: bool = True,
        clock: Callable[[], float] = time.perf_counter,
        history: FrameHistory | None = None,
        codec: str = "auto",
    ) -> None:
        if isinstance(max_lag, bool) or not isinstance(max_lag, (int, float)) or not max_lag > 0:
            raise ValueError(f"max_lag must be a positive number of seconds; got {max_lag!r}")
        self.max_size = check_max_size(max_size)
        self.image_format = check_format(image_format)
        self.codec = check_codec(codec)
        self.quality = check_quality(quality)
        self.max_lag = float(max_lag)
        self._send = send
        self._budget = budget
        self._clock = clock  # flow control's time: ack freshness, waits for room, message rate
        # Downsampling and compressing in a helper process keeps that work clear of the GIL,
        # which a busy loop holds (see encoder_process); encoding here is the fallback.
        self._encoder: EncoderProcess | None = EncoderProcess() if offload else None
        self._lock = threading.Lock()  # guards everything below and the encoder process
        self._waiting: tuple[Frame, dict[str, Any], float] | None = None  # offered, not yet submitted
        self._in_encoder: tuple[Frame, dict[str, Any], float, str] | None = None  # submitted (as format), not yet sent
        self._encoded_here: tuple[bytes, int, int, bool] | None = None  # the finished frame: bytes, size, key
        self._latest: tuple[dict[str, Any], bytes] | None = None
        self._still: tuple[dict[str, Any], bytes] | None = None  # the latest H.264 frame as an image
        self._gop: list[bytes] = []  # the H.264 packets from the last key frame to the latest
        self._page_codecs: dict[str, tuple[frozenset[str], float]] = {}  # page -> (codecs it decodes, last heard)
        self._key_wanted = False  # the next H.264 frame is a key frame
        self._submitted_as: str | None = None  # the format of the last frame handed to the encoder
        self._quality = VideoQuality(self.max_lag)  # the H.264 stream's level, from the acks' lag
        self._codec_string: str | None = None  # the stream's, from its last key frame's SPS
        self._video_here: H264Encoder | None = None  # the stream when frames are encoded in this process
        self._resend = False
        self._outbox: collections.deque[tuple[dict[str, Any], list[bytes]]] = collections.deque()
        self._nudge = threading.Event()  # wakes the watcher for a posted message
        self._retired = False  # the watcher ended after idling: the next frame starts a new one
        self._seq = -1
        self._acked = -1
        self._pages: dict[str, _PageAcks] = {}  # each browser page's acks: pages come and go
        self._send_times: collections.deque[float] = collections.deque(maxlen=512)  # > 3 s at 120 fps
        # (seq, send time) of frames the browser has not acknowledged; bounded for a browser that never acks
        self._unacked: collections.deque[tuple[int, float]] = collections.deque(maxlen=512)
        self._watcher = Worker("stream", self._watch, wake=self._nudge.set)
        self.history = history if history is not None else FrameHistory()
        self.sent = 0
        self.skipped = 0  # dropped by flow control (no room, no budget)
        self.replaced = 0  # replaced by a newer frame before they were submitted
        self.bytes_sent = 0
        self.last_encode_ms = 0.0

    @property
    def encodes_elsewhere(self) -> bool:
        """True while frames are drawn and encoded in the helper process, not the caller's thread."""
        return self._encoder is not None

    @property
    def helper_pid(self) -> int | None:
        """The helper process's id while one runs, else None."""
        encoder = self._encoder
        return encoder.pid if encoder is not None else None

    # -- the producer's side ----------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while the watcher thread runs (from the first frame until it idles out or stops)."""
        return self._watcher.running

    @property
    def busy(self) -> bool:
        """True while a frame waits to be submitted or is in the encoder: keep calling :meth:`pump`."""
        return self._in_encoder is not None or self._waiting is not None

    def offer(self, frame: Frame, info: dict[str, Any]) -> None:
        """Take ``frame`` (replacing one still waiting) and submit it if the encoder is free.

        Never waits for the encoder. Raises the watcher thread's error, if it failed.
        """
        self._watcher.check()
        with self._lock:
            if self._waiting is not None:
                self.replaced += 1
            self._waiting = (frame, info, self._clock())
            self._advance()
            self._keep_watching()

    def pump(self) -> bool:
        """If the encoded frame is back, send it and submit the next; True if a frame was sent.

        Call it again after :meth:`seconds_until_reply` while :attr:`busy`; it never waits for the encoder.
        """
        if self._in_encoder is None and self._waiting is None:
            return False
        with self._lock:
            sent = self._collect()
            self._advance()
        return sent

    def seconds_until_reply(self) -> float:
        """While :attr:`busy`, how long the producer may go before its next :meth:`pump`: until the
        frame in the encoder is likely back (nine tenths of the last frame's encoding time after
        it went in), at least ``POLL_SECONDS``: polling all the while a slow frame (MuJoCo) is
        drawn would cost the loop a call every millisecond.
        """
        in_encoder, encoder = self._in_encoder, self._encoder
        if in_encoder is None or encoder is None:
            return POLL_SECONDS
        likely_back = in_encoder[2] + 0.9 * encoder.last_encode_seconds
        return max(POLL_SECONDS, likely_back - time.perf_counter())

    def flush(self, timeout: float = 5.0) -> bool:
        """Send (or skip, under flow control) every frame offered so far; True if done in ``timeout`` s."""
        deadline = time.perf_counter() + timeout
        while True:
            with self._lock:
                self._collect()
                self._advance()
                done = not self.busy
            if done or time.perf_counter() >= deadline:
                break
            time.sleep(POLL_SECONDS)
        self._watcher.check()
        return done

    def stop(self, timeout: float = 10.0) -> None:
        """Send what was offered, end the watcher and the encoder process; a later offer starts
        them again. Raises the watcher's error, if it failed."""
        try:
            self.flush(timeout)
        finally:
            self._watcher.stop(timeout)
            with self._lock:
                while self._outbox:  # state changes and replays still owed to the browser
                    self._send(*self._outbox.popleft())
                self._retired = False
                if self._encoder is not None:
                    self._encoder.close()
                if self._in_encoder is not None:  # flush timed out: that frame is lost with the process
                    self._in_encoder, self._encoded_here = None, None
                    self.skipped += 1

    @property
    def acked(self) -> int:
        """The newest frame number the browser acknowledged, -1 before the first ack."""
        return self._acked

    def can_send(self) -> bool:
        """False while the browser acknowledges frames and lags: the oldest frame it has not
        acknowledged left ``max_lag`` seconds ago or more."""
        with self._lock:
            return self._can_send()

    def _can_send(self) -> bool:
        now = self._clock()
        for page in self._pages.values():
            if page.silent(now):
                continue  # gone, hidden or unable to answer during the cell: it holds nothing back
            for seq, sent_at in self._unacked:
                if seq > page.acked and sent_at >= page.since:  # its oldest frame not acknowledged
                    # late: that frame left max_lag ago, or the page's last ack said it drew its
                    # frame that late (frames queue on a slow link: let them drain first)
                    if now - sent_at >= self.max_lag or page.lag >= self.max_lag:
                        return False
                    break
        return True

    def acknowledge(self, seq: int, page: str = "") -> None:
        """Record that browser page ``page`` drew the frames up to ``seq`` (from any thread). Each
        page is held to ``max_lag`` while its acks arrive."""
        with self._lock:
            now = self._clock()
            acks = self._pages.get(page)
            sent_at = next((at for number, at in self._unacked if number == seq), None)
            newer = acks is None or seq > acks.acked
            if acks is None or acks.silent(now):
                # A new page, or acks resuming after a silence (a blocking cell, a tab in the
                # background): frames sent before are not held against it, it may never ack them all.
                acks = self._pages[page] = _PageAcks(int(seq), now, now)
            if sent_at is not None and newer:  # how late this page drew it
                acks.heard_lag(now - sent_at)
                self._quality.heard(now - sent_at, now)
            acks.acked, acks.last = max(acks.acked, int(seq)), now
            if page in self._page_codecs:
                self._page_codecs[page] = (self._page_codecs[page][0], now)
            self._acked = max(self._acked, int(seq))
            for name in [name for name, other in self._pages.items() if now - other.last > PAGE_FORGOTTEN_SECONDS]:
                del self._pages[name]
            fresh = [other.acked for other in self._pages.values() if not other.silent(now)]
            while self._unacked and self._unacked[0][0] <= min(fresh):
                self._unacked.popleft()

    def page_ready(self, page: str, codecs: tuple[str, ...] | None) -> None:
        """Browser page ``page`` rendered a view and decodes ``codecs`` (None: an older page, images only).

        With ``codec="auto"`` frames go as H.264 while every page heard from lately decodes it; the
        next H.264 frame is a key frame, from which the page starts.
        """
        with self._lock:
            self._page_codecs[page] = (frozenset(codecs or ()), self._clock())
            self._key_wanted = True

    def want_key_frame(self) -> None:
        """A page cannot decode the stream from here (it joined it, or its decoder failed): the next
        H.264 frame is a key frame."""
        self._key_wanted = True

    @property
    def stream_format(self) -> str:
        """What the next frame is sent as: ``"h264"``, or the image format."""
        if self.codec == H264:
            return H264
        if self.codec == "auto":
            now = self._clock()
            heard = [codecs for codecs, last in self._page_codecs.values() if now - last < PAGE_FORGOTTEN_SECONDS]
            if heard and all(H264 in codecs for codecs in heard) and h264.h264_unavailable() is None:
                return H264
            return self.image_format
        return self.codec

    @property
    def video_level(self) -> int:
        """The H.264 stream's quality level now: 0 is the best; a slow link raises it."""
        return self._quality.level

    @property
    def sent_as(self) -> str | None:
        """The format of the last frame sent, None before the first."""
        latest = self._latest
        return None if latest is None else latest[0]["format"]

    @property
    def latest(self) -> tuple[dict[str, Any], bytes] | None:
        """The header and image bytes (``image_format``) of the last frame sent, or None before the first.

        An H.264 frame is decoded from the packets since its key frame (and kept, for the next call).
        """
        with self._lock:
            return self._latest_image()

    def resend_latest(self) -> None:
        """Send the last frame again soon, from the watcher (a view that just appeared needs it)."""
        with self._lock:
            self._resend = self._latest is not None
            if self._resend and not self._watcher.failed:  # a failure is the user's, on their next push
                self._keep_watching()

    def post(self, header: dict[str, Any], buffers: list[bytes] | None = None) -> None:
        """Send a message other than a new frame (a state change, a replayed frame) from the
        watcher thread, at once: safe from any thread, never waits for the send."""
        with self._lock:
            self._outbox.append((header, buffers or []))
            if not self._watcher.failed:
                self._keep_watching()
        self._nudge.set()

    def messages_per_second(self, window: float = 3.0) -> float:
        """Frame messages sent over the last ``window`` seconds, per second."""
        now = self._clock()
        return sum(1 for t in list(self._send_times) if now - t <= window) / window

    # -- with the lock held --------------------------------------------------------------------
    def _keep_watching(self) -> None:
        if self._retired:  # the last watcher ended after idling (or is about to)
            self._watcher.stop()
            self._retired = False
        self._watcher.start()

    def _advance(self) -> None:
        """Submit the waiting frame if the encoder is free, the browser has room and the budget allows."""
        if self._waiting is None or self._in_encoder is not None:
            return
        frame, info, since = self._waiting
        if not self._can_send():
            if self._clock() - since >= ACK_WAIT_SECONDS:
                self._waiting = None
                self.skipped += 1
            return
        self._waiting = None
        if not self._budget.try_acquire():
            self.skipped += 1
            return
        image_format = self.stream_format
        # a stream that starts again after images starts from a key frame: pages may have joined meanwhile
        key = self._key_wanted or self._submitted_as != image_format
        self._key_wanted, self._submitted_as = False, image_format
        value = self._quality.level if image_format == H264 else self.quality
        self._in_encoder = (frame, info, time.perf_counter(), image_format)
        if self._encoder is not None:
            try:
                self._encoder.submit(frame, self.max_size, image_format, value, key)
                return
            except EncoderProcessError as error:
                self._stop_offloading(error)
        self._encoded_here = self._encode_here(frame, image_format, key)

    def _collect(self, older_than: float = 0.0) -> bool:
        """Send the frame in the encoder if its reply is back (and it was submitted ``older_than`` s ago)."""
        if self._in_encoder is None or time.perf_counter() - self._in_encoder[2] < older_than:
            return False
        frame, info, _, image_format = self._in_encoder
        if self._encoded_here is None and self._encoder is not None:
            if not self._encoder.reply_ready():
                return False
            try:
                data, width, height = self._encoder.receive()
                self._encoded_here = (data, width, height, self._encoder.last_was_key)
                self.last_encode_ms = self._encoder.last_encode_seconds * 1000.0
            except EncoderProcessError as error:
                self._stop_offloading(error)
                self._encoded_here = self._encode_here(frame, image_format, True)
        (data, width, height, key), self._encoded_here, self._in_encoder = self._encoded_here, None, None
        self._seq += 1
        header = frame_header(
            self._seq, image_format, width, height, info, self.replaced + self.skipped, self._acked
        )
        if image_format == H264:
            if key:
                self._gop.clear()
                self._codec_string = codec_string(data) or self._codec_string
            elif not self._gop:  # a stream that lost its key frame (a new helper process): start one
                self._key_wanted = True
            self._gop.append(data)
            header.update(key=key, codec=self._codec_string)
        self._latest, self._still = (header, data), None
        self.history.add(header, data, self._clock())
        self._send(header, [data])
        self.sent += 1
        self.bytes_sent += len(data)
        sent_at = self._clock()
        self._send_times.append(sent_at)
        self._unacked.append((self._seq, sent_at))
        return True

    def _resend_latest(self) -> None:
        if self._latest is None:
            self._resend = False
        elif self._can_send() and self._budget.try_acquire():
            self._resend = False
            header, data = self._latest_image()  # a page that just rendered has no decoder yet
            self._send(header, [data])

    def _latest_image(self) -> tuple[dict[str, Any], bytes] | None:
        if self._latest is None or self._latest[0]["format"] != H264:
            return self._latest
        if self._still is None:
            header = {**self._latest[0], "format": self.image_format, "key": None, "codec": None}
            picture = decode_h264(self._gop)[-1][: header["height"], : header["width"]]
            self._still = (header, encode_frame(np.ascontiguousarray(picture), self.image_format, self.quality))
        return self._still

    def _stop_offloading(self, error: EncoderProcessError) -> None:
        warnings.warn(f"{error}; gymview encodes frames in the calling thread from now on", stacklevel=3)
        self._encoder.close()
        self._encoder = None

    def _encode_here(self, frame: Frame, image_format: str, key: bool) -> tuple[bytes, int, int, bool]:
        started = time.perf_counter()
        picture = frame if isinstance(frame, np.ndarray) else frame.draw()
        if image_format == H264:
            if self._video_here is None:
                self._video_here = H264Encoder()
            height, width = fit_size(*picture.shape[:2], self.max_size)
            data, key = self._video_here.encode(np.ascontiguousarray(picture), (width, height), key, self._quality.level)
        else:
            small = downsample(picture, self.max_size)
            data, key, (height, width) = encode_frame(small, image_format, self.quality), False, small.shape[:2]
        self.last_encode_ms = (time.perf_counter() - started) * 1000.0
        return data, width, height, key

    # -- the watcher thread ------------------------------------------------------------------
    def _watch(self, stop: threading.Event) -> None:
        idle_since = time.perf_counter()
        while not stop.is_set():
            self._nudge.wait(PUMP_WAIT_SECONDS)
            self._nudge.clear()
            if stop.is_set():
                return
            with self._lock:
                while self._outbox and self._budget.try_acquire():
                    header, buffers = self._outbox.popleft()
                    self._send(header, buffers)
                self._collect(older_than=PUMP_WAIT_SECONDS)
                self._advance()
                if self._resend:
                    self._resend_latest()
                now = time.perf_counter()
                active = self.busy or self._resend or self._outbox
                if active:
                    idle_since = now
                elif now - idle_since >= IDLE_EXIT_SECONDS:
                    self._retired = True
                    if self._encoder is not None:
                        self._encoder.close()
                    return
            if active:
                give_back_free_memory()  # outside the lock: the loop's push and pump never wait for a trim


@dataclasses.dataclass
class _PageAcks:
    """One browser page's acks: the newest frame it drew, when it last said so, since when its acks
    arrive without a silence, and how late it drew the frame its last ack named."""

    acked: int
    last: float
    since: float
    lag: float = 0.0  # the lesser of its last two acks' lags: one slow draw (a page starting up) is no queue
    _previous: float = 0.0

    def heard_lag(self, lag: float) -> None:
        self.lag, self._previous = min(lag, self._previous), lag

    def silent(self, now: float) -> bool:
        """Its acks stopped: longer than ``ACK_FRESH_SECONDS`` without one, or than twice its lag (on a
        slow link a page that draws frames late acks late)."""
        return now - self.last >= max(ACK_FRESH_SECONDS, 2 * self.lag)
