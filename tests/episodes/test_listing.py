"""Tables of episodes: a folder of recordings and a record_batch result, each episode opening in the player."""

import gymnasium as gym
import pytest

import gymview
from gymview.episodes.listing import EpisodeBrowser


def record(folder, seeds):
    env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), folder,
                              episode_trigger=lambda episode: True)
    for seed in seeds:
        observation, _ = env.reset(seed=seed)
        done = False
        while not done:
            observation, _, terminated, truncated, _ = env.step(int(observation[2] > 0))
            done = terminated or truncated
    env.close()


def test_show_video_of_a_folder_of_recordings_lists_its_episodes(tmp_path):
    record(tmp_path / "videos", seeds=range(3))
    browser = gymview.show_video(tmp_path / "videos")
    assert isinstance(browser, EpisodeBrowser)
    for number, row in enumerate(browser.rows):
        rows = gymview.read_steps(tmp_path / "videos" / f"rl-video-episode-{number}.mp4")
        assert row == {"file": f"rl-video-episode-{number}.mp4", "episode": number, "steps": rows[-1]["step"],
                       "return": rows[-1]["return"], "terminated": True, "truncated": False}
    player = browser.open(2)
    assert player.title == "rl-video-episode-2.mp4" and player.count == browser.rows[2]["steps"] + 1
    data = browser._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data and "rl-video-episode-1.mp4" in data["text/html"]
    assert type(gymview.show_video(tmp_path / "videos", episodes=False)).__name__ == "VideoGrid"


def test_a_folder_without_step_tables_shows_players(tmp_path):
    env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), tmp_path / "videos", steps=False)
    env.reset(seed=0)
    env.step(0)
    env.close()
    assert type(gymview.show_video(tmp_path / "videos")).__name__ == "VideoGrid"
    with pytest.raises(ValueError, match="step table"):
        gymview.show_video(tmp_path / "videos", episodes=True)


@pytest.mark.parametrize("layout", ["per-episode", "concat"])
def test_a_batch_result_lists_every_episode_and_opens_the_kept_ones(tmp_path, layout):
    result = gymview.record_batch("CartPole-v1", lambda obs: int(obs[2] > 0), episodes=4, out=tmp_path, seed=1,
                                  keep=lambda episode: episode.index % 2 == 0, layout=layout, workers=1,
                                  progress=False)
    browser = result.browse(values=["reward", "return"])
    assert [row["episode"] for row in browser.rows] == [0, 1, 2, 3]
    assert [row["return"] for row in browser.rows] == [row["return"] for row in result.table]
    for index in (0, 2):
        player = browser.open(index)
        assert player.count == result.table[index]["frames"]
        assert player.readout(player.count - 1).startswith(f"step {result.table[index]['steps']} · reward 1 · "
                                                           f"return {result.table[index]['return']:g}")
    with pytest.raises(ValueError, match="was not recorded"):
        browser.open(1)
    assert "application/vnd.jupyter.widget-view+json" in result._repr_mimebundle_()
