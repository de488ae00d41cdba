"""Rollouts drawn by the page: ``show_rollout`` plays states of a MuJoCo model (a JAX, torch or NumPy array of
``qpos``) as a player, and saves it, or a live view's kept frames, as one HTML file that plays anywhere.

Modules: ``arrays`` (arrays moved to the host), ``mujoco_states`` (``qpos`` to the page's poses), ``page_file``
(the HTML file), ``player`` (the widget and ``show_rollout``).
"""
