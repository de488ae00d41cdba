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
import os
import pathlib
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import anywidget
import traitlets
from comm import DummyComm

from gymview._internal import frontend
from gymview._internal.forks import forked_child
from gymview._internal.kernel import in_kernel as running_in_kernel
from gymview._internal.kernel import in_marimo
from gymview.image.codec import IMAGE_FORMATS, check_format, check_quality
from gymview.image.frames import check_frame, to_rgb_uint8
from gymview.live import protocol
from gymview.live.browser_messages import BrowserMessages
from gymview.live.controls import SPEEDS, RunControls
from gymview.live.encoding.deferred import is_deferred
from gymview.live.encoding.h264 import H264
from gymview.live.encoding.replay import DEFAULT_MAX_BYTES, FrameHistory
from gymview.live.encoding.scene_frames import SCENE
from gymview.live.encoding.video_stream import check_codec
from gymview.live.far_pages import FarPages
from gymview.live.kernels import registry
from gymview.live.kernels.ipykernel6_poller import Ipykernel6CommPoller
from gymview.live.kernels.marimo_cell import show_in_cell
from gymview.live.kernels.marimo_poller import MarimoCommPoller
from gymview.live.kernels.page_requests import answer_on_shell_channel
from gymview.live.kernels.thread_switches import switch_interval_lease
from gymview.live.loop_link import LoopLink
from gymview.live.pacing.throttle import FrameThrottle, check_fps
from gymview.live.streamer import FrameStreamer, Send, check_max_size

__all__ = ["LiveView"]

# A view that is displayed but scrolled away or in a background tab still gets this many frames per
# second: while a cell blocks the kernel, the browser's "visible again" message cannot arrive, so a
# view must never depend on it to come back to life.
HIDDEN_FPS = 1.0

_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class LiveView(anywidget.AnyWidget):
    """An inline live view of frames, throttled to ``fps`` and downsampled to ``max_size``.

    ``push`` never waits for encoding: a helper process downsamples and compresses the frame, and
    the loop's next pushes send it. Outside a notebook kernel nothing is sent. A view not known
    to be on screen (not displayed yet, scrolled away, in a background tab) gets ``HIDDEN_FPS``
    frames a second. ``watch()`` connects a loop to its view through a ``ViewFeed``.

    Args:
        fps: Frames sent per second at most, above 0 and at most 120.
        max_size: Longest side, in pixels, of the frames sent (at least 16).
        quality: JPEG quality, 1..100.
        image_format: ``"jpeg"``, or ``"png"`` (lossless): frames sent as images, replays, the last frame.
        title: Shown above the picture.
        max_lag: Seconds a page may lag: while it acks (every 0.25 s), no frame goes out once the oldest it
            has not acked, or the frames its acks name, are this late (page_acks.PageAcks).
        max_overhead: The share of the loop's time its frames may cost, in ``(0, 1]``: the time the loop's own
            thread takes to make and send them, plus the helper process's time for them as far as the loop
            waited for a core meanwhile (all of it under a CPU quota below three CPUs, or with torch on every core).
        show_controls: Show Pause / Step / Stop / Speed under the picture.
        replay_seconds: Seconds of sent frames kept for the timeline slider and ``save_clip``
            (by default 30 of pictures and 600 of frames the page draws; 0 keeps none).
        replay_max_bytes: The most bytes those kept frames may take (32 MiB by default).
        codec: ``"auto"``: an H.264 stream while every page showing the view decodes it (a tenth of
            the bytes, for a slow link), else images; ``"h264"``, ``"jpeg"`` or ``"png"``: only that.
        draw: Where frames drawn from a state (``gymview.watch`` of gymnasium's classic-control and MuJoCo envs) are
            drawn: ``"auto"`` by the page wherever it can (a few bytes a frame, nothing drawn or encoded in
            the kernel), ``"page"`` the same but an error for frames it cannot draw, ``"kernel"`` always as
            pictures made in the kernel's helper process.
        send: ``send(header, buffers)`` in place of the widget's own message channel: for other
            front-ends, and for tests.
        far_pages: Pages in other processes that show this view too (``gymview.watch(env, publish=...)``
            makes them): frames are made while one is attached, even outside a notebook.
        in_kernel: In place of the check for a notebook kernel (None: check).
        clock: The time frames are paced and timed by, in seconds (a test's fake clock).
        **kwargs: Passed to ``anywidget.AnyWidget``.

    Raises:
        ValueError: When a setting is out of the ranges above.
        RuntimeError: ``codec="h264"`` where PyAV cannot encode H.264 (``gymview doctor`` says why).

    Examples:
        >>> import numpy as np
        >>> view = LiveView(fps=10, image_format="png", title="my env")
        >>> view.push(np.zeros((64, 64, 3), np.uint8))  # no notebook front-end here
        False
        >>> view.stats["frames_sent"]
        0
        >>> view.close()
    """

    # Text, not paths: anywidget watches a path's file and its change signal holds every instance
    # forever (anywidget issue 929), so closed views could never be collected.
    _esm = frontend.ESM
    _css = frontend.CSS

    _stream_id = traitlets.Unicode(help="Finds this widget's frame state in the browser.").tag(sync=True)
    title = traitlets.Unicode("", help="Shown above the picture.").tag(sync=True)
    fps = traitlets.Float(30.0, help="Frames per second sent at most.").tag(sync=True)
    max_size = traitlets.Int(512, help="Longest side, in pixels, of the frames sent.").tag(sync=True)
    quality = traitlets.Int(80, help="JPEG quality, 1..100.").tag(sync=True)
    image_format = traitlets.Unicode("jpeg", help="'jpeg', or 'png' for lossless frames.").tag(sync=True)
    codec = traitlets.Unicode("auto", help="'auto', 'h264', 'jpeg' or 'png'.").tag(sync=True)
    show_controls = traitlets.Bool(True, help="Show Pause / Step / Stop / Speed under the picture.").tag(sync=True)
    _keyboard = traitlets.Bool(False, help="Send key presses to the kernel (gymview.play(keys=...)).").tag(sync=True)
    _scene = traitlets.Dict({}, help="What the page draws scene frames with (js/scene.js).").tag(sync=True)

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
        replay_seconds: float | None = None,
        replay_max_bytes: int = DEFAULT_MAX_BYTES,
        codec: str = "auto",
        draw: str = "auto",
        *,
        send: Send | None = None,
        far_pages: FarPages | None = None,
        in_kernel: bool | None = None,
        clock: Callable[[], float] = time.perf_counter,
        **kwargs: Any,
    ) -> None:
        self._closed = True  # until fully built: Widget.__del__ calls close() even if __init__ raised
        self._throttle = FrameThrottle(fps=check_fps(fps), max_overhead=max_overhead, clock=clock)
        codec = check_codec(codec)
        self._in_kernel = running_in_kernel() if in_kernel is None else bool(in_kernel)
        self._far_pages = far_pages
        # marimo: no ipykernel comm routing, subshells, switch-interval lease or display handle
        self._marimo = self._in_kernel and in_marimo()
        self._streamer = FrameStreamer(
            send or self._send_frame,
            max_size=max_size,
            image_format=codec if codec in IMAGE_FORMATS else image_format,
            quality=quality,
            max_lag=max_lag,
            codec=codec,
            history=FrameHistory(replay_seconds, replay_max_bytes),
            draw=draw,
            on_scene=self._publish_scene,
            # while frames flow in a kernel, clicks are heard on ipykernel's shell-channel thread sooner
            on_watching=switch_interval_lease.hold_while
            if self._in_kernel and not self._marimo
            else lambda active: None,
        )
        self._notice = ""  # the latest message reported to the pages (see _post_state)
        self._controls = RunControls(on_change=self._post_state)
        self._modules_sent = 0
        self._displayed = False
        self._client_visible: dict[str, bool] = {}  # browser page id -> shows a view of this widget
        self._rate_lock = threading.Lock()
        side = _OwnSide(self)
        # what a loop feeding this view calls (gymview.live.feed.ViewFeed); ipykernel 6 and marimo deliver no
        # browser message while a cell runs: there the loop fetches them
        self._link = LoopLink(
            self._streamer, self._throttle, self._controls, side, _poller(self._in_kernel, self._marimo), far_pages
        )
        self._messages = BrowserMessages(self._controls, self._link, side)
        self._display_handle: Any = None  # from show(): where close() leaves the last frame
        forked = forked_child()
        if forked:  # opening a real comm would send from the fork
            kwargs.setdefault("comm", DummyComm(target_name="jupyter.widget"))
        super().__init__(
            fps=float(fps),
            max_size=int(max_size),
            quality=self._streamer.quality,
            image_format=self._streamer.image_format,
            codec=codec,
            title=title,
            _stream_id=uuid.uuid4().hex,
            show_controls=bool(show_controls),
            **kwargs,
        )
        self.on_msg(lambda _widget, content, _buffers: self._from_page(content))
        if far_pages is not None:
            far_pages.listen(self._from_page)
        # ipywidgets makes a Layout widget per widget and never closes it; in a fork, reading it would open one
        self._own_layout = None if forked else self.layout
        if self._in_kernel and not self._marimo:
            answer_on_shell_channel()  # clicks, and a page loading, heard while a cell runs
        self._closed = False
        registry.add(self, LiveView._go_inert, LiveView._from_page)  # not bound methods: they would keep it alive

    @property
    def draw(self) -> str:
        """Where frames drawn from a state are drawn: ``"auto"``, ``"page"`` or ``"kernel"`` (see the class)."""
        return self._streamer.draw

    def _send_module(self, name: str) -> None:
        """The module a page asked for to draw a scene (three.js, 549 KB): once per page, not with each view."""
        if name == "mujoco" and self._active:
            self._streamer.post(protocol.module_message(name), [frontend.SCENE3D_ESM.encode()])
            self._modules_sent += 1

    def _publish_scene(self, scene: dict[str, Any]) -> None:
        """The scene the page draws scene frames with, here and on pages attached from afar."""
        self._scene = scene
        if self._far_pages is not None:
            self._far_pages.show_scene(scene)

    def _from_page(self, content: Any) -> None:
        """A message from a page showing this view (on the shell thread, a subshell's, or a far page's)."""
        self._messages.receive(content)

    def _go_inert(self) -> None:
        """In a forked child: forget the parent's stream and channel (see ``gymview.live.kernels.registry``)."""
        self._in_kernel = False
        if self._far_pages is not None:
            self._far_pages.go_inert()
        self._link.go_inert()
        self._streamer = self._link.streamer
        self._controls.reset_after_fork()  # never paused by a click meant for the parent's loop
        self.comm = DummyComm(target_name="jupyter.widget")
        self._own_layout = None  # the parent's: closing it here would send from the fork

    # -- configuration changes from Python or the browser ---------------------------------------
    _CHECKS: ClassVar[dict[str, Callable[[Any], Any]]] = {
        "fps": check_fps,
        "max_size": check_max_size,
        "quality": check_quality,
        "image_format": check_format,
        "codec": check_codec,
    }

    @traitlets.validate(*_CHECKS)
    def _check_setting(self, proposal: dict[str, Any]) -> Any:
        return self._CHECKS[proposal["trait"].name](proposal["value"])

    @traitlets.observe("fps", "max_size", "quality", "image_format", "codec")
    def _apply_config(self, change: dict[str, Any]) -> None:
        if change["name"] == "fps":
            self._update_rate()
        else:
            setattr(self._streamer, change["name"], change["new"])

    # -- what users call ----------------------------------------------------------------------
    def show(self) -> None:
        """Display the view in the notebook; nothing outside one.

        There ``close()`` leaves its last frame as a still image (saved with the notebook)
        instead of an empty widget. In marimo the view goes to the cell's output and keeps its
        last frame on the page (marimo saves no outputs); when the cell runs again, a loop still
        feeding the view (``gymview.play``) is stopped.
        """
        if not (self._in_kernel and not self._closed):  # a view published from a script is shown by attach()
            return
        if self._marimo:  # the cell's output; a cell run again stops loops on the old view
            self._displayed = True  # a page's ready waits behind a blocking cell on older marimos
            self._update_rate()
            show_in_cell(self, on_cell_end=lambda: None if self._closed else self._controls.stop())
            return
        from IPython.display import display

        self._display_handle = display(self, display_id=True)

    def frame_due(self) -> bool:
        """Tell whether ``push`` would accept a frame now; check it before rendering one.

        Returns:
            True when a frame is due.
        """
        return self._active and self._throttle.seconds_until_due() <= 0.0

    def push(self, frame: Any, force: bool = False, **info: Any) -> bool:
        """Offer a frame for sending; never waits for encoding.

        Pushing also sends the frames that came back from the encoder, so a loop that pushes
        every step needs nothing else.

        Args:
            frame: Any array ``gymview.to_rgb_uint8`` accepts, or a ``DeferredFrame`` (such as a
                ``gymview.renderers.Drawing``) that the encoder process draws.
            force: Skip the fps throttle, for a last frame.
            **info: ``step``, ``episode`` and ``episode_return`` for the status line.

        Returns:
            True when the frame was taken for sending, False when it was skipped (not due, or no
                front-end to show it).

        Raises:
            ValueError: When the frame is not an image (checked even when it is skipped).
            TypeError: When a DeferredFrame's painter cannot be pickled for the helper process.
            RuntimeError: When the view is closed.
            gymview.FrameError: When an earlier frame could not be made in the helper process (its
                painter raised); that frame is dropped, this one is not taken, the next push goes on.
            gymview.errors.EncoderProcessError: When the helper process died making an earlier frame
                (the next frame starts a new one).
            gymview.WorkerError: When the view's watcher thread failed.
        """
        self._link.pump_when_due()
        if self._closed:
            raise RuntimeError("this LiveView is closed; create a new one with gymview.LiveView()")
        item = frame.checked() if is_deferred(frame) else None
        active = self._active
        if not active:
            self._throttle.throttled += 1
        if not (active and self._throttle.accept(force=force)):
            # checked even when skipped, so a bad frame fails on the first push, not the first due one
            self._streamer.check(frame if item is None else item)
            if item is None:
                check_frame(frame)
            return False
        self._streamer.offer(to_rgb_uint8(frame) if item is None else item, info)  # checks it the same way
        return True

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until the frame pushed last has been sent, even to a page that lags.

        Args:
            timeout: Seconds to wait at most.

        Returns:
            True if it was sent within ``timeout``.

        Raises:
            gymview.FrameError: When a frame could not be made in the helper process (see ``push``).
            gymview.errors.EncoderProcessError: When the helper process died making a frame.
        """
        return self._streamer.flush(timeout)

    def save_clip(self, path: str | os.PathLike[str], fps: float | None = None) -> pathlib.Path:
        """Write the frames this view kept (its last ``replay_seconds``) to an ``.mp4``, ``.gif`` or ``.html`` file.

        The clip plays at the pace the frames were shown. An ``.html`` file holds the states of frames the page
        drew (``draw="page"``, the default where the page draws the env), played by any browser opened from disk
        with a slider and the arrow keys: kilobytes where a video takes megabytes.

        Args:
            path: The file to write, ending in ``.mp4``, ``.gif`` or ``.html``; missing folders are made.
            fps: The clip's frame rate; None: the rate the frames were sent at.

        Returns:
            The path written.

        Raises:
            ValueError: When the suffix is none of those, no frame was sent yet, ``fps`` is not above 0, or an
                ``.html`` file is asked of frames that went as pictures.

        Examples:
            >>> import numpy as np, tempfile, os
            >>> view = LiveView(send=lambda header, buffers: None, in_kernel=True)
            >>> for i in range(3):
            ...     _ = view.push(np.full((32, 48, 3), 80 * i, np.uint8), force=True); _ = view.flush()
            >>> view.save_clip(os.path.join(tempfile.mkdtemp(), "last.gif")).suffix
            '.gif'
            >>> view.close()
        """
        steps = self._link.steps  # the steps' rows, charted under an .html clip
        return self._streamer.history.save(path, fps, None if steps is None else steps.rows)

    @property
    def stats(self) -> dict[str, Any]:
        """Counters and state of this view, a dict.

        ``frames_rendered`` were kept for sending, ``frames_sent`` went out, ``frames_dropped``
        were replaced by newer ones before they went out (or lost, their error raised), and
        ``frames_throttled`` were offered when none was due (``watch`` never renders those);
        ``last_acked_seq`` is the newest frame the browser reported drawn (-1: none yet);
        ``sent_as`` the last frame's format (None before it);
        ``replay_frames`` the sent frames kept for the timeline slider and ``save_clip``;
        ``active``: pushed frames can reach a notebook front-end (in a kernel, not closed);
        ``visible``: displayed, and no browser page reports it hidden (a view shown inside a
        container is confirmed only by the browser; until then it gets ``HIDDEN_FPS``);
        ``polls_browser``: a blocking loop fetches the browser's messages itself (ipykernel 6 and
        marimo, which deliver none while a cell runs); ``modules_sent``: how often a page asked this
        view for the module that draws MuJoCo scenes (once per page that lacked it).
        """
        streamer, throttle = self._streamer, self._throttle
        with self._rate_lock:
            visible = self._shown()
        return {
            "frames_rendered": throttle.accepted,
            "frames_sent": streamer.sent,
            "frames_dropped": streamer.replaced + streamer.skipped,
            "frames_throttled": throttle.throttled,
            "last_acked_seq": streamer.acked,
            "bytes_sent": streamer.bytes_sent,
            "sent_as": streamer.sent_as,
            "messages_per_second": round(streamer.messages_per_second(), 2),
            "last_encode_ms": round(streamer.last_encode_ms, 3),
            "fps_limit": round(1.0 / throttle.interval, 2),
            "replay_frames": len(streamer.history),
            "active": self._active,
            "displayed": self._displayed,
            "visible": visible,
            "streaming": streamer.running,
            "polls_browser": self._link.polls_browser,
            "modules_sent": self._modules_sent,
        }

    def stop(self, timeout: float = 10.0) -> None:
        """Send the frames still on their way, then end the watcher thread and the encoder process.

        A later push starts them again. The view stays on the page with its last frame
        (``close()`` removes the widget).

        Args:
            timeout: Seconds to wait for the frames, then for the thread, at most.

        Raises:
            gymview.FrameError: When a frame could not be made in the helper process (its painter raised).
            gymview.errors.EncoderProcessError: When the helper process died making a frame.
            gymview.WorkerError: When the view's watcher thread failed.
        """
        self._streamer.stop(timeout)

    def close(self) -> None:
        """Stop streaming and close the widget, releasing it; safe to call twice.

        Its counters stay readable. A view displayed by ``show()`` is replaced by its last frame
        as a still image; one displayed otherwise disappears from the page with the widget. An error
        on the way (a frame lost since the last push, see ``flush``) is reported as a RuntimeWarning.
        """
        if self._closed:
            return
        self._closed = True
        registry.remove(self)
        self._controls.forget()
        try:
            try:
                self._streamer.stop()
            except Exception as error:  # everything is ended: say what went wrong, and close
                warnings.warn(f"gymview: while closing this view: {error}", RuntimeWarning, stacklevel=2)
            self._leave_last_frame()
        finally:
            if self._far_pages is not None:
                self._far_pages.close()
            self._display_handle = None
            if self._own_layout is not None and self.layout is self._own_layout:  # one passed in may be shared
                self._own_layout.close()
            super().close()  # closes the comm: ipywidgets forgets the widget, so it can be collected

    @property
    def _active(self) -> bool:
        far = self._far_pages
        return (self._in_kernel or (far is not None and far.attached())) and not self._closed

    # -- visibility and rate ------------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        self._displayed = True
        self._update_rate()
        return super()._repr_mimebundle_(**kwargs)

    def _shown(self) -> bool:  # with _rate_lock held
        pages = self._client_visible.values()
        return self._displayed and (not pages or any(pages))

    def _update_rate(self) -> None:
        with self._rate_lock:
            self._throttle.fps = self.fps if self._shown() else min(self.fps, HIDDEN_FPS)

    def _page_seen(self, client: str, visible: bool, ready: bool) -> None:
        """A page reports whether it shows the view; a page that just rendered it (``ready``) gets
        the latest frame again and the buttons as the loop stands."""
        if ready:
            self._displayed = True
        with self._rate_lock:
            self._client_visible[client] = visible
        self._update_rate()
        if ready and not self._closed:
            self._streamer.resend_latest()
            self._post_state()

    # -- the wire -----------------------------------------------------------------------------
    def _leave_last_frame(self, keep_widget: bool = False) -> None:
        far = self._far_pages
        if far is not None and far.attached() and self._streamer.sent_as in (H264, SCENE):
            latest = self._streamer.latest  # pages elsewhere keep it as the still image: they cannot make it
            if latest is not None:
                far.send(latest[0], [latest[1]])
        if self._display_handle is None or not self._in_kernel:
            return
        latest = self._still_picture()
        if latest is None:
            return
        header, data = latest
        mime = f"image/{header['format']}"
        bundle: dict[str, Any] = {
            mime: base64.b64encode(data).decode("ascii"),
            "text/plain": f"<{self.title or 'gymview'}: last frame>",
        }
        if keep_widget:
            bundle[_WIDGET_VIEW] = {"version_major": 2, "version_minor": 1, "model_id": self.model_id}
        self._display_handle.update(
            bundle,
            metadata={mime: {"width": header["width"], "height": header["height"]}},
            raw=True,
        )

    def _still_picture(self) -> tuple[dict[str, Any], bytes] | None:
        """The last frame as a picture, for the still image (None before the first)."""
        return self._streamer.latest

    def _send_frame(self, header: dict[str, Any], buffers: list[bytes]) -> None:
        if self._far_pages is not None:
            self._far_pages.send(header, buffers)
        if self.comm is not None and self._in_kernel:
            self.send(header, buffers)

    def _post_state(self, controls: RunControls | None = None, message: str | None = None) -> None:
        """Tell the pages what the loop does, with the latest message reported (a page that opens later reads it
        too; ``""`` takes it away)."""
        controls = controls or self._controls
        self._notice = message if message is not None else self._notice
        self._streamer.post(
            protocol.state_message(
                controls.state,
                controls.speed,
                self._link.env_fps,
                list(SPEEDS),
                len(self._streamer.history),
                self._messages.heard,
                self._notice or "",
            )
        )


def _poller(in_kernel: bool, marimo: bool) -> Ipykernel6CommPoller | MarimoCommPoller | None:
    if not in_kernel:
        return None
    if marimo:
        return MarimoCommPoller.for_this_kernel()
    return Ipykernel6CommPoller.for_this_kernel()


class _OwnSide:
    """What the view's loop (:class:`~gymview.live.loop_link.LinkedView`) and its pages' messages
    (:class:`~gymview.live.browser_messages.MessagedView`) act on, besides frames and buttons."""

    def __init__(self, view: LiveView) -> None:
        self._view = view

    @property
    def active(self) -> bool:
        return self._view._active

    def keep_still_image(self) -> None:
        self._view._leave_last_frame(keep_widget=True)

    def report(self, message: str) -> None:
        self._view._post_state(message=message)

    def take_keys(self, on: bool) -> None:
        self._view._keyboard = bool(on)

    def post_state(self) -> None:
        self._view._post_state()

    def page_seen(self, client: str, visible: bool, ready: bool) -> None:
        self._view._page_seen(client, visible, ready)

    def send_module(self, name: str) -> None:
        self._view._send_module(name)
