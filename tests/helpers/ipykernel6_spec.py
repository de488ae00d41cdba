"""A kernelspec whose kernel runs ipykernel 6: a venv over this Python with only ipykernel<7 of its own."""

import json
import os
import site
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def ipykernel6_kernelspec(root: Path):
    """Yield the name of a kernelspec (found through JUPYTER_PATH, set meanwhile) whose kernel runs
    ipykernel 6; skips the test when PyPI cannot be reached."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # Everything but ipykernel comes from this interpreter's environment (itself perhaps a venv, which
    # --system-site-packages would skip): its site folders, .pth files included, after the venv's own.
    inner = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    (Path(inner) / "zz_outer_environment.pth").write_text(
        "".join(f"import site; site.addsitedir({folder!r})\n" for folder in site.getsitepackages()))
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "ipykernel>=6.29,<7"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"could not install ipykernel 6 from PyPI: {done.stderr[-500:]}")
    version = subprocess.run([str(python), "-c", "import ipykernel; print(ipykernel.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version.startswith("6."), version
    spec = root / "share" / "kernels" / "ipykernel6"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"ipykernel {version}", "language": "python",
    }))
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(root / "share"), old]))
    try:
        yield "ipykernel6"
    finally:
        if old is None:
            del os.environ["JUPYTER_PATH"]
        else:
            os.environ["JUPYTER_PATH"] = old
