"""LunarLander's renderer: its state read from the env (never changing it), drawn with pygame as env.render()
draws it."""

import pickle

import gymnasium as gym
import numpy as np
import pytest
from seeded_envs import seeded

pytest.importorskip("Box2D")

from gymview.renderers import renderer_for
from gymview.renderers.box2d import PARTICLES, LunarLanderRenderer
from gymview.renderers.grid import TiledPainter, drawing_of


def lander(seed=0, **kwargs):
    return seeded("LunarLander-v3", seed, **kwargs)


def particles_of(env):
    return [(p.position[0], p.position[1], p.ttl) for p in env.unwrapped.particles]


@pytest.mark.parametrize("continuous", [False, True])
def test_a_state_is_drawn_as_env_render_draws_it(continuous):
    # twins: one rendered, one whose state is taken as often (both age their exhaust alike)
    rendered, taken = lander(continuous=continuous), lander(continuous=continuous)
    renderer = renderer_for(taken)
    assert isinstance(renderer, LunarLanderRenderer)
    compared = 0
    for step in range(240):
        action = rendered.action_space.sample()
        for env in (rendered, taken):
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
        if step % 3 == 0:
            expected, state = rendered.render(), renderer.state_of(taken)
            if len(taken.unwrapped.particles) > PARTICLES:  # more than a state holds: the oldest left out
                continue
            difference = np.abs(renderer.render(state[None])[0].astype(int) - expected)
            assert difference.max() <= 2 and (difference > 0).sum() < 20  # float32 Box2D against float64 here
            compared += 1
    assert compared >= 30
    for env in (rendered, taken):
        env.close()


def test_taking_a_state_does_to_the_exhaust_what_render_does():
    envs = [lander(), lander()]
    renderer = LunarLanderRenderer(envs[0], "LunarLander-v3")
    for step in range(60):
        for env in envs:
            env.step(2)  # the main engine: a particle a step
        if step % 2:
            renderer.state_of(envs[0])
            envs[1].render()
            assert particles_of(envs[0]) == particles_of(envs[1])
    kept = renderer.state_of(envs[0])[9 + 11 :].reshape(PARTICLES, 3)
    alive = particles_of(envs[0])
    assert len(alive) < 20  # the spent ones destroyed, as a render destroys them: the env stays as fast
    assert kept[: len(alive)].tolist() == [list(p) for p in alive] and np.isnan(kept[len(alive) :]).all()
    for env in envs:
        env.close()


def test_a_renderer_goes_to_another_process_and_draws_there_as_here():
    env = lander()
    env.step(2)
    renderer = renderer_for(env)
    state = renderer.state_of(env)
    copied = pickle.loads(pickle.dumps(renderer))
    np.testing.assert_array_equal(copied.render(state[None]), renderer.render(state[None]))
    env.close()


def test_a_state_without_particles_holds_nans_where_they_would_be():
    env = lander()
    state = renderer_for(env).state_of(env)
    assert np.isfinite(state[: 9 + 11]).all() and np.isnan(state[9 + 11 :]).all()
    assert state[9 + 11 :].size == 3 * PARTICLES
    env.close()


def test_a_state_before_reset_is_refused_with_what_to_do():
    env = gym.make("LunarLander-v3", render_mode="rgb_array")
    with pytest.raises(ValueError, match="call env.reset"):
        renderer_for(env).state_of(env)
    env.close()


def test_a_lander_of_its_own_drawing_gets_no_renderer():
    from gymnasium.envs.box2d.lunar_lander import LunarLander

    class Painted(LunarLander):
        def render(self):
            return np.zeros((4, 4, 3), np.uint8)

    assert renderer_for(Painted(render_mode="rgb_array")) is None
    assert type(renderer_for("LunarLander-v3")) is LunarLanderRenderer


def test_sub_envs_are_drawn_in_a_grid_from_their_states():
    envs = [lander(seed) for seed in range(4)]
    painter = TiledPainter(renderer_for(envs[0]), 4)
    for env in envs:
        env.step(2)
    picture = drawing_of(painter, envs, [1.0, 2.0, 3.0, 4.0]).draw()
    assert picture.shape == (800, 1200, 3)
    expected = envs[3].render()  # the last cell, its label aside
    assert np.abs(picture[400 + 60 :, 600:].astype(int) - expected[60:]).max() <= 2
    assert painter.page_scene()["cell"]["kind"] == "lunarlander"
    for env in envs:
        env.close()
