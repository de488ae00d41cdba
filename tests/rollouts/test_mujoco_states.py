"""A rollout's qpos posed for the page: the same poses and camera as the env's own frames, from any source."""

import gymnasium as gym
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from gymview.renderers import MujocoPainter  # noqa: E402
from gymview.rollouts.arrays import host_array  # noqa: E402
from gymview.rollouts.mujoco_states import RolloutScene  # noqa: E402

BALL = """<mujoco><worldbody><light pos='0 0 3'/><geom type='plane' size='2 2 .1'/>
<camera name='above' pos='0 0 4'/>
<body pos='0 0 1'><freejoint/><geom type='sphere' size='.1'/></body></worldbody></mujoco>"""


@pytest.fixture(autouse=True, scope="module")
def _software_opengl(software_opengl):
    """env.render() through OSMesa (tests/conftest.py)."""


def walked(env_id, steps=12, **kwargs):
    """An env rendered as it steps, and the positions it went through, each drawn by env.render() after
    mj_forward (so its bodies are where its qpos puts them)."""
    env = gym.make(env_id, render_mode="rgb_array", width=96, height=72, **kwargs)
    env.reset(seed=0)
    env.action_space.seed(0)
    qpos, expected = [], []
    painter = None
    for _ in range(steps):
        env.step(env.action_space.sample())
        mujoco.mj_forward(env.unwrapped.model, env.unwrapped.data)
        env.render()
        painter = painter or MujocoPainter.for_env(env)
        qpos.append(env.unwrapped.data.qpos.copy())
        expected.append(painter.page_state(painter.frame_of(env).state))
    return env, painter, np.array(qpos), np.array(expected, np.float32)


@pytest.mark.parametrize("env_id", ["HalfCheetah-v5", "Humanoid-v5", "Reacher-v5"])
def test_a_rollout_is_posed_as_the_env_s_own_frames(env_id):
    env, painter, qpos, expected = walked(env_id)
    scene = RolloutScene(env)
    assert scene.scene == painter.page_scene()
    np.testing.assert_allclose(scene.states(qpos), expected, atol=2e-5)
    env.close()


def test_an_env_not_yet_rendered_is_seen_from_where_its_first_render_would_put_the_camera():
    env, _, qpos, expected = walked("Humanoid-v5")  # its config moves the free camera: distance, lookat, elevation
    fresh = gym.make("Humanoid-v5", render_mode="rgb_array", width=96, height=72)  # never rendered: no viewer
    fresh.reset(seed=0)
    states = RolloutScene(fresh).states(qpos)
    np.testing.assert_allclose(states[:, -7:], expected[:, -7:], atol=2e-5)
    env.close()
    fresh.close()


def test_a_model_is_seen_from_mujoco_s_free_camera_or_the_camera_named():
    model = mujoco.MjModel.from_xml_string(BALL)
    qpos = np.tile(model.qpos0, (3, 1))
    qpos[:, 2] = [1.0, 0.5, 0.2]  # falling
    states = RolloutScene(model).states(qpos)
    assert states.shape == (3, 14)
    np.testing.assert_allclose(states[:, 2], [1.0, 0.5, 0.2], atol=1e-6)
    camera = mujoco.MjvCamera()
    mujoco.mjv_defaultFreeCamera(model, camera)
    eye = camera.lookat - camera.distance * np.array([
        np.cos(np.radians(camera.elevation)) * np.cos(np.radians(camera.azimuth)),
        np.cos(np.radians(camera.elevation)) * np.sin(np.radians(camera.azimuth)),
        np.sin(np.radians(camera.elevation)),
    ])
    np.testing.assert_allclose(states[0, 7:10], eye, atol=1e-5)
    above = RolloutScene(model, camera="above", width=64, height=48)
    np.testing.assert_allclose(above.states(qpos)[0, 7:], [0, 0, 4, 1, 0, 0, 0], atol=1e-6)
    assert (above.scene["width"], above.scene["height"]) == (64, 48)


def test_a_state_that_diverged_leaves_the_camera_where_the_first_finite_state_puts_it():
    model = mujoco.MjModel.from_xml_string(BALL)
    qpos = np.tile(model.qpos0, (3, 1))
    qpos[0] = np.nan
    states = RolloutScene(model).states(qpos)
    assert np.isnan(states[0]).all() and np.isfinite(states[1:]).all()
    np.testing.assert_allclose(states[1, 7:], states[2, 7:])


def test_what_a_rollout_cannot_be_drawn_from_says_what_to_pass():
    model = mujoco.MjModel.from_xml_string(BALL)
    with pytest.raises(TypeError, match="pass a mujoco.MjModel, a gymnasium MuJoCo env"):
        RolloutScene(gym.make("CartPole-v1"))
    with pytest.raises(ValueError, match="no camera named 'side'"):
        RolloutScene(model, camera="side")
    with pytest.raises(ValueError, match="not one of the model's 1 cameras"):
        RolloutScene(model, camera=3)
    with pytest.raises(ValueError, match=r"nq = 7 numbers a state; got shape \(4, 5\)"):
        RolloutScene(model).states(np.zeros((4, 5)))
    orthographic = mujoco.MjModel.from_xml_string(BALL.replace("<mujoco>", "<mujoco><visual><global orthographic='true'/></visual>"))
    with pytest.raises(ValueError, match="cannot draw this model: an orthographic camera"):
        RolloutScene(orthographic)


def test_a_rollout_s_arrays_come_from_torch_jax_or_lists_as_numpy():
    torch = pytest.importorskip("torch")
    assert host_array(torch.ones(2, 3, requires_grad=True), "qpos").shape == (2, 3)
    assert host_array([[1, 2]], "qpos").dtype == np.float64
    with pytest.raises(TypeError, match="qpos must be an array of numbers"):
        host_array([["a", "b"]], "qpos")


def test_a_jax_array_is_moved_to_the_host_once():
    jnp = pytest.importorskip("jax.numpy")
    array = host_array(jnp.arange(6.0).reshape(2, 3), "qpos")
    assert isinstance(array, np.ndarray) and array.tolist() == [[0, 1, 2], [3, 4, 5]]
