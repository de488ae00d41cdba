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
those wake-ups slow the loop (docs/performance-log.md). One watcher thread
(:class:`~gymview.live.stream_watcher.StreamWatcher`) does what the producer left: an encoded frame
nobody pumped for (the loop ended or stalls), a frame waiting for an ack, a resend the browser asked for.

Flow control: :class:`~gymview.live.pacing.page_acks.PageAcks` holds frames back while a page whose acks
arrive lags by ``max_lag``. Every message, resends included, takes a token from a process-wide
:class:`~gymview.live.pacing.throttle.MessageBudget`.

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
import functools
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from gymview._internal.checks import check_int
from gymview.errors import EncoderProcessError, FrameError
from gymview.image.codec import check_format, check_quality, encode_frame
from gymview.image.frames import downsample, fit_size
from gymview.live import stream_watcher
from gymview.live.encoding.deferred import DeferredFrame
from gymview.live.encoding.drawn_here import draw_frame_here
from gymview.live.encoding.encoder_process import EncoderProcess, HelperEnding
from gymview.live.encoding.h264 import H264, h264_unavailable
from gymview.live.encoding.latest_frame import Image, LatestFrame
from gymview.live.encoding.replay import FrameHistory
from gymview.live.encoding.scene_frames import SCENE, SCENE_BATCH_SECONDS, SceneFrames
from gymview.live.encoding.video_stream import VideoStream, check_codec
from gymview.live.pacing.page_acks import PAGE_FORGOTTEN_SECONDS, PageAcks
from gymview.live.pacing.throttle import PROCESS_BUDGET, MessageBudget
from gymview.live.protocol import STATE, frame_header
from gymview.live.stream_watcher import StreamWatcher

__all__ = ["FrameStreamer", "check_max_size"]

Send = Callable[[dict[str, Any], list[bytes]], None]
Frame = np.ndarray | DeferredFrame

# While a frame is in the encoder process, the producer looks for its reply this often once it is
# likely back (see FrameStreamer.seconds_until_reply).
POLL_SECONDS = 0.001
# While the producer streams frames and nothing waits on the watcher alone, the watcher looks in this often: a
# loop that stalls has its last frame sent about this late at most.
QUIET_LOOK_SECONDS = 0.2
# A picture a page asked for is made again of the newer frame that went out while it was made, this often at most
RESEND_TRIES = 3


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
        on_watching: Callable[[bool], None] = lambda active: None,
        draw: str = "auto",
        on_scene: Callable[[dict[str, Any]], None] = lambda scene: None,
    ) -> None:
        if isinstance(max_lag, bool) or not isinstance(max_lag, (int, float)) or not max_lag > 0:
            raise ValueError(f"max_lag must be a positive number of seconds; got {max_lag!r}")
        self.max_size = check_max_size(max_size)
        self.image_format = check_format(image_format)
        self.quality = check_quality(quality)
        self.max_lag = float(max_lag)
        self._send = send  # through _deliver, which keeps what it raises for the user
        self._budget = budget
        self._clock = clock  # flow control's time: ack freshness, waits for room, message rate
        # Downsampling and compressing in a helper process keeps that work clear of the GIL,
        # which a busy loop holds (see encoder_process); encoding here is the fallback.
        self._encoder: EncoderProcess | None = EncoderProcess(on_ended=self._helper_ended) if offload else None
        # guards everything below and the encoder process; never held across a call that can block (drawing,
        # decoding, waiting for a process or a thread): the loop's offer and the page's acks take it
        self._lock = threading.Lock()
        self._endings_due = 0  # helpers found dying whose ending is still to be told (by _helper_ended)
        self._waiting: tuple[Frame, dict[str, Any]] | None = None  # offered, not yet submitted
        self._offered_at = -float("inf")  # when the producer last offered a frame (flow control's clock)
        self._offer_gap = float("inf")  # the time between its last two offers
        self._in_encoder: tuple[Frame, dict[str, Any], float, str] | None = None  # submitted (as format), not yet sent
        self._encoded_here: tuple[bytes, int, int, bool] | None = None  # the finished frame: bytes, size, key
        self._scenes = SceneFrames(draw, on_scene)  # frames the page draws from their states
        self._video = VideoStream(codec, PAGE_FORGOTTEN_SECONDS)
        self._latest = LatestFrame(self._video)
        self._warned_blind = False  # told the user once that a page cannot decode a forced H.264 stream
        self._resend = False
        self._resend_tries = 0  # pictures of the latest frame made in vain: a newer one went out meanwhile
        self._outbox: collections.deque[tuple[dict[str, Any], list[bytes]]] = collections.deque()
        self._failure: FrameError | EncoderProcessError | None = None  # a lost frame's error, for the user
        self._seq = -1
        self._acks = PageAcks(self.max_lag)  # each browser page's acks: pages come and go
        self._send_times: collections.deque[float] = collections.deque(maxlen=512)  # > 3 s at 120 fps
        self._watcher = StreamWatcher(self._lock, self._chores, self._retire, on_watching, next_look=self._next_look)
        self.history = history if history is not None else FrameHistory()
        self.sent = 0
        self.messages = 0  # frame messages sent (several scene frames may share one)
        self.skipped = 0  # not sent: lost (their error goes to the user), or left in the helper when the stream stopped
        self.replaced = 0  # replaced by a newer frame before they were submitted
        self.bytes_sent = 0
        self.last_encode_ms = 0.0
        self.last_drawn_by_page = False  # the last frame taken went as a state for the page to draw

    @property
    def encodes_elsewhere(self) -> bool:
        """True while frames are drawn and encoded in the helper process, not the caller's thread."""
        return self._encoder is not None

    # -- the producer's side ----------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while the watcher thread runs (from the first frame until it idles out or stops)."""
        return self._watcher.running

    @property
    def busy(self) -> bool:
        """True while a frame waits to be submitted or is in the encoder: keep calling :meth:`pump`."""
        return self._in_encoder is not None or self._waiting is not None

    @property
    def holding(self) -> bool:
        """True while scene frames wait to go out together (``SCENE_BATCH_SECONDS``, twice that while the
        producer offers frames: its next one takes them along)."""
        return self._scenes.holding

    @property
    def waits_for_room(self) -> bool:
        """True while a frame waits for the pages' room or the message budget, nothing in the encoder: the watcher
        sends it (an ack wakes it), the producer need not pump for it."""
        return self._waiting is not None and self._in_encoder is None

    def offer(self, frame: Frame, info: dict[str, Any]) -> None:
        """Take ``frame`` (replacing one still waiting) and submit it if the encoder is free.

        Never waits for the encoder. Raises the error of a frame that could not be made since the last
        call (:class:`~gymview.errors.FrameError`, or EncoderProcessError when the helper died), before
        taking this one; TypeError, taking nothing, when ``frame``'s painter cannot be pickled for the
        helper; the watcher thread's error, if it failed.
        """
        self._watcher.check()
        with self._lock:
            self._raise_failure()
            if not self._scenes.take(frame) and not isinstance(frame, np.ndarray):
                self._take_painter(frame.painter)
            if self._waiting is not None:
                self.replaced += 1
            self._waiting = (frame, info)
            now = self._clock()
            self._offer_gap, self._offered_at = now - self._offered_at, now
            self._advance()
            self._watcher.keep_going()

    def check(self, frame: Any = None) -> None:
        """Raise what :meth:`offer` would raise before taking ``frame`` (None: pixels not yet seen), taking
        nothing: a frame lost since the last call, an unpicklable painter, a frame ``draw="page"`` cannot
        draw, the watcher's failure."""
        self._watcher.check()
        with self._lock:
            self._raise_failure()
            if frame is not None and not self._scenes.take(frame) and hasattr(frame, "painter"):
                self._take_painter(frame.painter)

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
        """Send every frame offered so far, the last even if the pages lag (one frame does not flood them);
        True if done in ``timeout`` s."""
        deadline = time.perf_counter() + timeout
        while True:
            with self._lock:
                self._collect()
                self._advance(room_or_not=True)
                self._send_scenes(due_only=False)
                done = not self.busy and self._endings_due <= 0
            if done or time.perf_counter() >= deadline:
                break
            time.sleep(POLL_SECONDS)
        self._watcher.check()
        with self._lock:
            self._raise_failure()
        return done

    def stop(self, timeout: float = 10.0) -> None:
        """Send what was offered, end the watcher and the encoder process; a later offer starts them again.

        Everything is ended whatever fails on the way; then the first error is raised: a lost frame's (as
        :meth:`flush`; a frame the helper did not finish in ``timeout`` is one), or the watcher's."""
        errors: list[Exception] = []
        for step in (lambda: self.flush(timeout), lambda: self._watcher.stop(timeout), self._end_helper):
            try:
                step()
            except Exception as error:
                errors.append(error)
        if errors:
            raise errors[0]

    def _end_helper(self) -> None:
        with self._lock:
            stuck = self._in_encoder is not None and self._encoded_here is None and self._encoder is not None
            end_helper = self._encoder.let_go() if self._encoder is not None else None
            if self._in_encoder is not None:
                self._in_encoder = self._encoded_here = None
                if stuck:
                    self._lose_frame(
                        EncoderProcessError(
                            "gymview's helper process did not finish a frame in time (does the painter hang?): it was "
                            "stopped, and the next frame starts a new one"
                        )
                    )
                else:
                    self.skipped += 1
            while self._outbox:  # state changes and replays still owed to the browser
                self._deliver(*self._outbox.popleft())
            failure, self._failure = self._failure, None
        if end_helper is not None:
            end_helper(0.0 if stuck else 5.0)  # a helper stuck on a frame is killed now
        if failure is not None:
            raise failure

    def forget_after_fork(self) -> None:
        """In a child forked from this process: let go of the parent's helper (see ``EncoderProcess``)."""
        if self._encoder is not None:
            self._encoder.forget_after_fork()
            self._encoder = None

    @property
    def acked(self) -> int:
        """The newest frame number the browser acknowledged, -1 before the first ack."""
        return self._acks.acked

    def can_send(self) -> bool:
        """False while the browser acknowledges frames and lags: the oldest frame it has not
        acknowledged left ``max_lag`` seconds ago or more."""
        with self._lock:
            return self._can_send()

    def _can_send(self) -> bool:
        return self._acks.can_send(self._clock())

    def acknowledge(self, seq: int, page: str = "") -> None:
        """Record that browser page ``page`` drew the frames up to ``seq`` (from any thread). Each
        page is held to ``max_lag`` while its acks arrive."""
        with self._lock:
            now = self._clock()
            self._acks.acknowledge(int(seq), page, now)
            self._video.heard_from(page, now)
            held = self.waits_for_room
        if held:
            self._watcher.wake()  # the frame held back may go now

    def page_ready(self, page: str, codecs: tuple[str, ...] | None) -> None:
        """Browser page ``page`` rendered a view and decodes ``codecs`` (None: an older page, images only).

        With ``codec="auto"`` frames go as H.264 while every page heard from lately decodes it; the
        next H.264 frame is a key frame, from which the page starts.
        """
        if codecs and H264 in codecs:
            h264_unavailable()  # PyAV is imported here, once, on the page's thread: not by the loop's next frame
        with self._lock:
            self._video.page_ready(page, codecs, self._clock())
            blind = self.codec == H264 and H264 not in (codecs or ()) and not self._warned_blind
            self._warned_blind = self._warned_blind or blind
        if blind:
            warnings.warn(
                "a page showing this view cannot decode H.264 (no WebCodecs, or no H.264 in it): it shows no "
                "new frames; codec='auto' sends H.264 where pages decode it, JPEG elsewhere",
                stacklevel=2,
            )

    def want_key_frame(self) -> None:
        """A page cannot decode the stream from here (it joined it, or its decoder failed): the next
        H.264 frame is a key frame."""
        with self._lock:
            self._video.want_key_frame()

    @property
    def codec(self) -> str:
        """``"auto"``, ``"h264"``, ``"jpeg"`` or ``"png"``: see ``LiveView``."""
        return self._video.codec

    @codec.setter
    def codec(self, codec: str) -> None:
        with self._lock:
            self._video.codec = check_codec(codec)

    @property
    def draw(self) -> str:
        """``"auto"``, ``"page"`` or ``"kernel"``: see ``LiveView``."""
        return self._scenes.draw

    @property
    def scene_id(self) -> int:
        """The id of the scene the pages draw scene frames with now (0: none yet)."""
        return self._scenes.scene_id

    @property
    def sent_as(self) -> str | None:
        """The format of the last frame sent, None before the first."""
        sent = self._latest.sent
        return None if sent is None else sent[0]["format"]

    @property
    def latest(self) -> tuple[dict[str, Any], bytes] | None:
        """The header and image bytes (``image_format``) of the last frame sent, or None before the first.

        An H.264 frame is decoded from the packets since its key frame, a frame the page drew is drawn
        here (each kept, for the next call), outside the lock: the loop's offer never waits for it.
        """
        with self._lock:
            sent, image = self._latest.sent, self._latest_picture()
        if not callable(image):
            return image
        image = image()
        if image is not None:
            with self._lock:
                self._latest.keep(sent, image)
        return image

    def resend_latest(self) -> None:
        """Send the last frame again soon, from the watcher (a view that just appeared needs it)."""
        with self._lock:
            self._resend = self._latest.sent is not None
            if self._resend and not self._watcher.failed:  # a failure is the user's, on their next push
                self._watcher.keep_going()

    def post(self, header: dict[str, Any], buffers: list[bytes] | None = None) -> None:
        """Send a message other than a new frame (a state change, a replayed frame) from the
        watcher thread, at once: safe from any thread, never waits for the send."""
        with self._lock:
            if header.get("type") == STATE:  # a state says all there is: one waiting is out of date
                self._outbox = collections.deque(item for item in self._outbox if item[0].get("type") != STATE)
            self._outbox.append((header, buffers or []))
            if not self._watcher.failed:
                self._watcher.keep_going()
        self._watcher.wake()

    def messages_per_second(self, window: float = 3.0) -> float:
        """Frame messages sent over the last ``window`` seconds, per second."""
        now = self._clock()
        return sum(1 for t in list(self._send_times) if now - t <= window) / window

    # -- with the lock held --------------------------------------------------------------------
    def _advance(self, room_or_not: bool = False) -> None:
        """Submit the waiting frame if the encoder is free, the browser has room (or ``room_or_not``) and the
        budget allows; else it waits (a newer frame replaces it): the last frame of a loop that pauses is the one
        to show."""
        if self._waiting is None or self._in_encoder is not None or not (room_or_not or self._can_send()):
            return
        frame, info = self._waiting
        scene = self._scenes.draws(frame) and (  # a state for the page to draw: nothing to make here
            not self._scenes.needs_webgl or self._video.every_page_has("webgl", self._clock())
        )
        if not scene and not self._budget.try_acquire():  # scene frames take one per message (_send_scenes)
            return
        self._waiting = None
        self.last_drawn_by_page = scene
        if scene:
            self._encoded_here = (*self._scenes.pack(frame, self.max_size), False)
            self._in_encoder = (frame, info, time.perf_counter(), SCENE)
            self.last_encode_ms = 0.0
            self._collect()
            return
        image_format = self._video.format_for(self.image_format, self._clock())
        key = self._video.next_is_key(image_format)
        self._submit(frame, info, image_format, self.quality, key)

    def _submit(self, frame: Frame, info: dict[str, Any], image_format: str, value: int, key: bool) -> None:
        """Hand the frame to the helper, or make it here where no helper can start; a frame that cannot be
        made is lost with its error (see :meth:`_lose_frame`)."""
        submitted = (frame, info, time.perf_counter(), image_format)
        if self._encoder is not None:
            try:
                self._encoder.submit(frame, self.max_size, image_format, value, key)
                self._in_encoder = submitted
                return
            except EncoderProcessError as error:
                if self._encoder.has_run:  # a helper ran (and maybe died drawing this painter): try again later
                    self._lose_frame(error)
                    return
                self._stop_offloading(error)  # no helper can start here: frames are made in this process
            except Exception as error:  # a state or painter that cannot go to the helper
                self._lose_frame(FrameError(f"the frame could not be sent to the helper: {error!r}"), error)
                return
        try:
            self._encoded_here = self._encode_here(frame, image_format, key)
        except Exception as error:
            self._lose_frame(FrameError(f"the frame could not be made: {type(error).__name__}: {error}"), error)
            return
        self._in_encoder = submitted

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
            except Exception as error:  # the frame is done with either way: nothing is left half-set
                self._in_encoder = None
                self._lost_in_helper(error)
                return False
            self._encoded_here = (data, width, height, self._encoder.last_was_key)
            self.last_encode_ms = self._encoder.last_encode_seconds * 1000.0
        encoded, self._encoded_here, self._in_encoder = self._encoded_here, None, None
        assert encoded is not None  # encoded here, or received from the encoder just now
        data, width, height, key = encoded
        self._seq += 1
        header = frame_header(
            self._seq, image_format, width, height, info, self.replaced + self.skipped, self._acks.acked
        )
        if image_format == SCENE:
            header["scene"] = self._scenes.scene_id
            self.history.keep_painter(self._scenes.scene_id, self._scenes.painter)
        self._video.sent(header, data, key)
        self._latest.went_out(
            header, data, frame if not isinstance(frame, np.ndarray) and image_format == SCENE else None
        )
        self.history.add(header, data, self._clock())
        if image_format == SCENE and self._scenes.fits(header):  # a few bytes: several go in one message
            self._scenes.hold(header, data, self._clock())
            return self._send_scenes(due_only=True)
        self._send_scenes(due_only=False)  # frames held go first: the page drops a frame older than one it has
        if image_format == SCENE:
            self._scenes.hold(header, data, self._clock())
            return self._send_scenes(due_only=True)
        self._deliver(header, [data])
        self._went_out([self._seq], len(data))
        return True

    def _send_scenes(self, due_only: bool, wait: float = SCENE_BATCH_SECONDS) -> bool:
        """Send the scene frames held for one message (``due_only``: if they waited long enough); True if sent."""
        if not self._scenes.ready(self._clock(), due_only, wait) or (due_only and not self._budget.try_acquire()):
            return False  # held on (a message of more frames, later) while the message budget is spent
        batch = self._scenes.batch()
        if batch is None:
            return False
        header, data, numbers = batch
        self._deliver(header, [data])
        self._went_out(numbers, len(data))
        return True

    def _deliver(self, header: dict[str, Any], buffers: list[bytes]) -> None:
        """``send`` a message; what it raises (a comm or socket gone) waits for the user as a lost frame's error."""
        try:
            self._send(header, buffers)
        except Exception as error:
            self._lose_frame(FrameError(f"a message could not be sent to the page: {error!r}"), error)

    def _went_out(self, numbers: list[int], size: int) -> None:
        sent_at = self._clock()
        self._send_times.append(sent_at)  # one message
        self.messages += 1
        for seq in numbers:
            self._acks.sent(seq, sent_at)
        self.sent += len(numbers)
        self.bytes_sent += size

    def _resend_latest(self) -> Callable[[], Image | None] | None:
        """With the lock held: send the last frame again, as an image (a page that just rendered has no
        decoder yet); or return the function that makes it, to call without the lock, then :meth:`_resend_made`."""
        if self._latest.sent is None:
            self._resend = False
        elif self._can_send() and self._budget.try_acquire():
            self._resend = False
            self._send_scenes(due_only=False)  # before the resent frame, which is the newest
            image = self._latest_picture()
            if callable(image):
                return image
            if image is not None:
                self._deliver(image[0], [image[1]])
        return None

    def _resend_made(self, latest: Image | None, make: Callable[[], Image | None]) -> None:
        image = make()
        if image is None:
            return
        with self._lock:
            self._latest.keep(latest, image)
            if self._latest.sent is latest or self._resend_tries >= RESEND_TRIES:
                # after RESEND_TRIES, one of an older frame: whoever asked needs a picture (a page elsewhere keeps it
                # as its still image), and the run makes frames faster than this thread can picture them
                self._resend_tries = 0
                self._deliver(image[0], [image[1]])
            else:  # a newer frame went out while it was made (a state, an H.264 frame): a picture of that one
                self._resend_tries += 1
                self._resend = True
                self._watcher.keep_going()  # the watcher may sleep, nothing else left for it

    def _latest_picture(self) -> Image | Callable[[], Image | None] | None:
        """With the lock held: :meth:`LatestFrame.picture` at this view's settings."""
        return self._latest.picture(self.max_size, self.image_format, self.quality)

    def _lose_frame(self, error: FrameError | EncoderProcessError, cause: BaseException | None = None) -> None:
        """Count the frame that could not be made as skipped; its error waits for the user's next call.
        The first error not yet raised is kept (its cause comes first: a painter's traceback before the
        helper's death); later ones are counted only."""
        if cause is not None:
            error.__cause__ = cause
        self.skipped += 1
        if self._failure is None:
            self._failure = error

    def _lost_in_helper(self, error: Exception) -> None:
        if isinstance(error, HelperEnding):  # how it ended comes to _helper_ended
            self.skipped += 1
            self._endings_due += 1
            return
        if not isinstance(error, (FrameError, EncoderProcessError)):
            error = EncoderProcessError(f"gymview's helper process could not hand a frame back: {error!r}")
        self._lose_frame(error)

    def _helper_ended(self, error: EncoderProcessError) -> None:
        """How a helper found dying ended (from the thread that waited for it): the user hears it next."""
        with self._lock:
            self._endings_due -= 1
            if self._failure is None:
                self._failure = error

    def _take_painter(self, painter: Any) -> None:
        if self._encoder is not None:
            self._encoder.take_painter(painter)

    def _raise_failure(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def _stop_offloading(self, error: EncoderProcessError) -> None:
        warnings.warn(f"{error}; gymview encodes frames in the calling thread from now on", stacklevel=3)
        if self._encoder is not None:
            self._encoder.close()
        self._encoder = None

    def _encode_here(self, frame: Frame, image_format: str, key: bool) -> tuple[bytes, int, int, bool]:
        started = time.perf_counter()
        picture = frame if isinstance(frame, np.ndarray) else draw_frame_here(frame)
        if image_format == H264:
            height, width = fit_size(picture.shape[0], picture.shape[1], self.max_size)
            data, key = self._video.encode_here(picture, (width, height), key)
        else:
            small = downsample(picture, self.max_size)
            data, key, (height, width) = encode_frame(small, image_format, self.quality), False, small.shape[:2]
        self.last_encode_ms = (time.perf_counter() - started) * 1000.0
        return data, width, height, key

    # -- the watcher thread's chores, with the lock held ------------------------------------------
    def _chores(self) -> tuple[bool, Callable[[], None] | None]:
        """What the producer left: messages posted, a frame back from the helper, one waiting, scene frames
        held, a resend; whether there was any, and the picture to make after the lock is let go."""
        while self._outbox and self._budget.try_acquire():
            header, buffers = self._outbox.popleft()
            self._deliver(header, buffers)
        self._collect(older_than=stream_watcher.PUMP_WAIT_SECONDS)
        self._advance()
        # frames held go with the producer's next offer while it offers them faster than they are due; else from here
        streaming = self._clock() - self._offered_at < SCENE_BATCH_SECONDS
        self._send_scenes(due_only=True, wait=2 * SCENE_BATCH_SECONDS if streaming else SCENE_BATCH_SECONDS)
        later = None
        if self._resend:
            make_image, latest = self._resend_latest(), self._latest.sent
            if make_image is not None:
                later = functools.partial(self._resend_made, latest, make_image)
        # a producer streaming keeps the watcher (and the helper it would let go) however little it leaves for it
        pending = self.busy or self._resend or self._outbox or self.holding or later is not None
        return bool(pending or self._producer_streams()), later

    def _next_look(self) -> float | None:
        """When the watcher looks again: every ``QUIET_LOOK_SECONDS`` while the producer streams (it offered its last
        two frames within ``PUMP_WAIT_SECONDS``) and its own pumping takes them out; every ``PUMP_WAIT_SECONDS``
        while something waits on the watcher alone (a frame of a producer that stopped or offers one now and then,
        or one held back for room or budget; a message; a resend); None (until new work wakes it) once nothing is
        left. Each look takes the interpreter from a busy thread (the loop, the user's next loop, torch)."""
        quick = stream_watcher.PUMP_WAIT_SECONDS
        streams = self._producer_streams()
        if self._outbox or self._resend or self.waits_for_room or (not streams and (self.busy or self.holding)):
            return quick
        return max(quick, QUIET_LOOK_SECONDS) if streams else None

    def _producer_streams(self) -> bool:
        """Whether the producer offers frames one after another, as a loop does (not one a cell, a Step)."""
        quick = stream_watcher.PUMP_WAIT_SECONDS
        return self._offer_gap < quick and self._clock() - self._offered_at < quick

    def _retire(self) -> Callable[[float], None] | None:
        """The watcher idled out: let the helper go (the next frame starts a new one); what ends it."""
        return self._encoder.let_go() if self._encoder is not None else None
