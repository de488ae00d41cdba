"""A renderer for gymnasium's Box2D LunarLander: its state read from the env (the lander's and legs' poses, the
ground, the exhaust's particles), drawn with pygame as gymnasium draws it, or by the page (``js/scene.js``).

LunarLander's exhaust particles age and go only in its ``render()``: an env never rendered keeps every particle of
an episode in its Box2D world, each step slower than the last. Taking a state does to them what ``render()`` does
(each a frame older, the spent ones at the head destroyed), so that a watched env keeps the exhaust, and the speed,
of an env rendered at the view's frame rate, and draws as it would.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from gymview.renderers.base import WholeFrameRenderer

__all__ = ["LunarLanderRenderer"]

CHUNKS = 11  # the ground's heights: gymnasium's LunarLander makes it of 10 straight pieces
PARTICLES = 24  # the newest exhaust particles a state holds (a render a step shows those of about seven steps)
BODY = ("x", "y", "angle")
LANDER_COLOURS = ((128, 102, 230), (77, 77, 128))  # gymnasium's: fill, outline
FLAG_COLOUR = (204, 204, 0)


class LunarLanderRenderer(WholeFrameRenderer):
    """LunarLander-v3 (discrete and continuous): states are the lander's and its two legs' (x, y, angle) in the
    world's metres, the ground's 11 heights, and the newest exhaust particles' (x, y, age left), NaN where none."""

    state_dim = 9 + CHUNKS + 3 * PARTICLES
    state_names = (
        *(f"{part}_{value}" for part in ("lander", "leg0", "leg1") for value in BODY),
        *(f"ground_{i}" for i in range(CHUNKS)),
        *(f"particle{i}_{value}" for i in range(PARTICLES) for value in ("x", "y", "ttl")),
    )
    _drawn_columns = 9 + CHUNKS  # particles are NaN where there are none

    def __init__(self, env: gym.Env, env_id: str) -> None:
        """``env``: a LunarLander (its geometry is gymnasium's, the same for every one)."""
        import Box2D
        from gymnasium.envs.box2d import lunar_lander

        super().__init__(env_id, lunar_lander.VIEWPORT_W, lunar_lander.VIEWPORT_H)
        scale = self.scale = float(lunar_lander.SCALE)
        self._finish_background()
        # each body's polygon in its own frame (metres), as Box2D keeps it (float32, in its own order): the
        # env's, made as its reset() makes them
        lander = Box2D.b2PolygonShape(vertices=[(x / scale, y / scale) for x, y in lunar_lander.LANDER_POLY])
        leg = Box2D.b2PolygonShape(box=(lunar_lander.LEG_W / scale, lunar_lander.LEG_H / scale))
        self.outlines = [[tuple(map(float, vertex)) for vertex in shape.vertices] for shape in (lander, leg, leg)]
        width, height = self.width / scale, self.height / scale
        self.ground_x = [width / (CHUNKS - 1) * i for i in range(CHUNKS)]
        self.helipad = (self.ground_x[CHUNKS // 2 - 1], self.ground_x[CHUNKS // 2 + 1], height / 4)
        self.particle_radius = float(np.float32(2 / scale)) * scale  # Box2D keeps it as a float32

    def page_scene(self) -> dict[str, Any]:
        return self._scene(
            "lunarlander",
            scale=self.scale,
            outlines=self.outlines,
            helipad=list(self.helipad),
            ground_x=self.ground_x,
            particles=PARTICLES,
            particle_radius=self.particle_radius,
        )

    def state_of(self, env: gym.Env) -> np.ndarray:
        unwrapped: Any = env.unwrapped
        if unwrapped.lander is None:
            raise ValueError("the env has no state yet: call env.reset() before renderer.state_of(env)")
        state = np.full(self.state_dim, np.nan)
        for n, body in enumerate((unwrapped.lander, *unwrapped.legs)):
            state[3 * n : 3 * n + 3] = (body.position[0], body.position[1], body.angle)
        polys = unwrapped.sky_polys
        state[9 : 9 + CHUNKS] = [poly[0][1] for poly in polys] + [polys[-1][1][1]]
        _age_exhaust(unwrapped)
        for n, particle in enumerate(unwrapped.particles[-PARTICLES:]):
            state[9 + CHUNKS + 3 * n : 9 + CHUNKS + 3 * n + 3] = (*particle.position, particle.ttl)
        return state

    def _drawn(self, state: np.ndarray) -> np.ndarray:
        """One state drawn with pygame's calls in gymnasium's order (LunarLander.render)."""
        import pygame
        from pygame import gfxdraw

        scale, height = self.scale, self.height / self.scale
        surface = pygame.Surface((self.width, self.height))
        pygame.draw.rect(surface, (255, 255, 255), surface.get_rect())
        ground, xs = state[9 : 9 + CHUNKS], self.ground_x
        for i in range(CHUNKS - 1):
            sky = [(xs[i], ground[i]), (xs[i + 1], ground[i + 1]), (xs[i + 1], height), (xs[i], height)]
            scaled = [(x * scale, y * scale) for x, y in sky]
            pygame.draw.polygon(surface, (0, 0, 0), scaled)
            gfxdraw.aapolygon(surface, scaled, (0, 0, 0))
        for x, y, age in state[9 + CHUNKS :].reshape(-1, 3):
            if not math.isnan(x):
                colour = _particle_colour(age)
                for _ in range(2):  # gymnasium draws each particle twice (its two colours are the same)
                    pygame.draw.circle(surface, colour, (x * scale, y * scale), self.particle_radius)
                self._flags(surface)
        fill, outline = LANDER_COLOURS
        for n, vertices in enumerate(self.outlines):
            x, y, angle = state[3 * n : 3 * n + 3]
            cos, sin = math.cos(angle), math.sin(angle)
            path = [((cos * vx - sin * vy + x) * scale, (sin * vx + cos * vy + y) * scale) for vx, vy in vertices]
            pygame.draw.polygon(surface, fill, path)
            gfxdraw.aapolygon(surface, path, fill)
            pygame.draw.aalines(surface, outline, True, path)
            self._flags(surface)
        surface = pygame.transform.flip(surface, False, True)
        return np.transpose(np.array(pygame.surfarray.pixels3d(surface)), axes=(1, 0, 2))

    def _flags(self, surface: Any) -> None:
        """The two flags, drawn again after each body as gymnasium draws them (their smoothed edges darken)."""
        import pygame
        from pygame import gfxdraw

        pole = self.helipad[2] * self.scale
        top = pole + 50
        for at in self.helipad[:2]:
            x = at * self.scale
            pygame.draw.line(surface, (255, 255, 255), (x, pole), (x, top), 1)
            flag = [(x, top), (x, top - 10), (x + 25, top - 5)]
            pygame.draw.polygon(surface, FLAG_COLOUR, flag)
            gfxdraw.aapolygon(surface, flag, FLAG_COLOUR)


def _age_exhaust(env: Any) -> None:
    """What LunarLander's ``render()`` does to its exhaust (gymnasium's lunar_lander.py): each particle a frame
    older, then the spent ones at the head of the list destroyed."""
    for particle in env.particles:
        particle.ttl -= 0.15
    while env.particles and env.particles[0].ttl < 0:
        env.world.DestroyBody(env.particles.pop(0))


def _particle_colour(age: float) -> tuple[int, int, int]:
    """A particle's colour as gymnasium's render gives it, by the time it has left."""
    warm, cool = int(max(0.2, 0.15 + age) * 255), int(max(0.2, 0.5 * age) * 255)
    return warm, cool, cool
