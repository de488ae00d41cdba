import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gymview.cli import main
from gymview.doctor import Check, format_report

ROOT = Path(__file__).resolve().parents[1]


def doctor(**env: str) -> subprocess.CompletedProcess:
    merged = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, "-m", "gymview", "doctor"], capture_output=True, text=True, env=merged, timeout=120
    )


def test_doctor_passes_on_this_machine_and_checks_everything(capsys):
    assert main(["doctor"]) == 0
    printed = capsys.readouterr().out
    for name in ("display", "xvfb", "ffmpeg", "h264", "gymnasium", "widgets", "ipykernel", "jupyterlab", "gpu", "torch"):
        assert f" {name} " in printed
    assert "libx264 through PyAV" in printed
    assert printed.rstrip().endswith("everything essential works")


def test_python_m_gymview_doctor_names_problems_and_fails_only_for_essential_ones(tmp_path):
    # one run (the torch probe is slow): broken ffmpeg (essential), no Xvfb and a dead DISPLAY (warnings)
    done = doctor(
        GYMVIEW_FFMPEG="/nonexistent/ffmpeg",
        PATH=f"{tmp_path}{os.pathsep}{Path(sys.executable).parent}",
        DISPLAY=":4242",
    )
    assert done.returncode == 1, done.stderr
    assert "FAIL  ffmpeg" in done.stdout and "GYMVIEW_FFMPEG='/nonexistent/ffmpeg' is not an executable" in done.stdout
    assert "set GYMVIEW_FFMPEG to the path of an ffmpeg binary" in done.stdout
    assert "warn  xvfb" in done.stdout and "fix: apt-get install -y xvfb" in done.stdout
    assert "warn  display      DISPLAY=:4242 but no X server answers there" in done.stdout
    assert done.stdout.rstrip().endswith("broken: ffmpeg")


def test_the_doctor_says_when_live_views_cannot_stream_h264(monkeypatch):
    from gymview.doctor import run_checks
    from gymview.live.encoding import h264

    monkeypatch.setattr(h264, "h264_unavailable", lambda: "H.264 live frames need PyAV: pip install av")
    (check,) = run_checks(["h264"])
    assert check.status == "warn" and check.detail == "live views send JPEG frames only: H.264 live frames need PyAV: pip install av"


def test_checks_report_fixes_only_for_problems():
    text = format_report([Check("a", "ok", "fine", "never shown"), Check("b", "FAIL", "broken", "do this")])
    assert "never shown" not in text and "fix: do this" in text and text.endswith("broken: b")


def test_a_subcommand_is_required():
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2


def test_doctor_names_a_broken_imageio_ffmpeg_variable_which_recording_does_not_need(monkeypatch, tmp_path):
    from gymview.doctor import run_checks
    from gymview.video import VideoRecorder

    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", "/nonexistent/ffmpeg")
    (check,) = run_checks(["ffmpeg"])
    assert check.status == "FAIL" and "IMAGEIO_FFMPEG_EXE='/nonexistent/ffmpeg'" in check.detail
    with VideoRecorder(tmp_path / "v.mp4") as recorder:  # encoded in-process by PyAV
        recorder.write(np.zeros((8, 8, 3), np.uint8))
    assert recorder.frames_written == 1
    monkeypatch.delenv("IMAGEIO_FFMPEG_EXE")
    (check,) = run_checks(["ffmpeg"])
    assert check.status == "ok" and "ffmpeg version" in check.detail


def record_command(tmp_path, *arguments, environment=None):
    return subprocess.run(
        [sys.executable, "-m", "gymview", "record", *arguments, "--out", str(tmp_path / "out"), "--no-progress"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**(os.environ if environment is None else environment), "PYTHONPATH": str(ROOT)},
    )


def headless_environment():
    """This machine's environment as a server's without a display or any OpenGL setting."""
    return {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MUJOCO_GL", "PYOPENGL_PLATFORM")}


def test_record_renders_mujoco_on_a_server_with_no_display_or_opengl_setting(tmp_path):
    pytest.importorskip("mujoco")
    done = record_command(tmp_path, "InvertedPendulum-v5", "--episodes", "2", "--max-steps", "5", "--workers", "2",
                          environment=headless_environment())
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "out").glob("*.mp4"))) == 2


def test_a_batch_whose_workers_cannot_render_says_how_to_make_them_render(tmp_path):
    pytest.importorskip("mujoco")
    code = (
        "import gymview\n"
        "result = gymview.record_batch('InvertedPendulum-v5', None, episodes=1, max_steps=5, workers=1, out='out',"
        " progress=False)\n"
        "print(result.failed[0]['error'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**headless_environment(), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "could not render in the worker: run gymview.setup()" in done.stdout
    assert "MUJOCO_GL=osmesa" in done.stdout and "python -m gymview doctor" in done.stdout


@pytest.mark.parametrize("env_id", ["ALE/Breakout-v5", "ale_py:ALE/Breakout-v5"])
def test_record_takes_plugin_envs_like_gym_make(tmp_path, env_id):
    pytest.importorskip("ale_py")  # gymview[atari]; absent only where the core is tested alone
    from video_checks import decode

    done = record_command(tmp_path, env_id, "--episodes", "2", "--workers", "2")
    assert done.returncode == 0, done.stderr
    videos = sorted((tmp_path / "out").glob("*.mp4"))
    assert [v.name for v in videos] == ["episode-0000.mp4", "episode-0001.mp4"]
    assert all(decode(v).shape[1:] == (210, 160, 3) and len(decode(v)) > 10 for v in videos)


def test_record_imports_the_module_that_registers_an_env_in_every_worker(tmp_path):
    (tmp_path / "my_envs.py").write_text(
        "import gymnasium as gym\n"
        "gym.register('Tiny-v0', entry_point='gymnasium.envs.classic_control:CartPoleEnv', max_episode_steps=5)\n"
    )
    done = record_command(tmp_path, "Tiny-v0", "--import", "my_envs", "--episodes", "2", "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "out").glob("*.mp4"))) == 2
    done = record_command(tmp_path, "my_envs:Tiny-v0", "--episodes", "1", "--workers", "1")
    assert done.returncode == 0, done.stderr


def test_record_says_what_to_import_for_an_unknown_namespace(tmp_path):
    done = record_command(tmp_path, "Foo/Bar-v0", "--episodes", "1")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "no package registered the env namespace 'Foo'" in done.stderr and "--import MODULE" in done.stderr
