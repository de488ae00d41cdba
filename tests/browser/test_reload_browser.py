"""The view survives what happens to pages while a cell runs, in JupyterLab and Notebook 7 through
Debian's Chromium: a reload, a second tab (each page its own client: frames, acks, buttons), a
websocket that drops and reconnects, a reload while gymview.play() runs, and a kernel restart (the
last frame stays, with a status line that says so)."""

import json
import time

import pytest
from ipykernel6_spec import ipykernel6_kernelspec
from lab import canvas_luminance_spread, chromium_page, notebook_of, open_notebook, running_server, start_cell

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BLOCKING = """
import os, gymnasium as gym, gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
obs, info = env.reset(seed=0)
steps = 0
while not os.path.exists("stop"):
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    steps += 1
    if terminated or truncated:
        obs, info = env.reset()
    if steps % 500 == 0:
        open("steps", "w").write(str(steps))
env.close()
print("LOOP ENDED")
"""
PLAY = """
import gymnasium as gym, gymview
run = gymview.play(gym.make("CartPole-v1", render_mode="rgb_array"), speed=1.0)
"""


def received(page):
    return page.evaluate("() => Number(document.querySelector('.gymview')?.dataset.framesReceived || 0)")


def wait_for_moving_frames(page, more_than=3, timeout_ms=60_000):
    """Wait until this page's view has received frames; returns the seconds it took."""
    started = time.monotonic()
    page.wait_for_function("(n) => Number(document.querySelector('.gymview')?.dataset.framesReceived || 0) > n",
                           arg=more_than, timeout=timeout_ms)
    return time.monotonic() - started


def state_of(page):
    return page.evaluate("() => document.querySelector('.gymview')?.dataset.state")


def wait_for_state(page, state):
    page.wait_for_function("(state) => document.querySelector('.gymview')?.dataset.state === state",
                           arg=state, timeout=60_000)


def steps_written(root):
    path = root / "steps"
    return int(path.read_text() or 0) if path.exists() else 0


def save(page):
    """Save the notebook, as autosave does: the view's output is in the file a new page opens."""
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)


def save_and_reload(page):
    save(page)
    page.reload()
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)


def widget_errors(page):
    return [e for e in page.errors if "gymview" in e]


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_a_reload_and_a_second_tab_get_moving_frames_while_the_cell_runs(tmp_path, app):
    root = tmp_path / "root"
    root.mkdir()
    (root / "reload.ipynb").write_text(json.dumps(notebook_of([BLOCKING])))
    with running_server(root, app) as server, chromium_page() as page:
        try:
            open_notebook(page, server, "reload.ipynb")
            start_cell(page, 0)
            wait_for_moving_frames(page)

            # A second tab: its own client of the same view, and the buttons act from either tab.
            save(page)
            second = page.context.browser.new_page(viewport={"width": 1280, "height": 1600})  # a second window
            second.errors = []
            second.on("pageerror", lambda error: second.errors.append(str(error)))
            second.goto(server.notebook_url("reload.ipynb"))
            took = wait_for_moving_frames(second)
            print(f"{app}: second tab, first frames after {took:.1f} s")
            second.locator(".gymview").get_by_role("button", name="Pause").click()
            wait_for_state(page, "paused")
            page.locator(".gymview").get_by_role("button", name="Play").click()
            wait_for_state(second, "running")
            first_tab = received(page)
            wait_for_moving_frames(page, first_tab + 3)
            wait_for_moving_frames(second, received(second) + 3)
            assert not widget_errors(second), second.errors
            second.close()

            # A reload: the page asks for everything again while the cell still runs.
            steps_before = steps_written(root)
            save_and_reload(page)
            took = wait_for_moving_frames(page)
            print(f"{app}: reload, first frames after {took:.1f} s")
            assert steps_written(root) > steps_before  # the loop never stopped
            assert not (root / "stop").exists()

            # The websocket drops and reconnects: frames resume without a reload.
            before = received(page)
            page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.reconnect()")
            wait_for_moving_frames(page, before + 5)
            assert canvas_luminance_spread(page) > 0
            assert not widget_errors(page), page.errors
        finally:
            (root / "stop").write_text("")


@pytest.fixture(scope="module")
def ipykernel6(tmp_path_factory):
    with ipykernel6_kernelspec(tmp_path_factory.mktemp("ipykernel6")) as name:
        yield name


def test_on_ipykernel6_a_reload_gets_moving_frames_while_the_cell_runs(tmp_path, ipykernel6):
    """There the watched loop answers the page, when it looks for its view's messages."""
    root = tmp_path / "root"
    root.mkdir()
    notebook = notebook_of([BLOCKING])
    notebook["metadata"]["kernelspec"].update(name=ipykernel6, display_name="ipykernel 6")
    (root / "reload6.ipynb").write_text(json.dumps(notebook))
    with running_server(root) as server, chromium_page() as page:
        try:
            open_notebook(page, server, "reload6.ipynb")
            start_cell(page, 0)
            wait_for_moving_frames(page)
            steps_before = steps_written(root)
            save_and_reload(page)
            took = wait_for_moving_frames(page)
            print(f"ipykernel 6: reload, first frames after {took:.1f} s")
            assert steps_written(root) > steps_before
            page.locator(".gymview").get_by_role("button", name="Pause").click()
            wait_for_state(page, "paused")
            assert not widget_errors(page), page.errors
        finally:
            (root / "stop").write_text("")


def test_a_kernel_restart_leaves_the_last_frame_and_says_so(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "restart.ipynb").write_text(json.dumps(notebook_of([BLOCKING])))
    with running_server(root) as server, chromium_page() as page:
        open_notebook(page, server, "restart.ipynb")
        start_cell(page, 0)
        wait_for_moving_frames(page)
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
        page.wait_for_function("() => document.querySelector('.gymview')?.dataset.kernelGone === 'true'",
                               timeout=60_000)
        status = page.evaluate("() => document.querySelector('.gymview .gymview-status').textContent")
        assert status == "kernel restarted or stopped: run the cell again"
        assert canvas_luminance_spread(page) > 0  # the last frame stays
        assert page.locator(".gymview").get_by_role("button", name="Pause").is_disabled()
        assert not widget_errors(page), page.errors


def test_a_reload_while_play_runs_brings_the_view_back(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "play.ipynb").write_text(json.dumps(notebook_of([PLAY])))
    with running_server(root) as server, chromium_page() as page:
        open_notebook(page, server, "play.ipynb")
        start_cell(page, 0)
        wait_for_moving_frames(page)
        save_and_reload(page)
        took = wait_for_moving_frames(page)
        print(f"play(): reload, first frames after {took:.1f} s")
        page.locator(".gymview").get_by_role("button", name="Stop").click()
        wait_for_state(page, "stopped")
        assert not widget_errors(page), page.errors
