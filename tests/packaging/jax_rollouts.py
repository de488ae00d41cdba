"""gymview with JAX and MuJoCo Playground on the CPU: a new virtual environment with ``gymview[mujoco,playground]``,
JAX's CPU build and the test tools, then the rollout tests (a Playground env stepped with ``jax.lax.scan``, JAX
arrays moved to the host). ``./dev.sh test`` runs this after the dm_control stage; by hand:

    python tests/packaging/jax_rollouts.py .venv-jax
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import venv

from lowest import ROOT, test_tools

ROLLOUT_TESTS = ["tests/rollouts"]


def main(folder: str) -> int:
    started = time.monotonic()
    environment = ROOT / folder
    venv.EnvBuilder(with_pip=True, clear=True).create(environment)
    python = str(environment / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "-e", f"{ROOT}[mujoco,playground]", "jax[cpu]", *test_tools()], check=True)  # fmt: skip
    versions = subprocess.run([python, "-c", "import jax, mujoco, mujoco_playground; print(jax.__version__, "
                               "mujoco.__version__)"], capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    print(f"JAX {versions[0]}, MuJoCo {versions[1]}: installed in {time.monotonic() - started:.0f} s", flush=True)
    run_environment = dict(os.environ, VIRTUAL_ENV=str(environment), JAX_PLATFORMS="cpu",
                           PATH=f"{environment / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")  # fmt: skip
    pytest = [python, "-m", "pytest", "-p", "no:cacheprovider", "-rs"]
    return subprocess.run([*pytest, *ROLLOUT_TESTS], cwd=ROOT, env=run_environment, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".venv-jax"))
