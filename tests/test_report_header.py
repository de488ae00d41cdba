"""pytest's header names the release of every library under test, so a red run says which changed."""

import re
import subprocess
import sys

NAMED = ("cloudpickle", "gymnasium", "numpy", "anywidget", "ipywidgets", "ipykernel", "jupyterlab", "imageio-ffmpeg",
         "torch", "stable-baselines3", "neat-python", "mujoco", "ale-py", "dask", "tensorboard", "wandb", "mkdocs")


def test_the_header_names_each_librarys_installed_version(repo_root):
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only",
                           "tests/test_layout.py"], cwd=repo_root, capture_output=True, text=True, timeout=120)
    header = done.stdout.split("collected")[0]
    from importlib import metadata

    for name in NAMED:
        assert re.search(rf"\b{re.escape(name)} {re.escape(metadata.version(name))}\b", header), (name, header)
