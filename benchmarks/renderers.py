"""Per-frame cost of gymnasium's pygame rendering vs gymview's vectorized numpy renderers.

    python benchmarks/renderers.py [--frames 256] [--repeats 5]

For each env, the states of real episodes (random actions) are drawn three ways, interleaved so
that load from other processes hits all of them alike: ``env.render()`` one frame at a time,
``renderer.render`` one state at a time, and in batches of 64 (a new array each call, and
drawing into the previous call's array as the batch recorder does). Reported: the best of
``--repeats`` runs in ms per frame, and pygame's time divided by each.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

from gymview.renderers import renderer_for  # noqa: E402

ENV_IDS = ["MountainCar-v0", "CartPole-v1", "Acrobot-v1", "Pendulum-v1"]


def episode_states(env: gym.Env, renderer, count: int, seed: int = 0) -> list[np.ndarray]:
    """Snapshots of ``count`` consecutive steps of random-action episodes."""
    env.reset(seed=seed)
    env.action_space.seed(seed)
    states = []
    while len(states) < count:
        states.append(renderer.state_of(env))
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    return states


def set_state(env: gym.Env, state: np.ndarray) -> None:
    unwrapped = env.unwrapped
    if isinstance(unwrapped, gym.envs.classic_control.PendulumEnv):
        unwrapped.state = state[:2].copy()
        unwrapped.last_u = None if np.isnan(state[2]) else state[2]
    else:
        unwrapped.state = state.copy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'env':16s} {'pygame':>8s} {'numpy b1':>9s} {'b64 new':>8s} {'b64 reuse':>9s}   speedup b1 / b64 new / b64 reuse")
    for env_id in ENV_IDS:
        env = gym.make(env_id, render_mode="rgb_array")
        renderer = renderer_for(env)
        states = episode_states(env, renderer, args.frames)
        batch = np.stack(states)
        out = renderer.render(batch[:64])
        best = {"pygame": np.inf, "b1": np.inf, "b64": np.inf, "reuse": np.inf}
        for _ in range(args.repeats):
            start = time.perf_counter()
            for state in states:
                set_state(env, state)
                env.render()
            best["pygame"] = min(best["pygame"], time.perf_counter() - start)
            start = time.perf_counter()
            for state in states:
                renderer.render(state[None])
            best["b1"] = min(best["b1"], time.perf_counter() - start)
            start = time.perf_counter()
            for i in range(0, len(batch) - 63, 64):
                renderer.render(batch[i : i + 64])
            best["b64"] = min(best["b64"], time.perf_counter() - start)
            start = time.perf_counter()
            for i in range(0, len(batch) - 63, 64):
                renderer.render(batch[i : i + 64], out=out)
            best["reuse"] = min(best["reuse"], time.perf_counter() - start)
        ms = {key: value / (len(states) // 64 * 64 if key in ("b64", "reuse") else len(states)) * 1e3 for key, value in best.items()}
        ratios = " / ".join(f"{ms['pygame'] / ms[key]:5.1f}x" for key in ("b1", "b64", "reuse"))
        print(f"{env_id:16s} {ms['pygame']:8.3f} {ms['b1']:9.3f} {ms['b64']:8.3f} {ms['reuse']:9.3f}   {ratios}")
        env.close()


if __name__ == "__main__":
    main()
