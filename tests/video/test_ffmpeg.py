import gc
import os
import signal
import sys

import numpy as np
import psutil
import pytest
from video_checks import decode, top_level_boxes

from gymview.video import ffmpeg
from gymview.video.ffmpeg import (
    FFmpegError,
    FFmpegNotFoundError,
    FFmpegProcess,
    encode_command,
    even_size,
    find_ffmpeg,
    fps_text,
    remux_command,
)


@pytest.fixture
def real_ffmpeg(monkeypatch):
    monkeypatch.delenv(ffmpeg.ENV_VAR, raising=False)
    return find_ffmpeg()


def test_environment_variable_comes_first(real_ffmpeg, monkeypatch, tmp_path):
    link = tmp_path / "my-ffmpeg"
    link.symlink_to(real_ffmpeg)
    monkeypatch.setenv(ffmpeg.ENV_VAR, str(link))
    assert find_ffmpeg() == str(link)


def test_environment_variable_pointing_nowhere_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv(ffmpeg.ENV_VAR, str(tmp_path / "nothing"))
    with pytest.raises(FFmpegNotFoundError, match=ffmpeg.ENV_VAR):
        find_ffmpeg()


def test_imageio_ffmpeg_binary_is_the_default(real_ffmpeg):
    import imageio_ffmpeg

    assert real_ffmpeg == imageio_ffmpeg.get_ffmpeg_exe()


def test_falls_back_to_path_then_names_the_pip_package(real_ffmpeg, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # import fails as if not installed
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "ffmpeg").symlink_to(real_ffmpeg)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert find_ffmpeg() == str(tmp_path / "bin" / "ffmpeg")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(FFmpegNotFoundError, match="pip install imageio-ffmpeg"):
        find_ffmpeg()


def test_even_sizes_pad_one_pixel_right_and_bottom():
    assert even_size(600, 400) == (600, 400)
    assert even_size(601, 401) == (602, 402)
    assert "-vf" not in encode_command("ffmpeg", "a.mp4", width=600, height=400, fps=30)
    command = encode_command("ffmpeg", "a.mp4", width=601, height=401, fps=30)
    assert command[command.index("-vf") + 1] == "pad=602:402:0:0:black"


def test_encode_command_contents():
    command = encode_command("ffmpeg", "out.mp4", width=64, height=48, fps=30000 / 1001, crf=18, preset="fast", threads=2)
    text = " ".join(command)
    assert "-f rawvideo -pix_fmt rgb24 -s 64x48 -r 30000/1001 -i pipe:0" in text
    assert "-c:v libx264 -pix_fmt yuv420p -g 30 -crf 18 -preset fast -threads 2" in text
    assert f"-movflags {ffmpeg.FRAGMENTED_MOVFLAGS} -flush_packets 1" in text
    plain = encode_command("ffmpeg", "out.mp4", width=64, height=48, fps=30, fragmented=False)
    assert "-flush_packets" not in plain and plain[plain.index("-movflags") + 1] == "+faststart"
    other = encode_command("ffmpeg", "out.mp4", width=64, height=48, fps=30, codec="mpeg4")
    assert "-crf" not in other and "-preset" not in other
    assert remux_command("ffmpeg", "a.mp4", "b.mp4")[-5:] == ["-movflags", "+faststart", "-f", "mp4", "b.mp4"]


@pytest.mark.parametrize("fps", [0, -1, float("nan"), float("inf"), "30", True, None])
def test_bad_fps_is_refused(fps):
    with pytest.raises((ValueError, TypeError), match="fps"):
        fps_text(fps)


def test_bad_size_is_refused():
    with pytest.raises(ValueError, match="width=0"):
        encode_command("ffmpeg", "a.mp4", width=0, height=4, fps=30)


def test_process_runs_in_its_own_session_and_encodes(real_ffmpeg, tmp_path):
    path = tmp_path / "v.mp4"
    process = FFmpegProcess(encode_command(real_ffmpeg, path, width=32, height=32, fps=10))
    assert os.getsid(process.pid) != os.getsid(0)  # Ctrl-C to our group does not reach it
    assert os.getpgid(process.pid) != os.getpgid(0)
    for i in range(25):
        process.write(np.full((32, 32, 3), i * 10, np.uint8).tobytes())
    assert process.finish() == 0
    assert process.finish() == 0  # idempotent
    assert not psutil.pid_exists(process.pid)
    frames = decode(path)
    assert frames.shape == (25, 32, 32, 3)
    assert "moof" in top_level_boxes(path)  # fragmented while recording


def test_failure_reports_ffmpegs_own_words(real_ffmpeg, tmp_path):
    command = encode_command(real_ffmpeg, tmp_path / "v.mp4", width=32, height=32, fps=10, codec="no-such-codec")
    process = FFmpegProcess(command)
    with pytest.raises(FFmpegError) as info:
        for _ in range(1000):  # ffmpeg exits at once; a write soon finds the pipe broken
            process.write(bytes(32 * 32 * 3))
    message = str(info.value)
    assert "no-such-codec" in message and "exit code" in message and "command:" in message
    assert process.finish() != 0


def test_finish_kills_an_ffmpeg_that_does_not_stop(real_ffmpeg):
    # A realtime source ignores the end of stdin and would run forever.
    process = FFmpegProcess([real_ffmpeg, "-re", "-f", "lavfi", "-i", "color=size=16x16:rate=5", "-f", "null", "-"])
    assert process.finish(timeout=0.5) == -signal.SIGKILL
    assert not psutil.pid_exists(process.pid)


def test_garbage_collection_shuts_ffmpeg_down(real_ffmpeg, tmp_path):
    process = FFmpegProcess(encode_command(real_ffmpeg, tmp_path / "v.mp4", width=16, height=16, fps=10))
    process.write(bytes(16 * 16 * 3))
    pid = process.pid
    del process
    gc.collect()
    assert not psutil.pid_exists(pid)  # stdin closed, ffmpeg finished its file, exited and was reaped
    assert decode(tmp_path / "v.mp4").shape[0] == 1


def test_write_after_finish_is_an_error(real_ffmpeg):
    process = FFmpegProcess([real_ffmpeg, "-hide_banner", "-version"])
    process.finish()
    with pytest.raises(FFmpegError, match="already been finished"):
        process.write(b"x")
