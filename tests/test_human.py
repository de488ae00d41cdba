"""render_mode="human" redirected to the live view: the patch of gymnasium.make and the pygame capture.

``StandInWatch`` is the tiny stand-in for ``gymview.watch`` the redirect accepts (``watch=``): it renders
on every step so the frames can be checked outside a kernel, where the real view renders nothing.
"""

import os

import gymnasium as gym
import numpy as np
import pygame
import pytest
from live_helpers import browser_says
from waiting import wait_until

import gymview
from gymview import human
from gymview.live.widget import LiveView
from gymview.watched import WatchedEnv


class StandInWatch(gym.Wrapper):
    def __init__(self, env):
        super().__init__(env)
        assert env.render_mode == "rgb_array"
        self.view = "the view"
        self.frames = []

    def reset(self, **kwargs):
        result = self.env.reset(**kwargs)
        self.frames.append(self.env.render())
        return result

    def step(self, action):
        result = self.env.step(action)
        self.frames.append(self.env.render())
        return result


class PygameOnlyEnv(gym.Env):
    """A third-party style env: human mode only, draws straight onto pygame's display."""

    metadata = {"render_modes": ["human"], "render_fps": 1000}

    def __init__(self, render_mode=None):
        self.render_mode = render_mode
        self.observation_space = gym.spaces.Discrete(2)
        self.action_space = gym.spaces.Discrete(2)
        self.colour = (0, 0, 0)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.colour = (10, 200, 30)
        self._draw()
        return 0, {}

    def step(self, action):
        self.colour = (200, 10, 30) if action else (10, 30, 200)
        self._draw()
        return 0, 0.0, False, False, {}

    def _draw(self):
        if self.render_mode == "human":
            screen = pygame.display.set_mode((40, 30))
            screen.fill(self.colour)
            pygame.display.flip()


gym.register("GymviewTest/PygameOnly-v0", entry_point=PygameOnlyEnv)


@pytest.fixture
def inline(monkeypatch):
    monkeypatch.delenv("SDL_VIDEODRIVER", raising=False)
    original = gym.make
    human.enable_inline_human(watch=StandInWatch)
    yield
    human.disable_inline_human()
    pygame.display.quit()
    assert gym.make is original and gym.envs.make is original


def outermost(env):
    return env.env


def test_human_mode_becomes_rgb_array_in_the_view(inline):
    env = gym.make("CartPole-v1", render_mode="human")
    assert env.render_mode == "human" and env.unwrapped.render_mode == "rgb_array"
    assert env.view == "the view" and env.render() is None
    env.reset(seed=0)
    env.step(0)
    frames = outermost(env).frames
    assert len(frames) == 2 and frames[0].shape == (400, 600, 3) and frames[0].dtype == np.uint8
    assert pygame.display.get_surface() is None  # no window was opened
    env.close()


def test_other_render_modes_and_envs_are_untouched(inline):
    assert gym.make("CartPole-v1").render_mode is None
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    assert not isinstance(env, human.InlineHuman) and env.render_mode == "rgb_array"
    assert isinstance(gym.make(gym.spec("CartPole-v1"), render_mode="human"), human.InlineHuman)
    with pytest.raises(gym.error.Error, match="NoSuchEnv"):
        gym.make("NoSuchEnv-v0", render_mode="human")


def test_enabling_twice_wraps_once_and_disable_restores(inline):
    human.enable_inline_human(watch=StandInWatch)
    assert human.inline_human_enabled()
    env = gym.make("CartPole-v1", render_mode="human")
    assert not isinstance(outermost(env).env, human.InlineHuman)


def test_pygame_only_envs_are_captured_without_a_window(inline):
    env = gym.make("GymviewTest/PygameOnly-v0", render_mode="human")
    assert env.render_mode == "human" and env.unwrapped.render_mode == "human"
    env.reset()
    env.step(1)
    assert pygame.display.get_driver() == "dummy"
    assert "SDL_VIDEODRIVER" not in os.environ  # only pygame's display was pointed at the dummy driver
    first, second = outermost(env).frames
    assert first.shape == (30, 40, 3) and tuple(first[5, 5]) == (10, 200, 30)
    assert tuple(second[5, 5]) == (200, 10, 30)


def test_the_users_sdl_driver_choice_is_kept(inline, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "offscreen")
    env = gym.make("GymviewTest/PygameOnly-v0", render_mode="human")
    env.reset()
    assert pygame.display.get_driver() == "offscreen"


def test_human_mode_steps_no_faster_than_render_fps(inline):
    env = gym.make("CartPole-v1", render_mode="human")
    assert env._step_period == pytest.approx(1 / 50)


def test_the_real_watch_is_the_default():
    human.enable_inline_human()
    try:
        env = gym.make("CartPole-v1", render_mode="human")
        assert isinstance(env.env, WatchedEnv) and isinstance(env.view, LiveView)
        assert env.render_mode == "human"
        env.reset(seed=0)
        env.step(0)
        env.close()
    finally:
        human.disable_inline_human()


def test_log_on_an_inline_human_env_goes_to_the_watched_env_s_steps(shown):
    view = shown()
    human.enable_inline_human(watch=lambda env: gymview.watch(env, view=view, display=False))
    try:
        env = gym.make("CartPole-v1", render_mode="human")
        with pytest.raises(RuntimeError, match="reset"):
            env.log(value=1.0)
        env.reset(seed=0)
        for step in range(1, 4):
            env.step(step % 2)
            env.log(value=step * 1.5)
        with pytest.raises(TypeError, match="one number"):
            env.log(value=[1.0, 2.0])
        env.env.feed.show(force=True)
        assert view.flush()
        browser_says(view, {"type": "steps", "id": "page:1"})
        wait_until(lambda: [header for header, _ in view.sent if header.get("type") == "steps"], "the steps message")
        (message,) = [header for header, _ in view.sent if header.get("type") == "steps"]
        assert message["rows"][-1]["step"] == 3 and message["rows"][-1]["value"] == 4.5
        env.close()
    finally:
        human.disable_inline_human()


class SlowRenderEnv(gym.Env):
    """Renders in ~10 ms at render_fps 20: a cheap MuJoCo stand-in."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}
    observation_space = gym.spaces.Discrete(2)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, render_mode=None):
        self.render_mode = render_mode

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action):
        return 0, 0.0, False, False, {}

    def render(self):
        import time

        time.sleep(0.01)
        return np.zeros((40, 60, 3), np.uint8)


gym.register("GymviewTest/SlowRender-v0", entry_point=SlowRenderEnv)


def test_human_mode_shows_every_step_up_to_render_fps_however_costly_the_render(monkeypatch):
    from live_helpers import ShownView

    import gymview.watched

    views = []
    monkeypatch.setattr(gymview.watched, "LiveView", lambda **settings: views.append(ShownView(**settings)) or views[-1])
    human.enable_inline_human()
    try:
        env = gym.make("GymviewTest/SlowRender-v0", render_mode="human")
        env.reset(seed=0)
        for _ in range(5):
            env.step(0)
        # 10 ms renders would cap a flat-out loop at 10 fps (a 10% budget); this loop sleeps anyway.
        assert env.view.stats["fps_limit"] == 20.0
        env.close()
    finally:
        human.disable_inline_human()
        for view in views:
            view.close()
