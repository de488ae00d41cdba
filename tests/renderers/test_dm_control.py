"""dm_control suite envs made through shimmy (``gym.make("dm_control/cheetah-run-v0")``): painted elsewhere as their
own render draws them, and drawn by the page from their bodies' poses. dm_control needs MuJoCo 3: these run in the
environment ``tests/packaging/dm_control.py`` makes (with EGL, as dm_control picks its OpenGL at import)."""

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("dm_control")
pytest.importorskip("shimmy")

import gymview
from gymview.renderers.mujoco import MujocoPainter


def suite_env(env_id="dm_control/cheetah-run-v0", steps=20, **render_kwargs):
    env = gym.make(env_id, render_mode="rgb_array", render_kwargs=render_kwargs or None)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(steps):
        env.step(env.action_space.sample())
    return env


@pytest.mark.parametrize(
    "env_id, render_kwargs",
    [
        ("dm_control/cheetah-run-v0", {}),
        ("dm_control/walker-walk-v0", {"camera_id": 1, "width": 200, "height": 150}),
        ("dm_control/reacher-easy-v0", {}),
        ("dm_control/cheetah-run-v0", {"camera_id": "side"}),
    ],
)
def test_a_suite_env_is_painted_elsewhere_as_its_own_render_draws_it(env_id, render_kwargs):
    env = suite_env(env_id, **render_kwargs)
    painter = MujocoPainter.for_env(env)
    expected = env.render()
    np.testing.assert_array_equal(painter.frame_of(env).draw(), expected)
    drawn = painter.paint_page_state(painter.page_state(painter.frame_of(env).state).astype(np.float32).astype(float))
    assert drawn.shape == expected.shape and np.mean(np.abs(drawn.astype(int) - expected)) < 2.0
    env.close()


def test_the_suite_s_lights_that_follow_a_body_go_as_their_place_each_frame():
    env = suite_env("dm_control/walker-walk-v0")  # its light follows the walker's centre of mass from above
    painter = MujocoPainter.for_env(env)
    scene, poses = painter.page_scene(), painter._poses()
    assert len(poses.lights) == 1 and scene["bodies"] == len(poses.bodies) + 1
    physics = env.unwrapped._env.physics
    page_state = painter.page_state(painter.frame_of(env).state)
    light = page_state[7 * len(poses.bodies) : 7 * len(poses.bodies) + 3]
    assert light == pytest.approx(physics.data.light_xpos[poses.lights[0]])
    env.close()


def test_a_dm_control_scene_holds_as_many_geoms_as_dm_control_s_own():
    from dm_control import mujoco as dm_mujoco
    from dm_control.mujoco import wrapper

    from gymview.renderers.mujoco import _dm_control_max_geom

    balls = "".join(f"<body pos='{i} 0 0'><freejoint/><geom size='.1'/></body>" for i in range(300))
    physics = dm_mujoco.Physics.from_xml_string(f"<mujoco><worldbody>{balls}</worldbody></mujoco>")
    assert _dm_control_max_geom(physics.model.ptr) == wrapper.MjvScene(physics.model).maxgeom > 1000


def test_a_suite_env_drawn_with_settings_the_painter_does_not_follow_goes_as_its_own_pictures():
    assert MujocoPainter.for_env(gym.make("dm_control/cheetah-run-v0", render_mode="depth_array")) is None
    option = gym.make("dm_control/cheetah-run-v0", render_mode="rgb_array", render_kwargs={"scene_option": None})
    assert MujocoPainter.for_env(option) is None
    hidden = suite_env(steps=0)
    hidden.unwrapped._env = object()  # a shimmy that keeps its dm_control env elsewhere
    assert MujocoPainter.for_env(hidden) is None
    assert MujocoPainter.for_env(suite_env(steps=0, camera_id="front")) is None  # no such camera: render() says so
    assert MujocoPainter.for_env(suite_env(steps=0, camera_id=2)) is None


def test_watch_sends_a_suite_env_s_frames_as_poses(shown):
    from live_helpers import sent_frames

    view = shown(max_size=320, draw="page")
    watched = gymview.watch(gym.make("dm_control/cheetah-run-v0", render_mode="rgb_array"), view=view)
    watched.reset(seed=0)
    for _ in range(20):
        watched.step(watched.action_space.sample())
    watched.close()
    assert {header["format"] for header in sent_frames(view.sent)} == {"scene"} and len(sent_frames(view.sent)) >= 2
    assert view._scene["kind"] == "mujoco" and len(view._scene["lights"]) == 2  # the headlight and the suite's own
    assert (view.sent[-1][0]["width"], view.sent[-1][0]["height"]) == (320, 240)
