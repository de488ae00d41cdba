"""A renderer for gymnasium's Box2D BipedalWalker: its state read from the env (the hull's and legs' poses, the
view's scroll, the ground in view, the clouds, the lidar ray drawn), drawn with pygame as gymnasium draws it, or by
the page (``js/scene.js``).

BipedalWalker's ``render()`` shows one lidar ray at a time, the next at each render: taking a state moves to the
next ray as ``render()`` does, so a watched walker sweeps its rays at the view's frame rate, as one rendered at it.
The hardcore walker's states also hold the obstacles in view (stumps, stairs, pits' walls: 4 corners each, in the
order ``render()`` draws them), at most ``OBSTACLES`` (no seed of 300 puts more than 11 in view).
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from gymview.renderers.base import WholeFrameRenderer

__all__ = ["BipedalWalkerRenderer"]

BODIES = 5  # the hull, then each leg's upper and lower part, as the env lists them
GROUND = 47  # the ground's heights a state holds, from the step before the view: 20 m of view is 43 steps of 0.47 m
CLOUDS, CLOUD_CORNERS = 10, 5
OBSTACLES = 16  # a hardcore walker's obstacles a state holds, of those in view
MAX_TILED_COURSES = 64  # courses kept at once (a grid's sub-envs walk one each; a reset makes another)
OBSTACLE, OBSTACLE_EDGE = (255, 255, 255), (153, 153, 153)
LIDAR_RAYS = 10
SKY, CLOUD, EARTH, RAY, FLAG = (215, 215, 255), (255, 255, 255), (102, 153, 76), (255, 0, 0), (230, 51, 0)
GRASS = ((76, 255, 76), (76, 204, 76))  # the ground's edge, the even steps' and the odd ones'
# offsets of each part of a state
SCROLL, POSES, LIDAR, FIRST_STEP = 0, 1, 1 + 3 * BODIES, 1 + 3 * BODIES + 4
HEIGHTS = FIRST_STEP + 1
CLOUD_POINTS = HEIGHTS + GROUND
OBSTACLE_POINTS = CLOUD_POINTS + 2 * CLOUDS * CLOUD_CORNERS


class BipedalWalkerRenderer(WholeFrameRenderer):
    """BipedalWalker-v3: states are the view's scroll (m), the hull's and the four leg parts' (x, y, angle), the lidar
    ray drawn (x0, y0, x1, y1; NaN when none), the first ground step in view and the ground's heights from it, the
    clouds' corners (x, y), and for the hardcore walker the obstacles in view (4 corners each; NaN for none)."""

    state_dim = OBSTACLE_POINTS
    state_names = (
        "scroll",
        *(f"{part}_{value}" for part in ("hull", "leg0", "lower0", "leg1", "lower1") for value in ("x", "y", "angle")),
        "ray_x0", "ray_y0", "ray_x1", "ray_y1",
        "first_step",
        *(f"ground_{i}" for i in range(GROUND)),
        *(f"cloud{n}_{value}{i}" for n in range(CLOUDS) for i in range(CLOUD_CORNERS) for value in ("x", "y")),
    )  # fmt: skip
    _drawn_columns = LIDAR  # the ray is NaN when none is drawn

    def __init__(self, env: gym.Env, env_id: str) -> None:
        """``env``: a BipedalWalker, hardcore or not."""
        from gymnasium.envs.box2d import bipedal_walker as walker

        super().__init__(env_id, walker.VIEWPORT_W, walker.VIEWPORT_H)
        self.obstacles = OBSTACLES if getattr(env.unwrapped, "hardcore", False) else 0
        self.state_dim = BipedalWalkerRenderer.state_dim + 8 * self.obstacles
        self.state_names = (
            *BipedalWalkerRenderer.state_names,
            *(f"obstacle{n}_{value}{i}" for n in range(self.obstacles) for i in range(4) for value in ("x", "y")),
        )
        self._courses: dict[Any, tuple[np.ndarray, np.ndarray]] = {}  # which course -> (corners, x ranges)
        del self._canvas
        self._background = np.full((self.height, self.width, 3), SKY, np.uint8)  # all else moves with the view
        self.scale, self.step = float(walker.SCALE), float(walker.TERRAIN_STEP)
        self.steps = int(walker.TERRAIN_LENGTH)
        self.flag_x, self.flag_y = self.step * 3 * self.scale, float(walker.TERRAIN_HEIGHT) * self.scale
        # each part's polygon in its own frame (metres), as Box2D keeps it (float32), and its colours
        shapes = (walker.HULL_FD, walker.LEG_FD, walker.LOWER_FD, walker.LEG_FD, walker.LOWER_FD)
        self.outlines = [[tuple(map(float, vertex)) for vertex in fixture.shape.vertices] for fixture in shapes]
        self.colours = [((127, 51, 229), (76, 76, 127))] + [
            ((153 - i * 25, 76 - i * 25, 127 - i * 25), (102 - i * 25, 51 - i * 25, 76 - i * 25))
            for i in (-1, -1, 1, 1)
        ]

    def page_scene(self) -> dict[str, Any]:
        return self._scene(
            "bipedalwalker",
            scale=self.scale,
            step=self.step,
            steps=self.steps,
            outlines=self.outlines,
            colours=[[list(fill), list(outline)] for fill, outline in self.colours],
            flag=[self.flag_x, self.flag_y],
            ground=GROUND,
            clouds=CLOUDS,
            obstacles=self.obstacles,
        )

    def state_of(self, env: gym.Env) -> np.ndarray:
        unwrapped: Any = env.unwrapped
        if unwrapped.hull is None:
            raise ValueError("the env has no state yet: call env.reset() before renderer.state_of(env)")
        state = np.full(self.state_dim, np.nan)
        state[SCROLL] = unwrapped.scroll
        for n, body in enumerate((unwrapped.hull, *unwrapped.legs)):
            state[POSES + 3 * n : POSES + 3 * n + 3] = (body.position[0], body.position[1], body.angle)
        ray = _next_ray(unwrapped)
        if ray is not None:
            state[LIDAR : LIDAR + 4] = ray
        first = min(max(0, int(unwrapped.scroll / self.step) - 1), self.steps - GROUND)
        state[FIRST_STEP] = first
        state[HEIGHTS : HEIGHTS + GROUND] = unwrapped.terrain_y[first : first + GROUND]
        state[CLOUD_POINTS:OBSTACLE_POINTS] = np.ravel([poly for poly, _, _ in unwrapped.cloud_poly])
        if self.obstacles:
            corners, spans = self._course_of(unwrapped)
            view = self.width / self.scale
            shown = corners[(spans[:, 1] >= unwrapped.scroll - 1.0) & (spans[:, 0] <= unwrapped.scroll + view + 1.0)]
            shown = shown[: self.obstacles].ravel()
            state[OBSTACLE_POINTS : OBSTACLE_POINTS + shown.size] = shown
        return state

    def _course_of(self, env: Any) -> tuple[np.ndarray, np.ndarray]:
        """The obstacles of the env's course, as its ``render()`` draws them (its terrain's polygons, in its order):
        (corners ``[n, 4, 2]``, each one's x range ``[n, 2]``), kept until a reset makes another course."""
        # a new course is a new list, which may take the old one's place in memory: its heights tell them apart; a
        # grid's sub-envs each walk their own
        key = (id(env.terrain), len(env.terrain), tuple(env.terrain_y[::16]))
        course = self._courses.get(key)
        if course is None:
            corners = np.array(
                [
                    [tuple(vertex) for vertex in fixture.shape.vertices]
                    for body in env.terrain
                    for fixture in body.fixtures
                    if len(fixture.shape.vertices) == 4
                ],
                np.float64,
            ).reshape(-1, 4, 2)
            spans = np.stack([corners[:, :, 0].min(axis=1), corners[:, :, 0].max(axis=1)], axis=1)
            if len(self._courses) >= MAX_TILED_COURSES:
                self._courses.clear()
            course = self._courses[key] = (corners, spans)
        return course

    def draws_like(self, other: Any) -> bool:
        """As :meth:`BatchRenderer.draws_like`, and only for walkers both hardcore or neither."""
        return super().draws_like(other) and other.obstacles == self.obstacles

    def _drawn(self, state: np.ndarray) -> np.ndarray:
        """One state drawn with pygame's calls in gymnasium's order (BipedalWalker.render)."""
        import pygame
        from pygame import gfxdraw

        scale, scroll, view = self.scale, float(state[SCROLL]), self.width / self.scale
        surface = pygame.Surface((self.width + max(0.0, scroll) * scale, self.height))
        sky = [(scroll * scale, 0), (scroll * scale + self.width, 0), (scroll * scale + self.width, self.height),
               (scroll * scale, self.height)]  # fmt: skip
        pygame.draw.polygon(surface, SKY, sky)
        for corners in state[CLOUD_POINTS:OBSTACLE_POINTS].reshape(CLOUDS, CLOUD_CORNERS, 2):
            if corners[:, 0].max() < scroll / 2 or corners[:, 0].min() > scroll / 2 + view:
                continue
            path = [(x * scale + scroll * scale / 2, y * scale) for x, y in corners]
            pygame.draw.polygon(surface, CLOUD, path)
            gfxdraw.aapolygon(surface, path, CLOUD)
        first, heights = int(state[FIRST_STEP]), state[HEIGHTS : HEIGHTS + GROUND]
        xs = [(first + i) * self.step for i in range(GROUND)]
        for i in range(GROUND - 1):
            if xs[i + 1] < scroll or xs[i] > scroll + view:
                continue
            piece = [[xs[i] * scale, heights[i] * scale], [xs[i + 1] * scale, heights[i + 1] * scale],
                     [xs[i + 1] * scale, 0.0], [xs[i] * scale, 0.0]]  # fmt: skip
            pygame.draw.polygon(surface, EARTH, piece)
            gfxdraw.aapolygon(surface, piece, EARTH)
        if not math.isnan(state[LIDAR]):
            x0, y0, x1, y1 = state[LIDAR : LIDAR + 4] * scale
            pygame.draw.line(surface, RAY, (x0, y0), (x1, y1), 1)
        edges = np.float32(heights) * np.float32(scale)  # Box2D keeps the ground's edges as float32
        for i in reversed(range(GROUND - 1)):  # the env lists its ground backwards
            ends = [(float(np.float32(xs[j]) * np.float32(scale)), float(edges[j])) for j in (i, i + 1)]
            pygame.draw.aaline(surface, GRASS[(first + i) % 2], ends[0], ends[1])
        for corners in state[OBSTACLE_POINTS:].reshape(-1, 4, 2):
            if not np.isnan(corners).any():  # Box2D keeps their corners as float32, and scales them so
                path = [(float(x), float(y)) for x, y in np.float32(corners) * np.float32(scale)]
                _outlined(surface, path, OBSTACLE, OBSTACLE_EDGE)
        for part in (*range(1, BODIES), 0):  # the legs, then the hull
            (fill, outline), vertices = self.colours[part], self.outlines[part]
            x, y, angle = state[POSES + 3 * part : POSES + 3 * part + 3]
            cos, sin = math.cos(angle), math.sin(angle)
            path = [((cos * vx - sin * vy + x) * scale, (sin * vx + cos * vy + y) * scale) for vx, vy in vertices]
            _outlined(surface, path, fill, outline)
        top = self.flag_y + 50
        pygame.draw.aaline(surface, (0, 0, 0), (self.flag_x, self.flag_y), (self.flag_x, top))
        flag = [(self.flag_x, top), (self.flag_x, top - 10), (self.flag_x + 25, top - 5)]
        pygame.draw.polygon(surface, FLAG, flag)
        pygame.draw.lines(surface, (0, 0, 0), False, [*flag, flag[0]], 1)
        surface = pygame.transform.flip(surface, False, True)
        return np.transpose(np.array(pygame.surfarray.pixels3d(surface)), axes=(1, 0, 2))[:, -self.width :]


def _outlined(surface: Any, path: list[tuple[float, float]], fill: Any, outline: Any) -> None:
    """A polygon filled and outlined with pygame's calls, as BipedalWalker's ``render()`` draws its bodies."""
    import pygame
    from pygame import gfxdraw

    pygame.draw.polygon(surface, fill, path)
    gfxdraw.aapolygon(surface, path, fill)
    path = [*path, path[0]]
    pygame.draw.polygon(surface, outline, path, width=1)
    gfxdraw.aapolygon(surface, path, outline)


def _next_ray(env: Any) -> tuple[float, float, float, float] | None:
    """What BipedalWalker's ``render()`` does to its lidar: the next ray of its sweep (there and back), which it
    draws when the env has cast it."""
    env.lidar_render = (env.lidar_render + 1) % 100
    i = env.lidar_render
    if i >= 2 * LIDAR_RAYS:
        return None
    ray = env.lidar[i] if i < LIDAR_RAYS else env.lidar[LIDAR_RAYS - i - 1]
    if not (hasattr(ray, "p1") and hasattr(ray, "p2")):
        return None
    return (float(ray.p1[0]), float(ray.p1[1]), float(ray.p2[0]), float(ray.p2[1]))
