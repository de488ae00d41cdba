import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from gymview.headless import virtual_display as virtual
from gymview.headless.opengl import variables_for

ROOT = Path(__file__).resolve().parents[2]

# A real X client: pygame forced onto SDL's x11 driver opens a window, draws and reads it back.
X_WINDOW = textwrap.dedent("""
    import os
    os.environ["SDL_VIDEODRIVER"] = "x11"
    os.environ["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"
    import pygame
    pygame.display.init()
    screen = pygame.display.set_mode((64, 48))
    screen.fill((200, 30, 40))
    pygame.display.flip()
    print(pygame.display.get_driver(), tuple(screen.get_at((10, 10)))[:3])
""")


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    merged = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=merged, timeout=60)


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture
def no_display(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    yield
    virtual.stop_virtual_display()


def test_start_is_idempotent_serves_x_clients_and_stop_cleans_up(no_display):
    shown = virtual.start_virtual_display(size=(640, 480))
    assert os.environ["DISPLAY"] == shown.name and shown.size == (640, 480)
    assert virtual.start_virtual_display() == shown == virtual.virtual_display()
    assert psutil.Process(shown.pid).name() == "Xvfb"

    drawn = run_python(X_WINDOW)
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stdout.split() == ["x11", "(200,", "30,", "40)"]

    virtual.stop_virtual_display()
    assert gone(shown.pid)
    assert "DISPLAY" not in os.environ and virtual.virtual_display() is None
    virtual.stop_virtual_display()  # harmless twice


def test_x_clients_fail_clearly_without_a_display(no_display):
    failed = run_python(X_WINDOW)
    assert failed.returncode != 0 and "x11 not available" in failed.stderr


def test_xvfb_listens_on_no_tcp_port_and_ignores_the_kernels_interrupts(no_display):
    shown = virtual.start_virtual_display()
    command = psutil.Process(shown.pid).cmdline()
    assert command[command.index("-nolisten") + 1] == "tcp"
    # Jupyter interrupts a cell by signalling the kernel's process group: Xvfb must not be in it.
    assert os.getpgid(shown.pid) != os.getpgid(0)
    assert os.getsid(shown.pid) == shown.pid


def test_a_display_killed_from_outside_is_replaced(no_display):
    first = virtual.start_virtual_display()
    os.kill(first.pid, signal.SIGKILL)
    psutil.Process(first.pid).wait(10)
    second = virtual.start_virtual_display()
    assert second.pid != first.pid and os.environ["DISPLAY"] == second.name
    assert run_python(X_WINDOW).returncode == 0


def test_the_display_is_stopped_when_python_exits():
    started = run_python(
        "from gymview.headless.virtual_display import start_virtual_display\nprint(start_virtual_display().pid)", DISPLAY=""
    )
    assert started.returncode == 0, started.stderr
    assert gone(int(started.stdout.split()[-1]))


def test_missing_pyvirtualdisplay_names_the_extra(no_display, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyvirtualdisplay.xvfb", None)
    with pytest.raises(ModuleNotFoundError, match=r'pip install "gymview\[colab\]"'):
        virtual.start_virtual_display()


def test_missing_xvfb_names_the_debian_package(no_display, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert virtual.find_xvfb() is None
    with pytest.raises(FileNotFoundError, match="apt-get install -y xvfb"):
        virtual.start_virtual_display()


def test_bad_size_is_refused(no_display):
    with pytest.raises(ValueError, match="width, height"):
        virtual.start_virtual_display(size=(0, 10))


def test_renderer_variables_never_override_the_users(monkeypatch):
    monkeypatch.setenv("MUJOCO_GL", "glfw")
    monkeypatch.setenv("PYOPENGL_PLATFORM", "")  # empty counts as unset; monkeypatch restores it
    set_now, kept = virtual.set_renderer_variables(variables_for("osmesa"))
    assert kept == {"MUJOCO_GL": "glfw"} and set_now == {"PYOPENGL_PLATFORM": "osmesa"}
    assert os.environ["MUJOCO_GL"] == "glfw" and os.environ["PYOPENGL_PLATFORM"] == "osmesa"


def test_xvfb_dies_with_a_python_that_is_killed(tmp_path):
    # A kernel that started the display and is then killed (SIGKILL: no atexit, no cleanup).
    code = "from gymview.headless import start_virtual_display; print(start_virtual_display().pid, flush=True); input()"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        xvfb = psutil.Process(int(child.stdout.readline()))
        assert xvfb.name() == "Xvfb"
    finally:
        child.kill()
        child.wait()
    xvfb.wait(timeout=60)  # stopped by the watchdog, not left behind
    assert gone(xvfb.pid)


def test_stopping_the_display_ends_its_watchdog_too(no_display):
    shown = virtual.start_virtual_display()
    watchdogs = [p for p in psutil.Process().children() if "os.kill(int(sys.argv[1])" in " ".join(p.cmdline())]
    assert len(watchdogs) == 1 and watchdogs[0].cmdline()[-1] == str(shown.pid)
    virtual.stop_virtual_display()
    assert gone(shown.pid) and gone(watchdogs[0].pid)
