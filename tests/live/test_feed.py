"""ViewFeed: a loop's frames into its view, the final frame, and one close with its hooks."""

import time

import numpy as np
import pytest
from live_helpers import ShownView

from gymview.live.feed import ViewFeed


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


def test_the_first_step_after_a_frame_is_timed_against_the_next_and_counted():
    view, made = ShownView(fps=1), []
    feed = ViewFeed(view, lambda: made.append(1) or frame(), dict)
    assert feed.show() == 0.0 and made == [1]  # a frame: the loop checks again after its next step
    time.sleep(0.05)  # the first step after the frame is slow (its caches are cold)
    before_first = time.perf_counter()
    assert feed.show() == 0.0  # and after the second step too
    after_second = (feed.show(), time.perf_counter())[1]
    assert feed.next_check > 0.0  # back to checking when the encoder answers or the next frame is due
    assert view._link.after_frame.seconds >= 0.05 - (after_second - before_first)  # the second step is at most that
    assert made == [1]
    view.close()


@pytest.mark.parametrize("how", ["forced", "paused"])
def test_a_forced_frame_or_a_paused_loop_times_no_step(how):
    view, made = ShownView(fps=1), []
    feed = ViewFeed(view, lambda: made.append(1) or frame(), dict)
    if how == "paused":
        feed.controls.pause()
    assert feed.show(force=how == "forced") > 0.0 and made == [1]
    time.sleep(0.02)
    feed.show()
    feed.show()
    assert view._link.after_frame.seconds == 0.0
    view.close()
