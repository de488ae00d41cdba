"""gymview at the lowest versions it declares: a new virtual environment with each core dependency at
the lower bound pyproject.toml gives it (their own dependencies resolved as pip would for a user),
then the unit tests. ``./dev.sh test`` runs this last; by hand:

    python tests/packaging/lowest.py .venv-lowest

A bound that is too low shows up here as a failed install or a failed test: raise it in pyproject.toml.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import tomllib
import venv
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
# The unit tests: what needs no optional dependency (torch, ALE, MuJoCo, neat-python, SB3, JupyterLab),
# no kernel and no browser.
UNIT_TESTS = ["tests/image", "tests/live", "tests/video", "tests/episodes", "tests/renderers/test_renderers.py",
              "tests/test_watched.py", "tests/test_jobs.py", "tests/test_playback.py", "tests/_internal", "tests/test_cli.py",
              "tests/test_layout.py", "tests/remote/test_wire.py", "tests/remote/test_tokens.py",
              "tests/remote/test_hub.py", "tests/remote/test_relay.py", "gymview/remote",
              "gymview/image", "gymview/live", "gymview/video", "gymview/episodes",
              "gymview/renderers/classic_control.py", "gymview/_internal"]


def lowest_pins(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """``name==version`` for each core dependency, at its ``>=`` bound.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "pyproject.toml").write_text('[project]\\ndependencies = ["numpy>=1.24", "pillow>=10.1,<13"]\\n')
    >>> lowest_pins(folder / "pyproject.toml")
    ['numpy==1.24', 'pillow==10.1']
    """
    pins = []
    for line in tomllib.loads(pyproject.read_text())["project"]["dependencies"]:
        requirement = Requirement(line)
        lower = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        if len(lower) != 1:
            raise ValueError(f"pyproject.toml: {line!r} needs one >= bound, the lowest version gymview supports")
        pins.append(f"{requirement.name}=={lower[0]}")
    return pins


def test_tools(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The test extra's own tools (pytest, psutil, moviepy...), which pip resolves beside the pins; not its
    ``gymview[...]`` line, so neither the optional integrations nor the linters (the lint extra) come too."""
    test = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["test"]
    return [line for line in test if Requirement(line).name != "gymview"]


def new_environment(folder: str, *requirements: str) -> tuple[Path, str]:
    """A virtual environment made anew at ``ROOT / folder`` with ``requirements`` installed by pip: its folder and
    its Python."""
    environment = ROOT / folder
    venv.EnvBuilder(with_pip=True, clear=True).create(environment)
    python = str(environment / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements], check=True)
    return environment, python


def activated(environment: Path, **extra: str) -> dict[str, str]:
    """This process's environment variables as ``environment``'s activation sets them, and ``extra``."""
    return dict(os.environ, VIRTUAL_ENV=str(environment), **extra,
                PATH=f"{environment / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")  # fmt: skip


def main(folder: str) -> int:
    started = time.monotonic()
    print(f"lowest versions: {', '.join(lowest_pins())}; installing into {ROOT / folder}", flush=True)
    with tempfile.TemporaryDirectory() as folder_of_pins:
        constraints = Path(folder_of_pins) / "lowest-constraints.txt"
        constraints.write_text("\n".join(lowest_pins()) + "\n")
        environment, python = new_environment(folder, "-c", str(constraints), "-e", str(ROOT), *test_tools())
    print(f"lowest versions: installed in {time.monotonic() - started:.0f} s", flush=True)
    return subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-m", "not kernel and not browser",
                           *UNIT_TESTS], cwd=ROOT, env=activated(environment)).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".venv-lowest"))
