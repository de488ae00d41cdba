import os
from pathlib import Path

import pytest

from gymview.headless import virtual_display as virtual
from gymview.headless.environment import (
    detect,
    display_reachable,
    ipykernel_breaks_thread_sends,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def xvfb():
    shown = virtual.start_virtual_display(size=(320, 240))
    yield shown
    virtual.stop_virtual_display()


def test_plain_python_is_detected(monkeypatch):
    for name in ("COLAB_RELEASE_TAG", "VSCODE_PID", "VSCODE_CWD"):
        monkeypatch.delenv(name, raising=False)
    assert detect().frontend == "python"
    assert not detect().in_notebook


def test_colab_release_tag_means_colab(monkeypatch):
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab_20250101-060000_RC00")
    where = detect()
    assert where.frontend == "colab" and where.in_notebook


def test_vscode_variables_alone_do_not_make_a_notebook(monkeypatch):
    monkeypatch.setenv("VSCODE_PID", "1234")
    assert detect().frontend == "python"


def test_no_display_variable_means_no_display(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    where = detect()
    assert where.display is None and where.has_display is False


@pytest.mark.parametrize("name", ["", ":4242", ":4242.0", "unix:4242", "127.0.0.1:4242", "nonsense", ":x"])
def test_unreachable_displays(name):
    assert display_reachable(name or None, timeout=0.2) is False


def test_a_running_x_server_is_reachable(xvfb):
    assert display_reachable(xvfb.name)
    assert display_reachable(f"{xvfb.name}.0")
    assert detect().has_display and detect().display == xvfb.name


@pytest.mark.parametrize(
    ("version", "broken"),
    [("7.0.0", True), ("7.0.1", True), ("7.0.0a1", True), ("7.0.2", False), ("7.1.0", False),
     ("6.29.5", False), ("7.4.0", False), ("17.0.1", False), (None, False)],
)
def test_ipykernel_versions_that_break_thread_sends(version, broken):
    assert ipykernel_breaks_thread_sends(version) is broken


def test_gpu_detection_matches_the_device_files():
    assert detect().gpu == (os.path.exists("/dev/nvidia0") or bool(list(Path("/proc/driver/nvidia/gpus").glob("*"))))


@pytest.mark.kernel
def test_a_real_kernel_is_jupyter_or_vscode():
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for name in ("COLAB_RELEASE_TAG", "VSCODE_PID", "VSCODE_CWD"):
        env.pop(name, None)
    manager, client = start_new_kernel(kernel_name="python3", env=env)
    try:
        code = (
            "import os\nfrom gymview.headless.environment import detect\n"
            "print('first', detect().frontend, detect().in_notebook)\n"
            "os.environ['VSCODE_PID'] = '1'\nprint('second', detect().frontend)\n"
        )
        printed = []
        reply = client.execute_interactive(
            code, timeout=60, output_hook=lambda msg: printed.append(msg["content"].get("text", ""))
        )
        assert reply["content"]["status"] == "ok", reply["content"]
        text = "".join(printed)
        assert "first jupyter True" in text and "second vscode" in text
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
