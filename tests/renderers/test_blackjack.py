"""Blackjack: gymnasium's pixel art pasted on the felt where draw_table pastes it, from which and where a state says:
env.render()'s very picture."""

import pickle

import gymnasium as gym
import numpy as np
import pytest
from seeded_envs import seeded

from gymview.renderers import renderer_for
from gymview.renderers.base import NotDrawable
from gymview.renderers.blackjack import BlackjackRenderer


def table(seed=0, **kwargs):
    return seeded("Blackjack-v1", seed, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"natural": True, "sab": False}])
def test_each_frame_is_env_render_s_very_picture(kwargs):
    env = table(**kwargs)
    renderer = renderer_for(env)
    assert isinstance(renderer, BlackjackRenderer) and renderer.page_scene()["kind"] == "sprites"
    aces = 0
    for _ in range(200):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        state = renderer.state_of(env)
        aces += not np.isnan(state[-3])
        np.testing.assert_array_equal(renderer.render(state[None])[0], env.render())
        if terminated or truncated:
            env.reset()
    assert aces > 0, "a usable ace drawn too"
    env.close()


def test_two_digit_sums_and_one_digit_values_leave_the_second_digit_empty():
    env = table()
    renderer = renderer_for(env)
    state = renderer._state(21, 7, False, "7D").reshape(-1, 3)
    slots = dict(zip(renderer.slots, state))
    assert not np.isnan(slots["player_digit1"][0]) and np.isnan(slots["dealer_digit1"][0])
    assert np.isnan(slots["usable_ace"][0])


def test_a_state_before_reset_and_bad_states_are_refused_with_what_to_do():
    renderer = renderer_for(table())
    with pytest.raises(ValueError, match=r"call env\.reset"):
        renderer.state_of(gym.make("Blackjack-v1", render_mode="rgb_array"))
    with pytest.raises(ValueError, match="dealer_label, dealer_digit0"):
        renderer.render(np.full((1, renderer.state_dim), 500.0))


def test_a_gymnasium_that_draws_its_table_otherwise_has_it_go_as_pictures(monkeypatch):
    from gymnasium.envs.toy_text import blackjack

    drawn_by_gymnasium = blackjack.draw_table

    def marked(surface, *hand):  # a table gymview's layout does not make
        drawn_by_gymnasium(surface, *hand)
        surface.set_at((0, 0), (255, 0, 0))

    monkeypatch.setattr(blackjack, "draw_table", marked)
    with pytest.raises(NotDrawable, match="otherwise"):
        BlackjackRenderer(table(), "Blackjack-v1")
    monkeypatch.undo()
    monkeypatch.delattr(blackjack, "FELT_COLOR")  # an older gymnasium's Blackjack, drawn with fonts
    assert renderer_for(table()) is None


def test_a_renderer_draws_in_another_process_as_here():
    env = table()
    env.step(0)
    renderer = renderer_for(env)
    state = renderer.state_of(env)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(renderer)).render(state[None])[0], env.render())
