"""ViewFeed: a loop's frames into its view, the final frame, and one close with its hooks."""

import time

import numpy as np
import pytest
from live_helpers import ShownView

from gymview.live.feed import ViewFeed
from gymview.live.hidden_costs import RunQueueWait


def frame():
    return np.full((16, 24, 3), 90, np.uint8)


def test_close_runs_the_hooks_shows_the_final_frame_then_closes_the_env_once():
    view, order = ShownView(fps=120), []
    feed = ViewFeed(view, frame, lambda: {"step": 7}, owns_view=True)
    feed.on_close(lambda: order.append("hook"))
    take_back = feed.on_close(lambda: order.append("taken back"))
    take_back()
    feed.close(started=True, close_env=lambda: order.append("env"))
    feed.close(started=True, close_env=lambda: order.append("env again"))
    assert order == ["hook", "env"]
    assert [header["step"] for header, _ in view.sent] == [7]  # the final state, shown before closing
    assert not view.stats["active"]  # the feed's maker made the view: closed with the env


def test_a_view_passed_in_is_only_stopped_and_a_loop_that_never_ran_shows_nothing():
    view = ShownView(fps=120)
    feed = ViewFeed(view, frame, dict)
    feed.close(started=False, close_env=lambda: None)
    assert view.stats["active"] and view.sent == []
    view.close()


def test_the_env_closes_even_when_its_last_frame_fails_and_a_gl_error_says_what_to_run():
    def broken():
        raise RuntimeError("OpenGL context could not be created")

    view, closed = ShownView(fps=120), []
    feed = ViewFeed(view, broken, dict, owns_view=True)
    with pytest.raises(RuntimeError, match="OpenGL") as raised:
        feed.close(started=True, close_env=lambda: closed.append(True))
    assert closed == [True] and "gymview.setup()" in "\n".join(raised.value.__notes__)


def test_a_view_without_a_frame_rate_takes_the_envs():
    view = ShownView()
    ViewFeed(view, frame, dict, render_fps=50.0)
    feed = ViewFeed(view, frame, dict, render_fps=20.0)  # the first one set it
    feed.controls.pause()  # the page hears the new state, with the rate speed 1.0 plays at
    view.stop()
    assert view.states[-1][0]["state"] == "paused" and view.states[-1][0]["fps"] == 50.0
    view.close()


class StepClock:
    """The clock that times the steps after a frame: each step takes what the test says."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def frames_with_steps(feed, clock, first, second, frames=3):
    """Make ``frames`` frames, each followed by two steps of ``first`` and ``second`` seconds."""
    view = feed.view
    for _ in range(frames):
        view.fps = 120
        while not view.frame_due():
            time.sleep(0.002)
        assert feed.show() == 0.0  # a frame: the loop checks again after its next step
        view.fps = 0.01  # no frame is due again while the steps are timed, however slow the machine
        clock.now += first
        assert feed.show() == 0.0  # and after the second step too
        clock.now += second
        assert feed.show() > 0.0  # back to checking when the encoder answers or the next frame is due


def test_the_first_step_after_a_frame_is_timed_against_the_next_and_counted(shown):
    clock, made = StepClock(), []
    view = shown(max_overhead=1.0)
    feed = ViewFeed(view, lambda: made.append(1) or frame(), dict, clock=clock)
    frames_with_steps(feed, clock, first=0.0004, second=0.0001, frames=2)
    assert view._link.after_frame.seconds == 0.0  # two frames are not enough to go on
    frames_with_steps(feed, clock, first=0.0004, second=0.0001, frames=1)
    assert view._link.after_frame.seconds == pytest.approx(0.0003)
    frames_with_steps(feed, clock, first=30.0, second=0.0001, frames=5)  # the loop waited between two cells
    assert view._link.after_frame.seconds == pytest.approx(0.0003)
    assert len(made) == 8


@pytest.mark.parametrize("first_step, readings, counted", [
    # the loop thread's total wait: before the frame, after it (its own 0.1 ms is in its time), after the
    # timed steps (1.4 ms of the first step waited: in the step's cost, not counted again), and now
    (0.0015, [0.0, 0.0001, 0.0015, 0.0025], 0.001),
    (0.03, [0.0, 0.0001, 0.0025], 0.0024),  # a first step held up 30 ms is left out: the run queue counts its wait
])
def test_the_wait_for_a_core_in_the_steps_timed_after_a_frame_is_counted_once(shown, first_step, readings, counted):
    clock, waits = StepClock(), iter(readings)
    view = shown(max_overhead=1.0)
    view._link.run_queue = RunQueueWait(read=lambda: next(waits))
    feed = ViewFeed(view, frame, dict, clock=clock)
    frames_with_steps(feed, clock, first=first_step, second=0.0001, frames=1)
    assert view._link.run_queue.since_last() == pytest.approx(counted)


@pytest.mark.parametrize("how", ["forced", "paused"])
def test_a_forced_frame_or_a_paused_loop_times_no_step(shown, how):
    view, made = shown(fps=1), []
    feed = ViewFeed(view, lambda: made.append(1) or frame(), dict)
    if how == "paused":
        feed.controls.pause()
    assert feed.show(force=how == "forced") > 0.0 and made == [1]
    assert feed.show() > 0.0  # not 0: no step is being timed
    assert view._link.after_frame.seconds == 0.0


def test_a_frame_forced_or_due_while_steps_are_timed_is_made_at_once(shown):
    """A loop slower than twice the frame rate would otherwise lose every other frame."""
    clock, made = StepClock(), []
    view = shown(fps=120, max_overhead=1.0)
    feed = ViewFeed(view, lambda: made.append(1) or frame(), dict, clock=clock)
    assert feed.show() == 0.0 and made == [1]
    while not view.frame_due():  # the step after the frame took longer than a frame interval
        time.sleep(0.002)
    clock.now += 0.01
    feed.show()
    assert made == [1, 1]
    assert feed.show(force=True) > 0.0 and made == [1, 1, 1]  # a forced frame ends the timing too
    assert view._link.after_frame.seconds == 0.0
