"""The view survives what happens to pages while a cell runs, in JupyterLab and Notebook 7 through
Debian's Chromium: a reload, a second tab (each page its own client: frames, acks, buttons), a
websocket that drops and reconnects, a reload while gymview.play() runs, and a kernel restart (the
last frame stays, with a status line that says so)."""

import json
import time
from contextlib import contextmanager

import pytest
from ipykernel6_spec import ipykernel6_kernelspec
from lab import canvas_luminance_spread, chromium_page, notebook_of, open_notebook, running_server, start_cell

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BLOCKING = """
import os, gymnasium as gym, gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), draw=DRAW)
obs, info = env.reset(seed=0)
steps = 0
while not os.path.exists("stop"):
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    steps += 1
    if terminated or truncated:
        obs, info = env.reset()
    if steps % 500 == 0:  # written whole: the test never reads a file just emptied for rewriting
        with open("steps.tmp", "w") as out:
            out.write(str(steps))
        os.replace("steps.tmp", "steps")
env.close()
print("LOOP ENDED")
"""
NOTEBOOK = "view.ipynb"
PLAY = """
import gymnasium as gym, gymview
run = gymview.play(gym.make("CartPole-v1", render_mode="rgb_array"), speed=1.0)
"""


def received(page):
    return page.evaluate("() => Number(document.querySelector('.gymview')?.dataset.framesReceived || 0)")


def wait_for_moving_frames(page, more_than=3, timeout_ms=60_000):
    """Wait until this page's view has received more than ``more_than`` frames."""
    page.wait_for_function("(n) => Number(document.querySelector('.gymview')?.dataset.framesReceived || 0) > n",
                           arg=more_than, timeout=timeout_ms)


def wait_for_video(page, drawn_as="h264", timeout_ms=30_000):
    """Wait until this page draws the H.264 stream (codec="auto"; it joined it from a key frame), or with
    ``drawn_as="scene"`` the frames it draws itself, with no decode error."""
    page.wait_for_function("(format) => { const el = document.querySelector('.gymview');"
                           " return el?.dataset.format === format && el.dataset.decodeErrors === '0'; }",
                           arg=drawn_as, timeout=timeout_ms)


def blocking(draw="kernel"):
    """The blocking loop's cell, its frames drawn as ``draw`` says (``watch(draw=...)``)."""
    return BLOCKING.replace("DRAW", repr(draw))


def state_of(page):
    return page.evaluate("() => document.querySelector('.gymview')?.dataset.state")


def wait_for_state(page, state):
    page.wait_for_function("(state) => document.querySelector('.gymview')?.dataset.state === state",
                           arg=state, timeout=60_000)


def steps_written(root):
    path = root / "steps"
    return int(path.read_text()) if path.exists() else 0


def save(page):
    """Save the notebook, as autosave does: the view's output is in the file a new page opens."""
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)


def save_and_reload(page):
    """Save, reload and wait for the app; returns the time.monotonic() at which the reload began."""
    save(page)
    started = time.monotonic()
    page.reload()
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)
    return started


def widget_errors(page):
    return [e for e in page.errors if "gymview" in e]


@contextmanager
def running_view(tmp_path, cell, app="lab", kernel_name=None):
    """A server for a notebook of ``cell`` (in ``kernel_name``'s kernel), its page open, the cell
    started and its view showing frames; yields (folder, server, page). The blocking loop ends after."""
    root = tmp_path / "root"
    root.mkdir()
    notebook = notebook_of([cell])
    if kernel_name is not None:
        notebook["metadata"]["kernelspec"].update(name=kernel_name, display_name=kernel_name)
    (root / NOTEBOOK).write_text(json.dumps(notebook))
    with running_server(root, app) as server, chromium_page() as page:
        try:
            open_notebook(page, server, NOTEBOOK)
            start_cell(page, 0)
            wait_for_moving_frames(page)
            yield root, server, page
        finally:
            (root / "stop").write_text("")


@pytest.mark.parametrize("app, draw", [("lab", "kernel"), ("notebook", "kernel"), ("lab", "page")])
def test_a_reload_and_a_second_tab_get_moving_frames_while_the_cell_runs(tmp_path, app, draw):
    drawn_as = "scene" if draw == "page" else "h264"
    with running_view(tmp_path, blocking(draw), app) as (root, server, page):
        # A second tab: its own client of the same view, and the buttons act from either tab.
        save(page)
        second = page.context.browser.new_page(viewport={"width": 1280, "height": 1600})  # a second window
        second.errors = []
        second.on("pageerror", lambda error: second.errors.append(str(error)))
        opened = time.monotonic()
        second.goto(server.notebook_url(NOTEBOOK))
        wait_for_moving_frames(second)
        print(f"{app}: second tab, moving frames {time.monotonic() - opened:.1f} s after it opened")
        wait_for_video(second, drawn_as)
        second.locator(".gymview").get_by_role("button", name="Pause").click()
        wait_for_state(page, "paused")
        page.locator(".gymview").get_by_role("button", name="Play").click()
        wait_for_state(second, "running")
        first_tab = received(page)
        wait_for_moving_frames(page, first_tab + 3)
        wait_for_moving_frames(second, received(second) + 3)
        wait_for_video(page, drawn_as)  # the first tab went on decoding through the second's key frame
        assert not widget_errors(second), second.errors
        second.close()

        # A reload: the page asks for everything again while the cell still runs.
        steps_before = steps_written(root)
        reloaded = save_and_reload(page)
        wait_for_moving_frames(page)
        print(f"{app}: reload, moving frames {time.monotonic() - reloaded:.1f} s after it began")
        wait_for_video(page, drawn_as)
        assert steps_written(root) > steps_before  # the loop never stopped
        assert not (root / "stop").exists()

        # The websocket drops and reconnects: frames resume without a reload.
        before = received(page)
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.reconnect()")
        wait_for_moving_frames(page, before + 5)
        wait_for_video(page, drawn_as)
        assert canvas_luminance_spread(page) > 0
        assert not widget_errors(page), page.errors


@pytest.fixture(scope="module")
def ipykernel6(tmp_path_factory):
    with ipykernel6_kernelspec(tmp_path_factory.mktemp("ipykernel6")) as name:
        yield name


def test_on_ipykernel6_a_reload_gets_moving_frames_while_the_cell_runs(tmp_path, ipykernel6):
    """There the watched loop answers the page, when it looks for its view's messages."""
    with running_view(tmp_path, blocking(), kernel_name=ipykernel6) as (root, _, page):
        steps_before = steps_written(root)
        reloaded = save_and_reload(page)
        wait_for_moving_frames(page)
        print(f"ipykernel 6: reload, moving frames {time.monotonic() - reloaded:.1f} s after it began")
        wait_for_video(page)
        assert steps_written(root) > steps_before
        page.locator(".gymview").get_by_role("button", name="Pause").click()
        wait_for_state(page, "paused")
        assert not widget_errors(page), page.errors


@pytest.mark.parametrize("end", ["restart", "shutdown"])  # shutdown: the page sees a dead kernel
def test_a_kernel_restart_or_death_leaves_the_last_frame_and_says_so(tmp_path, end):
    with running_view(tmp_path, blocking("page")) as (_, _, page):
        page.evaluate("(end) => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel[end]()", end)
        page.wait_for_function("() => document.querySelector('.gymview')?.dataset.kernelGone === 'true'",
                               timeout=60_000)
        status = page.evaluate("() => document.querySelector('.gymview .gymview-status').textContent")
        assert status == "kernel restarted or stopped: run the cell again"
        assert canvas_luminance_spread(page) > 0  # the last frame stays
        assert page.locator(".gymview").get_by_role("button", name="Pause").is_disabled()
        assert not widget_errors(page), page.errors


def test_a_reload_while_play_runs_brings_the_view_back(tmp_path):
    with running_view(tmp_path, PLAY) as (_, _, page):
        reloaded = save_and_reload(page)
        wait_for_moving_frames(page)
        print(f"play(): reload, moving frames {time.monotonic() - reloaded:.1f} s after it began")
        page.locator(".gymview").get_by_role("button", name="Stop").click()
        wait_for_state(page, "stopped")
        assert not widget_errors(page), page.errors
