"""Renderers for Gymnasium's classic-control envs: MountainCar(-Continuous), CartPole,
Acrobot and Pendulum, matching gymnasium's pygame drawing."""

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable
from os import path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import (
    AcrobotEnv,
    CartPoleEnv,
    Continuous_MountainCarEnv,
    MountainCarEnv,
    PendulumEnv,
)

from gymview.renderers.base import BatchRenderer
from gymview.renderers.raster import (
    BLACK,
    Box,
    Circle,
    Polygon,
    Sprite,
    Sprites,
    aaline_layer,
    grid_polygon,
    rotate,
)


class MountainCarRenderer(BatchRenderer):
    """MountainCar-v0 and MountainCarContinuous-v0: states are (position, velocity)."""

    state_dim = 2
    state_names = ("position", "velocity")
    _chunk = 64  # small shapes

    def __init__(self, env: MountainCarEnv | Continuous_MountainCarEnv, env_id: str) -> None:
        super().__init__(env_id, env.screen_width, env.screen_height)
        self.min_position, self.max_position = float(env.min_position), float(env.max_position)
        self.scale = self.width / (float(env.max_position) - self.min_position)
        xs = np.linspace(self.min_position, float(env.max_position), 100)
        points = list(zip((xs - self.min_position) * self.scale, self._height(xs) * self.scale))
        track = np.zeros((self.height, self.width), np.float32)
        for start, end in itertools.pairwise(points):
            track = np.maximum(track, aaline_layer(start, end, self.height, self.width))
        self._draw_static(track, BLACK)
        # the flag is drawn after the car
        goal = self.goal_position = float(env.goal_position)
        flag_x = int((goal - self.min_position) * self.scale)
        flag_y1 = int(self._height(goal) * self.scale)
        flag_y2 = flag_y1 + 50
        pole = np.zeros((self.height, self.width), np.float32)
        pole[max(flag_y1, 0) : flag_y2 + 1, flag_x : flag_x + 1] = 1.0
        self._add_overlay(pole, BLACK)
        triangle = [(flag_x, flag_y2), (flag_x, flag_y2 - 10), (flag_x + 25, flag_y2 - 5)]
        self._add_overlay(grid_polygon(triangle, self.height, self.width), (204, 204, 0))
        self._finish_background()

    def page_scene(self) -> dict[str, Any]:
        return self._scene(
            "mountaincar",
            min_position=self.min_position,
            max_position=self.max_position,
            scale=self.scale,
            goal_position=self.goal_position,
        )

    @staticmethod
    def _height(xs: np.ndarray | float) -> np.ndarray:
        return np.sin(3 * np.asarray(xs)) * 0.45 + 0.55

    def state_of(self, env: gym.Env) -> np.ndarray:
        state = _unwrapped_state(env)
        return np.array(state, dtype=np.float64).reshape(self.state_dim)

    def _shapes(self, states: np.ndarray) -> list:
        position = states[:, 0]
        angle = np.cos(3 * position)
        origin = np.stack([(position - self.min_position) * self.scale, 10 + self._height(position) * self.scale], 1)
        body = rotate(np.array([(-20.0, 0.0), (-20.0, 20.0), (20.0, 20.0), (20.0, 0.0)]), angle) + origin[:, None]
        wheels = rotate(np.array([(10.0, 0.0), (-10.0, 0.0)]), angle) + origin[:, None]
        radius = int(20 / 2.5)
        return [
            Polygon(body, BLACK),
            Circle(wheels[:, 0], radius, (128, 128, 128)),
            Circle(wheels[:, 1], radius, (128, 128, 128)),
        ]


class CartPoleRenderer(BatchRenderer):
    """CartPole-v1: states are (x, x_dot, theta, theta_dot), the observation itself."""

    state_dim = 4
    state_names = ("x", "x_dot", "theta", "theta_dot")
    _chunk = 64  # small shapes
    _drawn_columns = 3

    def __init__(self, env: CartPoleEnv, env_id: str) -> None:
        super().__init__(env_id, env.screen_width, env.screen_height)
        self.scale = self.width / (float(env.x_threshold) * 2)
        self.pole_length = self.scale * (2 * float(env.length))
        track = np.zeros((self.height, self.width), np.float32)
        if 0 <= 100 < self.height:
            track[100, :] = 1.0
        self._add_overlay(track, BLACK)
        self._finish_background()

    def page_scene(self) -> dict[str, Any]:
        return self._scene("cartpole", scale=self.scale, pole_length=self.pole_length)

    def state_of(self, env: gym.Env) -> np.ndarray:
        return np.array(_unwrapped_state(env), dtype=np.float64).reshape(self.state_dim)

    def _shapes(self, states: np.ndarray) -> list:
        cart_x = states[:, 0] * self.scale + self.width / 2.0
        cart_y, axle = 100.0, 100.0 + 30.0 / 4.0
        count = len(states)
        cart = Box(
            np.stack([cart_x - 25.0, np.full(count, cart_y - 15.0)], 1),
            np.stack([cart_x + 25.0, np.full(count, cart_y + 15.0)], 1),
            BLACK,
        )
        pole = np.array([(-5.0, -5.0), (-5.0, self.pole_length - 5.0), (5.0, self.pole_length - 5.0), (5.0, -5.0)])
        pole = rotate(pole, -states[:, 2]) + np.stack([cart_x, np.full(count, axle)], 1)[:, None]
        hub = np.stack([np.trunc(cart_x), np.full(count, float(int(axle)))], 1)
        return [cart, Polygon(pole, (202, 152, 101)), Circle(hub, 5, (129, 132, 203))]


class AcrobotRenderer(BatchRenderer):
    """Acrobot-v1: states are the env's internal (theta1, theta2, dtheta1, dtheta2), not the observation."""

    state_dim = 4
    state_names = ("theta1", "theta2", "dtheta1", "dtheta2")
    _drawn_columns = 2

    def __init__(self, env: AcrobotEnv, env_id: str) -> None:
        size = int(env.SCREEN_DIM)
        super().__init__(env_id, size, size)
        self.link_lengths = (float(env.LINK_LENGTH_1), float(env.LINK_LENGTH_2))
        self.scale = size / ((sum(self.link_lengths) + 0.2) * 2)
        self.offset = size / 2
        line = np.zeros((size, size), np.float32)
        row = int(1 * self.scale + self.offset)
        if 0 <= row < size:
            line[row, max(0, int(-2.2 * self.scale + self.offset)) : int(2.2 * self.scale + self.offset) + 1] = 1.0
        self._draw_static(line, BLACK)
        self._finish_background()

    def page_scene(self) -> dict[str, Any]:
        return self._scene("acrobot", scale=self.scale, offset=self.offset, link_lengths=list(self.link_lengths))

    def state_of(self, env: gym.Env) -> np.ndarray:
        return np.array(_unwrapped_state(env), dtype=np.float64).reshape(self.state_dim)

    def _shapes(self, states: np.ndarray) -> list:
        theta1, theta2 = states[:, 0], states[:, 1]
        length1, length2 = (length * self.scale for length in self.link_lengths)
        count = len(states)
        joint = np.stack([length1 / self.scale * np.sin(theta1), -length1 / self.scale * np.cos(theta1)], 1)
        starts = [np.full((count, 2), self.offset), joint * self.scale + self.offset]
        shapes: list = []
        half = 0.1 * self.scale
        for start, angle, length in zip(starts, (theta1 - np.pi / 2, theta1 + theta2 - np.pi / 2), (length1, length2)):
            link = rotate(np.array([(0.0, -half), (0.0, half), (length, half), (length, -half)]), angle)
            shapes.append(Polygon(link + start[:, None], (0, 204, 204)))
            shapes.append(Circle(start, int(0.1 * self.scale), (204, 204, 0)))
        return shapes


class PendulumRenderer(BatchRenderer):
    """Pendulum-v1: states are (theta, theta_dot, last_u); last_u is NaN before the first step."""

    state_dim = 3
    state_names = ("theta", "theta_dot", "last_u")

    def __init__(self, env: PendulumEnv, env_id: str) -> None:
        size = int(env.screen_dim)
        super().__init__(env_id, size, size)
        self.scale = size / (2.2 * 2)
        self.offset = size // 2
        self._finish_background()
        from gymnasium.envs.classic_control import pendulum
        from PIL import Image

        arrow_file = path.join(path.dirname(pendulum.__file__), "assets/clockwise.png")
        self._arrow = Image.open(arrow_file).convert("RGBA")
        self._arrows: dict[tuple[int, bool], Sprite] = {}
        with open(arrow_file, "rb") as arrow:
            self._arrow_url = "data:image/png;base64," + base64.b64encode(arrow.read()).decode("ascii")

    def page_scene(self) -> dict[str, Any]:
        return self._scene("pendulum", scale=self.scale, offset=self.offset, arrow=self._arrow_url)

    def state_of(self, env: gym.Env) -> np.ndarray:
        theta, theta_dot = _unwrapped_state(env)
        last_u = env.unwrapped.last_u  # type: ignore[attr-defined]  # PendulumEnv's own
        return np.array([theta, theta_dot, np.nan if last_u is None else last_u], dtype=np.float64)

    def _check_states(self, states: object) -> np.ndarray:
        array = super()._check_states(states)
        if np.isinf(array[:, 2]).any():
            raise ValueError(f"{self.env_id} last_u must be finite, or NaN for 'no action yet'; got inf")
        return array

    def _arrow_image(self, size: int, mirrored: bool) -> Sprite:
        key = (size, mirrored)
        if key not in self._arrows:
            from PIL import Image

            image = np.asarray(self._arrow.resize((size, size), Image.Resampling.BILINEAR, reducing_gap=None))
            image = image[::-1]  # gymnasium flips the arrow upside down (and then the whole picture)
            self._arrows[key] = Sprite.from_rgba(image[:, ::-1] if mirrored else image)
        return self._arrows[key]

    def _shapes(self, states: np.ndarray) -> list:
        theta, last_u = states[:, 0], states[:, 2]
        count = len(states)
        rod_length, rod_width = self.scale, 0.2 * self.scale
        center = np.full((count, 2), float(self.offset))
        rod = np.array(
            [(0.0, -rod_width / 2), (0.0, rod_width / 2), (rod_length, rod_width / 2), (rod_length, -rod_width / 2)]
        )
        rod = rotate(rod, theta + np.pi / 2) + center[:, None]
        tip = rotate(np.array([(rod_length, 0.0)]), theta + np.pi / 2)[:, 0] + center
        arrows: list[Sprite | None] = []
        corners = np.zeros((count, 2))
        for n, u in enumerate(last_u):
            size = 0 if np.isnan(u) else int(self.scale * abs(u) / 2)
            arrows.append(self._arrow_image(size, bool(u > 0)) if size > 0 else None)
            corners[n] = self.offset - size // 2
        red = (204, 77, 77)
        return [
            Polygon(rod, red),
            Circle(center, int(rod_width / 2), red),
            Circle(tip, int(rod_width / 2), red),
            Sprites(arrows, corners),
            Circle(center, int(0.05 * self.scale), BLACK),
        ]


# ---------------------------------------------------------------------------------------------

# (env class, its renderer class, made as renderer_class(env, env_id))
RENDERERS: tuple[tuple[type[gym.Env], Callable[[Any, str], BatchRenderer]], ...] = (
    (MountainCarEnv, MountainCarRenderer),
    (Continuous_MountainCarEnv, MountainCarRenderer),
    (CartPoleEnv, CartPoleRenderer),
    (AcrobotEnv, AcrobotRenderer),
    (PendulumEnv, PendulumRenderer),
)


def _unwrapped_state(env: gym.Env) -> Any:
    """The classic-control env's ``state``: an array (a tuple in some gymnasium versions)."""
    state = env.unwrapped.state  # type: ignore[attr-defined]  # each classic-control env's own
    if state is None:
        raise ValueError("the env has no state yet: call env.reset() before renderer.state_of(env)")
    return state
