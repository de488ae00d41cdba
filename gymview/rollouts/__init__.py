"""Rollouts drawn by the page: ``show_rollout`` plays states of a MuJoCo model (a JAX, torch or NumPy array of
``qpos``) as a player, and saves it as one HTML file that plays anywhere (``gymview.episodes.page_file``).

Modules: ``arrays`` (arrays moved to the host), ``mujoco_states`` (``qpos`` to the page's poses), ``player`` (the
widget and ``show_rollout``).
"""
