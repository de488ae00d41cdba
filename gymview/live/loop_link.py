"""LoopLink: the side of a LiveView that a stepping loop drives, through a
:class:`~gymview.live.feed.ViewFeed`. Users call the view; loops call its link.

A link sends the frames that came back from the encoder process, fetches the browser's messages
where the kernel delivers none while a cell runs (ipykernel 6, marimo), passes a paused loop's time, counts
what each frame cost the loop against its budget, and carries the view's buttons (``controls``) and
the env's own frame rate (``env_fps``, what speed 1.0 plays at).

>>> from gymview.live.widget import LiveView
>>> view = LiveView()
>>> link = view._link        # what ViewFeed takes from the view it feeds
>>> link.active, link.polls_browser
(False, False)
>>> view.close()
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from gymview.episodes.recent import KeptSteps
from gymview.live.controls import RunControls
from gymview.live.far_pages import FarPages
from gymview.live.kernels import registry
from gymview.live.pacing.cpus import HelperCost, cgroup_cpu_limit, usable_cpus
from gymview.live.pacing.throttle import FrameThrottle
from gymview.live.streamer import FrameStreamer

__all__ = ["BrowserPoller", "LinkedView", "LoopLink"]


class BrowserPoller(Protocol):
    """Fetches the views' browser messages from inside a blocking cell: an
    :class:`~gymview.live.kernels.ipykernel6_poller.Ipykernel6CommPoller` or a
    :class:`~gymview.live.kernels.marimo_poller.MarimoCommPoller`."""

    def deliver(self, handlers: Mapping[str, Callable[[Any], None]]) -> int:
        """Hand the waiting messages addressed to the comm ids in ``handlers`` to them; how many."""
        ...


class LinkedView(Protocol):
    """What a loop acts on in the view it feeds, besides its frames (a LiveView's own side of it)."""

    @property
    def active(self) -> bool:
        """Whether frames can reach a page now (in a kernel, or a page elsewhere attached; not closed)."""
        ...

    def keep_still_image(self) -> None:
        """Leave the last frame in the notebook as a still image beside the live view."""
        ...

    def report(self, message: str) -> None:
        """Show ``message`` on the view's status line."""
        ...

    def take_keys(self, on: bool) -> None:
        """Send the page's key presses to the kernel, or stop sending them."""
        ...


# After a frame message went to ipykernel, the producer sleeps this long so that the kernel's IOPub
# thread can send it without waiting for the GIL (docs/performance-log.md has the measurements).
IOPUB_HAND_OVER_SECONDS = 0.0002
# How often a blocking loop on ipykernel 6 fetches the browser's messages: a click waits at most
# this long, and the loop pays one socket poll per period.
POLL_SECONDS = 0.02


class LoopLink:
    """What a loop feeding one view calls.

    ``view`` is what the loop acts on in the view besides its frames (:class:`LinkedView`). A ``poller``
    fetches the messages of every open view's pages where the kernel delivers none while a cell runs. Pages
    elsewhere (``far_pages``) get a turn of the interpreter at each :meth:`service`.
    """

    def __init__(
        self,
        streamer: FrameStreamer,
        throttle: FrameThrottle,
        controls: RunControls,
        view: LinkedView,
        poller: BrowserPoller | None = None,
        far_pages: FarPages | None = None,
        helper_cost: HelperCost | None = None,
    ) -> None:
        self.streamer = streamer
        self.throttle = throttle
        self.controls = controls
        self.poller = poller
        self.env_fps: float | None = None
        self.steps: KeptSteps | None = None  # the loop's latest steps, charted under the replay
        self._handed_over = 0  # the streamer's message count at the last hand-over to the IOPub thread
        self.view = view
        self.clock = throttle.clock  # the time frames are paced by
        self._next_pump = 0.0
        self._next_poll = 0.0
        # how much of the helper's time for a frame the loop pays for
        self.helper_cost = helper_cost if helper_cost is not None else HelperCost(cgroup_cpu_limit(), usable_cpus())
        self._sending_seconds = 0.0  # sending frames since the last record_cost: the loop pays that too
        self._loop_thread: threading.Thread | None = None  # the thread of the loop that called service() last
        self._far_pages = far_pages

    @property
    def active(self) -> bool:
        """Whether pushed frames can reach a notebook front-end (in a kernel, view not closed)."""
        return self.view.active

    def loop_runs_elsewhere(self) -> bool:
        """Whether the loop feeding the view runs on, in another thread than the caller's (``play()``, a
        background job, a script's loop while its publisher's thread hears the page)."""
        thread = self._loop_thread
        return thread is not None and thread is not threading.current_thread() and thread.is_alive()

    @property
    def polls_browser(self) -> bool:
        """Whether a blocking loop fetches the browser's messages itself (ipykernel 6, marimo)."""
        return self.poller is not None

    def go_inert(self) -> None:
        """In a forked child: frames go nowhere, no socket of the parent's kernel is read, and the parent's
        helper is let go."""
        self.streamer.forget_after_fork()
        self.streamer = FrameStreamer(lambda header, buffers: None, offload=False, draw=self.streamer.draw)
        self.poller = None

    def pump_when_due(self) -> None:
        """:meth:`pump` if the encoder has a frame out and its reply is likely back (for loops that
        push every step and call nothing else)."""
        if self.streamer.busy and self.clock() >= self._next_pump:
            self._next_pump = self.clock() + self.pump()

    def hand_over_to_iopub(self) -> None:
        """If a frame message went to ipykernel since the last hand-over, let the kernel's IOPub thread send
        it now (else it waits for the interpreter until Python's switch interval ends)."""
        if self.streamer.messages != self._handed_over:
            self._handed_over = self.streamer.messages
            time.sleep(IOPUB_HAND_OVER_SECONDS)

    def pump(self) -> float:
        """Send the frame that came back from the encoder, if one did; the seconds the caller may
        go before the next call."""
        started = self.clock()
        if self.streamer.pump():
            self.hand_over_to_iopub()
            self._sending_seconds += self.clock() - started
        # until the next frame is due, or half a second while no front-end can show frames
        due = self.throttle.seconds_until_due() if self.active else 0.5
        if self.streamer.busy and not self.streamer.waits_for_room:  # one held back for room goes from the watcher
            return self.streamer.seconds_until_reply()
        return due

    def service(self) -> float:
        """:meth:`pump`, then on ipykernel 6 and marimo :meth:`poll_browser`; the seconds until the next call is
        due (there at most the polling period, so clicks are fetched even when no frame is)."""
        self._loop_thread = threading.current_thread()
        if self._far_pages is not None:
            self._far_pages.give_turn()
        seconds = self.pump()
        if self.poller is None:
            return seconds
        self.poll_browser()
        return min(seconds, POLL_SECONDS)

    def poll_browser(self) -> None:
        """On ipykernel 6 and marimo, which deliver no browser message while a cell runs: handle the messages
        to live views waiting behind the running cell, at most every POLL_SECONDS."""
        if self.poller is None:
            return
        now = self.clock()
        if now < self._next_poll:
            return
        self._next_poll = now + POLL_SECONDS
        self.poller.deliver(registry.comm_handlers())

    @property
    def paused_wait(self) -> Callable[[float], None] | None:
        """How a paused loop passes its time (``RunControls.before_step(wait=...)``): None (wait on
        the controls' condition), or on ipykernel 6 and marimo sending frames and fetching the next click."""
        return self._pass_paused_time if self.poller is not None else None

    def _pass_paused_time(self, seconds: float) -> None:
        self.pump()
        self.poll_browser()
        time.sleep(min(seconds, POLL_SECONDS))

    def counted(self, push: Callable[[], None], count_helper: bool = False) -> None:
        """Call ``push()``, which makes a frame and pushes it, and count what the frame cost the loop
        (:meth:`record_cost`), with the time the loop waited for a core while the helper made the last
        frame: only for frames the helper makes, not for states the page draws."""
        streamer = self.streamer
        if not streamer.last_drawn_by_page:
            self.helper_cost.before_frame()
        started = self.clock()
        push()
        self.hand_over_to_iopub()  # states for the page go out at once, from this thread
        self.record_cost(self.clock() - started, count_helper=count_helper)
        if streamer.last_drawn_by_page:
            self.helper_cost.forget()
        else:
            self.helper_cost.mark()

    def record_cost(self, seconds: float, count_helper: bool = False) -> None:
        """What producing the last frame cost the loop: ``seconds``, what sending frames cost it since the
        last call (the comm message, the IOPub thread's turn), and the part of the helper process's time for
        the frame that the loop pays (:attr:`helper_cost`; all of it with ``count_helper``: torch training
        on every core). Nothing is counted before the helper has timed a frame."""
        streamer = self.streamer
        in_helper = streamer.encodes_elsewhere and not streamer.last_drawn_by_page  # the page draws states
        if in_helper and streamer.last_encode_ms == 0.0:
            # The helper has not answered yet: a sample without its time would start the estimate
            # low, and the throttle lets it rise only fourfold a frame.
            return
        seconds += self._sending_seconds
        self._sending_seconds = 0.0
        if in_helper:
            seconds += self.helper_cost.paid(streamer.last_encode_ms / 1000.0, all_of_it=count_helper)
        self.throttle.record_cost(seconds)
