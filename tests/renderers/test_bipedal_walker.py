"""BipedalWalker's renderer: its state read from the env (moving to the next lidar ray as render() does), drawn with
pygame as env.render() draws it, wherever the view has scrolled."""

import pickle

import gymnasium as gym
import numpy as np
import pytest
from seeded_envs import seeded

pytest.importorskip("Box2D")

from gymview.renderers import renderer_for
from gymview.renderers.bipedal_walker import GROUND, OBSTACLES, BipedalWalkerRenderer
from gymview.renderers.grid import TiledPainter, drawing_of


def walker(seed=0, **kwargs):
    return seeded("BipedalWalker-v3", seed, **kwargs)


def test_a_state_is_drawn_as_env_render_draws_it():
    # twins: one rendered, one whose state is taken as often (both sweep their lidar alike)
    rendered, taken = walker(), walker()
    renderer = renderer_for(taken)
    assert isinstance(renderer, BipedalWalkerRenderer)
    for step in range(150):
        action = rendered.action_space.sample()
        for env in (rendered, taken):
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
        if step % 3 == 0:
            np.testing.assert_array_equal(renderer.render(renderer.state_of(taken)[None])[0], rendered.render())
    for env in (rendered, taken):
        env.close()


@pytest.mark.parametrize("scroll", [-0.3, 6.2, 41.15, 72.9, 84.9])
def test_the_view_is_drawn_where_the_env_has_scrolled_it(scroll):
    env = walker(seed=3)
    for _ in range(10):
        env.step(env.action_space.sample())
    renderer, unwrapped = renderer_for(env), env.unwrapped
    unwrapped.scroll = scroll  # as if it had walked there: the walker itself left behind
    state = renderer.state_of(env)
    unwrapped.lidar_render -= 1  # the same ray again: render() moves to the next as state_of() did
    np.testing.assert_array_equal(renderer.render(state[None])[0], env.render())
    env.close()


def test_taking_a_state_sweeps_the_lidar_as_render_does():
    env = walker()
    env.step(env.action_space.sample())
    renderer = renderer_for(env)
    rays = [renderer.state_of(env)[16:20] for _ in range(100)]
    assert env.unwrapped.lidar_render == 0  # round once, as after 100 renders
    drawn = [ray for ray in rays if not np.isnan(ray).any()]
    assert len(drawn) == 20 and len({tuple(ray[2:]) for ray in drawn}) == 10  # out and back over the ten rays


def test_a_state_holds_the_ground_from_the_step_before_the_view():
    env = walker()
    renderer, unwrapped = renderer_for(env), env.unwrapped
    assert renderer.background.shape == (400, 600, 3)  # the sky: all else moves with the view
    unwrapped.scroll = 10.0
    state = renderer.state_of(env)
    first = int(state[20])
    assert first == int(10.0 / renderer.step) - 1
    assert state[21 : 21 + GROUND].tolist() == unwrapped.terrain_y[first : first + GROUND]


def test_a_state_before_reset_is_refused_with_what_to_do():
    renderer = renderer_for(walker())
    with pytest.raises(ValueError, match=r"call env\.reset"):
        renderer.state_of(gym.make("BipedalWalker-v3", render_mode="rgb_array"))


def test_a_grid_of_walkers_hardcore_and_not_is_not_drawn_by_one_renderer():
    from gymview.renderers.grid import state_painter

    assert state_painter([walker(), walker(hardcore=True)]) is None  # their states differ: pictures
    assert state_painter([walker(hardcore=True), walker(1, hardcore=True)]) is not None


@pytest.mark.parametrize("seed", [0, 5])
def test_the_hardcore_walker_s_stumps_stairs_and_pits_are_drawn_as_env_render_draws_them(seed):
    rendered, taken = walker(seed, hardcore=True), walker(seed, hardcore=True)
    renderer = renderer_for(taken)
    assert renderer.state_dim == renderer_for(walker()).state_dim + 8 * OBSTACLES
    shown = 0
    for scroll in np.arange(0.0, 85.0, 4.3):  # the course, as if walked
        for env in (rendered, taken):
            env.unwrapped.scroll = scroll
        state = renderer.state_of(taken)
        shown = max(shown, int(np.isfinite(state[-8 * OBSTACLES :]).sum()) // 8)
        np.testing.assert_array_equal(renderer.render(state[None])[0], rendered.render(), err_msg=f"at {scroll} m")
    assert shown >= 3  # obstacles were in view
    taken.reset(seed=seed + 1)  # another course: its own obstacles, not the last one's
    rendered.reset(seed=seed + 1)
    for env in (rendered, taken):
        env.unwrapped.scroll = 30.0
    np.testing.assert_array_equal(renderer.render(renderer.state_of(taken)[None])[0], rendered.render())


def test_a_renderer_goes_to_another_process_and_draws_there_as_here():
    env = walker()
    env.step(env.action_space.sample())
    renderer = renderer_for(env)
    state = renderer.state_of(env)
    there = pickle.loads(pickle.dumps(renderer))
    np.testing.assert_array_equal(there.render(state[None])[0], renderer.render(state[None])[0])


def test_sub_envs_are_drawn_in_a_grid_from_their_states():
    envs = [walker(seed) for seed in range(4)]
    painter = TiledPainter(renderer_for(envs[0]), 4)
    twin = walker(3)
    for env in [*envs, twin]:
        env.step(np.zeros(4))
    picture = drawing_of(painter, envs, [1.0, 2.0, 3.0, 4.0]).draw()
    assert picture.shape == (800, 1200, 3) and painter.page_scene()["cell"]["kind"] == "bipedalwalker"
    np.testing.assert_array_equal(picture[400 + 60 :, 600:], twin.render()[60:])  # the last cell, its label aside
