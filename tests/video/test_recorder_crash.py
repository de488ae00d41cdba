"""Crash safety: a recording cut short by SIGKILL of its process still plays to its last fragment."""

from pathlib import Path

import pytest
from video_checks import decode, kill_once_on_disk, pattern, psnr, top_level_boxes

ROOT = Path(__file__).resolve().parents[2]

ENDLESS_RECORDING = """
import sys
sys.path.insert(0, {tests!r})
from gymview import VideoRecorder
from video_checks import pattern
recorder = VideoRecorder({path!r}, fps=30, crf=18)
i = 0
while True:
    recorder.write(pattern(i))
    i += 1
"""

ENDLESS_RENDERED_EPISODE = """
import gymnasium as gym, gymview
env = gymview.RecordVideo(gym.make("MountainCar-v0", render_mode="rgb_array", max_episode_steps=None), {folder!r})
observation, _ = env.reset(seed=0)
while True:
    observation, *_ = env.step(2 if observation[1] >= 0 else 0)
"""


@pytest.mark.slow
def test_sigkill_of_the_recording_process_leaves_a_file_that_plays_to_its_last_fragment(tmp_path):
    path = tmp_path / "crash.mp4"
    kill_once_on_disk(ENDLESS_RECORDING.format(tests=str(ROOT / "tests" / "helpers"), path=str(path)), path, 90)
    assert "moof" in top_level_boxes(path)  # fragmented: the index travels with each fragment
    frames = decode(path)
    assert frames.shape[0] >= 90 and frames.shape[1:] == (96, 128, 3)
    for index, frame in enumerate(frames):  # every surviving frame is the right one, in order
        assert psnr(frame, pattern(index)) > 30, index


@pytest.mark.slow
def test_sigkill_during_a_drawn_recording_leaves_its_frames_up_to_the_last_fragment(tmp_path):
    # RecordVideo draws a renderer's states 32 at a time: what was drawn and encoded before the kill
    # is in whole one-second fragments on disk.
    path = tmp_path / "rl-video-episode-0.mp4"
    kill_once_on_disk(ENDLESS_RENDERED_EPISODE.format(folder=str(tmp_path)), path, 60)
    assert "moof" in top_level_boxes(path)
    frames = decode(path)
    assert frames.shape[0] >= 60 and frames.shape[1:] == (400, 600, 3)
