"""wrappers_pass_frames_through(): whether an env's wrappers leave its pictures as its own render() draws them."""

from __future__ import annotations

import gymnasium as gym

__all__ = ["wrappers_pass_frames_through"]


def wrappers_pass_frames_through(env: gym.Env) -> bool:
    """False if a wrapper around the unwrapped env overrides ``render`` (it may change the frames)."""
    from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker

    while isinstance(env, gym.Wrapper):
        if type(env).render is not gym.Wrapper.render and not isinstance(env, (OrderEnforcing, PassiveEnvChecker)):
            return False
        env = env.env
    return True
