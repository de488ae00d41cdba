"""LunarLander's renderer: its state read from the env (never changing it), drawn with pygame as env.render()
draws it."""

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("Box2D")

from gymview.renderers import renderer_for  # noqa: E402
from gymview.renderers.box2d import PARTICLES, LunarLanderRenderer  # noqa: E402
from gymview.renderers.grid import TiledPainter, drawing_of  # noqa: E402


def lander(seed=0, **kwargs):
    env = gym.make("LunarLander-v3", render_mode="rgb_array", **kwargs)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return env


def particles_of(env):
    return [(p.position[0], p.position[1], p.ttl) for p in env.unwrapped.particles]


@pytest.mark.parametrize("continuous", [False, True])
def test_a_state_is_drawn_as_env_render_draws_it_taken_as_often(continuous):
    env = lander(continuous=continuous)
    renderer = renderer_for(env)
    assert isinstance(renderer, LunarLanderRenderer)
    compared = 0
    for step in range(240):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
        if step % 3 == 0:  # a state taken, and a render, every third step: both age the particles alike
            state = renderer.state_of(env)
            expected = env.render()
            if len(env.unwrapped.particles) > PARTICLES:  # more than a state holds: the oldest left out
                continue
            difference = np.abs(renderer.render(state[None])[0].astype(int) - expected)
            assert difference.max() <= 2 and (difference > 0).sum() < 20  # float32 Box2D against float64 here
            compared += 1
    assert compared >= 30
    env.close()


def test_taking_a_state_leaves_the_env_s_particles_as_they_were_and_ages_its_own_record():
    env = lander()
    renderer = LunarLanderRenderer(env, "LunarLander-v3")
    for _ in range(30):
        env.step(2)  # the main engine: a particle a step
    before = particles_of(env)
    state = renderer.state_of(env)
    assert particles_of(env) == before and len(before) == 30
    kept = state[9 + 11 :].reshape(PARTICLES, 3)
    assert kept[:, 2] == pytest.approx([ttl - 0.15 for _, _, ttl in before[-PARTICLES:]])  # the newest, a render older
    for _ in range(5):
        state = renderer.state_of(env)
    older = state[9 + 11 :].reshape(PARTICLES, 3)
    assert older[:, 2] == pytest.approx([ttl - 6 * 0.15 for _, _, ttl in before[-PARTICLES:]])
    for _ in range(10):
        state = renderer.state_of(env)  # all spent: gone, as render() lets them go, and not back
    assert np.isnan(state[9 + 11 :]).all() and particles_of(env) == before
    env.step(2)
    assert np.isfinite(renderer.state_of(env)[20:23]).all() and np.isnan(renderer.state_of(env)[23:]).all()
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
