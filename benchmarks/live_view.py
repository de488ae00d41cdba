"""Live view cost, side by side in one real IPython kernel: how fast does a CartPole loop step?

    python benchmarks/live_view.py [--seconds 4] [--repeats 3] [--browser]

Variants, each run for a fixed wall time, interleaved ``--repeats`` times (medians reported):
  a  no render                       the loop alone: the ceiling
  b  render every step, discard      what rendering alone costs
  c  matplotlib imshow + clear_output every step    the common notebook recipe
  d  ipywidgets.Image updated with a PNG every step
  e  gymview.watch(env)              this package
For c, d and e it also counts what the kernel publishes on IOPub: messages/s (jupyter_server
drops output beyond 1000/s) and bytes/s. Then a and e again, in 0.25 s slices that alternate in
one kernel (with a second plain env as the noise floor): the steadier ratio on a noisy machine. ``--browser``
also measures the loop ratio where users see it: CartPole, an Acrobot whose wrapper overrides ``render()``
and HalfCheetah, each watched against its inner env in alternating slices, with the page open in real
JupyterLab + Chromium and in a kernel alone (benchmarks/browser_loop.py; ``--only a --paired-rounds 0
--browser`` runs that alone). ``--sb3`` times stable-baselines3
PPO ``learn()`` on CartPole with 1 and 4 envs, watched (``gymview.watch(venv)``) and not, in
alternating rounds in one kernel. ``--mujoco`` times a HalfCheetah-v5 loop watched (frames
painted in the encoder process) and watched with ``fast_render=False`` (rendered in the loop), each
against its own inner env stepped without gymview's wrapper, alone and as a SyncVectorEnv of 4, in
alternating slices in one kernel, with the frames/s each watched loop sent. ``--controls`` runs
benchmarks/controls.py: the Pause / Step / Stop check's cost a step, and Pause's click latency.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "kernel"))
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO / "benchmarks"))

import browser_loop  # noqa: E402
from browser_loop import RUN_SLICE  # noqa: E402

SETUP = """
import io, time, gymnasium as gym, numpy as np
from IPython.display import display, clear_output
def timed_loop(env, seconds, after_step=lambda: None):
    env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        after_step()
        steps += 1
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)
"""

VARIANTS = {
    "a no render": """
env = gym.make("CartPole-v1")
print("RATE", timed_loop(env, {seconds}))
""",
    "b render every step": """
env = gym.make("CartPole-v1", render_mode="rgb_array")
print("RATE", timed_loop(env, {seconds}, env.render))
""",
    "c matplotlib + clear_output": """
import matplotlib.pyplot as plt
env = gym.make("CartPole-v1", render_mode="rgb_array")
def show():
    clear_output(wait=True)
    plt.imshow(env.render()); plt.axis("off"); plt.show()
print("RATE", timed_loop(env, {seconds}, show))
""",
    "d ipywidgets.Image PNG": """
import ipywidgets
from PIL import Image
env = gym.make("CartPole-v1", render_mode="rgb_array")
image = ipywidgets.Image(format="png"); display(image)
def show():
    buffer = io.BytesIO(); Image.fromarray(env.render()).save(buffer, format="PNG"); image.value = buffer.getvalue()
print("RATE", timed_loop(env, {seconds}, show))
""",
    "e gymview.watch": """
import gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
rate = timed_loop(env, {seconds})
env.close()
print("RATE", rate)
""",
}


PAIRED = """
import statistics
plain, twin = gym.make("CartPole-v1"), gym.make("CartPole-v1")
watched = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
envs = {{"a": plain, "a'": twin, "e": watched}}
""" + RUN_SLICE + """
for env in envs.values():
    env.reset(seed=0)
    run_slice(env, 0.3)
ratios, floor, sent = [], [], watched.view.stats["frames_sent"]
for index in range({rounds}):
    order = list(envs) if index % 2 else list(envs)[::-1]
    rates = {{name: run_slice(envs[name], {slice_s}) for name in order}}
    ratios.append(rates["e"] / rates["a"])
    floor.append(rates["a'"] / rates["a"])
fps = (watched.view.stats["frames_sent"] - sent) / ({rounds} * {slice_s})
watched.close()
print("PAIRED", statistics.median(ratios), statistics.median(floor), fps)
"""


SB3 = """
import statistics, time, gymview
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
def model_for(n_envs, watched):
    venv = make_vec_env("CartPole-v1", n_envs=n_envs, seed=0, env_kwargs={{"render_mode": "rgb_array"}})
    venv = gymview.watch(venv) if watched else venv
    return PPO("MlpPolicy", venv, n_steps=256, batch_size=256, n_epochs=4, seed=0, device="cpu"), venv
for n_envs in (1, 4):
    models = {{watched: model_for(n_envs, watched) for watched in (False, True)}}
    for model, _ in models.values():
        model.learn({steps})  # warm-up
    ratios, watched_seconds, sent = [], 0.0, models[True][1].view.stats["frames_sent"]
    for index in range({rounds}):
        rates = {{}}
        for watched in ((False, True) if index % 2 else (True, False)):
            start = time.perf_counter()
            models[watched][0].learn({steps}, reset_num_timesteps=False)
            rates[watched] = {steps} / (time.perf_counter() - start)
            watched_seconds += (time.perf_counter() - start) if watched else 0.0
        ratios.append(rates[True] / rates[False])
    fps = (models[True][1].view.stats["frames_sent"] - sent) / watched_seconds
    for _, venv in models.values():
        venv.close()
    print("SB3", n_envs, statistics.median(ratios), fps)
"""


MUJOCO = """
import statistics, time, gymnasium as gym, gymview
gymview.setup(quiet=True, human=False)
def make():
    if {vector}:  # a SyncVectorEnv of 4: its own kernel, so its helper's rendering cannot spill into other slices
        return gym.vector.SyncVectorEnv([lambda: gym.make("HalfCheetah-v5", render_mode="rgb_array")] * 4)
    return gym.make("HalfCheetah-v5", render_mode="rgb_array")
# Each watched env is compared with its own inner env (the same simulation), stepped without gymview's
# wrapper while its view idles: two instances of one env ran up to 5% apart here (where their memory
# lies), which hid the few percent measured. "plain again" is that inner env in a second slot.
watched, in_loop = gymview.watch(make()), gymview.watch(make(), fast_render=False)
slots = {{"watched": watched, "plain": watched.env, "plain again": watched.env, "in loop": in_loop,
          "plain (in loop's env)": in_loop.env}}
def run_slice(env, seconds):
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        steps += 1
        if not {vector} and (terminated or truncated):  # vector envs reset themselves
            env.reset()
    return steps / (time.perf_counter() - start)
for env in (watched, in_loop):
    env.reset(seed=0)
    env.action_space.seed(0)  # repeatable runs: the same actions, states and contacts each time
    run_slice(env, 1.0)
sent = {{name: env.view.stats["frames_sent"] for name, env in slots.items() if hasattr(env, "view")}}
rates = {{name: [] for name in slots}}
for index in range({rounds}):
    for name in (list(slots) if index % 2 else list(slots)[::-1]):
        rates[name].append(run_slice(slots[name], {slice_s}))
baseline = {{"watched": "plain", "plain again": "plain", "in loop": "plain (in loop's env)"}}
for name, base in baseline.items():
    ratio = statistics.median(a / b for a, b in zip(rates[name], rates[base]))
    fps = (slots[name].view.stats["frames_sent"] - sent[name]) / ({rounds} * {slice_s}) if name in sent else 0.0
    print("MUJOCO", name.replace(" ", "_"), ratio, fps)
for env in (watched, in_loop):
    env.close()
"""


def run_mujoco(rounds: int, slice_s: float, vector: bool = False) -> list[tuple[str, float, float]]:
    """(variant, loop speed / plain loop's, median over alternating slices, frames/s sent)."""
    from conftest import running_kernel

    with running_kernel(str(REPO)) as kernel:
        code = MUJOCO.format(rounds=rounds, slice_s=slice_s, vector=vector)
        result = kernel.run(code, timeout=rounds * slice_s * 8 + 120)
    rows = [line.split()[1:] for line in result.stdout.splitlines() if line.startswith("MUJOCO")]
    return [(name.replace("_", " "), float(ratio), float(fps)) for name, ratio, fps in rows]


def run_sb3(rounds: int, steps: int) -> list[tuple[int, float, float]]:
    """(n_envs, watched/unwatched learn() speed, median over alternating rounds, frames/s sent)."""
    from conftest import running_kernel

    with running_kernel(str(REPO)) as kernel:
        result = kernel.run(SB3.format(rounds=rounds, steps=steps), timeout=1800)
    rows = [line.split()[1:] for line in result.stdout.splitlines() if line.startswith("SB3")]
    return [(int(n), float(ratio), float(fps)) for n, ratio, fps in rows]


def run_paired(rounds: int, slice_s: float) -> tuple[float, float, float]:
    """(e)/(a) and (a')/(a) medians over alternating slices in one kernel, and (e)'s frames/s.

    Whole runs of a few seconds one after another drift with the machine (two identical
    no-render runs here differed by 30%); short slices that alternate see the same machine, and
    the ratio of two identical plain envs shows how much noise is left.
    """
    from conftest import running_kernel

    with running_kernel(str(REPO)) as kernel:
        kernel.run(SETUP + "import gymview")
        result = kernel.run(PAIRED.format(rounds=rounds, slice_s=slice_s), timeout=rounds * slice_s * 10 + 60)
    ratio, floor, fps = map(float, result.stdout.split("PAIRED")[-1].split())
    return ratio, floor, fps


def _published(result) -> tuple[int, int]:
    """IOPub messages that jupyter_server's rate limit counts, and their bytes."""
    count = size = 0
    for _, msg in result.messages:
        if msg["header"]["msg_type"] in ("status", "comm_open", "execute_input"):
            continue
        count += 1
        size += len(json.dumps(msg["content"], default=str)) + sum(len(b) for b in msg.get("buffers", []))
    return count, size


def run_kernel_variants(seconds: float, repeats: int) -> dict[str, dict[str, float]]:
    from conftest import running_kernel

    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in VARIANTS}
    with running_kernel(str(REPO)) as kernel:
        kernel.run(SETUP)
        for name, code in VARIANTS.items():  # warm-up: imports, pygame init, first widget
            kernel.run(code.format(seconds=0.3))
        for _ in range(repeats):
            for name, code in VARIANTS.items():
                result = kernel.run(code.format(seconds=seconds), timeout=seconds * 20 + 60)
                rate = float(result.stdout.split("RATE")[-1].split()[0])
                count, size = _published(result)
                samples[name].append((rate, count / seconds, size / seconds))
    return {
        name: {
            "steps_per_s": statistics.median(s[0] for s in rows),
            "messages_per_s": statistics.median(s[1] for s in rows),
            "bytes_per_s": statistics.median(s[2] for s in rows),
        }
        for name, rows in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="wall time of each run (default 4)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per variant (default 3)")
    parser.add_argument("--browser", action="store_true",
                        help="also the loop ratio with the page open in JupyterLab + Chromium (benchmarks/browser_loop.py)")
    parser.add_argument("--browser-rounds", type=int, default=30, help="alternating slices per env with --browser")
    parser.add_argument("--browser-runs", type=int, default=2, help="runs of the --browser measurement")
    parser.add_argument("--only", default="abcde", help="variant letters to run, e.g. 'ae' (a is always run)")
    parser.add_argument("--paired-rounds", type=int, default=40, help="alternating a/e slices (0: skip)")
    parser.add_argument("--sb3", action="store_true", help="also time SB3 PPO learn(), watched vs not")
    parser.add_argument("--sb3-rounds", type=int, default=8, help="alternating learn() rounds per env count")
    parser.add_argument("--mujoco", action="store_true", help="also time a HalfCheetah loop, watched vs not")
    parser.add_argument("--controls", action="store_true",
                        help="also the controls' cost a step and Pause's click latency in JupyterLab (benchmarks/controls.py)")
    parser.add_argument("--mujoco-rounds", type=int, default=20, help="alternating 0.5 s slices per variant")
    args = parser.parse_args()
    for name in list(VARIANTS):
        if name[0] not in args.only + "a":
            del VARIANTS[name]
    print(f"CartPole-v1, {args.seconds:g} s per run, median of {args.repeats}, {os.cpu_count()} cores")
    results = run_kernel_variants(args.seconds, args.repeats)
    base = results["a no render"]["steps_per_s"]
    print("\n| variant | steps/s | vs no render | IOPub msg/s | IOPub KB/s |\n|---|---:|---:|---:|---:|")
    for name, row in results.items():
        shows = not name.startswith(("a", "b"))
        print(
            f"| {name} | {row['steps_per_s']:,.0f} | {row['steps_per_s'] / base:.3f}x | "
            f"{row['messages_per_s']:.1f} | {row['bytes_per_s'] / 1e3:,.1f} |" if shows else
            f"| {name} | {row['steps_per_s']:,.0f} | {row['steps_per_s'] / base:.3f}x | - | - |"
        )
    if args.paired_rounds:
        ratio, floor, fps = run_paired(args.paired_rounds, 0.25)
        print(
            f"\npaired slices ({args.paired_rounds} rounds of 0.25 s, alternating in one kernel): "
            f"e / a = {ratio:.3f}x at {fps:.1f} frames/s sent; a' / a (two plain envs) = {floor:.3f}x"
        )
    if args.sb3:
        print("\nSB3 PPO learn() on CartPole, 2048 steps a round, alternating watched / unwatched in one kernel:")
        for n_envs, ratio, fps in run_sb3(args.sb3_rounds, 2048):
            print(f"  {n_envs} env(s): watched / unwatched = {ratio:.3f}x (median of {args.sb3_rounds}), {fps:.1f} frames/s sent")
    if args.mujoco:
        for vector in (False, True):
            what = "a SyncVectorEnv of 4 HalfCheetah-v5" if vector else "HalfCheetah-v5"
            print(f"\n{what} (480x480), {args.mujoco_rounds} alternating 0.5 s slices per variant in one kernel:")
            print("| variant | loop speed vs its env unwatched | frames/s sent |\n|---|---:|---:|")
            for name, ratio, fps in run_mujoco(args.mujoco_rounds, 0.5, vector):
                print(f"| {name} | {ratio:.3f}x | {fps:.1f} |")
    if args.controls:
        import subprocess

        subprocess.run([sys.executable, str(REPO / "benchmarks" / "controls.py")], check=True)
    if args.browser:

        browser_loop.main(args.browser_rounds, args.browser_runs)


if __name__ == "__main__":
    main()
