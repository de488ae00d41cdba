"""gymview's live view in marimo, driven in Debian's Chromium: ``marimo run`` and ``marimo edit``
serve a small app; frames arrive and are drawn, and the real Pause, Step and Stop buttons hold,
advance and end the loop, from a loop in a cell (while the cell blocks the kernel) and from
``gymview.play``."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import signal
import subprocess
import sys
import textwrap
import urllib.request

import pytest
from lab import REPO, _free_port, chromium_page
from waiting import wait_until

# Not imported here (marimo runs in the servers this starts): imported in pytest's own process, it
# made tests/live/test_widget.py's frame-cost budget test fail (see tests/live/test_marimo_poller.py).
pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("marimo") is None, reason="pip install 'gymview[marimo]'")]

APP = '''
import marimo

app = marimo.App()


@app.cell
def _():
    import os, pathlib, time
    import gymnasium as gym
    import gymview
    return gym, gymview, os, pathlib, time


@app.cell
def _(gym, gymview, os, pathlib, time):
{body}
    return


if __name__ == "__main__":
    app.run()
'''
# A thread tells the test how many steps the Python loop took (in a file, every 20 ms).
REPORTER = """
import threading
out = pathlib.Path(os.environ["GYMVIEW_MARIMO_OUT"])
progress = {{"steps": 0, "done": False}}
def report():
    while not progress["done"]:
        (out.parent / "steps.tmp").write_text(str({steps}))
        os.replace(out.parent / "steps.tmp", out.parent / "steps.txt")  # never seen half written
        time.sleep(0.02)
threading.Thread(target=report, daemon=True).start()
"""
CELL_LOOP = REPORTER.format(steps='progress["steps"]') + """
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
obs, info = env.reset(seed=0)
outcome = "ran out"
deadline = time.monotonic() + 600  # the test stops it long before
try:
    while time.monotonic() < deadline:
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        progress["steps"] += 1
        if terminated or truncated:
            obs, info = env.reset()
except gymview.Stopped:
    outcome = "stopped"
env.close()
progress["done"] = True
_ = out.write_text(f"{outcome} {progress['steps']}")  # not the cell's last value: the view stays its output
"""
PLAY = """
run = gymview.play(gym.make("CartPole-v1", render_mode="rgb_array"), speed=1.0)
""" + REPORTER.format(steps="run.steps_taken")
# Every .gymview root in the page, inside marimo's shadow roots too: its counters and status line.
VIEWS = """() => {
  const found = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.classList.contains("gymview")) found.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return found.map((el) => ({
    received: Number(el.dataset.framesReceived || 0),
    drawn: Number(el.dataset.framesDrawn || 0),
    status: (el.querySelector(".gymview-status") || {}).textContent || "",
  }));
}"""


class MarimoServer:
    """``python -m marimo run|edit app.py`` on 127.0.0.1, in its own process group."""

    def __init__(self, app: pathlib.Path, mode: str, env: dict[str, str]) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = app.parent / f"marimo-{mode}.log"
        command = [sys.executable, "-m", "marimo", mode, str(app), "--host", "127.0.0.1",
                   "--port", str(self.port), "--headless"]
        if mode == "edit":
            command.append("--no-token")
        self.process = subprocess.Popen(
            command, cwd=app.parent, env=env, stdout=self.log.open("w"), stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def healthy(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"marimo exited early:\n{self.log.read_text()[-4000:]}")
        try:
            return urllib.request.urlopen(self.url + "/health", timeout=5).status == 200
        except OSError:
            return False

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


@pytest.fixture
def marimo_app(tmp_path):
    """Serve an app whose second cell is ``body``; yields (page, server, result file)."""
    servers = []

    def serve(body: str, mode: str):
        app = tmp_path / "app.py"
        app.write_text(APP.format(body=textwrap.indent(body.strip(), "    ")))
        # marimo edit runs a notebook's cells on opening only when told so; run does always
        (tmp_path / "pyproject.toml").write_text("[tool.marimo.runtime]\nauto_instantiate = true\n")
        out = tmp_path / "result.txt"
        env = dict(os.environ, GYMVIEW_MARIMO_OUT=str(out),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
        server = MarimoServer(app, mode, env)
        servers.append(server)
        wait_until(server.healthy, "the marimo server to answer", timeout=90, poll=0.25)
        return server, out

    try:
        yield serve
    finally:
        for server in servers:
            server.stop()


def view_of(page) -> dict:
    views = page.evaluate(VIEWS)
    return views[0] if views else {"received": 0, "drawn": 0, "status": ""}


def step_of(status: str) -> int:
    match = re.search(r"step ([\d,]+)", status)
    assert match, f"no step in the status line {status!r}"
    return int(match.group(1).replace(",", ""))


def click(page, label: str) -> None:
    page.locator(".gymview button", has_text=label).first.click()


def python_steps(folder: pathlib.Path) -> int:
    """The steps the Python loop took, as its reporter thread last wrote them (-1: not yet)."""
    try:
        return int((folder / "steps.txt").read_text())
    except FileNotFoundError:  # not written yet
        return -1


def shown_step(page) -> int:
    status = view_of(page)["status"]
    return step_of(status) if "step" in status else -1


def steer(page, folder: pathlib.Path) -> int:
    """Frames arrive and are drawn; Pause holds the loop (the view and the Python loop agree on
    the step it is held at), Step lets exactly one step through, Stop ends it. Returns the step
    the loop was stopped at."""
    wait_until(lambda: view_of(page)["drawn"] >= 5, "five frames drawn", timeout=120, poll=0.1)
    first = view_of(page)
    wait_until(lambda: view_of(page)["drawn"] > first["drawn"] and shown_step(page) > step_of(first["status"]),
               "the frames to keep moving", timeout=60, poll=0.05)
    click(page, "Pause")
    wait_until(lambda: view_of(page)["status"].startswith("paused"), "the view to say paused", timeout=60, poll=0.05)
    wait_until(lambda: python_steps(folder) == shown_step(page), "the view to show the step the loop is held at",
               timeout=60, poll=0.05)
    held = python_steps(folder)
    click(page, "Step")  # one step, and only one: the loop is held
    wait_until(lambda: python_steps(folder) == shown_step(page) == held + 1, "the one step to be taken and shown",
               timeout=60, poll=0.05)
    assert view_of(page)["status"].startswith("paused")
    click(page, "Stop")
    seen = {}  # the view as it said stopped (the cell may end and marimo redraw its output after)

    def says_stopped() -> bool:
        seen.update(view_of(page))
        return seen["status"].startswith("stopped")

    wait_until(says_stopped, "the view to say stopped", timeout=60, poll=0.05)
    assert python_steps(folder) == step_of(seen["status"]) == held + 1
    assert page.errors == []
    return held + 1


@pytest.mark.parametrize("mode", ["run", "edit"])
def test_a_loop_in_a_cell_streams_and_obeys_the_buttons(marimo_app, mode):
    server, out = marimo_app(CELL_LOOP, mode)
    with chromium_page() as page:
        page.goto(server.url)
        stopped_at = steer(page, out.parent)
        # the file is made, then written: read it once it holds the outcome
        wait_until(lambda: out.exists() and out.read_text(), "the cell to end", timeout=60, poll=0.05)
        # The Python loop itself was held: it took exactly the steps the view showed.
        assert out.read_text() == f"stopped {stopped_at}"


def test_play_streams_and_obeys_the_buttons(marimo_app):
    server, out = marimo_app(PLAY, "run")
    with chromium_page() as page:
        page.goto(server.url)
        steer(page, out.parent)


def test_the_example_app_shows_both_views(tmp_path):
    """notebooks/marimo_app.py, served by ``marimo run``: the cell loop's view and play's view draw frames."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    app = tmp_path / "marimo_app.py"
    app.write_text((REPO / "notebooks" / "marimo_app.py").read_text())
    server = MarimoServer(app, "run", env)
    try:
        wait_until(server.healthy, "the marimo server to answer", timeout=90, poll=0.25)
        with chromium_page() as page:
            page.goto(server.url)
            wait_until(lambda: len(page.evaluate(VIEWS)) == 2 and all(view["drawn"] >= 3 for view in page.evaluate(VIEWS)),
                       "both views to draw frames", timeout=120, poll=0.1)
            assert page.errors == []
    finally:
        server.stop()


RERUN_APP = '''
import marimo

app = marimo.App()


@app.cell
def _():
    import os, pathlib, threading, time
    import marimo as mo
    import gymnasium as gym
    import gymview
    runs = []
    out = pathlib.Path(os.environ["GYMVIEW_MARIMO_OUT"])
    def report():
        while True:
            states = ["stopped" if run.stopped else "done" if run.done else "running" for run in runs]
            (out.parent / "runs.tmp").write_text(" ".join(states))
            os.replace(out.parent / "runs.tmp", out)
            time.sleep(0.02)
    threading.Thread(target=report, daemon=True).start()
    episodes = mo.ui.number(start=1, stop=1000, value=100, label="episodes")
    episodes
    return episodes, gym, gymview, runs


@app.cell
def _(episodes, gym, gymview, runs):
    runs.append(gymview.play(gym.make("CartPole-v1", render_mode="rgb_array"), episodes=episodes.value, speed=1.0))
    return


if __name__ == "__main__":
    app.run()
'''


def test_a_play_cell_run_again_stops_the_old_run(tmp_path):
    """marimo re-runs a cell when a value it reads changes: the run the old cell started is stopped
    (its view is gone from the page), and the new one plays."""
    app = tmp_path / "app.py"
    app.write_text(RERUN_APP)
    out = tmp_path / "runs.txt"
    env = dict(os.environ, GYMVIEW_MARIMO_OUT=str(out),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    server = MarimoServer(app, "run", env)
    try:
        wait_until(server.healthy, "the marimo server to answer", timeout=90, poll=0.25)
        with chromium_page() as page:
            page.goto(server.url)
            wait_until(lambda: out.exists() and out.read_text() == "running", "the first run to play", timeout=120, poll=0.05)
            wait_until(lambda: view_of(page)["drawn"] >= 3, "its frames to be drawn", timeout=60, poll=0.05)
            number = page.locator("marimo-number input").first
            number.fill("200")
            number.press("Enter")
            wait_until(lambda: out.read_text() == "stopped running", "the old run to stop and a new one to play",
                       timeout=120, poll=0.05)
            assert page.errors == []
    finally:
        server.stop()
