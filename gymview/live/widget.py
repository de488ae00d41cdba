"""LiveView: the anywidget that shows frames live in a notebook.

Frames never travel as synced traits (those are saved into the notebook file): each one is a
custom message with the compressed image as a binary buffer. The traits hold only configuration.

>>> import numpy as np, gymview
>>> view = gymview.LiveView(fps=30, max_size=256)
>>> view.push(np.zeros((64, 64, 3), np.uint8), step=1)   # False: no notebook front-end here
False
>>> view.close()
"""

from __future__ import annotations

import base64
import collections
import os
import pathlib
import threading
import time
import uuid
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets
from comm import DummyComm

from gymview._internal.kernel import in_kernel as running_in_kernel

from gymview.image.codec import check_format, check_quality
from gymview.image.frames import check_frame, to_rgb_uint8
from gymview.live import protocol
from gymview.live.cell_messages import ViewMessages
from gymview.live.controls import SPEEDS, RunControls
from gymview.live.deferred import DeferredFrame
from gymview.live.replay import DEFAULT_MAX_BYTES, DEFAULT_SECONDS, FrameHistory
from gymview.live.streamer import FrameStreamer, Send, check_max_size
from gymview.live.thread_switches import quick_switches
from gymview.live.throttle import FrameThrottle, check_fps

__all__ = ["LiveView", "live_views"]

_PACKAGE = pathlib.Path(__file__).parents[1]
# Wheels ship the front-end in gymview/static/; a source checkout (editable install) has it in js/.
_FRONTEND = _PACKAGE / "static" if (_PACKAGE / "static" / "widget.js").exists() else _PACKAGE.parent / "js"

# A view that is displayed but scrolled away or in a background tab still gets this many frames per
# second: while a cell blocks the kernel, the browser's "visible again" message cannot arrive, so a
# view must never depend on it to come back to life.
HIDDEN_FPS = 1.0
# After a frame message went to ipykernel, the producer sleeps this long so that the kernel's IOPub
# thread can send it without waiting for the GIL. Measured in one kernel: 0 and
# 0.1 ms did no better than 0.2 ms, 0.4 ms did worse (0.79-0.85 of the plain loop against 0.89).
IOPUB_HAND_OVER_SECONDS = 0.0002
# How often a blocking loop on ipykernel 6 fetches the browser's messages (see hear_clicks): a click
# waits at most this long, and the loop pays one socket poll per period.
HEARING_SECONDS = 0.02

_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_views: list[LiveView] = []
_views_lock = threading.Lock()
_forked_child = False  # this process was forked from the one that imported this module


def _silence_views_in_forked_child() -> None:
    """In a child forked from the kernel (multiprocessing's fork, SB3's SubprocVecEnv, a NEAT pool):
    it shares the kernel's sockets, so anything it sent would be dropped with a warning in the
    kernel's log. Every view becomes inert: no render, no encoder, no message, not even on close."""
    global _forked_child, _views_lock
    _forked_child = True
    _views_lock = threading.Lock()  # another thread may have held it at the fork
    quick_switches.after_fork()
    for view in _views:
        view._go_inert()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_silence_views_in_forked_child)


def live_views() -> list[LiveView]:
    """The LiveViews of this process that are not closed, oldest first."""
    with _views_lock:
        return list(_views)


class LiveView(anywidget.AnyWidget):
    """An inline live view of frames, throttled to ``fps`` and downsampled to ``max_size``.

    ``push`` never waits for encoding: it hands the frame to a helper process that downsamples
    and compresses it (JPEG at ``quality``, or lossless PNG), and the pushing loop's next
    :meth:`pump` sends it (see :mod:`gymview.live.streamer`).
    Outside a notebook kernel nothing is sent; a view not known to be on screen (not displayed
    yet, scrolled away, in a background tab) gets ``HIDDEN_FPS`` frames a second. While the browser
    acknowledges frames, none goes out once the oldest it has not acknowledged is ``max_lag``
    seconds old (a page that cannot keep up); the browser acks every 0.25 s, so a ``max_lag`` under
    about 0.4 s makes the stream stall between acks.

    ``send(header, buffers)`` replaces the widget's own message channel and ``in_kernel`` the
    check for a notebook kernel: for other front-ends, and for tests.

    >>> import numpy as np
    >>> view = LiveView(fps=10, image_format="png", title="my env")
    >>> view.stats["frames_sent"]
    0
    >>> view.close()
    """

    # Text, not paths: anywidget watches a path's file and its change signal holds every instance
    # forever (anywidget issue 929), so closed views could never be collected.
    _esm = (_FRONTEND / "widget.js").read_text(encoding="utf-8")
    _css = (_FRONTEND / "widget.css").read_text(encoding="utf-8")

    _stream_id = traitlets.Unicode(help="Finds this widget's frame state in the browser.").tag(sync=True)
    title = traitlets.Unicode("", help="Shown above the picture.").tag(sync=True)
    fps = traitlets.Float(30.0, help="Frames per second sent at most.").tag(sync=True)
    max_size = traitlets.Int(512, help="Longest side, in pixels, of the frames sent.").tag(sync=True)
    quality = traitlets.Int(80, help="JPEG quality, 1..100.").tag(sync=True)
    image_format = traitlets.Unicode("jpeg", help="'jpeg', or 'png' for lossless frames.").tag(sync=True)
    show_controls = traitlets.Bool(True, help="Show Pause / Step / Stop / Speed under the picture.").tag(sync=True)
    keyboard = traitlets.Bool(False, help="Send key presses to the kernel (gymview.play(keys=...)).").tag(sync=True)

    def __init__(
        self,
        fps: float = 30,
        max_size: int = 512,
        quality: int = 80,
        image_format: str = "jpeg",
        title: str = "",
        max_lag: float = 0.5,
        max_overhead: float = 0.1,
        show_controls: bool = True,
        replay_seconds: float = DEFAULT_SECONDS,
        replay_max_bytes: int = DEFAULT_MAX_BYTES,
        *,
        send: Send | None = None,
        in_kernel: bool | None = None,
        **kwargs: Any,
    ) -> None:
        self._closed = True  # until fully built: Widget.__del__ calls close() even if __init__ raised
        self._throttle = FrameThrottle(fps=check_fps(fps), max_overhead=max_overhead)
        self._streamer = FrameStreamer(
            send or self._send_frame, max_size=max_size, image_format=image_format,
            quality=quality, max_lag=max_lag,
            history=FrameHistory(replay_seconds, replay_max_bytes),
        )
        self.controls = RunControls(on_change=self._post_state)
        self.env_fps: float | None = None  # the env's render_fps: what speed 1.0 means
        self._heard: collections.deque[str] = collections.deque(maxlen=16)  # ids of clicks applied
        # Ids of messages seen once: with ipykernel's early hook each arrives twice (the shell-channel
        # thread, then the queued copy), in either order; the first applies it. Bounded: kernels
        # without the hook deliver each once.
        self._seen_once: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._applied: dict[str, str] = {}  # click id -> action, for a cancel
        self._control_lock = threading.Lock()
        self._in_kernel = running_in_kernel() if in_kernel is None else bool(in_kernel)
        self._displayed = False
        self._client_visible: dict[str, bool] = {}  # browser page id -> shows a view of this widget
        self._rate_lock = threading.Lock()
        self._next_pump = 0.0
        # ipykernel 6 delivers no browser message while a cell runs: the loop fetches them (hear_clicks)
        self._cell_messages = ViewMessages.for_this_kernel() if self._in_kernel else None
        self._next_hearing = 0.0
        self._display_handle: Any = None  # from show(): where close() leaves the last frame
        if _forked_child:  # opening a real comm would send from the fork
            kwargs.setdefault("comm", DummyComm(target_name="jupyter.widget"))
        super().__init__(
            fps=float(fps), max_size=int(max_size), quality=self._streamer.quality,
            image_format=self._streamer.image_format, title=title, _stream_id=uuid.uuid4().hex,
            show_controls=bool(show_controls), **kwargs,
        )
        self.on_msg(self._on_browser_message)
        _hear_clicks_during_cells(self)
        self._closed = False
        self._holds_quick_switches = self._in_kernel  # see thread_switches: clicks heard during busy cells
        if self._holds_quick_switches:
            quick_switches.hold()
        with _views_lock:
            _views.append(self)

    def _go_inert(self) -> None:
        """Forget the parent's stream and channel (see _silence_views_in_forked_child)."""
        self._in_kernel = False
        self._holds_quick_switches = False  # quick_switches.after_fork() let go of every hold
        self._cell_messages = None
        self._streamer = FrameStreamer(lambda header, buffers: None, offload=False)
        self.controls.reset_after_fork()  # never paused by a click meant for the parent's loop
        self.comm = DummyComm(target_name="jupyter.widget")

    # -- configuration changes from Python or the browser ---------------------------------------
    @traitlets.validate("fps")
    def _check_fps(self, proposal: dict[str, Any]) -> float:
        return check_fps(proposal["value"])

    @traitlets.validate("max_size")
    def _check_max_size(self, proposal: dict[str, Any]) -> int:
        return check_max_size(proposal["value"])

    @traitlets.validate("quality")
    def _check_quality(self, proposal: dict[str, Any]) -> int:
        return check_quality(proposal["value"])

    @traitlets.validate("image_format")
    def _check_format(self, proposal: dict[str, Any]) -> str:
        return check_format(proposal["value"])

    @traitlets.observe("fps", "max_size", "quality", "image_format")
    def _apply_config(self, change: dict[str, Any]) -> None:
        if change["name"] == "fps":
            self._update_rate()
        else:
            setattr(self._streamer, change["name"], change["new"])

    # -- showing ---------------------------------------------------------------------------
    def show(self) -> None:
        """Display the view in the notebook, where :meth:`close` will leave its last frame as a
        still image (saved with the notebook) instead of an empty widget."""
        from IPython.display import display

        self._display_handle = display(self, display_id=True)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        self._displayed = True
        self._update_rate()
        return super()._repr_mimebundle_(**kwargs)

    @property
    def active(self) -> bool:
        """True when pushed frames can reach a notebook front-end: in a kernel, and not closed."""
        return self._in_kernel and not self._closed

    @property
    def visible(self) -> bool:
        """True while the view is known to be displayed and no browser page reports it hidden.

        A view shown inside a container (``VBox([view])``) is confirmed only by the browser, which
        on kernels without comms over subshells is heard when the cell ends; until then, like a
        hidden view, it gets ``HIDDEN_FPS`` frames per second, so it is never frozen.
        """
        with self._rate_lock:
            return self._shown()

    def _shown(self) -> bool:  # with _rate_lock held
        pages = self._client_visible.values()
        return self._displayed and (not pages or any(pages))

    def _update_rate(self) -> None:
        with self._rate_lock:
            self._throttle.fps = self.fps if self._shown() else min(self.fps, HIDDEN_FPS)

    def frame_due(self) -> bool:
        """True when :meth:`push` would accept a frame now; check it before rendering one."""
        return self.active and self._throttle.due()

    def seconds_until_due(self) -> float:
        """How long a loop may skip :meth:`frame_due` checks: until the next frame is due, or
        half a second while no front-end can show frames (a view may be displayed meanwhile)."""
        return self._throttle.seconds_until_due() if self.active else 0.5

    def pump(self) -> float:
        """Send the frame that came back from the encoder, if one did, and return how many seconds
        the caller may go before the next call (see :mod:`gymview.live.streamer`).

        Loops that push frames call it now and then so that their frames go out at once; without
        it a frame waits up to about 0.1 s before the view's watcher thread sends it.
        """
        if self._streamer.pump():
            # The message now waits for the kernel's IOPub thread: give it the GIL while it sends.
            time.sleep(IOPUB_HAND_OVER_SECONDS)
        if self._streamer.busy:
            return self._streamer.seconds_until_reply()
        return self.seconds_until_due()

    @property
    def hears_clicks_in_loop(self) -> bool:
        """True on ipykernel 6, where a blocking loop must fetch the browser's messages itself
        (:meth:`hear_clicks`); elsewhere the kernel delivers them while the cell runs."""
        return self._cell_messages is not None

    def hear_clicks(self) -> None:
        """Handle the browser's messages to live views that wait behind the running cell (clicks,
        keys, acks), at most 50 times a second; nothing to do unless :attr:`hears_clicks_in_loop`.
        Watched envs call it when they look at the view; loops that push frames themselves can too."""
        if self._cell_messages is None:
            return
        now = time.perf_counter()
        if now < self._next_hearing:
            return
        self._next_hearing = now + HEARING_SECONDS
        self._cell_messages.deliver({view.comm.comm_id: view._hear_custom for view in live_views() if view.comm is not None})

    def _hear_custom(self, content: Any, buffers: list) -> None:
        self._on_browser_message(self, content, buffers)

    def pump_and_hear(self) -> float:
        """:meth:`pump`, then :meth:`hear_clicks`; the seconds until the next call is due (on
        ipykernel 6 at most the hearing period, so clicks are fetched even when no frame is)."""
        seconds = self.pump()
        if self._cell_messages is None:
            return seconds
        self.hear_clicks()
        return min(seconds, HEARING_SECONDS)

    @property
    def paused_wait(self) -> Callable[[float], None] | None:
        """How a loop paused by the view passes its time, for ``RunControls.before_step(wait=...)``:
        None (wait for the click on the controls' condition) unless :attr:`hears_clicks_in_loop`;
        then frames still go out and the next click is fetched from the loop."""
        return self._pass_paused_time if self._cell_messages is not None else None

    def _pass_paused_time(self, seconds: float) -> None:
        self.pump()
        self.hear_clicks()
        time.sleep(min(seconds, HEARING_SECONDS))

    def push(self, frame: Any, force: bool = False, **info: Any) -> bool:
        """Offer a frame: any array :func:`gymview.image.to_rgb_uint8` accepts, or a
        :class:`~gymview.live.deferred.DeferredFrame` (such as :class:`gymview.renderers.Drawing`)
        that the encoder process draws. Never waits for encoding.

        ``info`` may hold ``step``, ``episode`` and ``episode_return`` for the status line.
        Returns True when the frame was taken for sending, False when it was skipped (not due,
        or no front-end to show it). ``force=True`` skips the fps throttle, for a last frame.
        Raises the view's watcher thread's error, if it failed. Pushing also pumps (see
        :meth:`pump`), so a loop that pushes every step needs nothing else.
        """
        if self._streamer.busy and time.perf_counter() >= self._next_pump:
            self._next_pump = time.perf_counter() + self.pump()
        if self._closed:
            raise RuntimeError("this LiveView is closed; create a new one with gymview.LiveView()")
        # Checked even when skipped, so a bad frame fails on the first push, not the first due one.
        item = frame.checked() if isinstance(frame, DeferredFrame) else None
        if not self.active:
            self._throttle.throttled += 1
        if not (self.active and self._throttle.accept(force=force)):
            if item is None:
                check_frame(frame)
            return False
        self._streamer.offer(to_rgb_uint8(frame) if item is None else item, info)
        return True

    def record_cost(self, seconds: float, count_helper: bool = False) -> None:
        """Tell the throttle what producing the last frame cost the caller's loop.

        ``count_helper``: the helper process's time for a frame counts too, for loops whose process
        keeps every core busy (SB3 training with :func:`gymview.live.throttle.compute_fills_every_core`):
        there that time is taken from the loop.
        """
        streamer = self._streamer
        if count_helper and streamer.encodes_elsewhere:
            seconds += streamer.last_encode_ms / 1000.0
        self._throttle.record_cost(seconds)

    def save_clip(self, path: str | os.PathLike[str], fps: float | None = None) -> pathlib.Path:
        """Write the frames this view kept (its last ``replay_seconds``, 30 by default) to an
        ``.mp4`` or ``.gif`` file, at the pace they were shown; returns the path.

        >>> import numpy as np, tempfile, os
        >>> view = LiveView(send=lambda header, buffers: None, in_kernel=True)
        >>> for i in range(3):
        ...     _ = view.push(np.full((32, 48, 3), 80 * i, np.uint8), force=True); _ = view.flush()
        >>> view.save_clip(os.path.join(tempfile.mkdtemp(), "last.gif")).suffix
        '.gif'
        >>> view.close()
        """
        return self._streamer.history.save(path, fps)

    @property
    def replay_frames(self) -> int:
        """How many sent frames the view keeps for its timeline slider and :meth:`save_clip`."""
        return len(self._streamer.history)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until the frame pushed last has been sent (or skipped); True if it was."""
        return self._streamer.flush(timeout)

    @property
    def stats(self) -> dict[str, Any]:
        """Counters of this view.

        ``frames_rendered`` were kept for sending, ``frames_sent`` went out, ``frames_dropped``
        were replaced by newer ones or skipped by flow control before they went out, and
        ``frames_throttled`` were offered when none was due (``watch`` never renders those);
        ``last_acked_seq`` is the newest frame the browser reported drawn (-1: none yet).
        """
        streamer, throttle = self._streamer, self._throttle
        return {
            "frames_rendered": throttle.accepted,
            "frames_sent": streamer.sent,
            "frames_dropped": streamer.replaced + streamer.skipped,
            "frames_throttled": throttle.throttled,
            "last_acked_seq": streamer.acked,
            "bytes_sent": streamer.bytes_sent,
            "messages_per_second": round(streamer.messages_per_second(), 2),
            "last_encode_ms": round(streamer.last_encode_ms, 3),
            "fps_limit": round(1.0 / throttle.interval, 2),
            "displayed": self._displayed,
            "visible": self.visible,
            "streaming": streamer.running,
        }

    def stop(self, timeout: float = 10.0) -> None:
        """Send the frames still on their way, then end the watcher thread and the encoder
        process; a later push starts them again. The view stays on the page with its last frame
        (``close()`` removes the widget)."""
        self._streamer.stop(timeout)

    def close(self) -> None:
        """Stop streaming and close the widget, releasing it (its counters stay readable); safe
        to call twice. A view displayed by :meth:`show` is replaced by its last frame as a still
        image; one displayed otherwise disappears from the page with the widget."""
        if self._closed:
            return
        self._closed = True
        with _views_lock:
            if self in _views:
                _views.remove(self)
        if self._holds_quick_switches:
            self._holds_quick_switches = False
            quick_switches.release()
        self.controls.forget()
        try:
            self._streamer.stop()
            self._leave_last_frame()
        finally:
            self._display_handle = None
            super().close()  # closes the comm: ipywidgets forgets the widget, so it can be collected

    def keep_still_image(self) -> None:
        """Put the last frame sent into the view's output as a still image, beside the live view:
        a notebook saved now shows that picture where no widget can be drawn (opened without a
        kernel, nbconvert, GitHub), and the live view where it can. For views shown by :meth:`show`."""
        self._leave_last_frame(keep_widget=True)

    def report(self, message: str) -> None:
        """Show ``message`` under the picture (a run's error, for one)."""
        self._post_state(message=message)

    def _leave_last_frame(self, keep_widget: bool = False) -> None:
        latest = self._streamer.latest
        if self._display_handle is None or latest is None or not self._in_kernel:
            return
        header, data = latest
        mime = f"image/{header['format']}"
        bundle = {mime: base64.b64encode(data).decode("ascii"), "text/plain": f"<{self.title or 'gymview'}: last frame>"}
        if keep_widget:
            bundle[_WIDGET_VIEW] = {"version_major": 2, "version_minor": 1, "model_id": self.model_id}
        self._display_handle.update(
            bundle, metadata={mime: {"width": header["width"], "height": header["height"]}}, raw=True,
        )

    # -- the wire --------------------------------------------------------------------------
    def _send_frame(self, header: dict[str, Any], buffers: list[bytes]) -> None:
        if self.comm is not None:
            self.send(header, buffers)

    def _post_state(self, controls: RunControls | None = None, message: str | None = None) -> None:
        controls = controls or self.controls
        with self._control_lock:
            heard = list(self._heard)
        self._streamer.post({
            "type": protocol.STATE, "state": controls.state, "speed": controls.speed,
            "fps": self.env_fps, "speeds": list(SPEEDS), "history": self.replay_frames, "heard": heard,
            "message": message,
        })

    def _apply(self, content: dict[str, Any]) -> None:
        """A click, key or replay request; runs on whichever thread heard it, only sets state."""
        kind, click = content.get("type"), content.get("id")
        if kind == protocol.KEY:
            if isinstance(content.get("key"), str):
                self.controls.press(content["key"], bool(content.get("down")))
            return
        if kind == protocol.REPLAY:
            self._replay(content.get("index"))
            return
        action = content.get("action")
        if action == "cancel":
            self._cancel(str(content.get("of")))
            return
        if action not in ("pause", "play", "step", "stop", "speed"):
            return  # an action of a newer page: nothing to do
        with self._control_lock:
            if isinstance(click, str):
                self._heard.append(click)  # the state message that follows names it
                self._applied[click] = action
                while len(self._applied) > 64:  # only a click the page may still cancel matters
                    del self._applied[next(iter(self._applied))]
        if action == "speed":
            try:
                self.controls.set_speed(content.get("value"))
            except (TypeError, ValueError):
                self._post_state()  # a speed this kernel does not take: the page shows the current one
            return
        {"pause": self.controls.pause, "play": self.controls.resume, "step": self.controls.step,
         "stop": self.controls.stop}[action]()

    def _cancel(self, click: str) -> None:
        """The browser gave up on this click (it got no answer while a cell ran): undo it if it
        came only now, so a late Pause or Stop does not hit the next run."""
        with self._control_lock:
            action = self._applied.pop(click, None)
        if action == "stop":
            self.controls.undo_stop()
        elif action in ("pause", "step"):
            self.controls.resume()

    def _replay(self, index: Any) -> None:
        history = self._streamer.history
        if not isinstance(index, int) or not -len(history) <= index < len(history):
            return
        try:
            header, data = history.get(index)
        except IndexError:  # the oldest frames aged out meanwhile
            return
        self._streamer.post({**header, "replay": index if index >= 0 else len(history) + index}, [data])

    def hear_early(self, data: Any) -> bool:
        """ipykernel's shell-channel thread shows each browser message here before it queues it
        (see :func:`_hear_clicks_during_cells`): clicks, keys and replay requests act now, even
        while a cell blocks the shell. Returns True when the message was applied."""
        content = data.get("content") if isinstance(data, dict) and data.get("method") == "custom" else None
        if not isinstance(content, dict) or content.get("type") not in (protocol.CONTROL, protocol.KEY, protocol.REPLAY):
            return False
        key = content.get("id")
        if not isinstance(key, str):
            return False
        if self._first_sighting(key):
            self._apply(content)
        return True

    def _first_sighting(self, key: Any) -> bool:
        """True the first time message ``key`` arrives, False for its second copy."""
        if not isinstance(key, str):
            return True
        with self._control_lock:
            if key in self._seen_once:
                del self._seen_once[key]
                return False
            self._seen_once[key] = None
            while len(self._seen_once) > 256:
                self._seen_once.popitem(last=False)
            return True

    def _on_browser_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        # Runs on the shell thread, or on a subshell thread while a cell runs: keep it thread-safe.
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind in (protocol.CONTROL, protocol.KEY, protocol.REPLAY):
            if self._first_sighting(content.get("id")):
                self._apply(content)
            return
        client = str(content.get("client", ""))
        if kind == protocol.READY:
            if content.get("v") != protocol.PROTOCOL_VERSION:
                warnings.warn(
                    f"the gymview front-end speaks protocol {content.get('v')!r}, the kernel "
                    f"{protocol.PROTOCOL_VERSION}: reload the browser page after upgrading gymview",
                    stacklevel=1,
                )
            self._displayed = True
            with self._rate_lock:
                self._client_visible[client] = True
            self._update_rate()
            if not self._closed:
                self._streamer.resend_latest()
                self._post_state()  # the page shows the buttons as the loop stands
        elif kind == protocol.ACK and isinstance(content.get("seq"), int):
            self._streamer.acknowledge(content["seq"])
        elif kind == protocol.VISIBILITY:
            with self._rate_lock:
                self._client_visible[client] = bool(content.get("visible"))
            self._update_rate()


def _hear_clicks_during_cells(view: LiveView) -> None:
    """Let the view's buttons act while a cell blocks the kernel.

    ipykernel 7.4 hands every incoming comm message to the subshell its comm last published from
    (so replies reach an ``await``-ing cell); a view that streams from a cell on the main shell thus
    gets its clicks routed to that busy shell, even when JupyterLab sent them over a subshell, and
    they wait for the cell to end. Its shell-channel thread asks ``comm._reply_subshell_for(data,
    subshell)`` first: there the view applies clicks at once (thread-safe state only) and keeps
    the subshell the browser chose for the rest. ipykernel 7.0-7.3 route to the browser's subshell
    themselves; ipykernel 6 has no such thread: there a watched loop fetches the clicks itself
    (:meth:`LiveView.hear_clicks`), and the browser says so on a click that gets no answer.
    """
    comm = view.comm
    if comm is None or not hasattr(comm, "_reply_subshell_for"):
        return
    ref = weakref.ref(view)

    def route(data: Any, subshell: Any) -> Any:
        target = ref()
        if target is not None:
            try:
                target.hear_early(data)
            except Exception:  # ipykernel drops a message whose routing raises; the queued copy still acts
                pass
        return subshell

    comm._reply_subshell_for = route
