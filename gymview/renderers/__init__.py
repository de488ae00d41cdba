"""Vectorized numpy renderers that draw env states without the env.

A :class:`BatchRenderer` draws a whole batch of states at once from a cached static background,
matching what ``env.render()`` returns for MountainCar(-Continuous), CartPole, Acrobot and
Pendulum (gymnasium's pygame drawing: same geometry, colours, flips and antialiased edges) at a
fraction of the cost; LunarLander's (with pygame, from its state) and the boards of FrozenLake and
CliffWalking (from pictures the env draws once) are the env's own pictures.
:meth:`BatchRenderer.state_of` snapshots (copies) what is needed to draw an env, so the cheap part
runs where the env lives and the drawing can run elsewhere (a thread, a worker process, later from
stored states). :class:`MujocoPainter` does the same for gymnasium's
MuJoCo envs with MuJoCo's own renderer, pixel-equal to ``env.render()``.

>>> import gymnasium as gym, numpy as np
>>> env = gym.make("CartPole-v1")
>>> _ = env.reset(seed=0)
>>> renderer = renderer_for(env)
>>> renderer.render(np.stack([renderer.state_of(env)] * 2)).shape
(2, 400, 600, 3)
>>> renderer_for("CarRacing-v3") is None
True
"""

from typing import TYPE_CHECKING

from gymview._internal.lazy import lazy_exports

_EXPORTS = {
    "BatchRenderer": ".base",
    "Drawing": ".base",
    "renderer_for": ".registry",
    "AcrobotRenderer": ".classic_control",
    "CartPoleRenderer": ".classic_control",
    "MountainCarRenderer": ".classic_control",
    "PendulumRenderer": ".classic_control",
    "LunarLanderRenderer": ".box2d",
    "BoardRenderer": ".toy_text",
    "MujocoFrame": ".mujoco",
    "MujocoGridPainter": ".mujoco",
    "MujocoPainter": ".mujoco",
    "TiledDrawing": ".grid",
    "TiledPainter": ".grid",
    "tiled": ".grid",
}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what editors and the API reference see; at run time each name is imported on first use
    from gymview.renderers.base import BatchRenderer, Drawing
    from gymview.renderers.box2d import LunarLanderRenderer
    from gymview.renderers.classic_control import (
        AcrobotRenderer,
        CartPoleRenderer,
        MountainCarRenderer,
        PendulumRenderer,
    )
    from gymview.renderers.grid import TiledDrawing, TiledPainter, tiled
    from gymview.renderers.mujoco import MujocoFrame, MujocoGridPainter, MujocoPainter
    from gymview.renderers.registry import renderer_for
    from gymview.renderers.toy_text import BoardRenderer

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
