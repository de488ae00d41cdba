import numpy as np
import pytest
from live_helpers import ShownView

import gymview.doctor
import gymview.notebook
from gymview import live_views
from gymview.human import enable_inline_human, inline_human_enabled
from gymview.magic import (
    gymview_magic,
    load_ipython_extension,
    unload_ipython_extension,
)


class FakeShell:
    def __init__(self):
        self.registered = {}

    def register_magic_function(self, func, magic_kind, magic_name):
        self.registered[magic_name] = (func, magic_kind)


@pytest.fixture
def view():
    view = ShownView(title="cartpole")
    yield view
    view.close()


def test_magic_status_and_stop(view, capsys):
    view.push(np.zeros((8, 8, 3), np.uint8))
    view.flush()
    gymview_magic("status")
    out = capsys.readouterr().out
    assert "cartpole" in out and "sent" in out
    count = len(live_views())
    gymview_magic("stop")
    assert f"stopped {count} live view" in capsys.readouterr().out and not view.stats["streaming"]
    gymview_magic("frobnicate")
    assert "usage" in capsys.readouterr().out


def test_load_ext_registers_the_magic_and_runs_setup_with_human_mode(monkeypatch):
    calls = []
    monkeypatch.setattr(gymview.notebook, "setup", lambda **kwargs: calls.append(kwargs))
    shell = FakeShell()
    load_ipython_extension(shell)
    assert calls == [{"human": True}] and shell.registered["gymview"] == (gymview_magic, "line")


def test_magic_setup_doctor_and_unload(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(gymview.notebook, "setup", lambda **kwargs: calls.append(kwargs))
    monkeypatch.setattr(gymview.doctor, "run_checks", lambda: calls.append("checks") or [])
    monkeypatch.setattr(gymview.doctor, "format_report", lambda checks: "REPORT")
    gymview_magic("setup")  # the setup %load_ext ran, human mode included
    gymview_magic("doctor")
    assert calls == [{"human": True}, "checks"] and "REPORT" in capsys.readouterr().out
    enable_inline_human()
    unload_ipython_extension(None)
    assert not inline_human_enabled()


def test_magic_stop_ends_play_runs_and_asks_background_jobs_to_stop(capsys):
    import time

    import gymnasium as gym

    import gymview

    run = gymview.play(gym.make("CartPole-v1", render_mode="rgb_array"), speed="max")
    job = gymview.background(lambda: [time.sleep(0.01) for _ in iter(lambda: gymview.should_stop(), True)], display=False)
    gymview_magic("stop")
    assert "stopped 1 play run(s); asked 1 background job(s) to stop" in capsys.readouterr().out
    assert run.stopped and job.wait(timeout=30) is not None and job.state == "stopped"
    run.env.close()
