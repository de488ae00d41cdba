"""Sub-envs in one labelled grid: from rendered frames, or drawn from their states elsewhere.

:func:`tiled` lays out frames that were rendered already. :class:`TiledDrawing` is the same
picture not drawn yet: a :class:`TiledPainter` (one renderer, N sub-envs) and the N states plus
N running returns, a few dozen floats, so a live view's encoder process draws it instead of the
loop rendering every sub-env.

>>> import gymnasium as gym
>>> from gymview.renderers import renderer_for
>>> envs = [gym.make("CartPole-v1") for _ in range(3)]
>>> states = [env.reset(seed=i) and renderer_for(env).state_of(env) for i, env in enumerate(envs)]
>>> painter = TiledPainter(renderer_for(envs[0]), 3)
>>> TiledDrawing.of(painter, states, [1.0, 2.0, 3.0]).draw().shape
(800, 1200, 3)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from gymview.image.frames import to_rgb_uint8
from gymview.image.tiling import tile
from gymview.renderers.base import BatchRenderer
from gymview.renderers.registry import renderer_for

__all__ = [
    "MAX_TILED_ENVS",
    "TiledDrawing",
    "TiledPainter",
    "drawing_of",
    "env_label",
    "first_tiled",
    "state_painter",
    "tiled",
]

# A vector env's frames are tiled into one picture; beyond this many sub-envs only the first are shown.
MAX_TILED_ENVS = 16


def env_label(index: int, episode_return: float) -> str:
    """The label of sub-env ``index`` in a grid."""
    return f"env {index}  R {episode_return:.0f}"


def tiled(
    frames: Any, returns: Sequence[float] | np.ndarray, extra: Sequence[tuple[np.ndarray, str]] = ()
) -> np.ndarray:
    """Rendered sub-env frames in one grid, each labelled with its index and running return, then
    the ``extra`` (frame, label) pairs."""
    shown = [to_rgb_uint8(frame) for frame in frames]
    labels = [env_label(i, returns[i]) for i in range(len(shown))]
    for frame, label in extra:
        shown.append(frame)
        labels.append(label)
    return tile(shown, labels)


def grid_scene(cell: dict[str, Any], count: int, state_dim: int) -> dict[str, Any]:
    """The page's description of a labelled grid of ``count`` sub-envs drawn as ``cell`` describes, laid out
    as :func:`tiled` lays them out; each frame holds ``state_dim`` numbers a sub-env, then their returns.

    >>> grid_scene({"kind": "cartpole", "width": 60, "height": 40}, 3, 4)["width"]
    120
    """
    columns = max(1, int(np.ceil(np.sqrt(count))))
    rows = -(-count // columns)
    return {
        "kind": "grid",
        "width": columns * cell["width"],
        "height": rows * cell["height"],
        "count": count,
        "columns": columns,
        "state_dim": state_dim,
        "cell": cell,
    }


class TiledPainter:
    """Paints ``count`` states of one renderer's env family as a labelled grid."""

    def __init__(self, renderer: BatchRenderer, count: int) -> None:
        self.renderer = renderer
        self.count = count
        self._frames: np.ndarray | None = None  # drawn into again by the next call

    def page_scene(self) -> dict[str, Any] | None:
        """The grid as the page draws it: the sub-envs' scene in each cell, labelled (None where the page
        cannot draw the sub-envs)."""
        cell = self.renderer.page_scene()
        return None if cell is None else grid_scene(cell, self.count, self.renderer.state_dim)

    def paint(self, state: np.ndarray, canvas: np.ndarray | None = None) -> np.ndarray:
        """``state``: the ``count`` states, one after another, then the ``count`` returns."""
        size = self.count * self.renderer.state_dim
        self._frames = self.renderer.render(state[:size].reshape(self.count, -1), out=self._frames)
        return tile(list(self._frames), [env_label(i, r) for i, r in enumerate(state[size:])])

    def __getstate__(self) -> dict:
        return {"renderer": self.renderer, "count": self.count, "_frames": None}


class TiledDrawing(NamedTuple):
    """A grid of sub-envs not drawn yet (a :class:`gymview.live.DeferredFrame`)."""

    painter: TiledPainter
    state: np.ndarray

    @classmethod
    def of(
        cls, painter: TiledPainter, states: Sequence[np.ndarray], returns: Sequence[float] | np.ndarray
    ) -> TiledDrawing:
        return cls(painter, np.concatenate([*states, np.asarray(returns, np.float64)]))

    def draw(self) -> np.ndarray:
        return self.painter.paint(self.state)

    def checked(self) -> TiledDrawing:
        """This drawing with its states checked as the renderer checks them (a clear error now)."""
        painter = self.painter
        if not isinstance(painter, TiledPainter):
            raise TypeError(f"a TiledDrawing needs a TiledPainter; got {type(painter).__name__}")
        size = painter.count * painter.renderer.state_dim
        state = np.asarray(self.state, np.float64)
        if state.shape != (size + painter.count,):
            raise ValueError(
                f"a TiledDrawing of {painter.count} envs needs {size + painter.count} numbers; got shape {state.shape}"
            )
        painter.renderer._check_states(state[:size].reshape(painter.count, -1))
        return TiledDrawing(painter, state.copy())


def first_tiled(frames: Iterable[Any]) -> list[Any]:
    """The first :data:`MAX_TILED_ENVS` of a vector env's rendered frames: those a grid shows."""
    return list(frames)[:MAX_TILED_ENVS]


def state_painter(envs: Sequence[Any] | None) -> TiledPainter | None:
    """A painter that draws these sub-envs from their states in another process, or None when
    their states cannot be read here (sub-envs in other processes) or drawn (no renderer)."""
    if not envs or len(envs) > MAX_TILED_ENVS:
        return None
    first = renderer_for(envs[0])
    if first is None:
        return None
    for env in envs[1:]:  # stops at the first sub-env the first one's renderer cannot draw
        renderer = renderer_for(env)
        if renderer is None or not first.draws_like(renderer):
            return None
    return TiledPainter(first, len(envs))


def drawing_of(painter: TiledPainter, envs: Sequence[Any], returns: Sequence[float] | np.ndarray) -> TiledDrawing:
    """The sub-envs' grid as it is now, to be drawn elsewhere: their states and returns only."""
    return TiledDrawing.of(painter, [painter.renderer.state_of(env) for env in envs], returns)
