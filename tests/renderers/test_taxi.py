"""Taxi: its pictures (the destination's marker, the passenger, the taxi) pasted on its background, from where a
state says each goes: env.render()'s very picture."""

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.toy_text.taxi import TaxiEnv
from seeded_envs import seeded

from gymview.renderers import renderer_for
from gymview.renderers.base import NotDrawable
from gymview.renderers.taxi import TaxiRenderer


def taxi(seed=0):
    return seeded("Taxi-v4", seed)


def test_each_frame_is_env_render_s_very_picture():
    env = taxi()
    renderer = renderer_for(env)
    assert isinstance(renderer, TaxiRenderer) and renderer.page_scene()["kind"] == "sprites"
    for _ in range(100):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
        np.testing.assert_array_equal(renderer.render(renderer.state_of(env)[None])[0], env.render())
    env.close()


@pytest.mark.parametrize("riding", [False, True])
def test_the_taxi_faces_its_last_move_empty_or_full(riding):
    env = taxi()
    unwrapped = env.unwrapped
    renderer = renderer_for(env)
    for move in (0, 1, 2, 3, 4, 5):  # south, north, east, west; pick-up and drop-off leave it facing as it was
        unwrapped.s = unwrapped.encode(2, 2, 4 if riding else 1, 3)
        unwrapped.lastaction = move
        state = renderer.state_of(env)
        assert state[6] == 2 + min(move, 3) + 4 * riding
        assert np.isnan(state[3]) == riding  # the passenger rides: not drawn at its stop
        np.testing.assert_array_equal(renderer.render(state[None])[0], env.render())
    env.close()


def test_drawing_the_pictures_leaves_the_user_s_env_as_it_was():
    env = taxi()
    unwrapped = env.unwrapped
    before = (unwrapped.s, unwrapped.lastaction, unwrapped.taxi_orientation)
    renderer_for(env)
    assert (unwrapped.s, unwrapped.lastaction, unwrapped.taxi_orientation) == before
    assert unwrapped.window is None and unwrapped.taxi_imgs is None  # never rendered: nothing loaded into it


def test_a_state_before_reset_and_bad_states_are_refused_with_what_to_do():
    renderer = renderer_for(taxi())
    with pytest.raises(ValueError, match=r"call env\.reset"):
        renderer.state_of(gym.make("Taxi-v4", render_mode="rgb_array"))
    with pytest.raises(ValueError, match="a picture from 0 to 9"):
        renderer.render(np.array([[12, 0, 0, np.nan, 0, 0, 2, 0, 0]]))
    with pytest.raises(ValueError, match="its place in pixels"):
        renderer.render(np.array([[0, np.nan, 0, np.nan, 0, 0, 2, 0, 0]]))


def test_a_taxi_whose_cells_are_placed_otherwise_is_drawn_as_it_places_them():
    class Staggered(TaxiEnv):
        def get_surf_loc(self, map_loc):
            x, y = super().get_surf_loc(map_loc)
            return x, y + 4 * map_loc[1]

    env = Staggered(render_mode="rgb_array")
    env.reset(seed=0)
    renderer = renderer_for(env)
    for _ in range(30):
        env.step(env.action_space.sample())
        np.testing.assert_array_equal(renderer.render(renderer.state_of(env)[None])[0], env.render())


def test_a_gymnasium_whose_taxi_draws_otherwise_has_it_go_as_pictures(monkeypatch):
    from gymnasium.envs.toy_text import taxi as taxi_module

    monkeypatch.delattr(taxi_module, "PASSENGER_OFFSET")  # an older gymnasium's Taxi
    with pytest.raises(NotDrawable, match=r"draws Taxi otherwise than gymnasium 1\.4"):
        TaxiRenderer(taxi(), "Taxi-v4")
    assert renderer_for(taxi()) is None


def test_equal_states_are_the_same_frame_and_a_renderer_draws_in_another_process_as_here():
    env = taxi()
    env.step(1)
    renderer = renderer_for(env)
    state = renderer.state_of(env)
    first, again = renderer.frame_keys(np.stack([state, state.copy()]))
    assert first == again
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(renderer)).render(state[None])[0], env.render())
