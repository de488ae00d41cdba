"""gymview with JAX and MuJoCo Playground on the CPU: a new virtual environment with ``gymview[mujoco,playground]``,
JAX's CPU build and the test tools, then the rollout tests (a Playground env stepped with ``jax.lax.scan``, JAX
arrays moved to the host). ``./dev.sh test`` runs this after the dm_control stage; by hand:

    python tests/packaging/jax_rollouts.py .venv-jax
"""

from __future__ import annotations

import subprocess
import sys
import time

from lowest import ROOT, activated, new_environment, test_tools

ROLLOUT_TESTS = ["tests/rollouts"]


def main(folder: str) -> int:
    started = time.monotonic()
    environment, python = new_environment(folder, "-e", f"{ROOT}[mujoco,playground]", "jax[cpu]", *test_tools())
    asked = "import jax, mujoco, mujoco_playground; print(jax.__version__, mujoco.__version__)"
    versions = subprocess.run([python, "-c", asked], capture_output=True, text=True, check=True).stdout.split()
    print(f"JAX {versions[0]}, MuJoCo {versions[1]}: installed in {time.monotonic() - started:.0f} s", flush=True)
    pytest = [python, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *ROLLOUT_TESTS]
    return subprocess.run(pytest, cwd=ROOT, env=activated(environment, JAX_PLATFORMS="cpu"), check=False).returncode

if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".venv-jax"))
