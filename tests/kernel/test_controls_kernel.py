"""The view's buttons act on a blocking watched loop in a real kernel, while the cell runs.

Clicks are sent the way front-ends send them: a comm message on the shell channel, either plain
(Notebook without subshells, VS Code) or over a kernel subshell (JupyterLab's default).
"""

import json
import threading
import time

import numpy as np
import pytest
from waiting import wait_until

pytestmark = pytest.mark.kernel

BLOCKING_LOOP = """
import threading, time, numpy as np, gymnasium as gym, gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
obs, info = env.reset(seed=0)
times = []
counter = np.memmap({counter_file!r}, dtype=np.int64, mode="w+", shape=(2,))  # steps taken, loop held: for the test
def report_holding():
    while True:
        counter[1] = env.feed.controls.holding
        time.sleep(0.005)
threading.Thread(target=report_holding, name="test-holding", daemon=True).start()
open({comm_file!r}, "w").write(env.view.comm.comm_id)
print("LOOPING", flush=True)
try:
    while time.time() < {deadline}:
        obs, reward, terminated, truncated, info = env.step(0)
        times.append(time.time())
        counter[0] = len(times)
        if terminated or truncated:
            obs, info = env.reset()
finally:
    with open({path!r}, "w") as f:
        json.dump(times, f)
"""


def click(kernel, comm_id, action, number, subshell=None):
    """Send one button press; returns the time it left."""
    content = {"comm_id": comm_id, "data": {"method": "custom", "content": {
        "type": "control", "action": action, "id": f"test:{number}"}}}
    message = kernel.client.session.msg("comm_msg", content)
    if subshell is not None:
        message["header"]["subshell_id"] = subshell
    sent = time.time()
    kernel.client.shell_channel.send(message)
    return sent


def create_subshell(kernel):
    kernel.client.control_channel.send(kernel.client.session.msg("create_subshell_request", {}))
    while True:
        reply = kernel.client.get_control_msg(timeout=30)
        if reply["header"]["msg_type"] == "create_subshell_reply":
            return reply["content"]["subshell_id"]


def answers_of(answered):
    """An on_message hook that sets ``answered[id]`` when a state message says the kernel applied click ``id``."""
    def hear(msg):
        data = msg["content"].get("data", {}) if msg["header"]["msg_type"] == "comm_msg" else {}
        content = data.get("content", {}) if data.get("method") == "custom" else {}
        if content.get("type") == "state":
            for click_id in content.get("heard", []):
                answered.setdefault(click_id, msg["header"]["date"].timestamp())
    return hear


@pytest.mark.parametrize("route", ["main shell", "subshell"])
def test_pause_step_play_stop_act_during_a_blocking_loop(kernel, tmp_path, route):
    """Each click waits for the kernel's answer; the checks count the loop's steps around the moments
    the kernel applied them (how fast a click lands is measured by benchmarks/controls.py)."""
    kernel.run("import json")
    subshell = create_subshell(kernel) if route == "subshell" else None
    path, comm_file, counter_file = tmp_path / "step-times.json", tmp_path / "comm-id", tmp_path / "steps"
    moments, answered, failures = {}, {}, []

    def steps():
        return int(np.memmap(counter_file, dtype=np.int64, mode="r", shape=(2,))[0])

    def holding():
        return bool(np.memmap(counter_file, dtype=np.int64, mode="r", shape=(2,))[1])

    def press(action, number):
        moments[action] = click(kernel, comm_id, action, number, subshell)
        wait_until(lambda: f"test:{number}" in answered, f"the kernel's answer to {action}")

    def steer():  # the cell is busy throughout
        try:
            press("pause", 1)
            wait_until(holding, "Pause to hold the loop")
            held = steps()
            press("step", 2)
            wait_until(lambda: steps() == held + 1 and holding(), "Step to let one step through, then hold")
            press("play", 3)
            wait_until(lambda: steps() > held + 100, "Play to resume the loop")
            press("stop", 4)
        except BaseException as error:  # reported by the test; Stop ends the cell so it can be
            failures.append(error)
            click(kernel, comm_id, "stop", 99, subshell)

    code = BLOCKING_LOOP.format(deadline=time.time() + 100, path=str(path), comm_file=str(comm_file),
                                counter_file=str(counter_file))
    steering = threading.Thread(target=steer, daemon=True)

    def start_steering():
        nonlocal comm_id
        comm_id = comm_file.read_text()
        steering.start()

    comm_id = None
    result = kernel.execute(code, timeout=150, until_text="LOOPING", on_text=start_steering,
                            on_message=answers_of(answered))
    steering.join(60)
    assert not failures, (failures, sorted(answered))
    assert result.reply["status"] == "error" and result.reply["ename"] == "Stopped", result.reply
    times = json.loads(path.read_text())
    # At most the step in progress when the kernel applied a Pause or Stop finishes after it.
    assert len([t for t in times if answered["test:1"] < t < moments["step"]]) <= 1, "Pause held the loop"
    assert len([t for t in times if moments["step"] < t < moments["play"]]) == 1, "Step let one step through"
    assert len([t for t in times if answered["test:4"] < t]) <= 1, "Stop ended the loop"
    threads = kernel.run(
        "env.close()\nimport threading\nprint(sorted(t.name for t in threading.enumerate() if t.name.startswith('gymview')))"
    ).stdout
    assert threads.strip() == "[]"


def test_an_interrupt_while_waiting_for_play_stops_the_run_at_a_step_boundary(kernel):
    code = """
import gymnasium as gym, gymview
calls = []
def policy(obs):  # says so once the cell has long been waiting in run.wait()
    calls.append(1)
    if len(calls) == 20:
        print("PLAYING", flush=True)
    return 0
run = gymview.play(gym.make("CartPole-v1", render_mode="rgb_array"), policy, speed=4.0)
run.wait()
"""
    reply = kernel.execute(code, until_text="PLAYING", on_text=kernel.manager.interrupt_kernel).reply
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    after = kernel.run(
        "import threading\n"
        "print(run.stopped, run.done, [t.name for t in threading.enumerate() if t.name == 'gymview-play'])"
    ).stdout
    assert after.split() == ["True", "True", "[]"]


def test_play_returns_at_once_and_the_buttons_act_on_it_while_the_kernel_is_idle(kernel, tmp_path):
    comm_file = tmp_path / "comm-id"
    kernel.run(f"""
import gymnasium as gym, gymview
run = gymview.play(gym.make("CartPole-v1", render_mode="rgb_array"), speed="max")
open({str(comm_file)!r}, "w").write(run.view.comm.comm_id)
""")
    comm_id = comm_file.read_text()
    click(kernel, comm_id, "stop", 1)
    assert kernel.run("print(run.wait(timeout=30) == run.results, run.stopped)").stdout.split() == ["True", "True"]
