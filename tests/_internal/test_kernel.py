"""Where gymview runs: an IPython kernel, a marimo notebook, or neither; each checked in the real thing
(marimo's own kernel runs an app's cells for ``marimo export html``; ``python app.py`` runs them as a
script). The IPython kernel side is covered by tests/kernel."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from gymview._internal.kernel import in_ipython_kernel, in_kernel, in_marimo

REPO = pathlib.Path(__file__).resolve().parents[2]
# marimo runs only in the child processes: imported in pytest's own process, it made
# tests/live/test_widget.py's frame-cost budget test fail (see tests/live/test_marimo_poller.py).
needs_marimo = pytest.mark.skipif(importlib.util.find_spec("marimo") is None, reason="pip install 'gymview[marimo]'")

PROBE = '''
import marimo

app = marimo.App()


@app.cell
def _():
    import json, os, sys, threading
    import gymview
    from gymview._internal.kernel import in_ipython_kernel, in_kernel, in_marimo
    from gymview.headless.environment import detect
    switch_interval = sys.getswitchinterval()
    view = gymview.LiveView()
    found = {
        "in_kernel": in_kernel(), "in_ipython_kernel": in_ipython_kernel(), "in_marimo": in_marimo(),
        "frontend": detect().frontend, "active": view.stats["active"], "polls_browser": view.stats["polls_browser"],
        "switch_interval_kept": sys.getswitchinterval() == switch_interval,
        "comm": type(view.comm).__name__, "routes_clicks_early": hasattr(view.comm, "_reply_subshell_for"),
    }
    seen = {}
    thread = threading.Thread(target=lambda: seen.update(plain_thread=in_marimo()))
    thread.start(); thread.join()
    found.update(seen)
    view.close()
    with open(os.environ["GYMVIEW_PROBE_OUT"], "w") as file:
        json.dump(found, file)
    return


if __name__ == "__main__":
    app.run()
'''


def probe(tmp_path: pathlib.Path, *command: str) -> dict:
    app = tmp_path / "probe.py"
    app.write_text(textwrap.dedent(PROBE))
    out = tmp_path / "found.json"
    env = dict(os.environ, GYMVIEW_PROBE_OUT=str(out),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    subprocess.run([sys.executable, *command, str(app)], cwd=tmp_path, env=env, check=True, timeout=240,
                   capture_output=True)
    return json.loads(out.read_text())


def test_a_plain_interpreter_is_no_notebook():
    assert (in_kernel(), in_ipython_kernel(), in_marimo()) == (False, False, False)


@needs_marimo
def test_a_marimo_kernel_is_a_notebook_without_ipykernel_machinery(tmp_path):
    found = probe(tmp_path, "-m", "marimo", "export", "html", "-o", str(tmp_path / "out.html"))
    assert found == {
        "in_kernel": True, "in_ipython_kernel": False, "in_marimo": True, "frontend": "marimo",
        "active": True,  # frames are sent
        "polls_browser": True,  # a loop in a cell fetches its clicks from marimo's queue
        "switch_interval_kept": True,  # no switch-interval lease: no shell-channel thread to hurry
        "comm": "MarimoComm", "routes_clicks_early": False,
        "plain_thread": False,  # marimo's context is per thread: a plain thread is not in the notebook
    }


@needs_marimo
def test_python_app_py_runs_the_cells_as_a_script_not_a_notebook(tmp_path):
    found = probe(tmp_path)
    assert (found["in_kernel"], found["in_marimo"], found["frontend"], found["active"]) == (False, False, "python", False)
