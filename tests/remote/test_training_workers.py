"""Training runs outside the notebook publish: SB3's PPO with a SubprocVecEnv of 4 workers shown as the grid,
each worker publishing its own env under its name, and a Ray actor on a local Ray instance."""

import importlib.util
import io
import shutil
import tempfile

import numpy as np
import pytest
from PIL import Image
from waiting import wait_until

import gymview
from gymview.remote import runs_at

pytestmark = pytest.mark.slow

PPO_WORKERS = '''
import argparse, gymnasium as gym, gymview
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import SubprocVecEnv

def worker_env(address, rank):  # each worker's env publishes itself too, under its own name
    def make():
        return gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address, run=f"worker-{rank}",
                             draw="kernel")
    return make

if __name__ == "__main__":  # SubprocVecEnv starts its workers with forkserver: they import this file
    parser = argparse.ArgumentParser()
    parser.add_argument("--publish"); parser.add_argument("--counter")
    args = parser.parse_args()
    venv = SubprocVecEnv([worker_env(args.publish, rank) for rank in range(4)])
    model = PPO("MlpPolicy", gymview.watch(venv, publish=args.publish, run="ppo", draw="kernel"), n_steps=64,
                batch_size=64, n_epochs=1, device="cpu")
    try:
        model.learn(10**7)
    except gymview.Stopped:
        print("STOPPED", flush=True)
    venv.close()
'''

RAY_ACTOR = '''
import argparse, os, ray
parser = argparse.ArgumentParser()
parser.add_argument("--publish"); parser.add_argument("--temp"); parser.add_argument("--counter")
args = parser.parse_args()
ray.init(num_cpus=1, include_dashboard=False, _temp_dir=args.temp,
         runtime_env={"env_vars": {"GYMVIEW_TOKEN": os.environ["GYMVIEW_TOKEN"]}})

@ray.remote
class Player:
    def __init__(self, address):
        import gymnasium as gym, gymview
        self.env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address, run="ray-actor",
                                 draw="kernel")

    def play(self):
        import gymview
        steps = 0
        self.env.reset(seed=0)
        try:
            while True:
                _, _, terminated, truncated, _ = self.env.step(self.env.action_space.sample())
                steps += 1
                if terminated or truncated:
                    self.env.reset()
        except gymview.Stopped:
            self.env.close()
            return steps

player = Player.remote(args.publish)
print("STOPPED after", ray.get(player.play.remote()), "steps", flush=True)
ray.shutdown()
'''


ASYNC_WORKERS = '''
import argparse, gymnasium as gym, gymview

def worker_env(address, rank):  # made in each worker process (forked: the parent publishes already)
    def make():
        return gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=address, run=f"async-{rank}",
                             draw="kernel")
    return make

parser = argparse.ArgumentParser()
parser.add_argument("--publish"); parser.add_argument("--counter")
args = parser.parse_args()
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=args.publish, run="parent", draw="kernel")
envs = gym.vector.AsyncVectorEnv([worker_env(args.publish, rank) for rank in range(2)], context="fork")
env.reset(seed=0)
envs.reset(seed=0)
try:
    while True:
        envs.step(envs.action_space.sample())
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
except gymview.Stopped:
    print("STOPPED", flush=True)
envs.close()
env.close()
'''


def seen_runs(address, runs):
    """``runs`` (name: pid) with those listed at ``address`` now added; a machine too busy to answer in time
    (a script still importing torch, a run's process between heartbeats) adds none this time."""
    try:
        runs.update({run.name: run.pid for run in runs_at(address)})
    except TimeoutError:
        pass
    return runs


def picture(buffers):
    return np.asarray(Image.open(io.BytesIO(bytes(buffers[0]))).convert("L"), dtype=float)


def test_ppo_with_four_subprocess_workers_is_shown_as_the_grid_and_each_worker_publishes(address, token, scripts,
                                                                                           pages):
    script = scripts("--publish", address, code=PPO_WORKERS)
    runs = {}
    wait_until(lambda: len(seen_runs(address, runs)) == 5, "the PPO run and its 4 workers", timeout=180)
    assert sorted(runs) == ["ppo", "worker-0", "worker-1", "worker-2", "worker-3"]
    assert runs["ppo"] == script.process.pid and len(set(runs.values())) == 5, "each worker is a process of its own"
    view = gymview.attach(address, run="ppo", display=False)
    page = pages(view)
    wait_until(lambda: len(page.frames()) > 3, "frames of the training grid")
    content, buffers = next((c, b) for c, b in reversed(page.messages) if c.get("type") == "frame")
    grid = picture(buffers)
    height, width = grid.shape
    cells = [(row, column) for row in (0, height // 2) for column in (0, width // 2)]
    # Each of the 2x2 cells has its label ("env 2 R 51"), white on black, in its corner, where a CartPole is white.
    def dark(rows, columns):
        return (grid[rows, columns] < 80).mean()

    assert all(dark(slice(row + 2, row + 16), slice(column + 1, column + 60)) > 0.3 for row, column in cells), \
        "4 labelled cells"
    assert dark(slice(height // 4 - 5, height // 4 + 5), slice(2, 60)) < 0.05, "a CartPole's white background"
    worker = gymview.attach(address, run="worker-2", display=False)
    worker_page = pages(worker)
    wait_until(lambda: len(worker_page.frames()) > 3, "frames of one worker's own env")
    wait_until(lambda: worker.run is not None and worker.run.pid == runs["worker-2"], "worker-2's own process shown")
    stop = page.click("stop")
    wait_until(lambda: page.heard(stop), "the PPO run to hear Stop")
    assert script.wait(120) == 0 and "STOPPED" in script.output()
    view.close()
    worker.close()


def test_async_vector_env_workers_forked_from_a_publishing_parent_publish_each_under_its_name(address, token,
                                                                                               scripts, pages):
    script = scripts("--publish", address, code=ASYNC_WORKERS)
    runs = {}
    wait_until(lambda: {"parent", "async-0", "async-1"} <= set(seen_runs(address, runs)),
               "the parent's and both workers' runs", timeout=120)
    assert runs["parent"] == script.process.pid
    assert len({runs["parent"], runs["async-0"], runs["async-1"]}) == 3, "each worker is a process of its own"
    worker = gymview.attach(address, run="async-1", display=False)
    worker_page = pages(worker)
    wait_until(lambda: len(worker_page.frames()) > 3, "frames of one worker's env")
    parent = gymview.attach(address, run="parent", display=False)
    parent_page = pages(parent)
    wait_until(lambda: len(parent_page.frames()) > 3, "frames of the parent's env")
    stop = parent_page.click("stop")
    wait_until(lambda: parent_page.heard(stop), "the parent to hear Stop")
    assert script.wait(120) == 0, script.output()
    assert "STOPPED" in script.output() and "Traceback" not in script.output(), script.output()
    wait_until(lambda: worker_page.state() == "ended", "the worker's run to end with the vector env")
    worker.close()
    parent.close()


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (pip install gymview[ray])")
def test_a_ray_actor_publishes_and_stops_from_the_attached_view(address, token, scripts, pages):
    temp = tempfile.mkdtemp(prefix="ray-")  # short: Ray's socket paths must fit in 107 characters
    try:
        script = scripts("--publish", address, "--temp", temp, code=RAY_ACTOR, env={"HOME": temp})
        view = gymview.attach(address, run="ray-actor", timeout=180, display=False)
        assert view.run.pid != script.process.pid, "the actor is a Ray worker process, not the driver"
        page = pages(view)
        wait_until(lambda: len(page.frames()) > 3, "frames from the Ray actor")
        stop = page.click("stop")
        wait_until(lambda: page.heard(stop), "the actor to hear Stop")
        assert script.wait(120) == 0, script.output()
        assert "STOPPED after" in script.output()
        wait_until(lambda: page.state() == "ended", "the page to hear the actor's run ended")
        view.close()
    finally:
        shutil.rmtree(temp, ignore_errors=True)
