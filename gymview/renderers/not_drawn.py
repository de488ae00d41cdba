"""why_not_drawn_by_page(): why the page cannot draw an env of a family it draws, in words (the view's status line
says it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from gymview.renderers.base import BatchRenderer, NotDrawable
from gymview.renderers.car_racing import car_racing_class
from gymview.renderers.classic_control import RENDERERS
from gymview.renderers.mujoco import MujocoPainter, dm_control_physics, mujoco_env_class
from gymview.renderers.registry import lazy_renderers
from gymview.renderers.wrappers import wrappers_pass_frames_through

__all__ = ["why_not_drawn_by_page"]


def why_not_drawn_by_page(env: gym.Env) -> str | None:
    """Why the page cannot draw ``env``, an env of a family it draws (a MuJoCo model with a flex, a Taxi of an older
    gymnasium, a wrapper that draws on the frames), in words; None where it draws it, or draws none of its family.

    >>> import gymnasium as gym
    >>> why_not_drawn_by_page(gym.make("CartPole-v1")) is None
    True
    """
    unwrapped = env.unwrapped
    families = [pair for pair in (*RENDERERS, *lazy_renderers(type(unwrapped))) if isinstance(unwrapped, pair[0])]
    mujoco_env, car_racing = mujoco_env_class(), car_racing_class()
    mujoco = (mujoco_env is not None and isinstance(unwrapped, mujoco_env)) or dm_control_physics(unwrapped) is not None
    car = car_racing is not None and isinstance(unwrapped, car_racing)
    if not families and not mujoco and not car:
        return None
    if not wrappers_pass_frames_through(env):
        return "a wrapper changes its pictures (it overrides render())"
    if families:
        return _why_not_drawn(unwrapped, *families[0])
    if car:
        return None if type(unwrapped).render is car_racing.render else _own_render(unwrapped)
    painter = MujocoPainter.for_env(env)
    if painter is None or painter.page_scene() is not None:
        return None
    return f"the page cannot draw {painter.why_not_drawn}"


def _why_not_drawn(
    env: gym.Env, env_class: type[gym.Env], renderer_class: Callable[[Any, str], BatchRenderer]
) -> str | None:
    if type(env).render is not env_class.render:
        return _own_render(env)
    try:
        renderer_class(env, "")
    except NotDrawable as error:
        return str(error)
    return None


def _own_render(env: gym.Env) -> str:
    return f"its class {type(env).__name__} draws its own pictures (it overrides render())"
