"""MuJoCo frames drawn away from the loop, from a copy of the simulation state, are env.render()'s pixels."""

import io
import os
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image

pytest.importorskip("mujoco")

from gymview.renderers import MujocoFrame, MujocoPainter  # noqa: E402

# Envs covering free joints (Ant, Humanoid), sites and mocap-free targets (Reacher, Pusher),
# hinge chains (InvertedDoublePendulum) and gymnasium's default camera settings (HalfCheetah).
ENV_IDS = ["HalfCheetah-v5", "Humanoid-v5", "Ant-v5", "Reacher-v5", "Pusher-v5", "InvertedDoublePendulum-v5"]


@pytest.fixture(autouse=True, scope="module")
def software_opengl():
    """OSMesa renders anywhere (dev.sh installs libosmesa6); these tests need no display."""
    saved = {name: os.environ.get(name) for name in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    os.environ.update(MUJOCO_GL="osmesa", PYOPENGL_PLATFORM="osmesa")
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def make(env_id, **kwargs):
    env = gym.make(env_id, render_mode="rgb_array", width=96, height=72, **kwargs)
    env.reset(seed=0)
    return env


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_painter_elsewhere_draws_exactly_what_env_render_draws(env_id):
    env = make(env_id)
    painter = MujocoPainter.for_env(env)
    elsewhere = pickle.loads(pickle.dumps(painter))  # what the encoder process gets: the model, no GL context
    assert painter.frame_of(env) is None  # gymnasium makes its viewer (and camera) on the first render
    first = env.render()
    env.action_space.seed(0)
    for _ in range(6):
        env.step(env.action_space.sample())
        frame = painter.frame_of(env)
        assert isinstance(frame, MujocoFrame) and frame.state.dtype == np.float64
        drawn = elsewhere.paint(frame.state)
        rendered = env.render()
        assert drawn.shape == rendered.shape == (72, 96, 3) and drawn.dtype == np.uint8
        np.testing.assert_array_equal(drawn, rendered)
    assert not np.array_equal(first, rendered), "the body moved: the frames must differ"
    env.close()


def test_the_camera_and_visual_options_travel_with_each_frame():
    import mujoco

    env = make("HalfCheetah-v5")
    painter = MujocoPainter.for_env(env)
    elsewhere = pickle.loads(pickle.dumps(painter))
    env.render()
    viewer = env.unwrapped.mujoco_renderer.viewer
    viewer.cam.azimuth += 60
    viewer.cam.distance *= 0.5
    viewer.vopt.flags[mujoco.mjtVisFlag.mjVIS_JOINT] = 1
    viewer.scn.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
    np.testing.assert_array_equal(elsewhere.paint(painter.frame_of(env).state), env.render())
    env.close()


def test_markers_and_text_overlays_are_rendered_in_the_loop():
    env = make("Reacher-v5")
    painter = MujocoPainter.for_env(env)
    env.render()
    assert painter.frame_of(env) is not None
    env.unwrapped.mujoco_renderer.viewer.add_marker(pos=np.zeros(3), size=np.full(3, 0.05))
    assert painter.frame_of(env) is None  # markers live in the loop's viewer only
    env.close()


def test_envs_whose_frames_may_differ_get_no_painter():
    class Tinted(gym.Wrapper):
        def render(self):
            return 255 - self.env.render()

    class OwnRender(gym.envs.mujoco.half_cheetah_v5.HalfCheetahEnv):
        def render(self):
            return np.zeros((4, 4, 3), np.uint8)

    assert MujocoPainter.for_env(gym.make("CartPole-v1", render_mode="rgb_array")) is None
    assert MujocoPainter.for_env(Tinted(make("HalfCheetah-v5"))) is None
    assert MujocoPainter.for_env(OwnRender(render_mode="rgb_array")) is None
    assert MujocoPainter.for_env(gym.make("HalfCheetah-v5", render_mode="depth_array")) is None


def test_the_encoder_process_paints_mujoco_frames(shown):
    view = shown(image_format="png", max_size=96)
    env = make("Hopper-v5")
    painter = MujocoPainter.for_env(env)
    env.render()
    for _ in range(3):
        env.step(env.action_space.sample())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a painter that failed there would fall back here, with a warning
        assert view.push(painter.frame_of(env), force=True) and view.flush()
    (header, buffers), = view.sent
    assert (header["width"], header["height"]) == (96, 72)
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(buffers[0]))), env.render())
    env.close()


def test_watch_renders_a_mujoco_env_in_the_loop_only_once(shown, monkeypatch):
    import gymview

    env = make("HalfCheetah-v5")
    renderer = env.unwrapped.mujoco_renderer
    in_the_loop = []
    original = renderer.render
    monkeypatch.setattr(renderer, "render", lambda *args, **kwargs: in_the_loop.append(1) or original(*args, **kwargs))
    view = shown(image_format="png", max_size=96)
    watched = gymview.watch(env, view=view)
    watched.reset(seed=0)
    for _ in range(20):
        watched.step(watched.action_space.sample())
    watched.close()
    assert len(in_the_loop) == 1  # the first frame makes gymnasium's viewer; the others were painted elsewhere
    assert len(view.sent) >= 2 and view.stats["frames_sent"] == len(view.sent)
    first, last = (np.asarray(Image.open(io.BytesIO(buffers[0]))) for _, buffers in (view.sent[0], view.sent[-1]))
    assert first.shape == last.shape == (72, 96, 3) and not np.array_equal(first, last)
