"""MuJoCo frames drawn away from the loop, from a copy of the simulation state, are env.render()'s pixels."""

import gc
import io
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
def _software_opengl(software_opengl):
    """env.render() through OSMesa (tests/conftest.py)."""


@pytest.fixture(autouse=True)
def _earlier_viewers_freed():
    """The viewers of envs that earlier tests left unclosed are freed before this test draws, not by the
    garbage collector in the middle of it: a freed OSMesa context can leave the others drawing black
    (gymview/renderers/mujoco.py keeps its own viewers to the end for that reason)."""
    gc.collect()


def make(env_id, **kwargs):
    env = gym.make(env_id, render_mode="rgb_array", width=96, height=72, **kwargs)
    env.reset(seed=0)
    return env


def rendered(env):
    """``env.render()`` in the env's own GL context: gymnasium draws in whichever context is current,
    and these tests hold several in one thread."""
    viewer = env.unwrapped.mujoco_renderer._viewers.get("rgb_array")
    if viewer is not None:
        viewer.make_context_current()
    return env.render()


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
        last = rendered(env)
        assert drawn.shape == last.shape == (72, 96, 3) and drawn.dtype == np.uint8
        np.testing.assert_array_equal(drawn, last)
    assert not np.array_equal(first, last), "the body moved: the frames must differ"
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
    np.testing.assert_array_equal(elsewhere.paint(painter.frame_of(env).state), rendered(env))
    env.close()


def test_a_painter_draws_in_its_own_gl_context_when_another_one_was_closed():
    env = make("HalfCheetah-v5")
    painter = MujocoPainter.for_env(env)
    env.render()
    elsewhere = pickle.loads(pickle.dumps(painter))
    state = painter.frame_of(env).state
    before = elsewhere.paint(state)
    other = make("Hopper-v5")
    other.render()
    other.close()  # its context was current: now none is
    np.testing.assert_array_equal(elsewhere.paint(state), before)
    np.testing.assert_array_equal(before, rendered(env))
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
    view = shown(image_format="png", max_size=96, draw="kernel")  # pictures from the helper
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
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(buffers[0]))), rendered(env))
    env.close()


def watch_and_count_renders_in_the_loop(env, sub_envs, view, monkeypatch):
    """Watch ``env`` for 20 steps; return how often its MuJoCo envs rendered in the loop, and the
    first and last frames the view sent (decoded)."""
    import gymview

    in_the_loop = []
    for sub_env in sub_envs:
        renderer = sub_env.unwrapped.mujoco_renderer
        original = renderer.render
        monkeypatch.setattr(renderer, "render", lambda *a, original=original, **k: in_the_loop.append(1) or original(*a, **k))
    watched = gymview.watch(env, view=view)
    watched.reset(seed=0)
    for _ in range(20):
        watched.step(watched.action_space.sample())
    watched.close()
    assert len(view.sent) >= 2 and view.stats["frames_sent"] == len(view.sent)
    first, last = (np.asarray(Image.open(io.BytesIO(buffers[0]))) for _, buffers in (view.sent[0], view.sent[-1]))
    assert first.shape == last.shape and not np.array_equal(first, last)
    return len(in_the_loop), first


def test_watch_renders_a_mujoco_env_in_the_loop_only_once(shown, monkeypatch):
    env = make("HalfCheetah-v5")
    renders, first = watch_and_count_renders_in_the_loop(env, [env], shown(image_format="png", max_size=96, draw="kernel"), monkeypatch)
    assert renders == 1  # the first frame makes gymnasium's viewer; the others were painted elsewhere
    assert first.shape == (72, 96, 3)


def make_vector(env_id="HalfCheetah-v5", count=3):
    return gym.vector.SyncVectorEnv([lambda: gym.make(env_id, render_mode="rgb_array", width=96, height=72)] * count)


def test_a_vector_of_mujoco_envs_is_painted_elsewhere_as_the_grid_of_their_renders():
    from gymview.renderers import MujocoGridPainter, tiled

    envs = make_vector()
    envs.reset(seed=0)
    grid = MujocoGridPainter.for_envs(envs.envs)
    elsewhere = pickle.loads(pickle.dumps(grid))
    returns = [1.0, -2.0, 3.0]
    assert grid.frame_of(envs.envs, returns) is None  # no sub-env has made its viewer yet
    envs.render()
    envs.envs[1].unwrapped.mujoco_renderer.viewer.cam.azimuth += 90  # each sub-env's own camera travels
    for _ in range(4):
        envs.step(envs.action_space.sample())
    painted = elsewhere.paint(grid.frame_of(envs.envs, returns).state)
    np.testing.assert_array_equal(painted, tiled([rendered(env) for env in envs.envs], returns))
    envs.close()


def test_sub_envs_of_different_models_get_no_grid_painter():
    from gymview.renderers import MujocoGridPainter

    mixed = [gym.make(env_id, render_mode="rgb_array") for env_id in ("HalfCheetah-v5", "Hopper-v5")]
    assert MujocoGridPainter.for_envs(mixed) is None
    same = make_vector(count=2)
    assert MujocoGridPainter.for_envs(same.envs) is not None
    same.envs[1].unwrapped.model.geom_rgba[:, :3] = (1.0, 0.0, 0.0)  # one sub-env's model randomised: same shapes
    assert MujocoGridPainter.for_envs(same.envs) is None
    assert MujocoGridPainter.for_envs([gym.make("CartPole-v1", render_mode="rgb_array")]) is None


def test_watch_renders_each_mujoco_sub_env_in_the_loop_only_once(shown, monkeypatch):
    envs = make_vector(count=2)
    renders, _ = watch_and_count_renders_in_the_loop(envs, envs.envs, shown(image_format="png", max_size=400, draw="kernel"), monkeypatch)
    assert renders == 2  # the first frame makes each sub-env's viewer; the others were painted elsewhere


def preview_reference(env, height, width):
    """``env``'s frame drawn here, from its own simulation, with the preview's cheap settings and
    its viewer's camera and options: what a preview must show."""
    from gymnasium.envs.mujoco.mujoco_rendering import OffScreenViewer

    from gymview.renderers.mujoco import preview_quality

    unwrapped = env.unwrapped
    own = unwrapped.mujoco_renderer.viewer
    reference = OffScreenViewer(preview_quality(unwrapped.model, height, width), unwrapped.data, width, height,
                                unwrapped.mujoco_renderer.max_geom)
    for name in ("type", "fixedcamid", "trackbodyid", "distance", "azimuth", "elevation", "orthographic"):
        setattr(reference.cam, name, getattr(own.cam, name))
    reference.cam.lookat[:] = own.cam.lookat
    reference.vopt.flags[:] = own.vopt.flags
    reference.scn.flags[:] = own.scn.flags
    reference.make_context_current()
    return reference.render("rgb_array", unwrapped.mujoco_renderer.camera_id)


def test_a_preview_is_drawn_at_the_shown_size_with_the_same_camera_and_scene():
    import mujoco

    env = gym.make("HalfCheetah-v5", render_mode="rgb_array", width=160, height=120)
    env.reset(seed=0)
    painter = MujocoPainter.for_env(env, preview=True)
    elsewhere = pickle.loads(pickle.dumps(painter))
    assert elsewhere.draws_to_max_size and not MujocoPainter.for_env(env).draws_to_max_size
    env.render()
    viewer = env.unwrapped.mujoco_renderer.viewer
    viewer.cam.azimuth += 45  # the camera and the options the user set travel as for full frames
    viewer.vopt.flags[mujoco.mjtVisFlag.mjVIS_JOINT] = 1
    env.action_space.seed(0)
    previews = []
    for _ in range(3):
        env.step(env.action_space.sample())
        state = painter.frame_of(env).state
        preview = elsewhere.paint(state, max_size=80)
        assert preview.shape == (60, 80, 3) and preview.dtype == np.uint8
        np.testing.assert_array_equal(preview, preview_reference(env, 60, 80))
        previews.append(preview)
    assert not np.array_equal(previews[0], previews[-1]), "the body moved: the previews must differ"
    # a max_size the frame already fits: the env's size, still with the cheap settings
    np.testing.assert_array_equal(elsewhere.paint(state, max_size=512), preview_reference(env, 120, 160))
    env.close()


def test_frames_drawn_without_a_max_size_stay_exact_beside_previews():
    """Recording and draw() take the full frame: the preview's settings never leak into it."""
    env = make("HalfCheetah-v5")
    painter = MujocoPainter.for_env(env, preview=True)
    env.render()
    env.action_space.seed(0)
    for _ in range(3):
        env.step(env.action_space.sample())
        frame = painter.frame_of(env)
        painter.paint(frame.state, max_size=48)  # a preview first, in the same process
        np.testing.assert_array_equal(frame.draw(), rendered(env))
    assert env.unwrapped.model.vis.quality.offsamples == 4  # the env's own model is untouched
    env.close()


def test_the_encoder_process_draws_a_preview_at_the_views_max_size(shown):
    view = shown(image_format="png", max_size=48, draw="kernel")
    env = make("Hopper-v5")
    painter = MujocoPainter.for_env(env, preview=True)
    env.render()
    for _ in range(3):
        env.step(env.action_space.sample())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert view.push(painter.frame_of(env), force=True) and view.flush()
    (header, buffers), = view.sent
    assert (header["width"], header["height"]) == (48, 36)
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(buffers[0]))), preview_reference(env, 36, 48))
    env.close()


def test_a_preview_grid_draws_each_sub_env_at_its_cell_size():
    from gymview.renderers import MujocoGridPainter, tiled

    envs = make_vector(count=3)
    envs.reset(seed=0)
    envs.render()
    grid = MujocoGridPainter.for_envs(envs.envs, preview=True)
    elsewhere = pickle.loads(pickle.dumps(grid))
    assert elsewhere.draws_to_max_size
    returns = [1.0, 2.0, 3.0]
    painted = elsewhere.paint(grid.frame_of(envs.envs, returns).state, max_size=96)  # 2 cells a row: 48 px each
    np.testing.assert_array_equal(painted, tiled([preview_reference(env, 36, 48) for env in envs.envs], returns))
    np.testing.assert_array_equal(elsewhere.paint(grid.frame_of(envs.envs, returns).state),
                                  tiled([rendered(env) for env in envs.envs], returns))
    envs.close()
