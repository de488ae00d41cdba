"""show_rollout: a rollout of one env or a grid of them, its values charted, checked before anything is sent."""

import json

import gymnasium as gym
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import gymview  # noqa: E402
from gymview.episodes.page_file import page_data, unpacked_states, unpacked_values  # noqa: E402
from gymview.rollouts.player import MAX_GRID  # noqa: E402

BALL = """<mujoco><option timestep='0.004'/><worldbody><light pos='0 0 3'/><geom type='plane' size='2 2 .1'/>
<body pos='0 0 1'><joint type='slide' axis='0 0 1'/><geom type='sphere' size='.1'/></body></worldbody></mujoco>"""


@pytest.fixture
def model():
    return mujoco.MjModel.from_xml_string(BALL)


def test_one_env_plays_its_states_at_the_env_s_rate(model):
    env = gym.make("InvertedPendulum-v5")
    env.reset(seed=0)
    qpos = np.array([env.unwrapped.data.qpos + [0.01 * t, 0.0] for t in range(20)])
    player = gymview.show_rollout(env, qpos, values={"reward": np.ones(20)})
    assert (player.frames, player.envs, player.fps) == (20, 1, env.metadata["render_fps"])
    assert player._scenes[0]["kind"] == "mujoco" and player._segments == [{"scene": 0, "frames": 20, "size": 21}]
    states = np.frombuffer(player._states, "<f4").reshape(20, 21)
    np.testing.assert_allclose(states[:, 0], qpos[:, 0], atol=1e-6)  # the cart slides with qpos[0]
    assert player.values == ["reward"] and player._values == {"reward": [[1.0] * 20]}
    assert gymview.show_rollout(model, np.zeros((2, 1))).fps == 250  # a bare model: 1 / its timestep


def test_several_envs_are_a_grid_labelled_by_their_return_so_far(model):
    qpos = np.linspace(0, -0.5, 10)[:, None, None] * np.ones((1, 3, 1))
    rewards = np.ones((10, 3)) * [1, 2, 3]
    player = gymview.show_rollout(model, qpos, values={"reward": rewards, "value": rewards[:, :1] * 0})
    scene = player._scenes[0]
    assert (scene["kind"], scene["count"], scene["columns"], scene["state_dim"]) == ("grid", 3, 2, 14)
    states = np.frombuffer(player._states, "<f4").reshape(10, 3 * 14 + 3)
    assert states[-1, -3:].tolist() == [10, 20, 30]
    np.testing.assert_allclose(states[:, 2], 1 + qpos[:, 0, 0], atol=1e-6)  # env 0's ball falls
    unlabelled = gymview.show_rollout(model, qpos)
    assert unlabelled._scenes[0]["labels"] == "index"
    shared = gymview.show_rollout(model, qpos, values={"reward": np.ones((10, 1))})  # one reward for every env
    assert np.frombuffer(shared._states, "<f4").reshape(10, -1)[-1, -3:].tolist() == [10, 10, 10]
    assert shared._values["reward"] == [[1.0] * 10] * 3


def test_a_saved_rollout_is_the_player_s_states_and_values(model, tmp_path):
    qpos = np.linspace(0, -0.5, 10)[:, None, None] * np.ones((1, 2, 1))
    player = gymview.show_rollout(model, qpos, values={"reward": np.arange(20.0).reshape(10, 2)}, fps=10, title="drop")
    data = json.loads(page_data(player.save(tmp_path / "runs" / "drop.html").read_text()))
    assert data["scenes"] == player._scenes and data["fps"] == 10 and data["title"] == "drop"
    np.testing.assert_allclose(unpacked_states(data["segments"][0]).ravel(), np.frombuffer(player._states, "<f4"),
                               rtol=0, atol=1e-5)  # fmt: skip
    assert unpacked_values(data)["reward"] == [list(range(0, 20, 2)), list(range(1, 20, 2))]


def test_shapes_that_do_not_fit_are_refused_with_what_fits(model):
    with pytest.raises(ValueError, match=r"\[T, nq\] or \[T, B, nq\]"):
        gymview.show_rollout(model, np.zeros(5))
    with pytest.raises(ValueError, match=r"values\['reward'\] must be \[5, 2\]"):
        gymview.show_rollout(model, np.zeros((5, 2, 1)), values={"reward": np.zeros(5)})
    with pytest.raises(ValueError, match=f"at most {MAX_GRID} envs; got {MAX_GRID + 1}: pass a slice"):
        gymview.show_rollout(model, np.zeros((2, MAX_GRID + 1, 1)))
    with pytest.raises(ValueError, match="fps must be a number above 0"):
        gymview.show_rollout(model, np.zeros((2, 1)), fps=0)
    with pytest.raises(TypeError, match="qpos must be an array of numbers"):
        gymview.show_rollout(model, "qpos")


def test_the_page_is_sent_three_js_when_it_asks(model):
    player = gymview.show_rollout(model, np.zeros((2, 1)))
    sent = []
    player.send = lambda content, buffers=None: sent.append((content, buffers))
    player._handle_custom_msg({"type": "module", "name": "mujoco"}, [])
    assert sent[0][0] == {"type": "module", "name": "mujoco"} and b"drawMujoco" in sent[0][1][0]
    assert repr(player) == "RolloutPlayer(2 frames, 1 env, 250 fps)"
