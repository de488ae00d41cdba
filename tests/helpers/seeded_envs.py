"""An env as the renderers' tests start one: made with ``rgb_array`` pictures, reset and its action space seeded."""

import gymnasium as gym


def seeded(env_id: str, seed: int = 0, **kwargs) -> gym.Env:
    env = gym.make(env_id, render_mode="rgb_array", **kwargs)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return env
