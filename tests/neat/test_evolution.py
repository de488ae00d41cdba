"""gymview.neat.record: the champion's episodes to video, on the env it was evolved on."""

import gymnasium as gym
import pytest

pytest.importorskip("neat", reason="needs neat-python: pip install 'gymview[neat]'")
import gymview.neat as gn  # noqa: E402


def evolved(make_env):
    config = gn.config_for(make_env(), pop_size=10)
    return gn.evolve(make_env, config, generations=1, workers=0, panel=False, seed=0)


def test_record_remakes_the_env_with_the_settings_it_was_evolved_with(tmp_path):
    result = evolved(lambda: gym.make("MountainCar-v0", max_episode_steps=25, render_mode="rgb_array"))
    table = gn.record(result, episodes=2, out=tmp_path, workers=1, progress=False).table
    # MountainCar never reaches its goal in 25 steps: each episode is cut where the evolved env cut it, not at 200
    assert [row["steps"] for row in table] == [25, 25] and all(row["error"] is None for row in table)
    assert all(row["file"] is not None for row in table)


def test_record_takes_an_env_evolved_from_its_id(tmp_path):
    result = evolved(lambda: gym.make("CartPole-v1"))
    table = gn.record(result, episodes=1, out=tmp_path, workers=1, progress=False).table
    assert table[0]["error"] is None and table[0]["file"] is not None


def test_record_refuses_a_result_it_cannot_remake_and_says_what_to_do(tmp_path):
    result = evolved(lambda: gym.make("CartPole-v1"))
    result.env.unwrapped.spec = None
    with pytest.raises(ValueError, match="record_batch"):
        gn.record(result, episodes=1, out=tmp_path)
