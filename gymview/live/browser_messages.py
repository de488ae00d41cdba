"""The browser's messages to one live view: clicks, keys and replay requests; a page's ready, ack
and visibility messages.

Clicks only set thread-safe state (the loop obeys it at its next step), so they may act on any
thread: ipykernel's shell-channel thread hands them over while a cell blocks the main shell
(:mod:`gymview.live.kernels.page_requests`). A page sends a click again, with the same id, until the
kernel answers it (a message to a kernel can be lost on the way): each id is applied once, and a
repeat of a click applied already is answered again.

>>> from gymview.live.widget import LiveView
>>> view = LiveView()
>>> messages, controls = view._messages, view._link.controls
>>> messages.receive({"type": "control", "action": "pause", "id": "k3x9:1"})
>>> controls.state, messages.heard
('paused', ['k3x9:1'])
>>> view.close()
"""

from __future__ import annotations

import collections
import reprlib
import threading
import warnings
from typing import TYPE_CHECKING, Any, Protocol

from gymview.live import protocol
from gymview.live.controls import RunControls

if TYPE_CHECKING:
    from gymview.live.loop_link import LoopLink
    from gymview.live.streamer import FrameStreamer

__all__ = ["SEEN_IDS", "BrowserMessages", "MessagedView"]

SEEN_IDS = 256  # the ids of the latest clicks applied: a page repeats a click for a few seconds at most


class MessagedView(Protocol):
    """What a page's messages act on in the view besides its buttons (a LiveView's own side of it)."""

    def post_state(self) -> None:
        """Send the state message (the buttons as the loop stands, the clicks heard)."""
        ...

    def page_seen(self, client: str, visible: bool, ready: bool) -> None:
        """Page ``client`` shows the view (``visible``) or not; ``ready``: it has just rendered it."""
        ...

    def send_module(self, name: str) -> None:
        """Send the page the module it asked for (the scene's drawing code)."""
        ...


class BrowserMessages:
    """What the pages showing one view say to it.

    Clicks go to ``controls``; acks, replays and ready pages to the ``link``'s streamer; the loop's kept steps
    (charted under the replay) and whether it runs on in another thread (a click the page gave up on is then
    kept: that loop obeys it) come from the ``link``; the rest goes to the ``view`` (:class:`MessagedView`).
    """

    def __init__(self, controls: RunControls, link: LoopLink, view: MessagedView) -> None:
        self.controls = controls
        self._link = link
        self._view = view
        self._lock = threading.Lock()
        self._heard: collections.deque[str] = collections.deque(maxlen=16)  # ids of clicks applied
        self._applied: dict[str, tuple[str, bool]] = {}  # click id -> action, and whether a cancel undoes it
        self._seen: collections.OrderedDict[str, None] = collections.OrderedDict()  # ids of clicks applied
        self._applying = threading.Lock()

    @property
    def heard(self) -> list[str]:
        """Ids of the latest clicks applied, for the state message."""
        with self._lock:
            return list(self._heard)

    @property
    def streamer(self) -> FrameStreamer:
        """The view's frame stream (a :class:`~gymview.live.streamer.FrameStreamer`, the link's own)."""
        return self._link.streamer

    def receive(self, content: Any) -> None:
        """Handle one message from a page (on the shell thread, or a subshell's while a cell runs)."""
        message = protocol.read(content)
        if message is None:
            return
        if message.is_click:
            with self._applying:  # a click and its repeat, heard on two threads: the repeat answers once it is applied
                if not self._repeated(message):
                    self._apply(message)
        elif message.type == protocol.READY:
            if message.version != protocol.PROTOCOL_VERSION:
                warnings.warn(
                    f"the gymview front-end speaks protocol {reprlib.repr(message.version)}, the kernel "
                    f"{protocol.PROTOCOL_VERSION}: reload the browser page after upgrading gymview",
                    stacklevel=1,
                )
            self.streamer.page_ready(message.client, message.codecs)
            self._view.page_seen(message.client, True, True)
        elif message.type == protocol.KEYFRAME:
            self.streamer.want_key_frame()
        elif message.type == protocol.ACK and message.seq is not None:
            self.streamer.acknowledge(message.seq, message.client)
        elif message.type == protocol.VISIBILITY:
            self._view.page_seen(message.client, message.visible, False)
        elif message.type == protocol.MODULE and message.name is not None:
            self._view.send_module(message.name)

    def _apply(self, message: protocol.FromPage) -> None:
        if message.type == protocol.KEY:
            if message.key is not None:
                self.controls.press(message.key, message.down)
            return
        if message.type == protocol.REPLAY:
            self._replay(message.index)
            return
        if message.type == protocol.STEPS:
            self._send_steps()
            return
        action = message.action
        if action == protocol.CANCEL:
            self._cancel(str(message.of))
            return
        if action not in protocol.BUTTONS:
            return  # an action of a newer page: nothing to do
        with self._lock:
            if message.id is not None and message.id not in self._heard:
                self._heard.append(message.id)  # the state message that follows names it
                self._applied[message.id] = (action, not self._link.loop_runs_elsewhere())
                while len(self._applied) > 64:  # only a click the page may still cancel matters
                    del self._applied[next(iter(self._applied))]
        if action == "speed":
            try:
                self.controls.set_speed(message.value)
            except (TypeError, ValueError):
                self._view.post_state()  # a speed this kernel does not take: the page shows the current one
            return
        {
            "pause": self.controls.pause,
            "play": self.controls.resume,
            "step": self.controls.step,
            "stop": self.controls.stop,
        }[action]()

    def _repeated(self, message: protocol.FromPage) -> bool:
        """Whether this is a button click applied already (a page sends one again until it is answered): it is
        answered again. Remembers the ids of the last ``SEEN_IDS`` clicks (keys and replays are never sent again)."""
        if message.id is None or message.type != protocol.CONTROL:
            return False
        with self._lock:
            repeated = message.id in self._seen
            if not repeated:
                self._seen[message.id] = None
                while len(self._seen) > SEEN_IDS:
                    self._seen.popitem(last=False)
            answer = repeated and message.action != protocol.CANCEL
            if answer and message.id not in self._heard:
                self._heard.append(message.id)
        if answer:
            self._view.post_state()  # the page did not hear the answer to this click
        return repeated

    def _cancel(self, click: str) -> None:
        """The page gave up on this click (no answer in time): undo it if it came after the loop it was
        meant for, so a late Pause or Stop does not hit the next run. A cell that held the kernel hands
        its clicks over when it ends, on the thread its loop ran in; a loop that runs on in another thread
        (``play()``, a background job, a published script) got the click late only because the kernel or
        the link was slow, and obeys it."""
        with self._lock:
            action, undo = self._applied.pop(click, ("", False))
        if not undo:
            return
        if action == "stop":
            self.controls.undo_stop()
        elif action in ("pause", "step"):
            self.controls.resume()

    def _send_steps(self) -> None:
        """The steps the kept frames span, for the charts under the replay (none kept: no answer)."""
        steps = self._link.steps
        numbers = [header.get("row") for header, _, _ in self.streamer.history.snapshot()]
        known = [number for number in numbers if isinstance(number, int)]
        if steps is None or not known:
            return
        self.streamer.post(protocol.steps_message(steps.window(min(known)), numbers, steps.rows(numbers)))

    def _replay(self, index: int | None) -> None:
        history = self.streamer.history
        if index is None or not -len(history) <= index < len(history):
            return
        try:
            header, data = history.get(index, self.streamer.scene_id)
        except IndexError:  # the oldest frames aged out meanwhile
            return
        self.streamer.post(protocol.replay_header(header, index if index >= 0 else len(history) + index), [data])
