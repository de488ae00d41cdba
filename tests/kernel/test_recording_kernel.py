"""Recording inside a real IPython kernel: Ctrl-C (interrupt) and shutdown never cost the video."""

import sys
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
from video_checks import decode, top_level_boxes  # noqa: E402

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


def assert_plain_mp4(path, frame_count):
    boxes = top_level_boxes(path)
    assert "moof" not in boxes and boxes.index("moov") < boxes.index("mdat"), boxes
    assert decode(path).shape[0] == frame_count


ENDLESS_WITH = """
import numpy as np
from gymview import VideoRecorder
frame = np.zeros((120, 160, 3), np.uint8)
with VideoRecorder("interrupted.mp4", fps=30) as recorder:
    i = 0
    while True:
        frame[:, :, 0] = i % 256
        recorder.write(frame)
        i += 1
        if i == 100:
            print("recording", flush=True)
"""


def test_interrupt_inside_with_block_closes_a_complete_video(kernel, tmp_path):
    reply = kernel.execute(ENDLESS_WITH, until_text="recording", on_text=kernel.manager.interrupt_kernel).reply
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    closed, written = kernel.execute("print(recorder.closed, recorder.frames_written)").stdout.split()
    assert closed == "True" and int(written) >= 100
    assert_plain_mp4(tmp_path / "interrupted.mp4", int(written))


ENDLESS_RECORD_VIDEO = """
import gymnasium as gym
from gymview import RecordVideo
env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos", episode_trigger=lambda e: True)
env.reset(seed=0)
steps = 0
while True:
    _, _, terminated, truncated, _ = env.step(steps % 2)
    steps += 1
    if terminated or truncated:
        env.reset()
    if steps == 150:
        print("recording", flush=True)
"""


def test_interrupt_keeps_the_recording_open_until_env_close_finishes_every_video(kernel, tmp_path):
    reply = kernel.execute(ENDLESS_RECORD_VIDEO, until_text="recording", on_text=kernel.manager.interrupt_kernel).reply
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    recording, recorded = kernel.execute("print(env.recording, env.frames_recorded)").stdout.split()
    folder = tmp_path / "videos"
    if recording == "True" and int(recorded) > 0:
        # Ctrl-C landed inside an episode with frames: its video is open, and env.close() finishes it below
        assert any(folder.glob("*.mp4"))
    reply = kernel.execute("env.close()").reply
    assert reply["status"] == "ok", f"{reply['ename']}: {reply['evalue']}"
    videos = sorted(folder.glob("*.mp4"))
    assert len(videos) >= 2
    for video in videos:
        assert "moof" not in top_level_boxes(video) and decode(video).shape[0] > 0


ENDLESS_UNCLOSED = """
import numpy as np
from gymview import VideoRecorder
frame = np.zeros((120, 160, 3), np.uint8)
recorder = VideoRecorder("interrupted.mp4", fps=30)
i = 0
while True:
    frame[:, :, 1] = i % 256
    recorder.write(frame)
    i += 1
    if i == 100:
        print("recording", flush=True)
"""


def test_kernel_shutdown_finishes_an_unclosed_video(kernel, tmp_path):
    reply = kernel.execute(ENDLESS_UNCLOSED, until_text="recording", on_text=kernel.manager.interrupt_kernel).reply
    assert reply["ename"] == "KeyboardInterrupt"
    output = kernel.execute("print(recorder.closed, recorder.frames_written)").stdout
    closed, written = output.split()
    assert closed == "False"
    kernel_process = psutil.Process(kernel.manager.provisioner.process.pid)
    kernel.manager.shutdown_kernel(now=False)  # a clean shutdown: the interpreter exits, atexit runs
    kernel_process.wait(timeout=60)
    path = tmp_path / "interrupted.mp4"
    assert_plain_mp4(path, int(written))
