"""gymview.export_episode: the episode with its charts under it, as MP4 and GIF, at the episode's speed."""

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image, ImageSequence
from video_checks import decode, psnr

import gymview
from gymview.episodes.charts import ROW_HEIGHT
from gymview.episodes.clips import read_frames


@pytest.fixture(scope="module")
def episode(tmp_path_factory):
    """A recorded MountainCar episode (30 fps) of 40 steps with a logged value."""
    folder = tmp_path_factory.mktemp("videos")
    env = gymview.RecordVideo(gym.make("MountainCar-v0", render_mode="rgb_array", max_episode_steps=40), folder)
    observation, _ = env.reset(seed=0)
    done = False
    while not done:
        observation, _, terminated, truncated, _ = env.step(2 if observation[1] >= 0 else 0)
        env.log(speed=float(observation[1]) * 1000)
        done = terminated or truncated
    env.close()
    return folder / "rl-video-episode-0.mp4"


def cursor_x(picture, top, bottom):
    """The column of the cursor's red line between rows top and bottom."""
    band = picture[top:bottom].astype(int)
    red = (band[..., 0] - band[..., 1] > 60) & (band[..., 0] - band[..., 2] > 60)  # after H.264, red dims
    return int(np.argmax(red.sum(axis=0)))


def test_an_mp4_plays_every_frame_at_the_video_s_rate_with_the_cursor_moving(episode, tmp_path):
    out = gymview.export_episode(episode, tmp_path / "out.mp4", values=["reward", "speed"])
    import av

    with av.open(str(out)) as container:
        assert container.streams.video[0].average_rate == 30
    frames = decode(out)
    rows = gymview.read_steps(episode)
    assert frames.shape[0] == len(rows) == 41
    assert frames.shape[1] >= 400 + 2 * ROW_HEIGHT and frames.shape[2] == 600
    for index in (0, 20, 40):
        assert psnr(frames[index, :400], next(read_frames(episode, index, 1))) > 30
        x = cursor_x(frames[index], 400, 400 + 2 * ROW_HEIGHT)
        assert abs(x - (index + 0.5) / 41 * 600) <= 2


# at 60 fps every other frame is kept, each lasting two frames' time
@pytest.mark.parametrize(("fps", "kept", "every"), [(None, 41, 1), (60, 21, 2)])
def test_a_gif_plays_at_the_episode_s_speed(episode, tmp_path, fps, kept, every):
    out = gymview.export_episode(episode, tmp_path / "out.gif", values=["return"], fps=fps, max_width=300)
    with Image.open(out) as gif:
        durations = [frame.info["duration"] for frame in ImageSequence.Iterator(gif)]
        assert gif.size[0] == 300
    assert len(durations) == kept and min(durations) >= 20  # browsers slow down shorter frames
    assert sum(durations) == pytest.approx(kept * every / (fps or 30) * 1000, abs=10)


def test_a_compare_s_player_exports_its_policies_side_by_side(tmp_path):
    result = gymview.compare({"left": lambda obs: 0, "right": lambda obs: 1}, "CartPole-v1", seed=1)
    out = gymview.export_episode(result.player(), tmp_path / "compare.mp4")
    frames = decode(out)
    assert frames.shape[0] == max(row["steps"] for row in result.table) + 1
    assert frames.shape[2] == 2 * 600 + 6


def test_bad_exports_say_what_to_give(episode, tmp_path):
    with pytest.raises(ValueError, match=r"\.mp4, \.gif or \.html"):
        gymview.export_episode(episode, tmp_path / "out.avi")
    with pytest.raises(ValueError, match="fps must be"):
        gymview.export_episode(episode, tmp_path / "out.gif", fps=0)
    with pytest.raises(ValueError, match="no column 'entropy'"):
        gymview.export_episode(episode, tmp_path / "out.gif", values=["entropy"])


def test_an_html_page_plays_the_states_the_episode_s_frames_were_drawn_from(episode, tmp_path):
    import json

    from gymview.episodes.kept_states import read_states
    from gymview.episodes.page_file import page_data, unpacked_states, unpacked_values

    scene, states = read_states(episode)  # kept by the recording: MountainCar's frames are drawn from its state
    rows = gymview.read_steps(episode)
    assert scene["kind"] == "mountaincar" and len(states) == len(rows) == 41
    out = gymview.export_episode(episode, tmp_path / "page" / "episode.html", values=["reward", "speed"])
    data = json.loads(page_data(out.read_text()))
    assert data["scenes"] == [scene] and data["fps"] == 30
    np.testing.assert_allclose(unpacked_states(data["segments"][0]), states, rtol=0, atol=1e-5)
    speed = unpacked_values(data)["speed"][0]
    assert speed[1:] == pytest.approx([row["speed"] for row in rows[1:]], rel=1e-6)
    assert speed[0] is None  # the reset's row logged nothing


def test_an_html_page_needs_kept_states_and_one_episode(tmp_path):
    import picture_envs  # noqa: F401 (registers gymview-tests/Pictures-v0, an env the page cannot draw)

    env = gymview.RecordVideo(gym.make("gymview-tests/Pictures-v0", render_mode="rgb_array"), tmp_path)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    env.close()
    video = tmp_path / "rl-video-episode-0.mp4"
    with pytest.raises(ValueError, match=r"has none kept beside it \(rl-video-episode-0.states.npz\).*as .mp4 or .gif"):
        gymview.export_episode(video, tmp_path / "episode.html")
    result = gymview.compare({"left": lambda obs: 0, "right": lambda obs: 1}, "CartPole-v1", seed=1)
    with pytest.raises(ValueError, match="an .html page holds one episode; this player shows 2"):
        gymview.export_episode(result.player(), tmp_path / "compare.html")


def test_an_earlier_run_s_states_are_never_taken_for_a_new_video_s(tmp_path):
    for fast_render in (True, False):  # the second run draws with env.render(): no states of its own
        env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), tmp_path / "v",
                                  fast_render=fast_render)  # fmt: skip
        env.reset(seed=0)
        for _ in range(3 if fast_render else 5):
            env.step(0)
        env.close()
    with pytest.raises(ValueError, match="has none kept beside it"):
        gymview.export_episode(tmp_path / "v" / "rl-video-episode-0.mp4", tmp_path / "episode.html")


def test_states_that_cannot_be_written_leave_the_loop_and_the_video_whole(tmp_path, monkeypatch):
    import gymview.video.record_video as record_video

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(record_video, "write_states", full_disk)
    env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), tmp_path / "v")
    env.reset(seed=0)
    for _ in range(4):
        env.step(0)
    with pytest.warns(RuntimeWarning, match=r"states of rl-video-episode-0.mp4 were not kept .*No space left"):
        env.reset()  # ends the first episode's recording
    env.close()
    assert len(gymview.read_steps(tmp_path / "v" / "rl-video-episode-0.mp4")) == 5
