"""gymview.neat in a real IPython kernel: a fitness function defined in the kernel evaluates in
worker processes under fork, spawn and forkserver, errors name the genome, and neither an error nor
an interrupt leaves a worker behind."""

import re

import pytest
from waiting import wait_until

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

SETUP = """
import json, psutil, gymview.neat as gn

def fitness(policy, env):  # defined in the kernel: pickled by value for the workers
    total = 0.0
    obs, _ = env.reset()
    for _ in range(200):
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        total += reward
        if terminated or truncated:
            break
    return total

def small():
    return gn.config_for("CartPole-v1", pop_size=30, fitness_threshold=100000)

def workers_left():
    # multiprocessing's own helpers (the forkserver, the resource tracker) stay for the kernel's life
    left = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE and not any(
                    name in " ".join(p.cmdline()) for name in ("forkserver", "resource_tracker")):
                left.append(p.pid)
        except psutil.NoSuchProcess:
            pass
    return left
"""


@pytest.mark.parametrize("start_method", ["fork", "spawn", "forkserver"])
def test_a_kernel_fitness_runs_in_workers_like_in_the_kernel(kernel, start_method):
    kernel.run(SETUP)
    out = kernel.run(f"""
serial = gn.evolve("CartPole-v1", small(), generations=3, fitness=fitness, workers=0, seed=2, panel=False)
pooled = gn.evolve("CartPole-v1", small(), generations=3, fitness=fitness, workers=2, seed=2,
                   start_method={start_method!r}, panel=False)
print(json.dumps([serial.history == [dict(r, seconds=s["seconds"]) for r, s in zip(pooled.history, serial.history)],
                  [r["best"] for r in pooled.history], workers_left()]))
""").stdout
    same, best, left = __import__("json").loads(out.strip().splitlines()[-1])
    assert same and len(best) == 3 and left == []

    failed = kernel.execute(f"""
def broken(policy, env):
    if policy.genome.key == 11:
        raise ValueError("genome 11 is broken")
    return 1.0
gn.evolve("CartPole-v1", small(), generations=2, fitness=broken, workers=2, start_method={start_method!r}, panel=False)
""").reply
    assert failed["ename"] == "FitnessError"
    assert "genome 11 in generation 0 failed: ValueError: genome 11 is broken" in failed["evalue"]
    assert kernel.run("print(workers_left())").stdout.strip() == "[]"


def test_an_interrupt_during_evaluation_ends_it_and_leaves_no_workers(kernel, tmp_path):
    kernel.run(SETUP)
    evaluating = tmp_path / "evaluating"

    def interrupt_once_a_genome_is_evaluated():
        wait_until(evaluating.exists, "a worker evaluating a genome", timeout=120)
        kernel.manager.interrupt_kernel()

    reply = kernel.execute(f"""
import pathlib, time
def stuck(policy, env):  # never returns: only an interrupt ends the generation
    pathlib.Path({str(evaluating)!r}).touch()
    time.sleep(3600)
print("EVOLVING", flush=True)
gn.evolve("CartPole-v1", small(), generations=1, fitness=stuck, workers=2, start_method="spawn", panel=False)
""", until_text="EVOLVING", on_text=interrupt_once_a_genome_is_evaluated).reply
    assert reply["ename"] == "KeyboardInterrupt"
    traceback = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(reply["traceback"]))
    assert "_drive(" in traceback, traceback  # raised while evolve waited for the workers' fitnesses
    assert kernel.run("print(workers_left())").stdout.strip() == "[]"


def test_watched_envs_in_forked_workers_stay_silent(kernel):
    """A factory that watches its env (as users write in notebooks): the forked workers' copies are
    inactive, so nothing is rendered or sent from them and the kernel's log stays clean."""
    kernel.run(SETUP)
    out = kernel.run("""
import gymnasium as gym, gymview
watched = lambda: gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
result = gn.evolve(watched, small(), generations=2, workers=2, start_method="fork", seed=1, panel=False)
plain = gn.evolve("CartPole-v1", small(), generations=2, workers=0, seed=1, panel=False)
print(json.dumps([[r["best"] for r in result.history] == [r["best"] for r in plain.history], workers_left()]))
""").stdout
    same, left = __import__("json").loads(out.strip().splitlines()[-1])
    assert same and left == []
    log = kernel.log()
    assert "attempted to send" not in log and "Traceback" not in log, log[-2000:]
