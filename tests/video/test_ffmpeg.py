import gc
import os
import signal
import sys

import numpy as np
import psutil
import pytest
from video_checks import decode, top_level_boxes

from gymview.video import ffmpeg
from gymview.video.ffmpeg import FFmpegNotFoundError, find_ffmpeg, fps_text


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


@pytest.mark.parametrize("fps", [0, -1, float("nan"), float("inf"), "30", True, None])
def test_bad_fps_is_refused(fps):
    with pytest.raises((ValueError, TypeError), match="fps"):
        fps_text(fps)