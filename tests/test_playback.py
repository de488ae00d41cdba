"""gymview.play, driven from Python like the view's buttons."""

import threading
import time

import gymnasium as gym
import pytest
from live_helpers import ShownView, browser_says
from waiting import wait_until

import gymview
from gymview.playback import key_policy


def cartpole():
    return gym.make("CartPole-v1", render_mode="rgb_array")


def balance(obs):
    return int(obs[2] > 0)


def test_play_runs_episodes_with_a_policy_and_reports_each():
    run = gymview.play(cartpole(), balance, episodes=3, speed="max", seed=1)
    results = run.wait(timeout=60)
    assert len(results) == 3 and run.done and not run.stopped
    assert all(r["steps"] > 20 and r["return"] == r["steps"] and r["terminated"] for r in results)
    assert "finished" in repr(run)
    run.env.close()


def test_speed_one_plays_at_the_envs_render_fps():
    env = cartpole()
    fps = env.metadata["render_fps"]
    times = []
    watched = gymview.watch(env, display=False)
    original = watched.env.step

    def timed(action):
        times.append(time.perf_counter())
        return original(action)

    watched.env.step = timed
    run = gymview.play(watched, balance, steps=int(2.5 * fps), speed=1.0)
    run.wait(timeout=60)
    # Paced: never faster than the env's frame rate (a busy machine may only make it slower).
    assert times[-1] - times[0] >= (len(times) - 1) / fps * 0.999, "steps at speed 1.0 outran render_fps"
    assert watched.feed.controls.speed is None, "the view's own speed comes back when the run ends"
    watched.close()


def test_pause_step_resume_and_stop_from_python():
    run = gymview.play(cartpole(), balance, speed="max")
    try:
        wait_until(lambda: run.steps_taken >= 10, "ten steps")
        run.pause()
        controls = run.env.feed.controls
        wait_until(lambda: controls.holding, "the loop held by the pause")
        held = run.steps_taken  # a held loop takes no step until Step, resume or Stop
        run.step()
        wait_until(lambda: run.steps_taken == held + 1, "the one step Step lets through")
        wait_until(lambda: controls.holding, "the loop held again after it")
        assert run.steps_taken == held + 1
        run.resume()
        wait_until(lambda: run.steps_taken >= held + 50, "the loop resumed")
    finally:
        run.stop()
    assert run.stopped and run.done and run.wait() == run.results
    assert not [t for t in threading.enumerate() if t.name == "gymview-play"]
    run.env.close()


def test_a_policy_error_is_re_raised_by_wait_and_shown_in_the_view():
    def broken(obs):
        raise ZeroDivisionError("policy broke")

    env = gymview.watch(cartpole(), display=False)
    reports = []
    env.feed.report = reports.append
    run = gymview.play(env, broken, speed="max")
    with pytest.raises(ZeroDivisionError, match="policy broke"):
        run.wait(timeout=60)
    assert reports and "ZeroDivisionError: policy broke" in reports[0]
    env.close()


def test_an_sb3_model_is_a_policy_played_deterministically():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=64, seed=0, device="cpu")
    run = gymview.play(cartpole(), model, episodes=2, speed="max", seed=0)
    first = run.wait(timeout=120)
    again = gymview.play(cartpole(), model, episodes=2, speed="max", seed=0).wait(timeout=120)
    assert [r["steps"] for r in first] == [r["steps"] for r in again]  # deterministic=True
    run.env.close()


def test_keys_choose_the_action_the_env_receives():
    env = gymview.watch(cartpole(), display=False)
    received = []
    original = env.env.step
    env.env.step = lambda action: (received.append(action), original(action))[1]
    run = gymview.play(env, keys={"ArrowLeft": 0, "ArrowRight": 1}, noop=0, speed="max")
    try:
        assert env.view.get_state("_keyboard")["_keyboard"]  # what the page is told
        wait_until(lambda: len(received) >= 20, "twenty steps")
        assert set(received) == {0}  # noop while no key is held
        env.feed.controls.press("ArrowRight", True)
        wait_until(lambda: 1 in received, "the key's action")
    finally:
        run.stop()
    assert 1 in received and not env.view.get_state("_keyboard")["_keyboard"]
    env.close()


def test_key_policy_checks_its_mapping():
    space = gym.spaces.Discrete(2)
    with pytest.raises(ValueError, match="noop"):
        key_policy({"a": 0}, None, frozenset, space)
    with pytest.raises(ValueError, match="not an action"):
        key_policy({"a": 5}, 0, frozenset, space)
    with pytest.raises(TypeError, match="key names"):
        key_policy({3: 0}, 0, frozenset, space)
    box = gym.spaces.Box(-1.0, 1.0, (1,))
    policy = key_policy({"a": [-1.0], "d": [1.0]}, [0.0], lambda: frozenset({"d"}), box)
    assert policy(None) == [1.0]


def test_bad_arguments_fail_before_anything_runs():
    with pytest.raises(TypeError, match="one gymnasium env"):
        gymview.play(gym.make_vec("CartPole-v1", 2))
    with pytest.raises(ValueError, match="speed"):
        gymview.play(cartpole(), speed=0)
    with pytest.raises(TypeError, match="policy"):
        gymview.play(cartpole(), policy=42, steps=1).wait()
    with pytest.raises(ValueError, match="not both"):
        gymview.play(cartpole(), balance, keys={"a": 0}, noop=0)


def test_await_a_run():
    import asyncio

    run = gymview.play(cartpole(), balance, episodes=1, speed="max", seed=0)
    assert len(asyncio.run(_awaited(run))) == 1
    run.env.close()


async def _awaited(thing):
    return await thing


def test_one_env_plays_one_run_and_closing_it_ends_the_run():
    env = gymview.watch(cartpole(), display=False)
    run = gymview.play(env, balance, speed="max")
    with pytest.raises(RuntimeError, match="already playing"):
        gymview.play(env, balance)
    env.close()
    assert run.done and run.stopped


def test_stop_ends_a_slowly_paced_run_at_once():
    run = gymview.play(cartpole(), balance, speed=0.001)  # one step every 20 s
    time.sleep(0.2)  # the loop is in its first 20 s wait (or about to be)
    run.stop(timeout=10)  # the pacing wait ends on the click, not after 20 s
    assert run.stopped
    run.env.close()


def test_a_click_the_page_gave_up_on_still_acts_on_a_play_loop():
    """A busy kernel may answer a click after the page stopped waiting for it, and the page then sends a
    cancel; play()'s loop runs on in its own thread and obeys the click all the same."""
    view = ShownView()
    run = gymview.play(gymview.watch(cartpole(), view=view), balance, speed="max")
    try:
        wait_until(lambda: run.steps_taken >= 10, "ten steps")
        browser_says(view, {"type": "control", "action": "pause", "id": "page:1"})
        browser_says(view, {"type": "control", "action": "cancel", "of": "page:1", "id": "page:2"})
        wait_until(lambda: run.env.feed.controls.holding, "the loop held by the pause")
        browser_says(view, {"type": "control", "action": "stop", "id": "page:3"})
        browser_says(view, {"type": "control", "action": "cancel", "of": "page:3", "id": "page:4"})
        run.wait(timeout=60)
        assert run.stopped
    finally:
        run.stop()
        run.env.close()
