"""CarRacing read as states (a painter a track) and drawn with pygame as env.render() draws it: the zoom at the start,
the skid marks, the tiles the car touched, colours of a randomised domain, a new track after each reset."""

import pickle

import numpy as np
import pytest
from seeded_envs import seeded

pytest.importorskip("Box2D")

from gymview.renderers.car_racing import MARK_POINTS, MARKS, MARKS_SIZE, CarRacingPainter  # noqa: E402


def drive(env, steps, every, brake=0.0):
    """Full throttle, then random turns (skid marks), braking as hard as ``brake``; every ``every``-th step yielded."""
    for step in range(steps):
        action = env.action_space.sample()
        action[1:] = (1.0, 0.0) if step < steps // 2 else (action[1], brake or action[2])
        env.step(action)
        if step % every == 0:
            yield step


@pytest.mark.parametrize("randomize", [False, True])
def test_a_state_is_drawn_as_env_render_draws_it(randomize):
    env = seeded("CarRacing-v3", 2, domain_randomize=randomize)
    painter = CarRacingPainter.for_env(env)
    marked = touched = 0
    for _ in drive(env, 160, every=8):
        frame = painter.frame_of(env)
        np.testing.assert_array_equal(frame.draw(), env.render())
        marked = max(marked, int(np.isfinite(frame.state[MARKS : MARKS + MARKS_SIZE]).sum()))
        touched = max(touched, int(frame.state[MARKS + MARKS_SIZE :].sum() > 0))
    assert marked > 0 and touched  # skid marks and touched tiles were drawn
    env.close()


def test_each_track_has_its_own_painter_and_the_first_second_s_zoom_is_drawn():
    env = seeded("CarRacing-v3", 0)
    painter = CarRacingPainter.for_env(env)
    env.step(np.zeros(3, np.float32))
    first = painter.frame_of(env)
    assert first.state[0] < 5  # zoomed out at the start: the whole track in view
    np.testing.assert_array_equal(first.draw(), env.render())
    assert painter.frame_of(env).painter is first.painter  # one track, one painter
    env.reset(seed=1)
    env.step(np.zeros(3, np.float32))
    second = painter.frame_of(env)
    assert second.painter is not first.painter and second.painter.road != first.painter.road
    np.testing.assert_array_equal(second.draw(), env.render())
    env.close()


def test_a_track_s_painter_draws_in_another_process_as_here():
    env = seeded("CarRacing-v3", 3)
    for _ in drive(env, 20, every=20):
        pass
    frame = CarRacingPainter.for_env(env).frame_of(env)
    frame.draw()  # its font made here: not pickled
    copy = pickle.loads(pickle.dumps(frame.painter))
    np.testing.assert_array_equal(copy.paint(frame.state), env.render())
    env.close()


def test_only_an_env_drawn_as_its_own_render_draws_gets_a_painter():
    import gymnasium as gym

    assert CarRacingPainter.for_env(gym.make("CarRacing-v3")) is None  # no rgb_array pictures
    assert CarRacingPainter.for_env(gym.make("CartPole-v1", render_mode="rgb_array")) is None
    env = gym.make("CarRacing-v3", render_mode="rgb_array")
    assert CarRacingPainter.for_env(env).frame_of(env) is None  # before its first reset


def test_a_car_that_skids_long_shows_its_newest_marks():
    env = seeded("CarRacing-v3", 2)
    painter = CarRacingPainter.for_env(env)
    for _ in drive(env, 400, every=400, brake=0.9):
        pass
    points = sum(len(mark.poly) for mark in env.unwrapped.car.particles)
    assert points > MARK_POINTS  # more than a state holds
    state = painter.frame_of(env).state[MARKS : MARKS + MARKS_SIZE]
    newest = env.unwrapped.car.particles[-1]
    count = int(np.isfinite(state).sum())
    assert MARK_POINTS * 2 - 60 <= count <= MARKS_SIZE  # nearly full, the oldest left out
    np.testing.assert_array_equal(state[count - 2 * len(newest.poly) : count], np.ravel(newest.poly))


@pytest.mark.parametrize("reward", [2.5, 3.5, -0.3, -0.5, -12.5])
def test_the_score_is_written_as_render_writes_it(reward):
    env = seeded("CarRacing-v3", 0)
    env.step(np.zeros(3, np.float32))
    env.unwrapped.reward = reward  # "{:04.0f}": halves to even, and "-000" for a small loss
    np.testing.assert_array_equal(CarRacingPainter.for_env(env).frame_of(env).draw(), env.render())


def test_a_painter_draws_on_after_pygame_is_quit():
    import pygame

    env = seeded("CarRacing-v3", 0)
    env.step(np.zeros(3, np.float32))
    frame = CarRacingPainter.for_env(env).frame_of(env)
    frame.draw()
    pygame.quit()  # as another env's close() does
    np.testing.assert_array_equal(frame.draw(), env.render())


def test_why_a_car_racing_goes_as_pictures_is_said():
    import gymnasium as gym

    from gymview.renderers.not_drawn import why_not_drawn_by_page

    class Stamped(gym.Wrapper):
        def render(self):
            return self.env.render()

    env = gym.make("CarRacing-v3", render_mode="rgb_array")
    assert why_not_drawn_by_page(env) is None
    assert why_not_drawn_by_page(Stamped(env)) == "a wrapper changes its pictures (it overrides render())"


def test_a_grid_of_sub_envs_is_drawn_each_on_its_own_track_as_their_renders_tiled():
    from gymview.renderers.car_racing import CarRacingGridPainter
    from gymview.renderers.grid import tiled

    envs = [seeded("CarRacing-v3", seed) for seed in (0, 1, 2)]
    grid = CarRacingGridPainter.for_envs(envs)
    for _ in range(5):
        for env in envs:
            env.step(np.array([0.3, 1.0, 0.0], np.float32))
    returns = [1.5, -2.0, 30.0]
    frame = grid.frame_of(envs, returns)
    np.testing.assert_array_equal(frame.draw(), tiled([env.render() for env in envs], returns))
    scene = frame.painter.page_scene()
    assert scene["kind"] == "grid" and len(scene["cells"]) == 3 and scene["cells"][0]["road"] != scene["cells"][1]["road"]
    assert grid.frame_of(envs, returns).painter is frame.painter  # the same tracks: the same scene
    envs[1].reset(seed=7)
    again = grid.frame_of(envs, returns)
    assert again.painter is not frame.painter  # a new track: a new scene
    np.testing.assert_array_equal(again.draw(), tiled([env.render() for env in envs], returns))
    assert CarRacingGridPainter.for_envs([*envs, seeded("CartPole-v1")]) is None
