"""ViewFeed: a loop's frames into its view, the final frame, and one close with its hooks."""

import time

import gymnasium as gym
import numpy as np
import pytest
from live_helpers import ShownView
from waiting import wait_until

from gymview.episodes.loop_steps import LoopSteps
from gymview.live.feed import ViewFeed
from gymview.live.pacing.cpus import HelperCost
from gymview.renderers import Drawing, renderer_for


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
    with pytest.warns(RuntimeWarning, match="OpenGL context") as caught:
        feed.close(started=True, close_env=lambda: closed.append(True))
    assert closed == [True] and "gymview.setup()" in str(caught[0].message)


def test_a_render_that_raises_is_told_once_with_its_traceback_and_frames_come_again_when_it_renders():
    failing = [True]

    def flaky():
        if failing[0]:
            raise ValueError("render bug 3")
        return np.zeros((8, 8, 3), np.uint8)

    view = ShownView(fps=120)
    feed = ViewFeed(view, flaky, dict)
    with pytest.warns(RuntimeWarning, match="render bug 3") as caught:
        for _ in range(3):
            feed.show(force=True)  # never raises into the loop
    assert len([w for w in caught if "lost a frame" in str(w.message)]) == 1
    assert "Traceback" in str(caught[0].message) and "in flaky" in str(caught[0].message)
    told = "ValueError: render bug 3 (3 times so far); the run goes on"
    wait_until(lambda: told in [state["message"] for state, _ in view.states], "the status line")
    failing[0] = False
    feed.show(force=True)
    assert view.flush() and view.stats["frames_sent"] == 1
    view.close()


def test_a_render_that_keeps_raising_is_tried_at_the_frame_rate_not_at_every_step():
    clock, tries = FakeClock(), []

    def broken():
        tries.append(clock.now)
        raise ValueError("states must be finite")

    view = ShownView(fps=10, clock=clock)
    feed = ViewFeed(view, broken, dict)
    with pytest.warns(RuntimeWarning, match="states must be finite"):
        while clock.now < 2.0:  # 2 s of steps of 1 ms
            clock.now += 0.001
            if clock.now >= feed.next_check:
                feed.show()
    assert 15 <= len(tries) <= 21, len(tries)
    view.close()


def test_a_view_without_a_frame_rate_takes_the_envs():
    view = ShownView()
    ViewFeed(view, frame, dict, render_fps=50.0)
    feed = ViewFeed(view, frame, dict, render_fps=20.0)  # the first one set it
    feed.controls.pause()  # the page hears the new state, with the rate speed 1.0 plays at
    view.stop()
    assert view.states[-1][0]["state"] == "paused" and view.states[-1][0]["fps"] == 50.0
    view.close()


class FakeClock:
    """The view's clock: it moves only when the synthetic loop says (a step, a frame)."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def cartpole_drawing(number):
    """A CartPole state for the page to draw (draw="page"), the cart ``number`` steps along."""
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    env.reset(seed=0)
    env.unwrapped.state = np.array([number % 100 / 50 - 1, 0.0, 0.1, 0.0])
    renderer = renderer_for(env)
    return Drawing(renderer, renderer.state_of(env))


def run_loop(shown, step_seconds, frame_seconds, seconds=60.0, views=1, page=False, own_seconds=None, **settings):
    """A synthetic env of known cost watched by ``views`` views for ``seconds`` of the fake clock: each
    step takes ``step_seconds``, each frame ``frame_seconds`` (``page``: a state the page draws, else a
    picture); ``own_seconds`` of each step are its wrapper's own work, as the feed is told. Returns (frames
    made, share of the time they took) of the first view."""
    clock, steps = FakeClock(), LoopSteps()
    made: list[list[float]] = [[] for _ in range(views)]
    feeds = []
    for index in range(views):
        view = shown(clock=clock, draw="page" if page else "kernel", **settings)

        def make_frame(made=made[index]):
            clock.now += frame_seconds
            made.append(clock.now)
            return cartpole_drawing(len(made)) if page else np.full((16, 24, 3), len(made) % 256, np.uint8)

        # A machine where the helper has cores to spare: only the fake clock's time counts, whatever this
        # machine's load (the helper's share is tested in test_loop_link.py and test_cpus.py).
        view._link.helper_cost = HelperCost(quota=None, cpus=16.0, wait=lambda: 0.0)
        # The helper is up and has timed a picture (this fake clock outruns its start), which it does once
        # the process's message budget, spent by the loops before, lets a frame through
        for _ in range(1 if page else 100):
            time.sleep(0.05)  # the budget refills in real time
            view.push(cartpole_drawing(0) if page else np.zeros((16, 24, 3), np.uint8), force=True)
            view.flush(timeout=60)
            if view.stats["last_encode_ms"] > 0:
                break
        assert page or view.stats["last_encode_ms"] > 0
        own = None if own_seconds is None else lambda: own_seconds
        feeds.append(ViewFeed(view, make_frame, dict, helper_competes=lambda: False, steps=steps, own_cost=own))
    while clock.now < seconds:
        clock.now += step_seconds  # env.step()
        steps.record((0, 1.0, False, False, None))
        steps.settle()
        for feed in feeds:
            if clock.now >= feed.next_check:
                feed.view.flush(timeout=60)  # the helper's real time is none of the fake clock's
                feed.show()
    return len(made[0]), len(made[0]) * frame_seconds / clock.now


@pytest.mark.parametrize("frame_seconds", [0.005, 0.05])
def test_frames_take_at_most_max_overhead_of_the_loop_and_use_it(shown, frame_seconds):
    frames, share = run_loop(shown, step_seconds=0.0001, frame_seconds=frame_seconds, fps=60, max_overhead=0.1)
    assert share <= 0.1 + frame_seconds / 60  # the promise (and one frame in flight)
    assert share >= 0.09  # what the budget leaves room for is used


def test_the_wrapper_s_own_work_at_each_step_comes_out_of_the_frames_share(shown):
    # the wrapper's own work is 5% of each step: frames keep to the 5% left of max_overhead
    frames, share = run_loop(
        shown, step_seconds=0.0001, frame_seconds=0.005, fps=60, max_overhead=0.1, own_seconds=0.000005
    )
    assert 0.04 <= share <= 0.05 + 0.005 / 60


def test_frames_keep_a_quarter_of_max_overhead_however_costly_the_wrapper_s_own_work(shown):
    frames, share = run_loop(
        shown, step_seconds=0.0001, frame_seconds=0.005, fps=60, max_overhead=0.1, own_seconds=0.00005
    )
    assert 0.02 <= share <= 0.025 + 0.005 / 60


def test_states_the_page_draws_count_against_max_overhead_too(shown):
    frames, share = run_loop(shown, step_seconds=0.0001, frame_seconds=0.005, fps=60, max_overhead=0.1, page=True)
    assert 0.09 <= share <= 0.1 + 0.005 / 60


def test_cheap_frames_come_at_the_fps_limit(shown):
    frames, share = run_loop(shown, step_seconds=0.0001, frame_seconds=0.0002, fps=10, max_overhead=0.1)
    assert 590 <= frames <= 601 and share < 0.01  # 10 a second for 60 s of the fake clock


def test_each_view_pays_for_its_own_frames_only(shown):
    # two views of one loop (two envs watched side by side): each makes the frames it would make alone,
    # so together they take twice one view's share; neither is charged for the other's frames
    alone, alone_share = run_loop(shown, step_seconds=0.0001, frame_seconds=0.005, fps=60, max_overhead=0.1)
    beside, beside_share = run_loop(shown, step_seconds=0.0001, frame_seconds=0.005, fps=60, max_overhead=0.1, views=2)
    assert alone_share >= 0.09
    assert beside == pytest.approx(alone, rel=0.15) and beside_share >= 0.08


@pytest.mark.parametrize("page", [True, False])
def test_the_loop_s_wait_for_a_core_is_read_only_around_frames_the_helper_makes(shown, page):
    view = shown(draw="page" if page else "kernel")
    reads = []
    view._link.helper_cost = HelperCost(quota=None, cpus=2.0, wait=lambda: reads.append(1) or float(len(reads)))
    feed = ViewFeed(view, lambda: cartpole_drawing(1), dict)
    for _ in range(5):
        feed.show(force=True)
        view.flush(timeout=60)
    # a state the page draws costs the loop no read of /proc (but before the first, which may be a picture);
    # a frame the helper makes two (before it, after it)
    assert len(reads) == (1 if page else 10)


def test_a_loop_that_sends_states_itself_then_lets_the_iopub_thread_send_them(shown, monkeypatch):
    from gymview.live import loop_link

    view = shown(draw="page")
    handed = []
    sleep = loop_link.time.sleep
    monkeypatch.setattr(loop_link.time, "sleep", lambda seconds: handed.append(view._streamer.messages)
                        if seconds == loop_link.IOPUB_HAND_OVER_SECONDS else sleep(seconds))  # fmt: skip
    feed = ViewFeed(view, lambda: cartpole_drawing(1), dict)
    for _ in range(7):  # states go out several to a message, from the loop's thread
        feed.show(force=True)
    # once after each message, however many times the loop looked
    assert view._streamer.messages >= 2 and handed == list(range(1, view._streamer.messages + 1))
