"""Scenes drawn by the page (js/scene.js) in Chromium, compared with gymnasium's own env.render() at the same
states, at the size the live view shows them."""


import gymnasium as gym
import numpy as np
import pytest
from lab import drawn_by_page, scene_page
from PIL import Image
from video_checks import psnr

from gymview.image.frames import downsample
from gymview.renderers import renderer_for
from gymview.renderers.grid import TiledPainter

pytestmark = [pytest.mark.browser]

MAX_SIZE = 512


@pytest.fixture(scope="module")
def page():
    with scene_page() as page:
        yield page


def states_along(env_id, count=4, steps=12, seed=0):
    """``count`` (state, env.render()) pairs along a random episode, ``steps`` apart."""
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=seed)
    env.action_space.seed(seed)
    renderer = renderer_for(env)
    pairs = []
    while len(pairs) < count:
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()
        pairs.append((renderer.state_of(env), env.render()))
    env.close()
    return renderer, pairs


@pytest.mark.parametrize(
    "env_id",
    [
        "CartPole-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1", "Pendulum-v1", "LunarLander-v3",
        "FrozenLake-v1", "CliffWalking-v1", "Taxi-v4", "Blackjack-v1", "BipedalWalker-v3",
    ],
)  # fmt: skip
def test_the_page_draws_each_env_as_env_render_does(page, env_id, artifacts):
    if env_id in ("LunarLander-v3", "BipedalWalker-v3"):
        pytest.importorskip("Box2D")
    renderer, pairs = states_along(env_id)
    scene = {**renderer.page_scene(), "id": 1}
    scores = []
    for n, (state, rendered) in enumerate(pairs):
        expected = downsample(rendered, MAX_SIZE)
        height, width = expected.shape[:2]
        drawn = drawn_by_page(page, scene, state.astype(np.float32), width, height)
        scores.append(psnr(drawn, expected))
        if n == 0:
            Image.fromarray(np.concatenate([drawn, expected], axis=1)).save(artifacts / f"{env_id}-page-vs-render.png")
    print(env_id, "PSNR", [round(score, 1) for score in scores])
    # Taxi's pixel art, shrunk to 0.955 of its size, is smoothed by the browser otherwise than by area averaging
    assert min(scores) >= (28.0 if env_id == "Taxi-v4" else 30.0), (env_id, [round(score, 1) for score in scores])
    assert page.evaluate("() => 1") == 1 and not page.errors, page.errors


@pytest.mark.parametrize("env_id", ["BipedalWalker-v3", "BipedalWalkerHardcore-v3"])
def test_a_walker_far_along_its_way_is_drawn_where_the_view_has_scrolled(page, artifacts, env_id):
    pytest.importorskip("Box2D")
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=3)
    for _ in range(20):
        env.step(env.action_space.sample())
    renderer, walker = renderer_for(env), env.unwrapped
    scene = {**renderer.page_scene(), "id": 1}
    for scroll in (7.3, 41.15, 84.9):  # the view as the env scrolls it, the walker drawn wherever it is
        walker.scroll = scroll
        state = renderer.state_of(env)
        walker.lidar_render -= 1  # the same ray again: render() moves to the next as state_of() did
        expected = downsample(env.render(), MAX_SIZE)
        drawn = drawn_by_page(page, scene, state.astype(np.float32), *expected.shape[1::-1])
        Image.fromarray(np.concatenate([drawn, expected], axis=1)).save(artifacts / f"{env_id}-at-{scroll}.png")
        assert psnr(drawn, expected) >= 30.0, (scroll, psnr(drawn, expected))
    assert not page.errors, page.errors


def test_a_pendulum_s_arrow_points_the_way_of_the_torque(page):
    env = gym.make("Pendulum-v1", render_mode="rgb_array")
    env.reset(seed=0)
    renderer = renderer_for(env)
    scene = {**renderer.page_scene(), "id": 1}
    for torque in (-2.0, 2.0):
        env.step(np.array([torque], np.float32))
        expected = downsample(env.render(), MAX_SIZE)
        drawn = drawn_by_page(page, scene, renderer.state_of(env).astype(np.float32), *expected.shape[1::-1])
        mirrored = drawn_by_page(
            page, scene, (renderer.state_of(env) * [1, 1, -1]).astype(np.float32), *expected.shape[1::-1]
        )
        assert psnr(drawn, expected) >= 30.0 and psnr(drawn, expected) > psnr(mirrored, expected) + 3
    env.close()


def test_a_vector_env_s_grid_shows_each_sub_env_in_its_cell(page):
    envs = [gym.make("CartPole-v1", render_mode="rgb_array") for _ in range(4)]
    renderer = renderer_for(envs[0])
    for seed, env in enumerate(envs):
        env.reset(seed=seed)
    states = np.concatenate([renderer.state_of(env) for env in envs] + [np.array([3.0, 14.0, 15.0, 92.0])])
    painter = TiledPainter(renderer, 4)
    scene = {**painter.page_scene(), "id": 1}
    expected = downsample(painter.paint(states), MAX_SIZE)
    height, width = expected.shape[:2]
    drawn = drawn_by_page(page, scene, states.astype(np.float32), width, height)
    cells = [(slice(top, top + height // 2), slice(left, left + width // 2)) for top in (0, height // 2)
             for left in (0, width // 2)]
    for rows, columns in cells:  # each cell's picture, its label's corner aside
        below_label = (slice(rows.start + height // 8, rows.stop), columns)
        assert psnr(drawn[below_label], expected[below_label]) >= 25.0
    assert drawn[2:12, 4:40].min() < 50 and drawn[2:12, 4:40].max() > 200  # a label: white text on black
    for env in envs:
        env.close()


def test_the_page_draws_car_racing_as_env_render_does(page, artifacts):
    pytest.importorskip("Box2D")
    from gymview.renderers.car_racing import CarRacingPainter

    env = gym.make("CarRacing-v3", render_mode="rgb_array")
    env.reset(seed=1)
    env.action_space.seed(1)
    painter, scores = CarRacingPainter.for_env(env), []
    for step in range(200):
        action = env.action_space.sample()
        action[1] = 1.0 if step < 100 else action[1]
        env.step(action)
        if step in (3, 40, 120, 199):  # zooming in at the start, then following the car, skid marks behind it
            frame = painter.frame_of(env)
            expected = downsample(env.render(), MAX_SIZE)
            scene = {**frame.painter.page_scene(), "id": step}
            drawn = drawn_by_page(page, scene, frame.state.astype(np.float32), *expected.shape[1::-1])
            scores.append(psnr(drawn, expected))
            Image.fromarray(np.concatenate([drawn, expected], axis=1)).save(artifacts / f"CarRacing-{step}.png")
            if step == 120:  # the score and the tiles the car touched are drawn from the state too
                layout = scene["layout"]
                for part, value, least in ((slice(4, 5), 8888.0, 60), (slice(layout["touched"], None), 0.0, 3)):
                    changed = frame.state.astype(np.float32)
                    changed[part] = value  # a tile touched loses its shade: a few levels of grey
                    other = drawn_by_page(page, scene, changed, *expected.shape[1::-1])
                    assert np.any(np.abs(other.astype(int) - drawn).sum(axis=2) >= least), (part, value)
    print("CarRacing PSNR", [round(score, 1) for score in scores])
    assert min(scores) >= 28.0, [round(score, 1) for score in scores]
    assert not page.errors, page.errors


def test_the_page_draws_a_grid_of_car_racing_sub_envs_each_on_its_own_track(page, artifacts):
    pytest.importorskip("Box2D")
    from gymview.renderers.car_racing import CarRacingGridPainter
    from gymview.renderers.grid import tiled

    envs = [gym.make("CarRacing-v3", render_mode="rgb_array") for _ in range(2)]
    for seed, env in enumerate(envs):
        env.reset(seed=seed)
        for _ in range(60):
            env.step(np.array([0.2, 1.0, 0.0], np.float32))
    returns = [12.0, -3.0]
    frame = CarRacingGridPainter.for_envs(envs).frame_of(envs, returns)
    expected = downsample(tiled([env.render() for env in envs], returns), MAX_SIZE)
    drawn = drawn_by_page(page, {**frame.painter.page_scene(), "id": 1}, frame.state.astype(np.float32),
                          *expected.shape[1::-1])  # fmt: skip
    Image.fromarray(np.concatenate([drawn, expected], axis=1)).save(artifacts / "CarRacing-grid.png")
    below = slice(expected.shape[0] // 6, None)  # below the labels: the page writes them larger
    assert psnr(drawn[below], expected[below]) >= 25.0, psnr(drawn[below], expected[below])  # as classic control's grids
    assert not page.errors, page.errors
