"""gymview.show_episode: what the player holds and the picture it leaves in a saved notebook."""

import base64
import io

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image
from video_checks import psnr

import gymview
from gymview.episodes.charts import ROW_HEIGHT
from gymview.episodes.clips import clips_in, read_frames


def recorded(folder, seeds=(0,), **options):
    env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), folder, **options)
    for seed in seeds:
        observation, _ = env.reset(seed=seed)
        done = False
        while not done:
            observation, _, terminated, truncated, _ = env.step(int(observation[2] > 0))
            env.log(value=float(observation[1]))
            done = terminated or truncated
    env.close()


def test_the_player_holds_the_video_and_the_table_as_columns(tmp_path):
    recorded(tmp_path / "videos")
    video = tmp_path / "videos" / "rl-video-episode-0.mp4"
    rows = gymview.read_steps(video)
    player = gymview.show_episode(video, values=["reward", "value"])
    assert player._videos == [video.read_bytes()] and player.fps == 50.0
    (episode,) = player._episodes
    assert episode["count"] == len(rows) and episode["start"] == 0
    assert episode["columns"]["reward"] == [row["reward"] for row in rows]
    assert episode["columns"]["value"][0] is None  # nothing logged on the reset's frame: null, as JSON has no NaN
    player.frame = 5
    assert player.readout() == f"step 5 · reward 1 · value {rows[5]['value']:.4g}"
    assert player.readout(len(rows) - 1).endswith("terminated")


def test_the_default_charts_are_reward_return_the_action_and_the_logged_values(tmp_path):
    recorded(tmp_path / "videos")
    player = gymview.show_episode(tmp_path / "videos" / "rl-video-episode-0.mp4")
    assert player.values == ["reward", "return", "action", "value"]


def test_one_episode_of_a_video_that_holds_several(tmp_path):
    recorded(tmp_path / "videos", seeds=(0, 1, 2), step_trigger=lambda step: step == 0,
             episode_trigger=lambda episode: False, video_length=100_000)  # fmt: skip
    video = tmp_path / "videos" / "rl-video-step-0.mp4"
    clips = clips_in(video)
    assert [clip.episode for clip in clips] == [0, 1, 2]
    assert [clip.start for clip in clips] == [0, clips[0].count, clips[0].count + clips[1].count]
    player = gymview.show_episode(video, episode=1)
    assert player._episodes[0]["start"] == clips[1].start and player.count == clips[1].count
    # the player's first frame is the episode's: the picture it leaves starts with it
    first = next(read_frames(video, clips[1].start, 1))
    assert psnr(np.asarray(player.picture())[: first.shape[0], : first.shape[1]], first) > 40
    with pytest.raises(ValueError, match=r"no episode 7 .* holds episodes \[0, 1, 2\]"):
        gymview.show_episode(video, episode=7)


def test_a_value_the_table_lacks_is_an_error_that_lists_the_columns(tmp_path):
    recorded(tmp_path / "videos")
    with pytest.raises(ValueError, match="no column 'entropy'.*value"):
        gymview.show_episode(tmp_path / "videos" / "rl-video-episode-0.mp4", values=["entropy"])
    with pytest.raises(FileNotFoundError, match="no video"):
        gymview.show_episode(tmp_path / "missing.mp4")


def test_the_picture_is_the_first_frame_with_the_charts_under_it(tmp_path):
    recorded(tmp_path / "videos")
    video = tmp_path / "videos" / "rl-video-episode-0.mp4"
    player = gymview.show_episode(video, values=["reward", "return", "value"])
    data, _ = player._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    picture = np.asarray(Image.open(io.BytesIO(base64.b64decode(data["image/png"]))).convert("RGB"))
    first = next(read_frames(video, 0, 1))
    assert picture.shape[0] >= first.shape[0] + 3 * ROW_HEIGHT and picture.shape[1] == first.shape[1]
    assert psnr(picture[: first.shape[0]], first) > 40
    charts = picture[first.shape[0] : first.shape[0] + 3 * ROW_HEIGHT]
    assert (np.abs(charts.astype(int) - [31, 119, 180]).sum(axis=2) < 60).sum() > 100  # the lines are drawn
