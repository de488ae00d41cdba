"""The view's buttons and keys, clicked in Debian's Chromium, act on the kernel while a cell runs:
in JupyterLab and Notebook 7 as ./dev.sh installs them."""

import json

import pytest
from lab import chromium_page, notebook_of, open_notebook, running_server, start_cell, wait_for_output

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
keys_seen = []
def keyed(action):
    keys_seen.append(action)
    return action
run = gymview.play(gym.make("CartPole-v1", render_mode="rgb_array"), keys={"ArrowRight": 1, "ArrowLeft": 0}, noop=0, speed=1.0)
inner_step = run.env.env.step
run.env.env.step = lambda action: inner_step(keyed(action))
"""
RESULTS = "run.wait(timeout=30)\nprint('KEYS', sorted(set(keys_seen)), 'RUN', run.stopped, run.done)"


def cell_text(page, index):
    return page.evaluate("(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].outputArea.node.innerText", index)


def view(page, index):
    return page.locator(".gymview").nth(index)


def wait_for_state(page, index, state):
    page.wait_for_function("([i, state]) => document.querySelectorAll('.gymview')[i]?.dataset.state === state",
                           arg=[index, state], timeout=30_000)


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
        loop = view(page, 0)
        clicked = {}
        for name in ("Pause", "Step", "Play", "Stop"):
            loop.get_by_role("button", name=name).click()
            clicked[name] = float(loop.get_attribute("data-last-click-at")) / 1000  # when the page sent it
            if name == "Pause":
                wait_for_state(page, 0, "paused")
                page.wait_for_timeout(1500)
                # While paused the slider scrubs back through the kept frames.
                slider = loop.get_by_role("slider", name="Replay")
                slider.fill("0")
                page.wait_for_function("() => document.querySelector('.gymview').dataset.replayIndex === '0'",
                                       timeout=30_000)
            elif name == "Step":
                page.wait_for_timeout(1000)
            elif name == "Play":
                wait_for_state(page, 0, "running")
                page.wait_for_timeout(1000)
        # (The kernel's status is no sign: clicks handled on a subshell report busy/idle too.)
        wait_for_output(page, 0, "Stopped")
        assert page.evaluate("() => document.querySelector('.gymview').dataset.notice") == ""
        times = json.loads((root / "times.json").read_text())
        late = [round(t - clicked["Pause"], 3) for t in times if clicked["Pause"] + 0.5 < t < clicked["Step"]]
        assert not late, f"Pause took effect after 0.5 s: {len(late)} steps, from {late[:3]} to {late[-3:]}"
        assert len([t for t in times if clicked["Step"] < t < clicked["Play"]]) == 1, "Step let one step through"
        assert len([t for t in times if clicked["Play"] < t < clicked["Stop"]]) > 100, "Play resumed the loop"
        assert times[-1] < clicked["Stop"] + 0.5, "Stop ended the loop within 0.5 s"
        start_cell(page, 1)
        assert "THREADS []" in wait_for_output(page, 1, "THREADS")

        # gymview.play: the cell ends at once; a person plays with the keyboard, then Stop.
        start_cell(page, 2)
        page.wait_for_function("() => document.querySelectorAll('.gymview.gymview-keyboard').length === 1",
                               timeout=60_000)
        game = page.locator(".gymview.gymview-keyboard")
        game.locator("canvas").click()
        page.keyboard.down("ArrowRight")
        page.wait_for_timeout(700)
        page.keyboard.up("ArrowRight")
        game.get_by_role("button", name="Stop").click()
        start_cell(page, 3)
        text = wait_for_output(page, 3, "RUN")
        assert "KEYS [0, 1]" in text and "RUN True True" in text, text
        errors = [e for e in page.errors if "gymview" in e]
        assert not errors, errors
