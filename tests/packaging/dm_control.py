"""gymview with dm_control, whose suite needs MuJoCo 3 (dm_control 1.0.50 does not load on MuJoCo 4): a new virtual
environment with ``gymview[dm-control]`` (MuJoCo 3, dm_control, shimmy) and the test tools, then the dm_control tests
(dm_control picks its OpenGL when imported: EGL, here as on a headless server) and the MuJoCo tests at MuJoCo 3.
``./dev.sh test`` runs this after the lowest versions; by hand:

    python tests/packaging/dm_control.py .venv-dmc
"""

from __future__ import annotations

import subprocess
import sys
import time

from lowest import ROOT, activated, new_environment, test_tools

DM_CONTROL_TESTS = ["tests/renderers/test_dm_control.py", "tests/browser/test_dm_control_browser.py"]
MUJOCO_TESTS = ["tests/renderers/test_mujoco.py", "tests/renderers/test_mujoco_scene.py",
                "tests/browser/test_scene3d_browser.py"]  # fmt: skip


def main(folder: str) -> int:
    started = time.monotonic()
    environment, python = new_environment(folder, "-e", f"{ROOT}[dm-control]", *test_tools())
    versions = subprocess.run([python, "-c", "import mujoco, dm_control, shimmy; print(mujoco.__version__)"],
                              capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    print(f"dm_control: MuJoCo {versions}, installed in {time.monotonic() - started:.0f} s", flush=True)
    pytest = [python, "-m", "pytest", "-p", "no:cacheprovider", "-rs"]
    with_egl = activated(environment, MUJOCO_GL="egl", PYOPENGL_PLATFORM="egl")
    failed = subprocess.run([*pytest, *DM_CONTROL_TESTS], cwd=ROOT, env=with_egl, check=False).returncode
    plain = activated(environment)
    return failed or subprocess.run([*pytest, *MUJOCO_TESTS], cwd=ROOT, env=plain, check=False).returncode

if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".venv-dmc"))
