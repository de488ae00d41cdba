"""Boards (FrozenLake, CliffWalking): pictures the env draws once, on a copy of it, and each frame the board with
the player's cell pasted on it: env.render()'s very picture."""

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv
from seeded_envs import seeded

from gymview.renderers import renderer_for, toy_text
from gymview.renderers.grid import TiledPainter, drawing_of, state_painter
from gymview.renderers.toy_text import MOST_RENDERS, BoardRenderer


@pytest.fixture(autouse=True)
def _boards_drawn_afresh(monkeypatch):
    """Each test draws its boards itself: none left by another."""
    monkeypatch.setattr(toy_text, "_boards", type(toy_text._boards)())


played = seeded


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [("FrozenLake-v1", {}), ("FrozenLake-v1", {"map_name": "8x8", "is_slippery": False}), ("CliffWalking-v1", {})],
)
def test_each_frame_is_env_render_s_very_picture(env_id, kwargs):
    env = played(env_id, **kwargs)
    renderer = renderer_for(env)
    assert isinstance(renderer, BoardRenderer)
    for _ in range(150):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
        np.testing.assert_array_equal(renderer.render(renderer.state_of(env)[None])[0], env.render())
    env.close()


def test_drawing_the_board_leaves_the_user_s_env_as_it_was():
    env = played("FrozenLake-v1")
    env.step(2)
    unwrapped = env.unwrapped
    before = (unwrapped.s, unwrapped.lastaction, unwrapped.window_surface)
    renderer_for(env)
    assert len(toy_text._boards) == 1  # drawn now, from this env
    assert (unwrapped.s, unwrapped.lastaction, unwrapped.window_surface) == before
    assert before[2] is None  # it never rendered: its copy drew the pictures on a window of its own
    env.close()


def test_a_state_before_reset_is_refused_with_what_to_do():
    env = gym.make("FrozenLake-v1", render_mode="rgb_array")
    with pytest.raises(ValueError, match="call env.reset"):
        renderer_for(env).state_of(env)


def test_a_map_too_big_to_draw_at_once_goes_as_pictures():
    side = int(MOST_RENDERS**0.5) + 1
    env = played("FrozenLake-v1", desc=["S" + "F" * (side - 1)] + ["F" * side] * (side - 2) + ["F" * (side - 1) + "G"])
    assert renderer_for(env) is None and not toy_text._boards


def test_the_boards_of_the_latest_maps_are_kept():
    maps = [["S" + "F" * n, "F" * n + "G"] for n in range(1, toy_text.KEPT_BOARDS + 3)]
    renderers = [renderer_for(played("FrozenLake-v1", desc=desc)) for desc in maps]
    assert len(toy_text._boards) == toy_text.KEPT_BOARDS
    assert renderer_for(played("FrozenLake-v1", desc=maps[-1])).players[0] is renderers[-1].players[0]


class Facing(FrozenLakeEnv):
    """A FrozenLake whose player's cell shows the way it last moved (as gymnasium 1.1's elf does)."""

    def _render_gui(self, mode):
        frame = super()._render_gui(mode).copy()
        row, column = divmod(self.s, self.ncol)
        width, height = self.cell_size
        shade = 40 * (4 if self.lastaction is None else self.lastaction)
        frame[row * height : row * height + 4, column * width : column * width + 4] = shade
        return frame


class Counting(FrozenLakeEnv):
    """A FrozenLake that marks its corner by where the player is: not a board's picture."""

    def _render_gui(self, mode):
        frame = super()._render_gui(mode).copy()
        frame[-1, -1] = self.s
        return frame


def test_a_player_that_faces_its_last_move_is_drawn_facing_it():
    env = Facing(render_mode="rgb_array")
    env.reset(seed=0)
    renderer = renderer_for(env)
    assert len(renderer.players) == 5
    for action in (0, 1, 2, 3):
        env.step(action)
        assert renderer.state_of(env)[1] == action
        np.testing.assert_array_equal(renderer.render(renderer.state_of(env)[None])[0], env.render())
    env.reset()
    assert renderer.state_of(env)[1] == 4  # no move yet


def test_an_env_whose_picture_changes_elsewhere_is_no_board():
    env = Counting(render_mode="rgb_array")
    env.reset(seed=0)
    assert renderer_for(env) is None


def test_equal_states_are_the_same_frame_and_bad_ones_are_refused_with_the_range():
    renderer = renderer_for(played("FrozenLake-v1"))
    first, same, other = renderer.frame_keys(np.array([[3, 0], [3, 0], [4, 0]]))
    assert first == same != other
    with pytest.raises(ValueError, match="cells must be whole numbers from 0 to 15"):
        renderer.render(np.array([[16.0, 0.0]]))
    with pytest.raises(ValueError, match="facings must be whole numbers below 1"):
        renderer.render(np.array([[1.0, 2.0]]))


def test_sub_envs_of_one_map_share_its_pictures_and_are_drawn_in_a_grid():
    envs = [played("CliffWalking-v1", seed) for seed in range(3)]
    renderers = [renderer_for(env) for env in envs]
    assert renderers[0].players[0] is renderers[2].players[0]  # drawn once for the map
    for n, env in enumerate(envs):
        for _ in range(n + 1):
            env.step(0)  # up
    picture = drawing_of(TiledPainter(renderers[0], 3), envs, [0.0, -1.0, -2.0]).draw()
    expected = envs[2].render()  # the third cell: below the first two, its label aside
    np.testing.assert_array_equal(picture[256 + 40 : 512, :768], expected[40:])
    for env in envs:
        env.close()


def test_sub_envs_of_different_maps_are_not_drawn_by_one_board():
    envs = [played("FrozenLake-v1", desc=desc) for desc in (["SF", "HG"], ["SH", "FG"])]
    assert state_painter(envs) is None
    assert state_painter([envs[0], played("FrozenLake-v1", desc=["SF", "HG"])]) is not None


def test_a_board_goes_to_another_process_and_draws_there_as_here():
    env = played("CliffWalking-v1")
    env.step(0)
    renderer = renderer_for(env)
    state = renderer.state_of(env)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(renderer)).render(state[None])[0], env.render())
