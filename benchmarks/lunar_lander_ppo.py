"""What a student of a popular RL course sees: stable-baselines3 PPO learning on 16 watched LunarLander envs.

    python benchmarks/lunar_lander_ppo.py [--rounds 3] [--no-browser]

One notebook cell per way of drawing, run in JupyterLab with the page open in Chromium (the view scrolled into
sight), then in a kernel with no front-end: PPO (the course's settings: 16 envs, 1,024 steps each a rollout, 4
epochs of minibatches of 64) learns on ``gymview.watch(venv)`` and, in alternating rounds of one rollout and its
update each, on the same kind of venv unwatched. The loop ratio is the median of watched / unwatched steps a
second per round (learn() as a whole: the updates too); frames/s sent and drawn are counted while the envs step
(the rollouts), when there is something new to show. ``draw="page"`` sends each sub-env's state and the page draws
the grid; ``draw="kernel"`` renders each sub-env with pygame in the loop and sends pictures. The warm-up (a first
rollout and update each) is left out of the ratio, not of the frames/s.
"""

from __future__ import annotations

from observer import main

SETUP = """
import json, statistics, time, gymview
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env

class Rollouts(BaseCallback):
    # the seconds the envs stepped, and the frames the view sent meanwhile
    def __init__(self, view):
        super().__init__()
        self.view, self.seconds, self.frames = view, 0.0, 0
    def _on_rollout_start(self):
        self.started, self.sent = time.perf_counter(), self.view.stats["frames_sent"] if self.view else 0
    def _on_rollout_end(self):
        self.seconds += time.perf_counter() - self.started
        self.frames += (self.view.stats["frames_sent"] if self.view else 0) - self.sent
    def _on_step(self):
        return True

def course_model(venv):
    return PPO("MlpPolicy", venv, n_steps=1024, batch_size=64, n_epochs=4, gamma=0.999, gae_lambda=0.98,
               ent_coef=0.01, seed=0, device="cpu")

def ppo_rounds(name, draw, rounds, env_id="LunarLander-v3", n_envs=16):
    venvs = {watched: make_vec_env(env_id, n_envs=n_envs, seed=0, env_kwargs={"render_mode": "rgb_array"})
             for watched in (False, True)}
    venvs[True] = gymview.watch(venvs[True], draw=draw)
    models = {watched: course_model(venv) for watched, venv in venvs.items()}
    steps = n_envs * 1024
    counted = Rollouts(venvs[True].view)  # from the first frame: the page counts what it drew from the first
    for watched, model in models.items():
        model.learn(steps, callback=counted if watched else None)  # warm-up: torch, the page's scene
    rates = {False: [], True: []}
    for index in range(rounds):
        for watched in ((False, True) if index % 2 else (True, False)):
            start = time.perf_counter()
            models[watched].learn(steps, reset_num_timesteps=False, callback=counted if watched else None)
            rates[watched].append(steps / (time.perf_counter() - start))
    result = {
        "name": name, "ended": "ran on", "rounds": rounds, "floor": None,
        "ratio": statistics.median(w / p for w, p in zip(rates[True], rates[False])),
        "worst_watched_ms": 0.0, "worst_plain_ms": 0.0,
        "fps": counted.frames / counted.seconds, "seconds_shown": counted.seconds,
    }
    opened.extend(venvs.values())  # closed in the last cell, once the page's frames are counted
    print("RESULT", json.dumps(result), flush=True)
opened = []
print("READY")
"""


CLOSE = "for venv in opened:\n    venv.close()\nprint('CLOSED')"


def ppo_cells(rounds: int, label: str = "LunarLander x16", env_id: str = "LunarLander-v3", n_envs: int = 16) -> list:
    """The notebook: set-up, PPO on ``n_envs`` watched ``env_id`` envs drawn by the page, then as pictures, close."""
    return [
        SETUP,
        *(f"ppo_rounds({label + ', ' + way!r}, {draw!r}, {rounds}, {env_id!r}, {n_envs})"
          for way, draw in (("drawn by the page", "page"), ("pictures", "kernel"))),
        CLOSE,
    ]  # fmt: skip


def cells(rounds: int, slice_s: float) -> list[str]:
    return ppo_cells(rounds)


if __name__ == "__main__":
    main(cells, __doc__)
