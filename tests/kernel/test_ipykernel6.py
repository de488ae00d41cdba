"""With ipykernel 6 (a second kernelspec: a venv over this Python with ipykernel<7), the kernel delivers
no browser message while a cell runs: a watched loop fetches its view's clicks itself, leaving queued
cells in order; a cell that never steps hears nothing (the page's notice and cancel keep the late click
from hitting the next run); gymview.play (whose cell has ended) obeys the buttons."""

import threading

import pytest
from conftest import running_kernel
from ipykernel6_spec import ipykernel6_kernelspec
from test_controls_kernel import answers_of, click, wait_until

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


@pytest.fixture(scope="module")
def ipykernel6(tmp_path_factory):
    """The name of a kernelspec whose kernel runs ipykernel 6 (JUPYTER_PATH points at it)."""
    with ipykernel6_kernelspec(tmp_path_factory.mktemp("ipykernel6")) as name:
        yield name


@pytest.fixture
def kernel6(ipykernel6, repo_root, tmp_path):
    with running_kernel(str(repo_root), cwd=str(tmp_path), kernel_name=ipykernel6) as started:
        assert started.run("import ipykernel; print(ipykernel.__version__)").stdout.startswith("6.")
        yield started


LOOP = """
import gymnasium as gym, gymview
import matplotlib.pyplot as plt
%matplotlib inline
plt.figure()  # a figure the cell shows at its end: handling clicks must not end the cell early
order = ["first"]
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
open({comm_file!r}, "w").write(env.view.comm.comm_id)
obs, info = env.reset(seed=0)
steps = 0
print("LOOPING", flush=True)
try:
    while True:
        obs, reward, terminated, truncated, info = env.step(0)
        steps += 1
        if terminated or truncated:
            obs, info = env.reset()
except gymview.Stopped:
    print("STOPPED", env.feed.controls.state, env.view.stats["polls_browser"], plt.get_fignums())
"""


def test_a_watched_loop_hears_the_buttons_while_its_cell_runs_and_queued_cells_keep_their_order(kernel6, tmp_path):
    comm_file = tmp_path / "comm-id"
    answered, failures = {}, []

    def steer():
        try:
            comm_id = comm_file.read_text()
            click(kernel6, comm_id, "pause", 1)
            wait_until(lambda: "test:1" in answered, "the paused loop's answer to Pause")
            kernel6.client.execute("order.append('second')")  # a cell queued behind the running one
            click(kernel6, comm_id, "stop", 2)  # heard by the paused loop itself
        except BaseException as error:
            failures.append(error)
            click(kernel6, comm_file.read_text(), "stop", 99)

    result = kernel6.execute(LOOP.format(comm_file=str(comm_file)), timeout=150, until_text="LOOPING",
                             on_text=lambda: threading.Thread(target=steer, daemon=True).start(),
                             on_message=answers_of(answered))
    assert not failures, failures
    assert result.reply["status"] == "ok" and "STOPPED stopped True [1]" in result.stdout, (result.stdout, result.error)
    assert "test:2" in answered  # both clicks were answered before the cell ended
    assert kernel6.run("print(order)").stdout.strip() == "['first', 'second']"


def test_a_click_during_a_cell_that_never_steps_waits_for_its_end_and_the_pages_cancel_undoes_it(kernel6, tmp_path):
    comm_file = tmp_path / "comm-id"
    kernel6.run(f"""
import time, gymnasium as gym, gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
env.reset(seed=0)
open({str(comm_file)!r}, "w").write(env.view.comm.comm_id)
""")
    result = kernel6.execute("print('SLEEPING', flush=True); time.sleep(3)", until_text="SLEEPING",
                             on_text=lambda: click(kernel6, comm_file.read_text(), "pause", 1))
    heard_during = [m for _, m in result.messages if m["header"]["msg_type"] == "comm_msg"
                    and "test:1" in m["content"]["data"].get("content", {}).get("heard", [])]
    assert not heard_during, "a sleeping cell cannot hear a click"
    # Heard once the cell ended: the next loop would start paused...
    assert kernel6.run("print(env.feed.controls.state)").stdout.strip() == "paused"
    # ...but the page had no answer within 3 s: it showed its notice and sent a cancel (js/tests cover the page).
    cancel = {"comm_id": comm_file.read_text(), "data": {"method": "custom", "content": {
        "type": "control", "action": "cancel", "of": "test:1", "id": "test:2"}}}
    kernel6.client.shell_channel.send(kernel6.client.session.msg("comm_msg", cancel))
    after = kernel6.run("print(env.feed.controls.state)").stdout.strip()
    assert after == "running", "the late Pause would have paused the next loop"


def test_play_obeys_the_buttons(kernel6, tmp_path):
    comm_file = tmp_path / "comm-id"
    kernel6.run(f"""
import gymnasium as gym, gymview
run = gymview.play(gym.make("CartPole-v1", render_mode="rgb_array"), speed="max")
open({str(comm_file)!r}, "w").write(run.view.comm.comm_id)
""")
    click(kernel6, comm_file.read_text(), "stop", 1)
    assert kernel6.run("print(run.wait(timeout=30) == run.results, run.stopped)").stdout.split() == ["True", "True"]
