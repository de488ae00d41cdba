import os
import pathlib
import shutil
import subprocess
import tempfile
from importlib import metadata

import pytest
from packaging.requirements import Requirement

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Published runs' token files (gymview.remote.tokens) go to a folder of this run's, never the user's; the
# scripts, kernels and browsers the tests start inherit it.
os.environ["GYMVIEW_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="gymview-runtime-")
# The libraries gymview works inside of, beside its own dependencies (read from its installed metadata).
INTEGRATIONS = ("ipykernel", "jupyter_client", "jupyterlab", "notebook", "torch", "stable-baselines3", "neat-python",
                "mujoco", "ale-py", "dask", "pygame-ce", "playwright", "tensorboard", "tensorboardX", "wandb",
                "pettingzoo", "marimo", "mkdocs", "mkdocs-material", "mkdocstrings-python", "mkdocs-jupyter")


def pytest_report_header(config: pytest.Config) -> list[str]:
    """The releases under test, so that a red run says which one changed."""
    runtime = [requirement.name for requirement in map(Requirement, metadata.requires("gymview") or [])
               if requirement.marker is None]
    return [f"gymview's dependencies: {versions(runtime)}", f"integrations under test: {versions(INTEGRATIONS)}",
            f"browser: {browser_version()}"]


def versions(names) -> str:
    found = []
    for name in names:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} (not installed)")
    return ", ".join(found)


def browser_version() -> str:
    chromium = shutil.which("chromium")
    if chromium is None:
        return "no chromium on PATH"
    try:
        return subprocess.run([chromium, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"chromium --version failed: {error}"


@pytest.fixture(scope="session")
def repo_root() -> pathlib.Path:
    return ROOT


@pytest.fixture
def shown():
    """Make LiveViews as a notebook shows them (see live_helpers.ShownView); closed afterwards."""
    from live_helpers import ShownView

    views = []

    def make(**kwargs):
        views.append(ShownView(**kwargs))
        return views[-1]

    yield make
    for view in views:
        view.close()


@pytest.fixture(scope="module")
def software_opengl():
    """MuJoCo and PyOpenGL render through OSMesa, which renders anywhere (dev.sh installs libosmesa6), for
    a module's tests; the variables come back after."""
    import os

    saved = {name: os.environ.get(name) for name in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    os.environ.update(MUJOCO_GL="osmesa", PYOPENGL_PLATFORM="osmesa")
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory):
    """Where tests leave pictures for people (screenshots, the page's drawing beside env.render()):
    $GYMVIEW_TEST_ARTIFACTS if set (CI keeps them), else a temporary folder."""
    import os

    folder = os.environ.get("GYMVIEW_TEST_ARTIFACTS")
    path = pathlib.Path(folder) if folder else tmp_path_factory.mktemp("artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path
