"""gymview.compare: policies on the same seeds in lockstep give what each gives alone."""

import gymnasium as gym
import numpy as np
import picture_envs  # noqa: F401 (registers gymview-tests/Pictures-v0)
import pytest
from video_checks import decode

import gymview


def balance(observation):
    gymview.log(angle=float(observation[2]))
    return int(observation[2] + 0.2 * observation[3] > 0)


def lean(observation):
    return int(observation[2] > 0.05)


def played_alone(policy, seed, max_steps=None):
    """The rewards of one CartPole episode of ``policy`` from ``seed``, in a loop of its own."""
    env = gym.make("CartPole-v1")
    observation, _ = env.reset(seed=seed)
    rewards = []
    while True:
        observation, reward, terminated, truncated, _ = env.step(policy(observation))
        rewards.append(float(reward))
        if terminated or truncated or (max_steps is not None and len(rewards) >= max_steps):
            return rewards


@pytest.fixture(scope="module")
def model():
    sb3 = pytest.importorskip("stable_baselines3", reason="the sb3 extra (not in the lowest versions' run)")

    return sb3.PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=32, seed=0, device="cpu")


def test_compare_s_returns_equal_each_policy_run_alone_from_the_same_seed(model, tmp_path):
    policies = {"balance": balance, "lean": lean, "ppo": model}
    result = gymview.compare(policies, "CartPole-v1", seed=7, episodes=2, record=tmp_path)
    assert [(row["policy"], row["seed"]) for row in result.table] == [
        (name, seed) for seed in (7, 8) for name in policies]
    for row in result.table:
        policy = policies[row["policy"]]
        act = (lambda obs: int(model.predict(obs, deterministic=True)[0])) if policy is model else policy
        rewards = played_alone(act, row["seed"])
        assert (row["steps"], row["return"]) == (len(rewards), sum(rewards))
        steps = gymview.read_steps(row["file"])
        assert [step["reward"] for step in steps] == [0.0, *rewards]
        assert row["terminated"] == bool(steps[-1]["terminated"]) and row["truncated"] == bool(steps[-1]["truncated"])
    angles = [step["angle"] for step in gymview.read_steps(tmp_path / "balance-seed-7.mp4")]
    assert not np.isnan(angles[:-1]).any() and np.isnan(angles[-1])  # logged by the policy, at each frame it saw


def test_record_writes_each_seed_s_side_by_side_video(tmp_path):
    result = gymview.compare({"balance": balance, "lean": lean}, "CartPole-v1", seed=2, record=tmp_path)
    (video,) = result.side_by_side
    assert video == tmp_path / "compare-seed-2.mp4"
    frames = decode(video)
    longest = max(row["steps"] for row in result.table)
    assert frames.shape == (longest + 1, 400, 1200, 3)
    shorter = min(result.table, key=lambda row: row["steps"])
    alone = decode(shorter["file"])
    left = 0 if shorter["policy"] == "balance" else 600
    # the episode that ended first holds its last frame (below the label's corner)
    assert np.abs(frames[-1, 100:, left : left + 600].astype(int) - alone[-1, 100:].astype(int)).mean() < 3


def test_the_player_shows_each_policy_s_episode_side_by_side(tmp_path):
    result = gymview.compare({"balance": balance, "lean": lean}, "CartPole-v1", seed=2, max_steps=30)
    player = result.player(0)
    assert [clip.label for clip in player.clips] == ["balance", "lean"] and player.title == "seed 2"
    assert player.count == 31
    lines = player.readout(30).splitlines()
    assert lines[0].startswith("balance: step 30 · reward 1 · return 30") and lines[0].endswith("truncated")
    assert lines[1].startswith("lean: step ")
    bundle = result._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "image/png" in bundle
    assert "<td>balance</td>" in bundle["text/html"]


def test_an_env_instance_is_made_again_for_each_policy_and_stays_open():
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    result = gymview.compare({"a": lean, "b": lean}, env, seed=5, max_steps=10)
    assert [row["return"] for row in result.table] == [sum(played_alone(lean, 5, 10))] * 2
    env.reset(seed=0)  # still the caller's
    env.close()


def test_bad_arguments_say_what_to_give():
    with pytest.raises(ValueError, match="at least one policy"):
        gymview.compare({}, "CartPole-v1")
    with pytest.raises(TypeError, match="stable-baselines3 model"):
        gymview.compare({"a": 3}, "CartPole-v1")
    with pytest.raises(ValueError, match="without '/'"):
        gymview.compare({"a/b": lean}, "CartPole-v1")
    with pytest.raises(TypeError, match="env id"):
        gymview.compare({"a": lean}, 42)
    with pytest.raises(ValueError, match="render_mode='rgb_array'"):
        gymview.compare({"a": lambda obs: 0}, lambda: gym.make("gymview-tests/Pictures-v0"))
