"""The vectorized renderers against gymnasium's own pygame frames."""

from __future__ import annotations

import os
import pickle

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import gymnasium as gym
import numpy as np
import picture_envs  # noqa: F401 (registers gymview-tests/Pictures-v0)
import pytest
from gymnasium.envs.classic_control import CartPoleEnv, PendulumEnv

from gymview.renderers import BatchRenderer, Drawing, renderer_for
from gymview.renderers.not_drawn import why_not_drawn_by_page

ENV_IDS = ["MountainCar-v0", "MountainCarContinuous-v0", "CartPole-v1", "Acrobot-v1", "Pendulum-v1"]


def psnr(frame: np.ndarray, reference: np.ndarray) -> float:
    mse = np.mean((frame.astype(np.float64) - reference.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def random_states(env_id: str, count: int, rng: np.random.Generator) -> np.ndarray:
    """States an episode can reach (CartPole: inside its termination bounds)."""
    if env_id.startswith("MountainCar"):
        return np.stack([rng.uniform(-1.2, 0.6, count), rng.uniform(-0.07, 0.07, count)], 1)
    if env_id == "CartPole-v1":
        x, theta = rng.uniform(-2.4, 2.4, count), rng.uniform(-0.21, 0.21, count)
        return np.stack([x, rng.normal(size=count), theta, rng.normal(size=count)], 1)
    if env_id == "Acrobot-v1":
        angles = rng.uniform(-np.pi, np.pi, (count, 2))
        return np.concatenate([angles, rng.normal(size=(count, 2))], 1)
    torque = rng.uniform(-2.0, 2.0, count)
    torque[::4] = np.nan  # no action yet: no arrow
    return np.stack([rng.uniform(-np.pi, np.pi, count), rng.normal(size=count), torque], 1)


def set_state(env: gym.Env, state: np.ndarray) -> None:
    unwrapped = env.unwrapped
    if isinstance(unwrapped, PendulumEnv):
        unwrapped.state = state[:2].copy()
        unwrapped.last_u = None if np.isnan(state[2]) else np.float32(state[2])
    else:
        unwrapped.state = state.copy()


@pytest.fixture(scope="module")
def rng() -> np.random.Generator:
    return np.random.default_rng(2024)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_matches_pygame_frames(env_id: str, rng: np.random.Generator) -> None:
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    renderer = renderer_for(env)
    states = random_states(env_id, 50, rng)
    frames = renderer.render(states)
    scores = []
    for state, frame in zip(states, frames):
        set_state(env, state)
        scores.append(psnr(frame, env.render()))
    env.close()
    assert min(scores) >= 30.0, f"{env_id}: worst PSNR {min(scores):.1f} dB (median {np.median(scores):.1f})"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_state_of_snapshots_what_render_draws(env_id: str) -> None:
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=1)
    env.action_space.seed(1)
    renderer = renderer_for(env)
    for _ in range(5):
        env.step(env.action_space.sample())
    state = renderer.state_of(env)
    assert state.shape == (renderer.state_dim,) and state.dtype == np.float64
    reference = env.render()
    env.step(env.action_space.sample())  # the snapshot must not follow the env
    assert psnr(renderer.render(state[None])[0], reference) >= 30.0
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_shapes_and_dtype(env_id: str, rng: np.random.Generator) -> None:
    renderer = renderer_for(env_id)
    assert isinstance(renderer, BatchRenderer)
    frames = renderer.render(random_states(env_id, 3, rng))
    assert frames.shape == (3, renderer.height, renderer.width, 3) and frames.dtype == np.uint8
    assert frames.flags.c_contiguous
    assert renderer.render(np.zeros((0, renderer.state_dim))).shape == (0, renderer.height, renderer.width, 3)


@pytest.mark.parametrize("env_id", ["MountainCar-v0", "CartPole-v1", "Pendulum-v1"])
def test_drawing_into_previous_output_repaints_only_what_moved(env_id: str, rng: np.random.Generator) -> None:
    renderer = renderer_for(env_id)
    first, second = random_states(env_id, 20, rng), random_states(env_id, 20, rng)
    out = renderer.render(first)
    assert renderer.render(second, out=out) is out
    np.testing.assert_array_equal(out, renderer.render(second))
    other = np.zeros_like(out)  # an array it did not draw last time is painted in full
    np.testing.assert_array_equal(renderer.render(first, out=other), renderer.render(first))


@pytest.mark.parametrize("env_id", ["MountainCar-v0", "CartPole-v1", "Acrobot-v1"])
def test_drawing_into_the_first_frames_of_the_previous_output(env_id: str, rng: np.random.Generator) -> None:
    renderer, fresh = renderer_for(env_id), renderer_for(env_id)  # fresh: each call a new array
    first, second, third = (random_states(env_id, count, rng) for count in (20, 7, 20))
    out = renderer.render(first, out=np.empty((20, renderer.height, renderer.width, 3), np.uint8))
    np.testing.assert_array_equal(renderer.render(second, out=out[:7]), fresh.render(second))
    # out[7:] still holds the first call's frames: the next call over all of it repaints those too
    np.testing.assert_array_equal(renderer.render(third, out=out), fresh.render(third))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_pickled_renderer_draws_the_same_frames(env_id: str, rng: np.random.Generator) -> None:
    # watch() sends renderers to its encoder process, which draws there.
    renderer = renderer_for(env_id)
    states = random_states(env_id, 8, rng)
    out = renderer.render(states[:4])
    copy = pickle.loads(pickle.dumps(renderer))
    np.testing.assert_array_equal(copy.render(states), renderer.render(states))
    assert renderer.render(states[4:], out=out) is out  # the original still repaints incrementally
    np.testing.assert_array_equal(out, copy.render(states[4:]))
    drawing = Drawing(copy, states[0])
    np.testing.assert_array_equal(drawing.draw(), renderer.render(states[:1])[0])


def test_env_render_size_is_used() -> None:
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    env.unwrapped.screen_width, env.unwrapped.screen_height = 300, 200
    env.reset(seed=0)
    renderer = renderer_for(env)
    assert (renderer.width, renderer.height) == (300, 200)
    frame = renderer.render(renderer.state_of(env)[None])[0]
    assert psnr(frame, env.render()) >= 30.0
    env.close()


def test_parts_off_screen_are_not_drawn() -> None:
    # On a screen 63 pixels high the cart (drawn 85-115 pixels up) is off screen: nothing of it shows.
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    env.unwrapped.screen_width, env.unwrapped.screen_height = 97, 63
    env.reset(seed=0)
    renderer = renderer_for(env)
    frame = renderer.render(renderer.state_of(env)[None])[0]
    assert psnr(frame, env.render()) >= 30.0
    env.close()


def test_an_env_whose_package_is_missing_has_no_renderer(monkeypatch) -> None:
    def without_box2d(env_id, **kwargs):
        raise gym.error.DependencyNotInstalled('Box2D is not installed, run `pip install "gymnasium[box2d]"`')

    monkeypatch.setattr(gym, "make", without_box2d)
    assert renderer_for("LunarLander-v3") is None


def newest(name: str) -> str:
    """The newest version of ``name`` this gymnasium registers (``Taxi-v4`` from gymnasium 1.3, ``Taxi-v3`` before)."""
    return max((env_id for env_id in gym.registry if env_id.startswith(f"{name}-v")), key=lambda i: int(i.split("-v")[1]))


@pytest.mark.parametrize("name", ["FrozenLake", "CliffWalking", "Taxi", "Blackjack"])
def test_a_toy_text_env_is_drawn_as_its_render_draws_it_or_left_to_its_render(name) -> None:
    # whichever gymnasium this is: a renderer draws its very picture, or there is none (its frames go as pictures)
    env = gym.make(newest(name), render_mode="rgb_array")
    env.reset(seed=0)
    env.action_space.seed(0)
    renderer = renderer_for(env)
    for _ in range(30):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if renderer is not None:
            np.testing.assert_array_equal(renderer.render(renderer.state_of(env)[None])[0], env.render())
        if terminated or truncated:
            env.reset()
    env.close()


def test_why_the_page_cannot_draw_an_env_of_a_family_it_draws_is_said_in_words() -> None:
    class Tinted(gym.Wrapper):
        def render(self):
            return 255 - self.env.render()

    assert why_not_drawn_by_page(gym.make("CartPole-v1", render_mode="rgb_array")) is None
    assert why_not_drawn_by_page(gym.make("gymview-tests/Pictures-v0")) is None  # no family the page draws
    assert why_not_drawn_by_page(Tinted(gym.make("CartPole-v1", render_mode="rgb_array"))) == (
        "a wrapper changes its pictures (it overrides render())"
    )
    frozen = gym.make("FrozenLake-v1", desc=["S" + "F" * 16] * 16 + ["F" * 16 + "G"], render_mode="rgb_array")
    assert "more than 256 cells" in why_not_drawn_by_page(frozen)


def test_unknown_envs_have_no_renderer() -> None:
    assert renderer_for("CarRacing-v3") is None  # known without making it (nor Box2D)
    assert renderer_for(gym.make("gymview-tests/Pictures-v0")) is None

    class CustomCartPole(CartPoleEnv):
        def render(self):  # a different picture: the numpy renderer would be wrong
            return np.zeros((10, 10, 3), np.uint8)

    assert renderer_for(CustomCartPole()) is None
    with pytest.raises(gym.error.Error):
        renderer_for("NoSuchEnv-v0")
    with pytest.raises(TypeError, match="gymnasium env or an env id"):
        renderer_for(42)


def test_a_wrapper_that_draws_on_frames_turns_the_renderer_off() -> None:
    class Overlay(gym.Wrapper):
        def render(self):
            frame = self.env.render()
            frame[:10] = 0
            return frame

    env = gym.make("CartPole-v1", render_mode="rgb_array")  # OrderEnforcing, PassiveEnvChecker inside
    assert renderer_for(env) is not None
    assert renderer_for(gym.wrappers.RecordEpisodeStatistics(env)) is not None  # render untouched
    assert renderer_for(Overlay(env)) is None
    assert renderer_for(gym.wrappers.TimeLimit(Overlay(env), 10)) is None  # however deep it sits
    env.close()


def test_bad_states_raise_clear_errors() -> None:
    renderer = renderer_for("CartPole-v1")
    with pytest.raises(ValueError, match=r"shape \(N, 4\).*state\[None\]"):
        renderer.render(np.zeros(4))
    with pytest.raises(ValueError, match=r"shape \(N, 4\)"):
        renderer.render(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="numeric array"):
        renderer.render([["a", "b", "c", "d"]])
    with pytest.raises(ValueError, match="finite"):
        renderer.render(np.array([[np.nan, 0, 0, 0]]))
    with pytest.raises(ValueError, match="out must be a uint8 array"):
        renderer.render(np.zeros((2, 4)), out=np.zeros((1, 400, 600, 3), np.uint8))
    with pytest.raises(ValueError, match="last_u must be finite"):
        renderer_for("Pendulum-v1").render(np.array([[0.0, 0.0, np.inf]]))
    with pytest.raises(ValueError, match="call env.reset"):
        renderer.state_of(gym.make("CartPole-v1"))
