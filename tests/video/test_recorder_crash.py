"""Crash safety: a recording cut short by SIGKILL of Python *and* ffmpeg still decodes."""

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest
from video_checks import (
    decode,
    ffmpeg_processes_writing,
    pattern,
    psnr,
    top_level_boxes,
)

ROOT = Path(__file__).resolve().parents[2]

ENDLESS_RECORDING = """
import sys
sys.path.insert(0, {tests!r})
from gymview import VideoRecorder
from video_checks import pattern
recorder = VideoRecorder({path!r}, fps=30, crf=18)
recorder.write(pattern(0))
print(recorder._feed.process.pid, flush=True)
i = 1
while True:
    recorder.write(pattern(i))
    i += 1
"""


def frames_decodable(path):
    try:
        return decode(path).shape[0]
    except (RuntimeError, StopIteration, OSError):
        return 0


@contextlib.contextmanager
def recording_child(script: str, path):
    """Run a recording ``script`` (a template of ``tests`` and ``path``) in a child Python;
    yield (child, the pid of its ffmpeg, which the script prints first); kill the child after."""
    source = script.format(tests=str(ROOT / "tests" / "helpers"), path=str(path))
    child = subprocess.Popen([sys.executable, "-c", source], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        yield child, int(child.stdout.readline())
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


@pytest.mark.slow
def test_sigkill_of_python_and_ffmpeg_leaves_a_playable_file(tmp_path):
    path = tmp_path / "crash.mp4"
    with recording_child(ENDLESS_RECORDING, path) as (child, ffmpeg_pid):
        assert psutil.Process(ffmpeg_pid).ppid() == child.pid
        # Wait (a guard, not a timing) until at least three seconds of video are on disk.
        for _ in range(600):
            if frames_decodable(path) >= 90:
                break
            threading.Event().wait(0.05)
        os.kill(ffmpeg_pid, signal.SIGKILL)
        os.kill(child.pid, signal.SIGKILL)
    psutil.Process(ffmpeg_pid).wait() if psutil.pid_exists(ffmpeg_pid) else None
    assert "moof" in top_level_boxes(path)  # fragmented: the index travels with each fragment
    frames = decode(path)
    assert frames.shape[0] >= 90 and frames.shape[1:] == (96, 128, 3)
    for index, frame in enumerate(frames):  # every surviving frame is the right one, in order
        assert psnr(frame, pattern(index)) > 30, index
    assert not ffmpeg_processes_writing(path)


KILLED_AFTER_60_FRAMES = """
import sys, threading
sys.path.insert(0, {tests!r})
from gymview import VideoRecorder
from video_checks import pattern
recorder = VideoRecorder({path!r}, fps=30, crf=18)
for i in range(60):
    recorder.write(pattern(i))
while recorder._feed.delivered < 60:  # every frame is in ffmpeg's hands
    threading.Event().wait(0.01)
print(recorder._feed.process.pid, flush=True)
threading.Event().wait()
"""


@pytest.mark.slow
def test_sigkill_of_python_alone_lets_ffmpeg_finish_every_frame(tmp_path):
    path = tmp_path / "orphan.mp4"
    with recording_child(KILLED_AFTER_60_FRAMES, path) as (child, ffmpeg_pid):
        ffmpeg = psutil.Process(ffmpeg_pid)
        child.kill()
    ffmpeg.wait(timeout=60)  # it sees end-of-input, finishes the file and exits by itself
    frames = decode(path)
    assert frames.shape[0] == 60
    assert min(psnr(frame, pattern(i)) for i, frame in enumerate(frames)) > 30
