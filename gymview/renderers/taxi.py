"""A renderer for gymnasium's Taxi: its pictures pasted on its background, as the env's ``render()`` pastes them.

Taxi's picture is a background (the streets and the house) with three pictures pasted on it: the destination's
marker, the passenger while not in the taxi, and the taxi facing its last move (empty or full). The env's own
``render()``, once on a copy of the env, loads those pictures; a state is where each goes
(:class:`~gymview.renderers.pasted.PastedRenderer`).
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np

from gymview.renderers.base import NotDrawable, window_of_size
from gymview.renderers.pasted import PastedRenderer, picture, rgba

__all__ = ["TaxiRenderer"]

OTHERWISE = "this gymnasium draws Taxi otherwise than gymnasium 1.4, whose pictures the page pastes"
MOVES = 4  # the moves the taxi faces (south, north, east, west): pick-up and drop-off leave it facing as it was


class TaxiRenderer(PastedRenderer):
    """Taxi (v3, v4): the destination's marker, the passenger and the taxi, each as (picture, x, y) in pixels, the
    passenger's picture NaN while it rides. Pictures: 0 the marker, 1 the passenger, 2-5 the empty taxi facing each
    move, 6-9 the full one."""

    slots = ("destination", "passenger", "taxi")

    def __init__(self, env: gym.Env, env_id: str) -> None:
        """Raises :class:`~gymview.renderers.base.NotDrawable` where this gymnasium's Taxi draws otherwise."""
        from gymnasium.envs.toy_text import taxi

        unwrapped: Any = env.unwrapped
        try:
            self._geometry = {name: tuple(getattr(taxi, name)) for name in
                              ("CANVAS_COLOR", "BACKGROUND_POS", "HOUSE_POS", "PASSENGER_OFFSET", "TAXI_H_OFFSET",
                               "TAXI_V_OFFSET")}  # fmt: skip
            self.locs = [tuple(loc) for loc in unwrapped.locs]
            drawing = copy.copy(unwrapped)  # the user's env is not drawn on: its copy loads the pictures
            drawing.window, drawing.clock, drawing.render_mode = (
                window_of_size(getattr(taxi, "WINDOW_SIZE", None)),
                None,
                "rgb_array",
            )
            drawing.s, drawing.lastaction, drawing.taxi_orientation = unwrapped.encode(0, 0, 0, 1), None, 0
            rendered = np.array(drawing.render(), np.uint8)
            pictures = [drawing.destination_img, drawing.passenger_img, *drawing.taxi_imgs, *drawing.taxi_full_imgs]
            background = _drawn_background(drawing, self._geometry)
        except (AttributeError, TypeError, ValueError) as error:
            raise NotDrawable(OTHERWISE) from error
        super().__init__(env_id, background, [rgba(p) for p in pictures])
        if not np.array_equal(self._drawn(self._state(drawing)), rendered) or not self._draws_as(drawing):
            raise NotDrawable(OTHERWISE)

    def _draws_as(self, drawing: Any) -> bool:
        """Whether the env's copy renders, facing each way, empty and full, what its pictures pasted make."""
        for facing in range(MOVES):
            for passenger in (2, len(self.locs)):  # at a stop, and in the taxi
                drawing.s, drawing.lastaction = drawing.encode(1, 2, passenger, 0), facing
                if not np.array_equal(np.array(drawing.render(), np.uint8), self._drawn(self._state(drawing))):
                    return False
        return True

    def state_of(self, env: gym.Env) -> np.ndarray:
        unwrapped: Any = env.unwrapped
        if getattr(unwrapped, "s", None) is None:
            raise ValueError("the env has no state yet: call env.reset() before renderer.state_of(env)")
        if unwrapped.lastaction in range(MOVES):  # what render() does: the taxi turns to its last move
            unwrapped.taxi_orientation = unwrapped.lastaction
        return self._state(unwrapped)

    def _state(self, env: Any) -> np.ndarray:
        row, column, passenger, destination = env.decode(env.s)
        facing = int(env.taxi_orientation)
        pasted = [("destination", 0, *env.get_surf_loc(self.locs[destination]))]
        if passenger < len(self.locs):
            x, y = env.get_surf_loc(self.locs[passenger])
            dx, dy = self._geometry["PASSENGER_OFFSET"]
            pasted.append(("passenger", 1, x + dx, y + dy))
        dx, dy = self._geometry["TAXI_V_OFFSET" if facing < 2 else "TAXI_H_OFFSET"]
        x, y = env.get_surf_loc((row, column))
        pasted.append(("taxi", 2 + facing + MOVES * (passenger == len(self.locs)), x + dx, y + dy))
        return self._pasted(pasted)


def _drawn_background(env: Any, geometry: dict[str, tuple[int, ...]]) -> np.ndarray:
    """What render() draws before the pictures it pastes: the canvas's colour, the streets, the house."""
    import pygame

    surface = pygame.Surface(env.window.get_size())
    surface.fill(geometry["CANVAS_COLOR"])
    surface.blit(env.background_img, geometry["BACKGROUND_POS"])
    surface.blit(env.house_img, geometry["HOUSE_POS"])
    return picture(surface)
