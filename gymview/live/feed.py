"""ViewFeed: what stands between a stepping loop and its LiveView. The env wrappers of
:func:`gymview.watch` and stable-baselines3's ``WatchCallback`` are thin adapters over it.

A feed makes a frame only when one is due, times it against the loop's overhead budget, obeys the
view's buttons (pause, step, stop, speed), pumps encoded frames out (and, on ipykernel 6, fetches
the browser's messages), shows the final state, and stops or closes the view once. A step costs the
loop one clock read until ``next_check``: the loops users watch run at up to 100,000 steps a second.

A feed is an observer: what goes wrong in showing frames (a render or a painter that raises, a helper
process killed, a message the page cannot be sent) never raises into the loop. The view's status line
says what happened, one warning of each kind names it (with the painter's traceback), and the next
frames go on, from a new helper where the last one died.

>>> from time import perf_counter
>>> import numpy as np
>>> from gymview.live.widget import LiveView
>>> feed = ViewFeed(LiveView(), frame=lambda: np.zeros((8, 8, 3), np.uint8), info=dict, owns_view=True)
>>> next_check = 0.0
>>> if perf_counter() >= next_check:   # in a loop, after each step
...     next_check = feed.show()
>>> feed.close(started=True, close_env=lambda: None)
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from typing import Any

from gymview._internal.opengl_failures import OPENGL_ADVICE, opengl_failure
from gymview._internal.warn import warn_user
from gymview.episodes.recent import KeptSteps
from gymview.errors import EncoderProcessError, FrameError, WorkerError
from gymview.live.controls import PAUSED
from gymview.live.widget import LiveView

__all__ = ["ViewFeed", "render_fps"]

# What showing frames can go wrong with, which a feed tells the user of instead of raising into the loop
VIEW_FAILURES = (FrameError, EncoderProcessError, WorkerError)


class ViewFeed:
    """Frames from one loop into ``view``.

    ``frame()`` makes the frame to show (an array or a DeferredFrame), ``info()`` the status line's
    ``step``, ``episode`` and ``episode_return``. ``helper_competes()`` says whether the view's helper
    process takes its CPU from this loop (SB3 training, where torch fills every core): its time per
    frame then counts against the budget too. ``owns_view``: :meth:`close` closes the view (the feed's
    maker made it) rather than only stopping it. ``render_fps``: the env's own frame rate (what speed
    1.0 plays at), given to a view that has none yet. ``steps``: the loop's latest steps, charted under
    the view's replay while it is paused (each frame's ``info()`` then names its step as ``row``).
    ``own_cost()``: the seconds of the loop's thread each entry kept in ``steps`` (a step or a reset) costs
    the loop's wrapper (its own work, outside frames), asked once frames flow: that share of the loop's time
    comes out of the frames' budget.
    """

    def __init__(
        self,
        view: LiveView,
        frame: Callable[[], Any],
        info: Callable[[], dict[str, Any]],
        helper_competes: Callable[[], bool] = lambda: False,
        owns_view: bool = False,
        render_fps: float | None = None,
        steps: KeptSteps | None = None,
        own_cost: Callable[[], float] | None = None,
    ) -> None:
        self._link = link = view._link  # the view's side for loops (gymview.live.loop_link)
        if link.env_fps is None:
            link.env_fps = render_fps
        if steps is not None:
            link.steps = steps
        self.view = view
        self.controls = link.controls  # what the view's buttons ask of the loop
        self.next_check = 0.0  # the loop calls show() once the view's clock (perf_counter) reaches it
        self.owns_view = owns_view
        self._frame = frame
        self._info = info
        self._helper_competes = helper_competes
        self._closed = False
        self._told: dict[type, int] = {}  # the failures of showing frames, by kind: how many so far
        self._close_hooks: list[Callable[[], None]] = []
        self._clock = link.clock
        self._steps = steps if own_cost is not None else None  # counted for the wrapper's share of the loop's time
        self._own_cost = own_cost
        self._step_cost = 0.0  # own_cost(), once asked
        link.view.report("")  # a view fed by a loop before has nothing to say of this one yet
        self._counted: tuple[float, int] | None = None  # (when, the steps kept then) at the last count
        self._own_share = 0.0  # smoothed

    def obey_controls(self) -> None:
        """Pause, Step, Stop and Speed from the view, before a step; call it only while
        ``controls.engaged``. Raises :class:`gymview.Stopped` after Stop."""
        if self.controls.state == PAUSED:
            self.show(force=True)  # a paused view shows the state the loop is held at
        self.controls.before_step(self._link.env_fps, wait=self._link.paused_wait)

    def before_reset(self) -> None:
        """Obey a Stop before a reset too (a reset is a step boundary)."""
        if self.controls.engaged:
            self.controls.before_reset()

    def show(self, force: bool = False) -> float:
        """Make and push a frame if one is due (``force``: whenever the view is active), then pump;
        returns :attr:`next_check`, which loops may keep themselves (one attribute read a step)."""
        view, link = self.view, self._link
        if view.frame_due() or (force and link.active):

            def push() -> None:
                try:
                    view.push(self._frame(), force=force, **self._info())
                except Exception as error:  # the env's render, its state for the painter, the view's helper
                    link.throttle.missed()
                    self._tell(error)

            link.counted(push, count_helper=self._helper_competes())
        if self._steps is not None and link.active:
            self._count_own_share()
        self.next_check = self._clock() + link.service()
        return self.next_check

    def _count_own_share(self) -> None:
        """The share of the loop's time its wrapper's own work took since the last call, smoothed, spent from
        the frames' budget."""
        own_cost, self._own_cost = self._own_cost, None
        if own_cost is not None:  # timed once frames flow, not in a script
            try:
                self._step_cost = own_cost()
            except Exception as error:  # counted as nothing: the loop goes on
                warn_user(f"gymview: the wrapper's own work could not be timed ({error!r}); frames keep the budget")
        now, kept = self._clock(), self._steps.last + 1 if self._steps is not None else 0
        if self._counted is not None and now > self._counted[0]:
            share = (kept - self._counted[1]) * self._step_cost / (now - self._counted[0])
            self._own_share += (share - self._own_share) / 4
            self._link.throttle.spend(self._own_share)
        self._counted = (now, kept)

    def show_final_frame(self) -> None:
        """Show the state the loop is in now (the throttle may have skipped it) and keep it in the
        notebook's output as a still image beside the live view."""
        if self._link.active:
            self.show(force=True)
            try:
                self.view.flush()
            except VIEW_FAILURES as error:
                self._tell(error)
            self._link.view.keep_still_image()

    def report(self, message: str) -> None:
        """Show ``message`` under the picture (a run's error, for one)."""
        self._link.view.report(message)

    def take_keys(self, on: bool) -> None:
        """Whether the view sends key presses to the kernel (a person playing), and says so."""
        self._link.view.take_keys(on)

    def on_close(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Call ``hook()`` when the feed closes, before the env does (a play loop on the env stops
        there); returns the function that takes the hook back."""
        self._close_hooks.append(hook)
        return lambda: self._close_hooks.remove(hook) if hook in self._close_hooks else None

    def close(self, started: bool, close_env: Callable[[], None]) -> None:
        """Once: run the close hooks, show the final state (if the loop ``started``), stop the view
        (close it if :attr:`owns_view`), then ``close_env()``, even if showing failed."""
        if self._closed:
            return
        self._closed = True
        try:
            for hook in list(self._close_hooks):
                hook()
            if started:
                try:
                    self.show(force=True)
                finally:
                    self._end_view()
            else:
                self._end_view()
        finally:
            close_env()

    def _end_view(self) -> None:
        self._link.throttle.spend(0.0)  # a view passed in may be fed by another loop next
        if self.owns_view:
            self.view.close()  # warns of a frame lost at the end itself
            return
        try:
            self.view.stop()
        except VIEW_FAILURES as error:
            self._tell(error)

    def _tell(self, error: Exception) -> None:
        """A frame was lost (see the module docstring): the status line says so; the first of its kind is
        also a warning, with the whole message (a painter's traceback is in a FrameError's; an error raised
        here, by the env's render for one, brings its own)."""
        kind = type(error)
        count = self._told[kind] = self._told.get(kind, 0) + 1
        ours = isinstance(error, VIEW_FAILURES)
        first_line = (str(error) if ours else f"{kind.__name__}: {error}").split("\n", 1)[0]
        again = f" ({count} times so far)" if count > 1 else ""
        self._link.view.report(f"{first_line}{again}; the run goes on")
        if count > 1:
            return
        told = str(error) if ours else "".join(traceback.format_exception(error)).rstrip()
        if opengl_failure(error):
            told += f"\nThe env could not render for the live view: {OPENGL_ADVICE}"
        warn_user(f"gymview: the live view lost a frame; the run goes on, and so do the frames:\n{told}")


def render_fps(metadata: Mapping[str, Any] | None) -> float | None:
    """An env's ``metadata["render_fps"]`` (what speed 1.0 plays at), or None when it has none.

    >>> render_fps({"render_fps": 50}), render_fps({}), render_fps(None)
    (50.0, None, None)
    """
    fps = (metadata or {}).get("render_fps")
    return float(fps) if isinstance(fps, (int, float)) and not isinstance(fps, bool) and fps > 0 else None
