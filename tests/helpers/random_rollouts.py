"""Seeded random walks of a gymnasium MuJoCo env, as a rollout's arrays: what show_rollout's tests and benchmark play."""

import gymnasium as gym
import numpy as np


def random_rollout(env_id: str, steps: int, envs: int = 1, **kwargs) -> tuple[gym.Env, np.ndarray, np.ndarray]:
    """``envs`` walks of ``steps`` random actions (env n seeded n): the first env, ``qpos [steps, envs, nq]`` and
    ``rewards [steps, envs]``."""
    made = [gym.make(env_id, **kwargs) for _ in range(envs)]
    qpos, rewards = np.zeros((steps, envs, made[0].unwrapped.model.nq)), np.zeros((steps, envs))
    for index, env in enumerate(made):
        env.reset(seed=index)
        env.action_space.seed(index)
        for step in range(steps):
            _, rewards[step, index], *_ = env.step(env.action_space.sample())
            qpos[step, index] = env.unwrapped.data.qpos
    return made[0], qpos, rewards
