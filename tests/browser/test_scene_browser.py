"""Scenes drawn by the page (js/scene.js) in Chromium, compared with gymnasium's own env.render() at the same
states, at the size the live view shows them."""

import base64
import os
import pathlib

import gymnasium as gym
import numpy as np
import pytest
from lab import bundled_scene_js, chromium_page
from PIL import Image

from gymview.image.frames import downsample
from gymview.renderers import renderer_for
from gymview.renderers.grid import TiledPainter

pytestmark = [pytest.mark.browser]

MAX_SIZE = 512
DRAW = """async ([scene, state, width, height]) => {
    await window.scenes.loadScene(scene);
    const canvas = document.createElement("canvas");
    canvas.width = width;
    canvas.height = height;
    const context = canvas.getContext("2d");
    window.scenes.drawScene(context, scene, Float32Array.from(state), width, height);
    const bytes = context.getImageData(0, 0, width, height).data;
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(text);
}"""


@pytest.fixture(scope="module")
def page():
    with chromium_page() as page:
        page.set_content("<!doctype html><body></body>")
        page.add_script_tag(content=bundled_scene_js())
        page.wait_for_function("() => window.scenes !== undefined")
        yield page


def drawn_by_page(page, scene, state, width, height):
    data = base64.b64decode(page.evaluate(DRAW, [scene, [float(x) for x in state], width, height]))
    return np.frombuffer(data, np.uint8).reshape(height, width, 4)[..., :3]


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


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


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    """Where the side-by-side pictures go: $GYMVIEW_TEST_ARTIFACTS if set, else a temp folder."""
    folder = os.environ.get("GYMVIEW_TEST_ARTIFACTS")
    path = pathlib.Path(folder) if folder else tmp_path_factory.mktemp("scenes")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.parametrize(
    "env_id", ["CartPole-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1", "Pendulum-v1"]
)
def test_the_page_draws_each_classic_control_env_as_env_render_does(page, env_id, screenshots):
    renderer, pairs = states_along(env_id)
    scene = {**renderer.page_scene(), "id": 1}
    scores = []
    for n, (state, rendered) in enumerate(pairs):
        expected = downsample(rendered, MAX_SIZE)
        height, width = expected.shape[:2]
        drawn = drawn_by_page(page, scene, state.astype(np.float32), width, height)
        scores.append(psnr(drawn, expected))
        if n == 0:
            Image.fromarray(np.concatenate([drawn, expected], axis=1)).save(screenshots / f"{env_id}-page-vs-render.png")
    assert min(scores) >= 30.0, (env_id, [round(score, 1) for score in scores])
    assert page.evaluate("() => 1") == 1 and not page.errors, page.errors


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
