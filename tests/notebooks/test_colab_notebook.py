"""notebooks/colab.ipynb runs top to bottom in a real kernel, with the stand-in google.colab on PYTHONPATH.

The install cell (tagged ``gymview-install``) needs the network and a published wheel, so CI checks it
instead of running it: it must be exactly the line docs/headless.md documents and name an extra that
pyproject.toml defines; every other cell runs unchanged against this checkout. The ``python`` on PATH
is not the kernel's (as when Jupyter runs from a virtual environment that is not activated).
"""

import os
import re
from pathlib import Path

import nbformat
import psutil
import pytest
import tomllib
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "colab.ipynb"
INSTALL_TAG = "gymview-install"

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


def text_of(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_install_cell_is_the_documented_line():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    install = [cell for cell in notebook.cells if INSTALL_TAG in cell.metadata.get("tags", [])]
    assert len(install) == 1 and notebook.cells.index(install[0]) == 1
    line = install[0].source.strip()
    assert line in (ROOT / "docs" / "headless.md").read_text()
    extra = re.fullmatch(r'%pip install -q "gymview\[(\w+)\]"', line).group(1)
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "pyvirtualdisplay" in " ".join(extras[extra])
    assert "colab.research.google.com/github/" in notebook.cells[0].source


def test_notebook_runs_top_to_bottom_on_stand_in_colab(tmp_path):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    notebook.cells = [cell for cell in notebook.cells if INSTALL_TAG not in cell.metadata.get("tags", [])]
    other_python = tmp_path / "other-python"
    other_python.mkdir()
    for name in ("python", "python3"):
        (other_python / name).write_text("#!/bin/sh\necho \"not the kernel's Python\" >&2\nexit 3\n")
        (other_python / name).chmod(0o755)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "fakes"), str(ROOT)]),
           "PATH": f"{other_python}{os.pathsep}{os.environ['PATH']}"}
    for name in ("DISPLAY", "MUJOCO_GL", "PYOPENGL_PLATFORM", "SDL_VIDEODRIVER"):
        env.pop(name, None)
    xvfb_pids = []

    def after_cell(cell, **_):  # the Xvfb that setup() started, found while the kernel still runs
        if "gymview.setup(" in cell.source:
            kernel = client.km.provisioner.pid
            xvfb_pids.extend(
                process.pid for process in psutil.process_iter(["name", "ppid"])
                if process.info["name"] == "Xvfb" and process.info["ppid"] == kernel
            )

    client = NotebookClient(
        notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}},
        on_cell_executed=after_cell,
    )
    client.execute(env=env)

    setup_out, human_cell, modes_out, doctor_out = (
        text_of(notebook.cells[1]), notebook.cells[3], text_of(notebook.cells[4]), text_of(notebook.cells[6])
    )
    assert "gymview setup (colab" in setup_out
    assert "Colab custom widget manager enabled" in setup_out
    assert 'render_mode="human" shows inline' in setup_out
    # the live view was shown, then env.close() replaced it by its last frame (same display id)
    kinds = [set(out.get("data", {})) for out in human_cell.outputs]
    assert any("image/jpeg" in kind for kind in kinds), kinds
    assert not any("application/vnd.jupyter.widget-view+json" in kind for kind in kinds), kinds
    assert modes_out.split() == ["human", "rgb_array", "LiveView"]
    assert "everything essential works" in doctor_out, doctor_out  # run by the kernel's own Python
    assert len(xvfb_pids) == 1
    try:
        assert psutil.Process(xvfb_pids[0]).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        pass  # stopped when the kernel exited
