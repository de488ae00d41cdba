"""The view's buttons act on a blocking watched loop in a real kernel, while the cell runs.

Clicks are sent the way front-ends send them: a comm message on the shell channel, either plain
(Notebook without subshells, VS Code) or over a kernel subshell (JupyterLab's default).
"""

import json
import time

import pytest

pytestmark = pytest.mark.kernel

BLOCKING_LOOP = """
import time, gymnasium as gym, gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
obs, info = env.reset(seed=0)
times = []
open({comm_file!r}, "w").write(env.view.comm.comm_id)
print("LOOPING", flush=True)
try:
    while time.time() < {deadline}:
        obs, reward, terminated, truncated, info = env.step(0)
        times.append(time.time())
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


@pytest.mark.parametrize("route", ["main shell", "subshell"])
def test_pause_step_play_stop_act_during_a_blocking_loop(kernel, tmp_path, route):
    kernel.run("import json")
    subshell = create_subshell(kernel) if route == "subshell" else None
    path, comm_file = tmp_path / "step-times.json", tmp_path / "comm-id"
    moments = {}

    def steer():  # called once the loop runs; the cell is still busy throughout
        comm_id = comm_file.read_text()
        time.sleep(0.5)
        moments["pause"] = click(kernel, comm_id, "pause", 1, subshell)
        time.sleep(1.5)
        moments["step"] = click(kernel, comm_id, "step", 2, subshell)
        time.sleep(1.0)
        moments["play"] = click(kernel, comm_id, "play", 3, subshell)
        time.sleep(1.0)
        moments["stop"] = click(kernel, comm_id, "stop", 4, subshell)

    code = BLOCKING_LOOP.format(deadline=time.time() + 60, path=str(path), comm_file=str(comm_file))
    result = kernel.execute(code, timeout=120, until_text="LOOPING", on_text=steer)
    assert result.reply["status"] == "error" and result.reply["ename"] == "Stopped", result.reply
    times = json.loads(path.read_text())
    during_pause = [t for t in times if moments["pause"] + 0.5 < t < moments["step"]]
    assert during_pause == [], f"{len(during_pause)} steps ran more than 0.5 s after Pause"
    after_step = [t for t in times if moments["step"] < t < moments["play"]]
    assert len(after_step) == 1, f"Step let {len(after_step)} steps through"
    after_play = [t for t in times if moments["play"] < t < moments["stop"]]
    assert len(after_play) > 100, "Play did not resume the loop"
    assert times[-1] < moments["stop"] + 0.5, "Stop did not end the loop within 0.5 s"
    heard = {click for state in custom_messages(result, "state") for click in state["heard"]}
    assert {"test:1", "test:2", "test:3", "test:4"} <= heard, "each click is answered while the cell runs"
    threads = kernel.run(
        "env.close()\nimport threading\nprint(sorted(t.name for t in threading.enumerate() if t.name.startswith('gymview')))"
    ).stdout
    assert threads.strip() == "[]"


def custom_messages(result, kind):
    for _, msg in result.messages + result.other_comm:
        data = msg["content"].get("data", {}) if msg["header"]["msg_type"] == "comm_msg" else {}
        if data.get("method") == "custom" and data.get("content", {}).get("type") == kind:
            yield data["content"]


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
