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

import os
import pathlib
import threading
import time
import uuid
import warnings
from typing import Any

import base64

import anywidget
import traitlets
from comm import DummyComm

from gymview.image.codec import check_format, check_quality
from gymview.image.frames import check_frame, to_rgb_uint8
from gymview.live import protocol
from gymview.live.deferred import DeferredFrame
from gymview.live.streamer import POLL_SECONDS, FrameStreamer, Send, check_max_size
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
    for view in _views:
        view._go_inert()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_silence_views_in_forked_child)


def live_views() -> list[LiveView]:
    """The LiveViews of this process that are not closed, oldest first."""
    with _views_lock:
        return list(_views)


def _in_kernel() -> bool:
    """True inside an IPython kernel (not a process forked from one), where a notebook front-end
    can show widgets."""
    if _forked_child:
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class LiveView(anywidget.AnyWidget):
    """An inline live view of frames, throttled to ``fps`` and downsampled to ``max_size``.

    ``push`` never waits for encoding: it hands the frame to a helper process that downsamples
    and compresses it (JPEG at ``quality``, or lossless PNG), and the pushing loop's next
    :meth:`pump` sends it (see :mod:`gymview.live.streamer`).
    Outside a notebook kernel nothing is sent; a view not known to be on screen (not displayed
    yet, scrolled away, in a background tab) gets ``HIDDEN_FPS`` frames a second.

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

    def __init__(
        self,
        fps: float = 30,
        max_size: int = 512,
        quality: int = 80,
        image_format: str = "jpeg",
        title: str = "",
        max_in_flight: int = 2,
        max_overhead: float = 0.1,
        *,
        send: Send | None = None,
        in_kernel: bool | None = None,
        **kwargs: Any,
    ) -> None:
        self._closed = True  # until fully built: Widget.__del__ calls close() even if __init__ raised
        self._throttle = FrameThrottle(fps=check_fps(fps), max_overhead=max_overhead)
        self._streamer = FrameStreamer(
            send or self._send_frame, max_size=max_size, image_format=image_format,
            quality=quality, max_in_flight=max_in_flight,
        )
        self._in_kernel = _in_kernel() if in_kernel is None else bool(in_kernel)
        self._displayed = False
        self._client_visible: dict[str, bool] = {}  # browser page id -> shows a view of this widget
        self._rate_lock = threading.Lock()
        self._next_pump = 0.0
        self._display_handle: Any = None  # from show(): where close() leaves the last frame
        if _forked_child:  # opening a real comm would send from the fork
            kwargs.setdefault("comm", DummyComm(target_name="jupyter.widget"))
        super().__init__(
            fps=float(fps), max_size=int(max_size), quality=self._streamer.quality,
            image_format=self._streamer.image_format, title=title, _stream_id=uuid.uuid4().hex, **kwargs,
        )
        self.on_msg(self._on_browser_message)
        self._closed = False
        with _views_lock:
            _views.append(self)

    def _go_inert(self) -> None:
        """Forget the parent's stream and channel (see _silence_views_in_forked_child)."""
        self._in_kernel = False
        self._streamer = FrameStreamer(lambda header, buffers: None, offload=False)
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
            return POLL_SECONDS
        return self.seconds_until_due()

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

    def record_cost(self, seconds: float) -> None:
        """Tell the throttle what producing the last frame cost the caller's loop."""
        self._throttle.record_cost(seconds)

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
        try:
            self._streamer.stop()
            self._leave_last_frame()
        finally:
            self._display_handle = None
            super().close()  # closes the comm: ipywidgets forgets the widget, so it can be collected

    def _leave_last_frame(self) -> None:
        latest = self._streamer.latest
        if self._display_handle is None or latest is None or not self._in_kernel:
            return
        header, data = latest
        mime = f"image/{header['format']}"
        self._display_handle.update(
            {mime: base64.b64encode(data).decode("ascii"), "text/plain": f"<{self.title or 'gymview'}: last frame>"},
            metadata={mime: {"width": header["width"], "height": header["height"]}}, raw=True,
        )

    # -- the wire --------------------------------------------------------------------------
    def _send_frame(self, header: dict[str, Any], buffers: list[bytes]) -> None:
        if self.comm is not None:
            self.send(header, buffers)

    def _on_browser_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        # Runs on the shell thread, or on a subshell thread while a cell runs: keep it thread-safe.
        if not isinstance(content, dict):
            return
        kind = content.get("type")
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
        elif kind == protocol.ACK and isinstance(content.get("seq"), int):
            self._streamer.acknowledge(content["seq"])
        elif kind == protocol.VISIBILITY:
            with self._rate_lock:
                self._client_visible[client] = bool(content.get("visible"))
            self._update_rate()
