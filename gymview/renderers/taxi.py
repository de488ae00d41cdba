"""A renderer for gymnasium's Taxi: its pictures pasted on its background, as the env's ``render()`` pastes them.

Taxi's picture is a background (the streets and the house) with three pictures pasted on it: the destination's
marker, the passenger while not in the taxi, and the taxi facing its last move (empty or full). The env's own
``render()``, once on a copy of the env, loads those pictures; a state is where each goes, and a frame is them
pasted in the kernel with pygame or by the page (``js/scene.js``): the very picture ``env.render()`` draws.
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np

from gymview.renderers.base import NotDrawable, WholeFrameRenderer, png_url

__all__ = ["TaxiRenderer"]

PASTED = ("destination", "passenger", "taxi")  # in the order render() pastes them
MOVES = 4  # the moves the taxi faces (south, north, east, west): pick-up and drop-off leave it facing as it was


class TaxiRenderer(WholeFrameRenderer):
    """Taxi (v3, v4): each of the destination's marker, the passenger and the taxi as (picture, x, y) in pixels, the
    picture NaN where it is not drawn (the passenger in the taxi). Pictures: 0 the marker, 1 the passenger, 2-5 the
    empty taxi facing each move, 6-9 the full one."""

    state_dim = 3 * len(PASTED)
    state_names = tuple(f"{name}_{value}" for name in PASTED for value in ("picture", "x", "y"))
    _drawn_columns = 0  # the passenger's picture is NaN while it rides

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
            drawing.window, drawing.clock, drawing.render_mode = None, None, "rgb_array"
            drawing.s, drawing.lastaction, drawing.taxi_orientation = unwrapped.encode(0, 0, 0, 1), None, 0
            rendered = np.array(drawing.render(), np.uint8)
            pictures = [drawing.destination_img, drawing.passenger_img, *drawing.taxi_imgs, *drawing.taxi_full_imgs]
            self._background = _drawn_background(drawing, self._geometry)
        except (AttributeError, TypeError, ValueError) as error:
            raise NotDrawable(f"this gymnasium's Taxi draws otherwise ({error})") from error
        super().__init__(env_id, rendered.shape[1], rendered.shape[0])
        del self._canvas
        self.pictures = [_rgba(picture) for picture in pictures]
        if not np.array_equal(self._drawn(self._state(drawing)), rendered):
            raise NotDrawable("this gymnasium's Taxi draws otherwise (its pictures pasted are not its render)")

    def page_scene(self) -> dict[str, Any]:
        images = {"background": png_url(self._background)} | {
            f"sprite{n}": png_url(p) for n, p in enumerate(self.pictures)
        }
        return self._scene("sprites", images=images)

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
        state = np.full(self.state_dim, np.nan)
        state[0:3] = (0, *env.get_surf_loc(self.locs[destination]))
        if passenger < len(self.locs):
            x, y = env.get_surf_loc(self.locs[passenger])
            dx, dy = self._geometry["PASSENGER_OFFSET"]
            state[3:6] = (1, x + dx, y + dy)
        dx, dy = self._geometry["TAXI_V_OFFSET" if facing < 2 else "TAXI_H_OFFSET"]
        x, y = env.get_surf_loc((row, column))
        state[6:9] = (2 + facing + MOVES * (passenger == len(self.locs)), x + dx, y + dy)
        return state

    def frame_keys(self, states: np.ndarray) -> list[bytes] | None:
        return [np.nan_to_num(row, nan=-1).tobytes() for row in self._check_states(states)]

    def _drawn(self, state: np.ndarray) -> np.ndarray:
        import pygame

        surface = pygame.surfarray.make_surface(np.ascontiguousarray(self._background.transpose(1, 0, 2)))
        for picture, x, y in state.reshape(-1, 3):
            if not np.isnan(picture):
                surface.blit(_surface(self.pictures[int(picture)]), (int(x), int(y)))
        return np.transpose(np.array(pygame.surfarray.pixels3d(surface)), axes=(1, 0, 2))

    def _check_states(self, states: object) -> np.ndarray:
        array = super()._check_states(states)
        pictures, places = array.reshape(len(array), -1, 3)[..., 0], array.reshape(len(array), -1, 3)[..., 1:]
        known = np.isnan(pictures) | np.isin(pictures, np.arange(len(self.pictures)))
        if not known.all() or not np.isfinite(places[~np.isnan(pictures)]).all():
            raise ValueError(f"{self.env_id} states hold a picture from 0 to {len(self.pictures) - 1} (or NaN) and "
                             "its place in pixels for each of the destination, the passenger and the taxi")  # fmt: skip
        return array

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env_id!r}, {self.width}x{self.height})"


def _drawn_background(env: Any, geometry: dict[str, tuple[int, ...]]) -> np.ndarray:
    """What render() draws before the pictures it pastes: the canvas's colour, the streets, the house."""
    import pygame

    surface = pygame.Surface(env.window.get_size())
    surface.fill(geometry["CANVAS_COLOR"])
    surface.blit(env.background_img, geometry["BACKGROUND_POS"])
    surface.blit(env.house_img, geometry["HOUSE_POS"])
    return np.transpose(np.array(pygame.surfarray.pixels3d(surface)), axes=(1, 0, 2))


def _rgba(surface: Any) -> np.ndarray:
    """A pygame picture as (height, width, 4) uint8, its alpha opaque where it has none."""
    import pygame

    rgb = np.transpose(np.array(pygame.surfarray.pixels3d(surface)), axes=(1, 0, 2))
    if surface.get_flags() & pygame.SRCALPHA or surface.get_alpha() is not None:
        alpha = np.transpose(np.array(pygame.surfarray.pixels_alpha(surface)))
    else:
        alpha = np.full(rgb.shape[:2], 255, np.uint8)
    return np.concatenate([rgb, alpha[..., None]], axis=2)


def _surface(picture: np.ndarray) -> Any:
    """An RGBA picture as a pygame surface that blends as the env's loaded pictures do."""
    import pygame

    return pygame.image.frombuffer(np.ascontiguousarray(picture).tobytes(), picture.shape[1::-1], "RGBA")
