"""OpenGL backends for MuJoCo, found by rendering in a child process; watch() refuses before MuJoCo can abort."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mujoco")

from gymview.doctor import run_checks  # noqa: E402
from gymview.headless import opengl  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_display(monkeypatch):
    for name in ("DISPLAY", "MUJOCO_GL", "PYOPENGL_PLATFORM"):
        monkeypatch.delenv(name, raising=False)


def test_osmesa_renders_and_glfw_without_a_display_does_not(no_display):
    works = opengl.probe("osmesa")
    assert works.works and works.backend == "osmesa" and works.detail  # the GL renderer's name
    fails = opengl.probe("glfw")
    assert not fails.works and "OpenGL" in fails.detail
    assert str(fails).startswith("glfw fails (")
    with pytest.raises(ValueError, match="one of"):
        opengl.probe("vulkan")


def test_the_current_settings_are_checked_with_a_fix_in_the_error(no_display, monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "glfw")
    with pytest.raises(RuntimeError, match=r"MUJOCO_GL=glfw failed .*gymview.setup\(\)"):
        opengl.check_mujoco_rendering()
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    assert opengl.check_mujoco_rendering().works


def test_setup_picks_a_backend_that_renders(no_display):
    backend, probes = opengl.choose_backend(gpu=False, display=False)
    assert backend == "osmesa" and [p.backend for p in probes] == ["osmesa"]
    assert opengl.backends_to_try(gpu=True, display=False)[0] == "egl"
    # without a GPU all draw in software; GLFW, which makes windows only on the main thread, comes last
    assert opengl.backends_to_try(gpu=False, display=True) == ("osmesa", "egl", "glfw")
    assert "libosmesa6" in opengl.what_to_install(probes)


def test_doctor_reports_each_backend_as_it_is(no_display, monkeypatch):
    (check,) = run_checks(["opengl"])
    assert check.status == "warn" and "MUJOCO_GL unset" in check.detail
    assert "osmesa works" in check.detail and "glfw not tried: no X display" in check.detail
    assert "MUJOCO_GL=osmesa" in check.fix
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    (check,) = run_checks(["opengl"])
    assert check.status == "ok" and check.detail.startswith("MuJoCo renders with MUJOCO_GL=osmesa")


WATCH_WITHOUT_OPENGL = textwrap.dedent("""
    import json, gymnasium as gym, gymview
    errors = []
    for _ in range(2):  # a second MuJoCo render after a failed one aborts the process: it must never run
        env = gym.make("HalfCheetah-v5", render_mode="rgb_array")
        try:
            gymview.watch(env)
        except RuntimeError as error:
            errors.append(str(error))
        env.close()
    print(json.dumps({"errors": errors, "views": len(gymview.live_views())}))
""")


def test_watch_refuses_a_mujoco_env_that_cannot_render_before_making_a_view():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MUJOCO_GL", "PYOPENGL_PLATFORM")}
    done = subprocess.run([sys.executable, "-c", WATCH_WITHOUT_OPENGL], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(seen["errors"]) == 2 and seen["views"] == 0
    assert all("MuJoCo cannot render here" in e and "gymview.setup()" in e for e in seen["errors"])
