"""PastedRenderer: envs whose picture is the env's own pictures pasted on a background (Taxi, Blackjack).

A state says, for each picture the env may paste, which and where: (picture, x, y) in pixels, the picture NaN where
none is pasted. A frame is them pasted in order with pygame in the kernel, or by the page (``js/scene.js``,
``sprites``), on the background: the very picture the env's ``render()`` draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gymview.renderers.base import WholeFrameRenderer, png_url

__all__ = ["PastedRenderer", "picture", "rgba"]


class PastedRenderer(WholeFrameRenderer):
    """Pictures (RGBA) pasted on a background (RGB), one in each of the class's ``slots`` at most, in order."""

    slots: tuple[str, ...] = ()
    _drawn_columns = 0  # a slot's picture is NaN where nothing is pasted there

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.state_dim = 3 * len(cls.slots)
        cls.state_names = tuple(f"{slot}_{value}" for slot in cls.slots for value in ("picture", "x", "y"))

    def __init__(self, env_id: str, background: np.ndarray, pictures: list[np.ndarray]) -> None:
        super().__init__(env_id, background.shape[1], background.shape[0])
        del self._canvas
        self._background, self.pictures = background, pictures

    def page_scene(self) -> dict[str, Any]:
        pictures = {f"sprite{n}": png_url(picture) for n, picture in enumerate(self.pictures)}
        return self._scene("sprites", images={"background": png_url(self._background), **pictures})

    def frame_keys(self, states: np.ndarray) -> list[bytes] | None:
        return [np.nan_to_num(row, nan=-1).tobytes() for row in self._check_states(states)]

    def _pasted(self, pasted: list[tuple[str, int, int, int]]) -> np.ndarray:
        """A state of (slot, picture, x, y) pasted, the other slots empty."""
        state = np.full(self.state_dim, np.nan)
        for slot, picture, x, y in pasted:
            at = 3 * self.slots.index(slot)
            state[at : at + 3] = (picture, x, y)
        return state

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
            raise ValueError(
                f"{self.env_id} states hold a picture from 0 to {len(self.pictures) - 1} (or NaN: none) and its place "
                f"in pixels for each of {', '.join(self.slots)}"
            )
        return array

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env_id!r}, {self.width}x{self.height})"


def picture(surface: Any) -> np.ndarray:
    """A pygame surface's (height, width, 3) uint8 picture."""
    import pygame

    return np.transpose(np.array(pygame.surfarray.pixels3d(surface)), axes=(1, 0, 2))


def rgba(surface: Any) -> np.ndarray:
    """A pygame picture as (height, width, 4) uint8, its alpha opaque where it has none."""
    import pygame

    rgb = picture(surface)
    if surface.get_flags() & pygame.SRCALPHA or surface.get_alpha() is not None:
        alpha = np.transpose(np.array(pygame.surfarray.pixels_alpha(surface)))
    else:
        alpha = np.full(rgb.shape[:2], 255, np.uint8)
    return np.concatenate([rgb, alpha[..., None]], axis=2)


def _surface(rgba_picture: np.ndarray) -> Any:
    """An RGBA picture as a pygame surface that blends as the env's loaded pictures do."""
    import pygame

    return pygame.image.frombuffer(np.ascontiguousarray(rgba_picture).tobytes(), rgba_picture.shape[1::-1], "RGBA")
