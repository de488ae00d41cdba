"""Thin adapters for the libraries people train with; each imports its library only when used.

* ``gymview.integrations.sb3``: stable-baselines3 (``pip install "gymview[sb3]"``): a live view of
  training (``WatchCallback``) and a watched vector env (``WatchedVecEnv``).
* ``gymview.integrations.pettingzoo``: PettingZoo (``pip install "gymview[pettingzoo]"``): watched
  multi-agent envs, AEC (``WatchedAECEnv``) and Parallel (``WatchedParallelEnv``).
"""
