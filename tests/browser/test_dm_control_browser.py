"""dm_control suite envs made through shimmy (``gym.make("dm_control/cheetah-run-v0")``), drawn by the page with
three.js in Chromium's WebGL (SwiftShader here) and compared by SSIM with the env's own render at the same states.
dm_control needs MuJoCo 3: these run in the environment ``tests/packaging/dm_control.py`` makes."""

import gymnasium as gym
import pytest
import test_scene3d_browser as scene3d

from gymview.renderers.mujoco import MujocoPainter

pytestmark = [pytest.mark.browser]
pytest.importorskip("dm_control")
pytest.importorskip("shimmy")

page = scene3d.page  # one Chromium page for the module, as there
SUITE = ["dm_control/cheetah-run-v0", "dm_control/walker-walk-v0", "dm_control/cartpole-swingup-v0",
         "dm_control/reacher-easy-v0", "dm_control/quadruped-walk-v0"]  # fmt: skip


def suite_states(env_id, count=4, steps=15, seed=0, **render_kwargs):
    """``count`` (page state, env.render()) pairs along a random episode, ``steps`` apart, and the painter."""
    env = gym.make(env_id, render_mode="rgb_array", render_kwargs=render_kwargs or None)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    painter = MujocoPainter.for_env(env)
    assert painter is not None and painter.page_scene() is not None, "the page draws it"
    pairs = []
    while len(pairs) < count:
        for _ in range(steps):
            env.step(env.action_space.sample())
        pairs.append((painter.page_state(painter.frame_of(env).state), env.render()))
    env.close()
    return painter, pairs


@pytest.mark.parametrize("env_id", SUITE)
def test_the_page_draws_each_suite_env_as_its_own_render_does(page, env_id, artifacts):
    painter, pairs = suite_states(env_id)
    scene3d.assert_drawn_as_rendered(page, painter, pairs, env_id.replace("/", "-"), artifacts)


def test_the_page_draws_a_suite_env_from_its_named_tracking_camera(page, artifacts):
    painter, pairs = suite_states("dm_control/cheetah-run-v0", camera_id="side", width=480, height=360)
    assert painter.camera_id == 0 and (painter.width, painter.height) == (480, 360)
    scene3d.assert_drawn_as_rendered(page, painter, pairs, "cheetah-side-camera", artifacts)
