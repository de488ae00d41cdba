"""The view's buttons and keys, clicked in Debian's Chromium, act on the kernel while a cell runs:
in JupyterLab and Notebook 7 as ./dev.sh installs them."""

import json
import re
import time

import pytest
from lab import (
    chromium_page,
    notebook_of,
    open_notebook,
    running_server,
    start_cell,
    wait_for_output,
    wait_for_reply,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BLOCKING = """
import json, time, threading, gymnasium as gym, gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
obs, info = env.reset(seed=0)
times = []
try:
    while True:
        obs, reward, terminated, truncated, info = env.step(0)
        times.append(time.time())
        if terminated or truncated:
            obs, info = env.reset()
finally:
    json.dump(times, open("times.json", "w"))
"""
AFTER = """
env.close()
print("THREADS", sorted(t.name for t in threading.enumerate() if t.name.startswith("gymview")))
"""
PLAY = """
actions_seen = []
def keyed(action):
    if not actions_seen or actions_seen[-1] != action:  # each change of action, shown under the picture
        actions_seen.append(action)
        run.env.feed.report(f"ACTIONS {actions_seen}")
    return action
run = gymview.play(gym.make("CartPole-v1", render_mode="rgb_array"), keys={"ArrowRight": 1, "ArrowLeft": 0}, noop=0, speed=1.0)
inner_step = run.env.env.step
run.env.env.step = lambda action: inner_step(keyed(action))
"""
RESULTS = "run.wait(timeout=30)\nprint('KEYS', sorted(set(actions_seen)), 'RUN', run.stopped, run.done)"


def cell_text(page, index):
    return page.evaluate("(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].outputArea.node.innerText", index)


def view(page, index):
    return page.locator(".gymview").nth(index)


def wait_for_state(page, index, state):
    page.wait_for_function("([i, state]) => document.querySelectorAll('.gymview')[i]?.dataset.state === state",
                           arg=[index, state], timeout=30_000)


def click_and_wait_for_answer(page, index, name):
    """Click the button, wait until the kernel says it applied the click; return when the page sent it
    and when the test saw the answer (one clock: page, kernel and test run on this machine)."""
    target = view(page, index)
    target.get_by_role("button", name=name).click()
    sent = float(target.get_attribute("data-last-click-at")) / 1000
    page.wait_for_function("(i) => document.querySelectorAll('.gymview')[i].dataset.unanswered === '0'",
                           arg=index, timeout=60_000)
    notice = target.get_attribute("data-notice")
    assert notice == "", f"the page gave up on {name}: {notice}"
    return sent, time.time()


def frames_received(page, index):
    return int(view(page, index).get_attribute("data-frames-received"))


def wait_for_frames(page, index, more_than):
    page.wait_for_function("([i, n]) => Number(document.querySelectorAll('.gymview')[i].dataset.framesReceived) > n",
                           arg=[index, more_than], timeout=60_000)


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_buttons_steer_a_blocking_loop_and_a_play_run(tmp_path, app):
    root = tmp_path / "root"
    root.mkdir()
    (root / "controls.ipynb").write_text(json.dumps(notebook_of([BLOCKING, AFTER, PLAY, RESULTS])))
    with running_server(root, app) as server, chromium_page() as page:
        open_notebook(page, server, "controls.ipynb")
        start_cell(page, 0)
        page.wait_for_function("() => Number(document.querySelector('.gymview')?.dataset.framesDrawn || 0) > 5",
                               timeout=60_000)
        # Each click waits for the kernel's answer, and each check counts the loop's steps around the
        # moments the kernel applied the clicks: how fast a click lands is measured by
        # benchmarks/controls.py, never asserted here.
        loop = view(page, 0)
        _, paused = click_and_wait_for_answer(page, 0, "Pause")
        wait_for_state(page, 0, "paused")
        # While paused the slider scrubs back through the kept frames.
        loop.get_by_role("slider", name="Replay").fill("0")
        page.wait_for_function("() => document.querySelector('.gymview').dataset.replayIndex === '0'",
                               timeout=30_000)
        before_step = frames_received(page, 0)
        stepped, _ = click_and_wait_for_answer(page, 0, "Step")
        wait_for_frames(page, 0, before_step)  # the paused loop shows the state after its one step
        resumed, _ = click_and_wait_for_answer(page, 0, "Play")
        wait_for_state(page, 0, "running")
        wait_for_frames(page, 0, frames_received(page, 0) + 3)
        _, stopped = click_and_wait_for_answer(page, 0, "Stop")
        # (The kernel's status is no sign: clicks handled on a subshell report busy/idle too.)
        wait_for_output(page, 0, "Stopped")
        assert page.evaluate("() => document.querySelector('.gymview').dataset.notice") == ""
        times = json.loads((root / "times.json").read_text())
        # At most the step in progress when the kernel applied a Pause or Stop finishes after it.
        assert len([t for t in times if paused < t < stepped]) <= 1, "Pause held the loop while the cell ran"
        assert len([t for t in times if stepped < t < resumed]) == 1, "Step let exactly one step through"
        assert len([t for t in times if resumed < t]) > 1, "Play resumed the loop"
        assert len([t for t in times if stopped < t]) <= 1, "Stop ended the loop"
        wait_for_reply(page, 0)  # Stop raised in cell 0: a cell started before the kernel's answer is aborted
        start_cell(page, 1)
        assert "THREADS []" in wait_for_output(page, 1, "THREADS")

        # gymview.play: the cell ends at once; a person plays with the keyboard, then Stop.
        start_cell(page, 2)
        page.wait_for_function("() => document.querySelectorAll('.gymview.gymview-keyboard').length === 1",
                               timeout=60_000)
        game = page.locator(".gymview.gymview-keyboard")
        game.locator("canvas.gymview-canvas").click()
        page.keyboard.down("ArrowRight")
        page.wait_for_function("() => document.querySelector('.gymview.gymview-keyboard').dataset.notice"
                               ".endsWith('1]')", timeout=60_000)
        page.keyboard.up("ArrowRight")
        page.wait_for_function("() => document.querySelector('.gymview.gymview-keyboard').dataset.notice"
                               ".endsWith('1, 0]')", timeout=60_000)
        page.keyboard.press("Escape")  # leaves keyboard play: the view lets go of focus (and sends no key)
        page.wait_for_function("() => !document.querySelector('.gymview.gymview-keyboard').contains(document.activeElement)",
                               timeout=60_000)
        game.get_by_role("button", name="Stop").click()
        start_cell(page, 3)
        text = wait_for_output(page, 3, "RUN")
        assert "KEYS [0, 1]" in text and "RUN True True" in text, text
        errors = [e for e in page.errors if "gymview" in e]
        assert not errors, errors


def test_a_click_lost_on_the_way_to_the_kernel_still_lands(tmp_path):
    """The page's first Step message is dropped between browser and server (comms over a subshell lose one
    now and then): the page sends it again, the kernel applies it once, and the paused loop takes one step."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "controls.ipynb").write_text(json.dumps(notebook_of([BLOCKING])))
    dropped, drop_next_step = [], []

    def route_kernel_socket(ws):
        server = ws.connect_to_server()

        def from_page(message):
            raw = message if isinstance(message, bytes) else message.encode()
            if drop_next_step and b'"action":"step"' in raw:
                dropped.append(drop_next_step.pop())  # lost on the way
                return
            server.send(message)

        ws.on_message(from_page)

    with running_server(root, "lab") as server, chromium_page() as page:
        page.route_web_socket(re.compile(r"/api/kernels/[^/]+/channels"), route_kernel_socket)
        open_notebook(page, server, "controls.ipynb")
        start_cell(page, 0)
        page.wait_for_function("() => Number(document.querySelector('.gymview')?.dataset.framesDrawn || 0) > 5",
                               timeout=60_000)
        click_and_wait_for_answer(page, 0, "Pause")
        wait_for_state(page, 0, "paused")
        before_step = frames_received(page, 0)
        drop_next_step.append("step")
        stepped, _ = click_and_wait_for_answer(page, 0, "Step")  # answered: the page sent it again
        assert dropped == ["step"]
        wait_for_frames(page, 0, before_step)
        resumed, _ = click_and_wait_for_answer(page, 0, "Stop")
        wait_for_output(page, 0, "Stopped")
        times = json.loads((root / "times.json").read_text())
        assert len([t for t in times if stepped < t < resumed]) == 1, "the Step sent twice let exactly one step through"
