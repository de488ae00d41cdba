import base64
import html
import re
import sys

import numpy as np
import pytest

from gymview import VideoRecorder, show_video
from gymview.video.player import VideoGrid


@pytest.fixture
def videos(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VSCODE_PID", raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    folder = tmp_path / "videos"
    for name in ("ep-10.mp4", "ep-2.mp4", "ep-1.mp4"):
        with VideoRecorder(folder / name) as recorder:
            recorder.write(np.zeros((16, 16, 3), np.uint8))
    (folder / "notes.txt").write_text("not a video")
    (folder / ".ep-3.mp4.gymview-remux.mp4").write_bytes(b"half-written")
    return folder


def sources(grid):
    return [html.unescape(s) for s in re.findall(r'<source src="([^"]*)"', grid._repr_html_())]


def test_one_small_file_is_embedded_and_plays_back_the_same_bytes(videos):
    grid = show_video(videos / "ep-1.mp4")
    assert isinstance(grid, VideoGrid) and grid.embedded == [True]
    (source,) = sources(grid)
    assert source.startswith("data:video/mp4;base64,")
    assert base64.b64decode(source.split(",", 1)[1]) == (videos / "ep-1.mp4").read_bytes()
    assert "<video" in grid.html and "controls" in grid.html and "muted" in grid.html


def test_folder_in_natural_order_skipping_non_videos_and_hidden_files(videos):
    grid = show_video(videos)
    assert [p.name for p in grid.paths] == ["ep-1.mp4", "ep-2.mp4", "ep-10.mp4"]
    assert grid.html.count("<figcaption") == 3 and "repeat(3,max-content)" in grid.html


def test_large_files_are_linked_by_relative_path(videos, tmp_path):
    (videos / "with space.mp4").write_bytes((videos / "ep-1.mp4").read_bytes())
    grid = show_video([videos / "with space.mp4", "videos/ep-2.mp4"], embed_limit=10)
    assert grid.embedded == [False, False]
    assert sources(grid) == ["videos/with%20space.mp4", "videos/ep-2.mp4"]


def test_embed_and_link_can_be_forced(videos):
    assert show_video(videos, embed=False).embedded == [False] * 3
    assert show_video(videos, embed=True, embed_limit=10).embedded == [True] * 3


@pytest.mark.parametrize("where", ["colab", "vscode"])
def test_colab_and_vscode_always_embed(videos, monkeypatch, where):
    if where == "colab":
        monkeypatch.setitem(sys.modules, "google.colab", object())
    else:
        monkeypatch.setenv("VSCODE_PID", "1")
    assert show_video(videos, embed_limit=10).embedded == [True] * 3


def test_captions_are_escaped(videos):
    grid = show_video([videos / "ep-1.mp4", videos / "ep-2.mp4"], captions=["<script>alert(1)</script>", "a & b"])
    assert "<script>" not in grid.html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in grid.html and "a &amp; b" in grid.html


def test_file_names_are_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / '"><b>x.mp4'
    with VideoRecorder(path) as recorder:
        recorder.write(np.zeros((16, 16, 3), np.uint8))
    text = show_video(path, embed=False).html
    assert "<b>" not in text and '"><b>' not in text


def test_files_outside_the_notebook_folder_get_a_warning(videos, monkeypatch):
    monkeypatch.chdir(videos)
    (videos / "inner").mkdir()
    monkeypatch.chdir(videos / "inner")
    with pytest.warns(UserWarning, match="outside the notebook's folder"):
        show_video(videos / "ep-1.mp4", embed=False)


def test_clear_errors(videos):
    with pytest.raises(FileNotFoundError, match="no video at 'nope.mp4'"):
        show_video("nope.mp4")
    with pytest.raises(FileNotFoundError, match="nope.mp4"):
        show_video([videos / "ep-1.mp4", "nope.mp4"])
    with pytest.raises(ValueError, match="not a video"):
        show_video(videos / "notes.txt")
    (videos / "empty").mkdir()
    with pytest.raises(ValueError, match="no video files"):
        show_video(videos / "empty")
    with pytest.raises(ValueError, match="empty list"):
        show_video([])
    with pytest.raises(ValueError, match="one caption per video"):
        show_video(videos, captions=["a"])
    with pytest.raises(ValueError, match="width"):
        show_video(videos, width=0)
    with pytest.raises(ValueError, match="columns"):
        show_video(videos, columns=0)
    with pytest.raises(TypeError, match="path, a folder or a list"):
        show_video(3)
