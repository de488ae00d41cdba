"""A source install works as anywidget projects' do: ``pip install .`` on a clone, or ``pip install git+<url>``,
bundles the front-end with npm (a clone has no js/dist/), or stops with one line saying to install Node.js and npm.

The clone is of the repository's last commit, as CI's is; wheels are built with ``pip wheel --no-deps``, the build
``pip install`` runs."""

import os
import shutil
import subprocess
import sys
import zipfile

import pytest

pytestmark = pytest.mark.slow

BUNDLES = ("widget.js", "job_status.js", "episodes.js", "scene3d.js", "rollout_file.js")


@pytest.fixture
def clone(repo_root, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", f"file://{repo_root}", str(target)], check=True)
    assert not (target / "js" / "dist").exists()  # built, not committed
    return target


def pip_wheel(source, out, env=None):
    return subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
        capture_output=True, text=True, env=env, timeout=900,
    )


def shipped(out):
    (wheel,) = out.glob("gymview-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist() if name.startswith("gymview/static/")}


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed (./dev.sh test installs it)")
@pytest.mark.parametrize("how", ["pip install .", "pip install git+<url>"])
def test_a_source_install_bundles_the_front_end(clone, tmp_path, how):
    source = clone if how == "pip install ." else f"git+file://{clone}"
    built = pip_wheel(source, tmp_path / "wheels")
    assert built.returncode == 0, built.stderr[-4000:]
    files = shipped(tmp_path / "wheels")
    assert set(files) == {f"gymview/static/{name}" for name in (*BUNDLES, "widget.css")}
    assert all(len(files[f"gymview/static/{name}"]) > 1000 for name in BUNDLES)
    assert b"export" in files["gymview/static/widget.js"]  # an ES module, as anywidget loads it


def test_without_npm_a_source_install_stops_with_one_line_saying_what_to_install(clone, tmp_path):
    python_only = tmp_path / "bin"
    python_only.mkdir()
    os.symlink(sys.executable, python_only / "python")
    built = pip_wheel(clone, tmp_path / "wheels", env={**os.environ, "PATH": str(python_only)})
    assert built.returncode != 0
    said = [line for line in (built.stdout + built.stderr).splitlines() if "gymview:" in line]
    assert len(said) == 1 and "install Node.js and npm" in said[0], built.stderr[-4000:]
