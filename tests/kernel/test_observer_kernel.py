"""A view is an observer, in a real kernel: nothing that goes wrong in showing frames raises into a watched
env's ``step`` or ``reset``. The loop runs on, the user gets one warning of each kind (on the cell's stderr)
and the status line says what happened, and frames come again from a new helper process."""

import json

import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

# Kills the view's helper process (as the OOM killer would) once ``frames`` frames went out since the last kill,
# ``kills`` times, while ``step()`` runs on; then steps until ``frames`` more went out after the last kill. Bounded
# by steps, never by time: a loaded machine only makes it slower.
KILLER = """
import json, os, signal, psutil, gymnasium as gym, numpy as np, gymview

def helpers():  # alive: one killed is not reaped here (the OOM killer reaps nothing either)
    return [p for p in psutil.Process().children() if p.status() != psutil.STATUS_ZOMBIE
            and "encoder_child" in " ".join(p.cmdline())]

def sent(view):
    return view.stats["frames_sent"]

def run(view, step, kills=2, frames=5, max_steps=3_000_000):
    killed, since, steps = [], sent(view), 0
    while steps < max_steps and (len(killed) < kills or sent(view) < since + frames):
        step()
        steps += 1
        if steps % 64 == 0 and len(killed) < kills and sent(view) >= since + frames:
            for helper in helpers():
                helper.send_signal(signal.SIGKILL)
                killed.append(helper.pid)
            since = sent(view)
    return {"steps": steps, "killed": len(set(killed)), "after_last_kill": sent(view) - since,
            "helpers_now": len(helpers())}
"""

SINGLE = """
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), fps=60, draw="kernel")
env.reset(seed=0)
def step():
    if any(env.step(env.action_space.sample())[2:4]):
        env.reset()
result = run(env.view, step)
env.close()
print(json.dumps(result))
"""

VECTOR = """
envs = gymview.watch(gym.make_vec("CartPole-v1", num_envs=3, render_mode="rgb_array"), fps=60, draw="kernel")
envs.reset(seed=0)
result = run(envs.view, lambda: envs.step(envs.action_space.sample()), kills=1)
envs.close()
print(json.dumps(result))
"""

SB3 = """
from stable_baselines3.common.env_util import make_vec_env
venv = gymview.watch(make_vec_env("CartPole-v1", 2, env_kwargs={"render_mode": "rgb_array"}), fps=60, draw="kernel")
venv.reset()
result = run(venv.view, lambda: venv.step(np.array([venv.action_space.sample() for _ in range(2)])), kills=1)
venv.close()
print(json.dumps(result))
"""

PETTINGZOO = """
from pettingzoo.classic import connect_four_v3
game = gymview.watch(connect_four_v3.env(render_mode="rgb_array"), fps=60)
game.reset(seed=0)
def step():
    agent = game.agent_selection
    observation, reward, termination, truncation, info = game.last()
    if termination or truncation:
        game.reset()
        return
    game.step(game.action_space(agent).sample(observation["action_mask"]))
result = run(game.view, step, kills=1)
game.close()
print(json.dumps(result))
"""


def warnings_of(execution):
    """The gymview warnings the cell printed on stderr."""
    text = "".join(
        m["content"]["text"]
        for m in execution.of_type("stream")
        if m["content"]["name"] == "stderr"
    )
    return [line for line in text.splitlines() if "gymview: the live view lost a frame" in line], text


def status_lines(execution):
    messages = []
    for m in execution.of_type("comm_msg"):
        content = m["content"]["data"].get("content", {})
        if content.get("type") == "state" and content.get("message"):
            messages.append(content["message"])
    return messages


def killed_run(kernel, cell, kills):
    """Run ``cell`` (which kills its view's helper ``kills`` times); check that the loop ran on, that frames came
    after the last kill, and that one warning (however many kills) named the signal. Its execution."""
    kernel.run(KILLER)
    execution = kernel.execute(cell, timeout=600)
    assert execution.error is None, execution.error
    result = json.loads(execution.stdout.strip().splitlines()[-1])
    assert result["killed"] == kills and result["after_last_kill"] >= 5, result
    told, stderr = warnings_of(execution)
    assert len(told) == 1 and "killed by SIGKILL" in stderr, stderr
    return execution


def test_a_helper_killed_twice_mid_loop_never_stops_the_loop_and_frames_come_again(kernel):
    execution = killed_run(kernel, SINGLE, kills=2)
    statuses = status_lines(execution)
    assert any("killed by SIGKILL" in message for message in statuses), statuses
    assert any("2 times so far" in message for message in statuses), statuses


@pytest.mark.parametrize("cell", [VECTOR, SB3, PETTINGZOO], ids=["gymnasium-vector", "sb3-vecenv", "pettingzoo"])
def test_every_way_of_watching_runs_on_when_its_helper_is_killed(kernel, cell):
    killed_run(kernel, cell, kills=1)


PAINTER_FAILS = """
import json, gymnasium as gym, numpy as np, gymview
gym.logger.min_level = 40  # CartPole's warning for steps past its end
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), fps=60, draw="kernel")
env.reset(seed=0)
steps = 0

def step_until(frames):
    global steps
    while env.view.stats["frames_sent"] < frames and steps < 3_000_000:
        steps += 1
        if any(env.step(env.action_space.sample())[2:4]):
            env.reset()

step_until(5)  # frames flow
env.unwrapped.state = np.array([np.inf, 0.0, 0.0, 0.0])  # a simulation that blew up: its state cannot be drawn
for _ in range(200_000):
    env.step(0)  # CartPole steps on past its end, in that state
failed = env.view.stats["frames_sent"]
env.reset(seed=1)
step_until(failed + 5)  # and once it can be drawn, frames come again
env.close()
print(json.dumps({"failed": failed, "after": env.view.stats["frames_sent"]}))
"""


def test_a_state_the_painter_cannot_draw_is_told_once_and_frames_come_again(kernel):
    execution = kernel.execute(PAINTER_FAILS, timeout=600)
    assert execution.error is None, execution.error
    result = json.loads(execution.stdout.strip().splitlines()[-1])
    assert result["after"] >= result["failed"] + 5, result
    told, stderr = warnings_of(execution)
    assert len(told) == 1 and "states must be finite" in stderr and "Traceback" in stderr, stderr
    statuses = status_lines(execution)
    assert any("states must be finite" in message for message in statuses), statuses[-3:]
    # tried at the frame rate (60 a second), told on the status line as often: never at each of the 200,000 steps
    assert len(statuses) < 5_000, len(statuses)


COMM_CLOSED = """
import gymnasium as gym, gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), fps=60)
env.reset(seed=0)
for _ in range(3000):
    if any(env.step(env.action_space.sample())[2:4]):
        env.reset()
print(env.view.model_id)
"""

AFTER_CLOSE = """
for _ in range(20_000):
    if any(env.step(env.action_space.sample())[2:4]):
        env.reset()
env.close()
print("stepped on")
"""


def test_a_page_that_closed_the_views_comm_never_stops_the_loop(kernel):
    comm_id = kernel.run(COMM_CLOSED).stdout.strip().splitlines()[-1]
    # what a front-end sends when the widget's output goes (a cleared cell, a closed notebook)
    message = kernel.client.session.msg("comm_close", {"comm_id": comm_id, "data": {}})
    kernel.client.shell_channel.send(message)
    execution = kernel.execute(AFTER_CLOSE)
    assert execution.error is None, execution.error
    assert "stepped on" in execution.stdout
    assert warnings_of(execution)[0] == []
