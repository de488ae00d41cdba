"""What a watched stable-baselines3 run keeps of its speed on the cheapest env: PPO on 4 watched CartPole envs.

    python benchmarks/cartpole_ppo.py [--rounds 10] [--no-browser]

``benchmarks/lunar_lander_ppo.py``'s cells (the same PPO settings: 1,024 steps a sub-env a rollout, 4 epochs of
minibatches of 64), on ``make_vec_env("CartPole-v1", n_envs=4)``: watched, drawn by the page and as pictures,
against the same kind of venv unwatched, in alternating rounds of one rollout and its update each; in JupyterLab
with the page open in Chromium, then in a kernel with no front-end.
"""

from __future__ import annotations

from lunar_lander_ppo import ppo_cells
from observer import main

if __name__ == "__main__":
    main(lambda rounds, slice_s: ppo_cells(rounds, "CartPole x4", "CartPole-v1", 4), __doc__)
