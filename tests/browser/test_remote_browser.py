"""A script in a subprocess publishes its live view; JupyterLab in Chromium attaches to it: frames arrive,
Pause holds the script's step counter, Play resumes it, Stop ends it; the view says the run ended and keeps
its last frame; a run started again under that name is shown again."""

import json
import secrets

import pytest
from lab import (
    canvas_luminance_spread,
    chromium_page,
    notebook_of,
    open_notebook,
    running_server,
    start_cell,
    wait_for_output,
    widget_counters,
)
from published_runs import Script, free_port
from waiting import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def wait_for_state(page, state):
    page.wait_for_function("(state) => document.querySelector('.gymview')?.dataset.state === state", arg=state,
                           timeout=60_000)


def click_and_wait_for_answer(page, name):
    view = page.locator(".gymview").first
    view.get_by_role("button", name=name).click()
    page.wait_for_function("() => document.querySelector('.gymview').dataset.unanswered === '0'", timeout=60_000)


def frames_received(page):
    return widget_counters(page)["received"]


def test_jupyterlab_attached_to_a_script_steers_it_and_follows_it_across_a_restart(tmp_path):
    address, token = f"127.0.0.1:{free_port()}", secrets.token_urlsafe(12)
    scripts = []

    def start_script():
        folder = tmp_path / f"script-{len(scripts)}"
        folder.mkdir()
        scripts.append(Script(folder, "--publish", address, env={"GYMVIEW_TOKEN": token}))
        return scripts[-1]

    root = tmp_path / "root"
    root.mkdir()
    cells = [f"import gymview\nview = gymview.attach({address!r}, token={token!r}, timeout=90)",
             "view.close()\nimport threading\nprint('THREADS', sorted(t.name for t in threading.enumerate() "
             "if t.name.startswith('gymview')), 'END')"]
    (root / "attach.ipynb").write_text(json.dumps(notebook_of(cells)))
    try:
        script = start_script()
        with running_server(root) as server, chromium_page() as page:
            open_notebook(page, server, "attach.ipynb")
            start_cell(page, 0)
            page.wait_for_function("() => Number(document.querySelector('.gymview')?.dataset.framesDrawn || 0) > 5",
                                   timeout=90_000)
            assert canvas_luminance_spread(page) > 50, "a CartPole is drawn"
            click_and_wait_for_answer(page, "Pause")
            wait_for_state(page, "paused")
            wait_until(lambda: script.held, "the script's loop to be held")
            held = script.steps
            click_and_wait_for_answer(page, "Play")
            wait_for_state(page, "running")
            wait_until(lambda: script.steps > held + 100, "the script to step again")
            assert held > 0
            click_and_wait_for_answer(page, "Stop")
            assert script.wait(60) == 0 and "STOPPED" in script.output()
            wait_for_state(page, "ended")
            view = page.locator(".gymview").first
            assert view.get_by_role("button", name="Pause").is_disabled(), "no run: the buttons are off"
            assert "ended" in view.get_attribute("data-notice")
            assert canvas_luminance_spread(page) > 50, "the last frame stays"
            before = frames_received(page)
            start_script()  # the same script again, under the same name
            wait_for_state(page, "running")
            wait_until(lambda: frames_received(page) > before + 5, "frames from the run started again", timeout=90)
            assert widget_counters(page)["decodeErrors"] == 0
            start_cell(page, 1)
            # read once the line's end is on the page: print's parts may reach it in separate flushes
            assert "THREADS [] END" in wait_for_output(page, 1, "END")
            assert not [error for error in page.errors if "gymview" in error], page.errors
    finally:
        for script in scripts:
            script.kill()
