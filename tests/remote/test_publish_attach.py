"""A script publishes its live view; a notebook attaches: frames, buttons, runs listed and chosen, the
ends of either side. The notebook here is this process (an AttachedView outside a kernel, its page a
stand-in); tests/kernel and tests/browser do the same from a real kernel and from JupyterLab."""

import os
import signal
import subprocess
import sys
import threading

import gymnasium as gym
import numpy as np
import pytest
from published_runs import REPO
from waiting import wait_until

import gymview
import gymview.remote.attached
from gymview.live.pacing.throttle import MessageBudget
from gymview.remote import runs_at
from gymview.remote.address import parse_address
from gymview.remote.attached import AttachedView
from gymview.remote.hub import SILENT_SECONDS
from gymview.remote.tokens import token_file

pytestmark = pytest.mark.slow


def step(env, steps=None, until=None):
    """Step ``env`` (random actions, reset at episode ends) ``steps`` times, or until ``until()``."""
    count = 0
    while (until is None and count < steps) or (until is not None and not until()):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        count += 1
        if terminated or truncated:
            env.reset()


def steering(page, script, action, **fields):
    """Click and wait until the run says it applied the click."""
    click = page.click(action, **fields)
    wait_until(lambda: page.heard(click), f"the run to apply {action}")


def test_a_watched_script_makes_no_frame_until_a_notebook_attaches_and_none_after(address, token, pages):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address, draw="kernel")
    env.reset(seed=0)
    step(env, 2000)
    assert env.view.stats["frames_rendered"] == 0 and not env.view.stats["active"]
    view = gymview.attach(address, display=False)
    page = pages(view)
    step(env, until=lambda: len(page.frames()) >= 5)
    assert page.frames()[0]["format"] == "jpeg" and view.stats["relayed"] >= 5
    view.close()
    run = env.view._far_pages
    wait_until(lambda: not run.attached(), "the hub to hear the notebook leave")
    made = env.view.stats["frames_rendered"]
    step(env, 2000)
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


def test_a_stop_sent_to_a_run_that_ends_before_its_state_comes_back_is_heard(address, token, scripts, pages):
    script = scripts("--publish", address)
    view = gymview.attach(address, timeout=60, display=False)
    page = pages(view)
    wait_until(lambda: len(page.frames()) > 3, "frames from the script")
    os.kill(script.process.pid, signal.SIGSTOP)  # the run hears nothing more and says nothing more
    stop = page.click("stop")
    script.kill()
    wait_until(lambda: page.state() == "ended", "the page to say the run is gone")
    assert page.heard(stop), "the run ended: the page does not say its Stop went unheard"


def test_the_run_s_states_reach_the_page_while_the_notebook_s_message_budget_is_spent(address, token, scripts, pages,
                                                                                      monkeypatch):
    monkeypatch.setattr(gymview.remote.attached, "PROCESS_BUDGET", MessageBudget(rate=1e-9, burst=0))
    script = scripts("--publish", address)
    view = gymview.attach(address, timeout=60, display=False)
    page = pages(view)
    wait_until(lambda: view.stats["skipped"] > 3, "frames over the budget")
    steering(page, script, "pause")
    assert page.state() == "paused" and not page.frames()


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


def test_a_script_prints_the_token_it_made_once_and_an_unchanged_script_publishes_with_gymview_publish(
        address, scripts, monkeypatch, pages):
    monkeypatch.delenv("GYMVIEW_TOKEN", raising=False)
    script = scripts(env={"GYMVIEW_PUBLISH": address})  # no --publish: the environment says where
    wait_until(lambda: "gymview: publishing" in script.output(), "the script to print how to attach")
    made, publishing = [line for line in script.output().splitlines() if line.startswith("gymview:")][:2]
    token = made.split("token='")[1].split("'")[0]
    assert f"runs at {address} publish with a new token, kept in {token_file(address)}" in made
    assert publishing.endswith(f"at {address}: gymview.attach('{address}')") and token not in publishing
    view = gymview.attach(address, timeout=60, display=False)  # on the run's machine: its token file
    page = pages(view)
    wait_until(lambda: len(page.frames()) > 3, "frames from the unchanged script")
    view.close()
    with pytest.raises(PermissionError, match="did not prove it knows this token"):
        gymview.attach(address, token="not-" + token, timeout=60, display=False)
    assert script.output().count(token) == 1, "the token is printed once"


def test_nothing_listening_says_where_to_look(address, token):
    with pytest.raises(TimeoutError, match=r"nothing answered at .* is a script publishing there.*ssh -N -L"):
        gymview.attach(address, timeout=1.5, display=False)


def test_a_process_that_stopped_answering_while_attach_waited_is_named_in_the_error(address, token):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address, run="a", display=False)
    view = AttachedView(parse_address(address), token, run="b")
    try:
        wait_until(lambda: view.runs, "the list of runs")
        env.close()  # the only run there ends, and its process stops listening
        with pytest.raises(TimeoutError, match=r"no run 'b' .* stopped answering \d+ s ago .* listed last: 'a'"):
            view.wait_for_run(SILENT_SECONDS + 1)
    finally:
        view.close()


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
    step(env, until=lambda: len(page.frames()) >= 3)
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


def test_frames_travel_as_h264_to_a_page_that_decodes_it(address, token, scripts, pages):
    scripts("--publish", address)
    view = gymview.attach(address, timeout=60, display=False)
    page = pages(view, codecs=("h264",))  # as Chromium's page says: it decodes H.264
    wait_until(lambda: len([f for f in page.frames() if f["format"] == "h264"]) > 3, "H.264 frames at the page")
    content, buffers = next((c, b) for c, b in page.messages if c.get("format") == "h264")
    assert content["key"] and content["codec"].startswith("avc1.") and bytes(buffers[0][:4]) == b"\x00\x00\x00\x01"
    view.close()


def test_an_address_other_machines_may_reach_is_taken_only_written_out_and_said(capsys):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish="192.0.2.1:5599")  # not here
    assert "publishing on 192.0.2.1:5599, which other machines may reach" in capsys.readouterr().err
    env.close()
    gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish="5598").close()
    assert "other machines" not in capsys.readouterr().err  # a port alone: this machine only


def test_a_page_that_opens_after_the_run_ended_gets_its_last_frame_and_why(address, token, pages):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address, draw="kernel")
    view = gymview.attach(address, display=False)
    page = pages(view)
    env.reset(seed=0)
    step(env, until=lambda: len(page.frames()) >= 3)
    env.close()
    wait_until(lambda: page.state() == "ended", "the page to hear the run ended")
    reopened = pages(view, client="reopened")  # the notebook's output rendered again (a still image beside it)
    wait_until(lambda: reopened.frames() and reopened.states(), "the reopened page to get a frame and the state")
    assert reopened.frames()[-1]["format"] == "jpeg" and reopened.states()[-1]["state"] == "ended"
    assert "ended; the view shows it again" in reopened.states()[-1]["message"]
    view.close()


NOTEBOOK = """
import sys, gymview
from published_runs import FakePage
view = gymview.attach(sys.argv[1], timeout=60, display=False)
page = FakePage(view)
print("ATTACHED", flush=True)
sys.stdin.readline()
"""


def test_a_notebook_that_goes_away_without_a_word_is_counted_gone_and_gets_no_more_frames(address, token):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address, draw="kernel")
    env.reset(seed=0)
    notebook = subprocess.Popen([sys.executable, "-c", NOTEBOOK, address], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": f"{REPO}:{REPO / 'tests' / 'helpers'}"})
    try:
        assert notebook.stdout.readline().startswith("ATTACHED")
        wait_until(lambda: step(env, 100) or env.view.stats["frames_sent"] > 3, "frames to the notebook")
        notebook.kill()  # no goodbye: its kernel died, or the laptop slept, or the tunnel closed
        notebook.wait(30)
        run = env.view._far_pages
        wait_until(lambda: step(env, 100) or not run.attached(), "the run to count the silent notebook gone")
        made = env.view.stats["frames_rendered"]
        step(env, 2000)
        assert env.view.stats["frames_rendered"] == made, "no frame is made for nobody"
    finally:
        notebook.kill()
        notebook.wait(30)
    env.close()
