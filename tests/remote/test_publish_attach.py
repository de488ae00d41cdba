"""A script publishes its live view; a notebook attaches: frames, buttons, runs listed and chosen, the
ends of either side. The notebook here is this process (an AttachedView outside a kernel, its page a
stand-in); tests/kernel and tests/browser do the same from a real kernel and from JupyterLab."""

import os
import threading

import gymnasium as gym
import numpy as np
import pytest
from waiting import wait_until

import gymview
from gymview.remote import runs_at

pytestmark = pytest.mark.slow


def steering(page, script, action, **fields):
    """Click and wait until the run says it applied the click."""
    click = page.click(action, **fields)
    wait_until(lambda: page.heard(click), f"the run to apply {action}")


def test_a_watched_script_makes_no_frame_until_a_notebook_attaches_and_none_after(address, token, pages):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address, draw="kernel")
    env.reset(seed=0)
    for _ in range(2000):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    assert env.view.stats["frames_rendered"] == 0 and not env.view.stats["active"]
    view = gymview.attach(address, display=False)
    page = pages(view)
    while len(page.frames()) < 5:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    assert page.frames()[0]["format"] == "jpeg" and view.stats["relayed"] >= 5
    view.close()
    run = env.view._far_pages
    wait_until(lambda: not run.attached(), "the hub to hear the notebook leave")
    made = env.view.stats["frames_rendered"]
    for _ in range(2000):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    assert env.view.stats["frames_rendered"] == made
    env.close()
    assert not [t for t in threading.enumerate() if t.name in ("gymview-publish", "gymview-attach")]


def test_pause_step_play_and_stop_act_on_the_script(address, token, scripts, pages):
    script = scripts("--publish", address)
    view = gymview.attach(address, timeout=60, display=False)
    assert (view.run.name, view.run.pid) == ("CartPole-v1", script.process.pid)
    page = pages(view)
    wait_until(lambda: len(page.frames()) > 3, "frames from the script")
    steering(page, script, "pause")
    wait_until(lambda: script.held, "the script's loop to be held")
    held_at = script.steps
    frames = len(page.frames())
    wait_until(lambda: len(page.states()) > 0 and page.state() == "paused", "the page to show paused")
    assert script.steps == held_at, "Pause held the script's step counter"
    steering(page, script, "step")
    wait_until(lambda: script.steps == held_at + 1 and script.held, "one step, then held again")
    wait_until(lambda: len(page.frames()) > frames, "the frame of the state after the step")
    steering(page, script, "speed", value=2.0)
    steering(page, script, "play")
    wait_until(lambda: script.steps > held_at + 10, "the script to step again")
    steering(page, script, "speed", value="max")
    steering(page, script, "stop")
    assert script.wait() == 0
    output = script.output()
    assert "STOPPED" in output and "THREADS []" in output, output
    wait_until(lambda: page.state() == "ended", "the page to say the run ended")
    assert "ended" in page.states()[-1]["message"] and view.run is None, [(s["state"], s["message"]) for s in page.states()][-4:]
    assert page.frames(), "the page keeps the frames it had"
    view.close()


def test_a_killed_run_that_starts_again_is_shown_again(address, token, scripts, pages):
    first = scripts("--publish", address)
    view = gymview.attach(address, timeout=60, display=False)
    page = pages(view)
    wait_until(lambda: len(page.frames()) > 3, "frames from the first run")
    first.kill()
    wait_until(lambda: page.state() == "ended", "the page to say the run is gone")
    assert "stopped answering" in page.states()[-1]["message"]
    before = [frame["seq"] for frame in page.frames()]
    second = scripts("--publish", address)
    wait_until(lambda: view.run is not None and view.run.pid == second.process.pid, "the view to show the new run",
               timeout=90)
    wait_until(lambda: len(page.frames()) > len(before) + 3, "frames from the second run")
    numbers = [frame["seq"] for frame in page.frames()]
    assert numbers == sorted(set(numbers)), "the page sees one sequence of frame numbers across both runs"
    view.close()


def test_several_runs_at_one_address_are_listed_and_one_is_chosen(address, token, scripts, pages):
    first = scripts("--publish", address, "--run", "first")
    second = scripts("--publish", address, "--run", "second")
    wait_until(lambda: len(runs_at(address)) == 2, "both runs to be listed", timeout=90)
    listed = {run.name: run.pid for run in runs_at(address)}
    assert listed == {"first": first.process.pid, "second": second.process.pid}
    with pytest.raises(ValueError, match="2 runs publish at .*'first'.*'second'.*Choose one: run="):
        gymview.attach(address, display=False)
    by_name = gymview.attach(address, run="second", display=False)
    by_pid = gymview.attach(address, run=first.process.pid, display=False)
    assert (by_name.run.name, by_pid.run.name) == ("second", "first")
    page = pages(by_name)
    wait_until(lambda: len(page.frames()) > 3, "frames from the second run (through the first, which listens)")
    # The first process listens at the address; when it ends, the second takes its place.
    first.kill()
    seen = len(page.frames())
    wait_until(lambda: len(page.frames()) > seen + 3, "frames again, through the second process", timeout=90)
    assert by_name.run.name == "second"
    by_name.close()
    by_pid.close()


def test_a_wrong_or_missing_token_is_refused_with_an_error_that_says_so(address, token, scripts, monkeypatch):
    scripts("--publish", address)
    with pytest.raises(PermissionError, match="did not prove it knows this token.*attach with the token the run printed"):
        gymview.attach(address, token="not-the-token", timeout=60, display=False)
    monkeypatch.delenv("GYMVIEW_TOKEN")
    with pytest.raises(ValueError, match="no token to attach to .* with: pass token="):
        gymview.attach(address, display=False)
    assert gymview.attach(address, token=token, timeout=60, display=False).run.name == "CartPole-v1"


def test_a_script_prints_the_token_it_made_and_an_unchanged_script_publishes_with_gymview_publish(
        address, scripts, monkeypatch, pages):
    monkeypatch.delenv("GYMVIEW_TOKEN", raising=False)
    script = scripts(env={"GYMVIEW_PUBLISH": address})  # no --publish: the environment says where
    wait_until(lambda: "token=" in script.output(), "the script to print how to attach")
    line = next(line for line in script.output().splitlines() if line.startswith("gymview: publishing"))
    assert f"at {address}: gymview.attach('{address}', token='" in line
    token = line.split("token='")[1].split("'")[0]
    view = gymview.attach(address, token=token, timeout=60, display=False)
    page = pages(view)
    wait_until(lambda: len(page.frames()) > 3, "frames from the unchanged script")
    view.close()


def test_nothing_listening_says_where_to_look(address, token):
    with pytest.raises(TimeoutError, match=r"nothing answered at .* is a script publishing there.*ssh -N -L"):
        gymview.attach(address, timeout=1.5, display=False)


def test_a_view_of_a_run_that_ended_answers_its_page_itself(address, token, pages):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address)
    view = gymview.attach(address, display=False)
    page = pages(view)
    env.close()
    wait_until(lambda: page.state() == "ended", "the page to hear the run ended")
    click = page.click("pause")
    wait_until(lambda: page.heard(click), "the view to answer the click itself")
    assert page.states()[-1]["message"].startswith("no run is shown")
    view.close()


@pytest.mark.parametrize("publish", ["127.0.0.1", "not an address"])
def test_watch_checks_the_address_before_anything_runs(publish):
    with pytest.raises(ValueError, match="an address is HOST:PORT"):
        gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=publish)


def test_a_page_drawn_scene_is_published_with_its_frames(address, token, pages):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address)  # drawn by the page
    view = gymview.attach(address, display=False)
    page = pages(view)
    env.reset(seed=0)
    while len(page.frames()) < 3:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    assert view._scene["kind"] == env.view._scene["kind"] and page.frames()[-1]["format"] == "scene"
    content, buffers = next(m for m in page.messages if m[0].get("type") == "frame")
    states = len(content.get("frames", [content]))  # a few frames may go in one message
    assert len(np.frombuffer(buffers[0], "<f4")) == 4 * states  # CartPole's state: x, dx, theta, dtheta
    view.close()
    env.close()
    assert os.environ["GYMVIEW_TOKEN"] == token


def test_sb3_watch_callback_publishes_the_training_view(address, token, pages):
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    from gymview.integrations.sb3 import WatchCallback

    venv = make_vec_env("CartPole-v1", 2, env_kwargs={"render_mode": "rgb_array"})
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, device="cpu")
    callback = WatchCallback(display=False, publish=address, run="training", draw="kernel")
    seen = []

    def attach_when_published():
        wait_until(lambda: callback.view is not None, "the callback's view")
        view = gymview.attach(address, run="training", timeout=60, display=False)
        seen.append(view)
        page = pages(view)
        wait_until(lambda: len(page.frames()) > 3, "frames of the training")
        stop = page.click("stop")  # Stop ends learn() cleanly
        wait_until(lambda: page.heard(stop), "the callback to hear Stop")

    attacher = threading.Thread(target=attach_when_published)
    attacher.start()
    model.learn(10**7, callback=callback)
    attacher.join(60)
    assert seen and seen[0].run.name == "training" and model.num_timesteps < 10**7
    callback.view.close()
    seen[0].close()


def test_javascript_never_comes_from_the_run(address, token, pages):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address)
    view = gymview.attach(address, display=False)
    page = pages(view)
    wait_until(lambda: env.view._far_pages.attached(), "the notebook to attach")
    env.view._far_pages.send({"type": "module", "name": "mujoco"}, [b"alert('from the run')"])  # a hostile run
    wait_until(lambda: view.stats["skipped"] >= 1, "the run's module message to be dropped")
    assert all(b"from the run" not in b"".join(buffers) for _, buffers in page.messages)
    view.close()
    env.close()
