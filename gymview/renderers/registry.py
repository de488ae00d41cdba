"""renderer_for(): find the renderer that can draw an env, or None."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from gymview.renderers.base import BatchRenderer, NotDrawable
from gymview.renderers.classic_control import RENDERERS
from gymview.renderers.wrappers import wrappers_pass_frames_through

# Families imported only for an env of theirs (Box2D needs a package of its own; a board's pictures are drawn by
# the env): "module:Class" -> the renderer
LAZY_RENDERERS = {
    "gymnasium.envs.box2d.lunar_lander:LunarLander": "gymview.renderers.box2d:LunarLanderRenderer",
    "gymnasium.envs.box2d.bipedal_walker:BipedalWalker": "gymview.renderers.bipedal_walker:BipedalWalkerRenderer",
    "gymnasium.envs.toy_text.frozen_lake:FrozenLakeEnv": "gymview.renderers.toy_text:BoardRenderer",
    "gymnasium.envs.toy_text.cliffwalking:CliffWalkingEnv": "gymview.renderers.toy_text:BoardRenderer",
    "gymnasium.envs.toy_text.taxi:TaxiEnv": "gymview.renderers.taxi:TaxiRenderer",
    "gymnasium.envs.toy_text.blackjack:BlackjackEnv": "gymview.renderers.blackjack:BlackjackRenderer",
}


def renderer_for(env_or_id: gym.Env | str) -> BatchRenderer | None:
    """A :class:`BatchRenderer` for this env (or registered env id), or None if there is none.

    An id that is not registered raises gymnasium's ``NameNotFound``/``VersionNotFound``.

    Reads the env's render size and geometry (screen size, link lengths, ...) from the unwrapped
    env, so a resized env renders at its own size. Envs whose class overrides ``render`` get None,
    and so do envs inside a wrapper that overrides ``render`` (it may draw on the frames), except
    gymnasium's checkers that pass frames through (``OrderEnforcing``, ``PassiveEnvChecker``).

    >>> import numpy as np
    >>> renderer_for("Acrobot-v1").render(np.zeros((1, 4))).shape
    (1, 500, 500, 3)
    """
    if isinstance(env_or_id, str):
        entry_point = gym.spec(env_or_id).entry_point  # raises gymnasium's error for unknown ids
        drawn = {f"{cls.__module__}:{cls.__name__}" for cls, _ in RENDERERS} | set(LAZY_RENDERERS)
        if entry_point not in drawn:
            return None
        try:
            env = gym.make(env_or_id)
        except gym.error.DependencyNotInstalled:  # LunarLander without Box2D: nothing here could draw it either
            return None
        try:
            return renderer_for(env)
        finally:
            env.close()
    if not isinstance(env_or_id, gym.Env):
        raise TypeError(f"renderer_for() takes a gymnasium env or an env id string; got {type(env_or_id).__name__}")
    if not wrappers_pass_frames_through(env_or_id):
        return None
    unwrapped = env_or_id.unwrapped
    env_id = unwrapped.spec.id if unwrapped.spec is not None else type(unwrapped).__name__
    for env_class, renderer_class in (*RENDERERS, *lazy_renderers(type(unwrapped))):
        if type(unwrapped) is env_class or (
            isinstance(unwrapped, env_class) and type(unwrapped).render is env_class.render
        ):
            return _renderer_or_none(renderer_class, unwrapped, env_id)
    return None


def _renderer_or_none(
    renderer_class: Callable[[Any, str], BatchRenderer], env: gym.Env, env_id: str
) -> BatchRenderer | None:
    """The renderer, or None for an env of its family that it cannot draw."""
    try:
        return renderer_class(env, env_id)
    except NotDrawable:
        return None


def lazy_renderers(env_class: type[gym.Env]) -> list[tuple[type[gym.Env], Callable[[Any, str], BatchRenderer]]]:
    """The (env class, renderer) pairs of :data:`LAZY_RENDERERS` for ``env_class`` or a class it derives from."""
    import importlib

    found: list[tuple[type[gym.Env], Callable[[Any, str], BatchRenderer]]] = []
    for base in env_class.__mro__:
        renderer = LAZY_RENDERERS.get(f"{base.__module__}:{base.__qualname__}")
        if renderer is not None:
            module, name = renderer.split(":")
            found.append((base, getattr(importlib.import_module(module), name)))
    return found
