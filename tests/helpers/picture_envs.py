"""An env the page cannot draw: gymview sends its ``render()`` pictures. Registered as ``gymview-tests/Pictures-v0``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class PicturesOnly(gym.Env):
    """A coloured picture that brightens each step; episodes of 20 steps."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}  # noqa: RUF012 (gymnasium's class attribute)
    observation_space = gym.spaces.Discrete(20)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode, self.steps = render_mode, 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.steps = 0
        return 0, {}

    def step(self, action):
        self.steps += 1
        return self.steps % 20, 1.0, self.steps >= 20, False, {}

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        rows, columns = np.mgrid[0:48, 0:64]
        return np.stack([rows * 5, columns * 4, np.full_like(rows, 10 * self.steps % 256)], axis=2).astype(np.uint8)


if "gymview-tests/Pictures-v0" not in gym.registry:
    gym.register("gymview-tests/Pictures-v0", entry_point=PicturesOnly)
