"""Per-frame cost of gymnasium's pygame rendering vs gymview's vectorized numpy renderers.

    python benchmarks/renderers.py [--frames 256] [--repeats 5]
    python benchmarks/renderers.py --mujoco [--rounds 15]

For each env, the states of real episodes (random actions) are drawn three ways, interleaved so
that load from other processes hits all of them alike: ``env.render()`` one frame at a time,
``renderer.render`` one state at a time, and in batches of 64 (a new array each call, and
drawing into the previous call's array as the batch recorder does). Reported: the best of
``--repeats`` runs in ms per frame, and pygame's time divided by each.

``--mujoco``: what the live view's helper process spends on one MuJoCo frame (paint, downsample to
``max_size``, JPEG), the full-quality frame (as before the preview) against the preview drawn at the
shown size (``MujocoPainter(preview=True)``), alternating in rounds of 10 frames; medians of
``--rounds`` in ms per frame, with software OpenGL (``MUJOCO_GL``, osmesa unless set).
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


MUJOCO_IDS = ["HalfCheetah-v5", "Ant-v5", "Humanoid-v5"]


def mujoco_preview(rounds: int) -> None:
    """Median ms per frame of the helper's work: full quality then downsampled, against the preview."""
    import statistics

    from gymview.image.codec import encode_frame
    from gymview.image.frames import downsample
    from gymview.renderers import MujocoPainter

    print(f"MUJOCO_GL={os.environ['MUJOCO_GL']}; paint + downsample + JPEG (quality 80), ms per frame, median of {rounds} rounds")
    print(f"{'env':16s} {'size':>8s} {'max_size':>8s} {'full':>8s} {'preview':>8s} {'full / preview':>15s}")
    for env_id in MUJOCO_IDS:
        env = gym.make(env_id, render_mode="rgb_array")
        env.reset(seed=0)
        env.action_space.seed(0)
        env.render()
        painter = MujocoPainter.for_env(env, preview=True)
        states = []
        for _ in range(10):
            env.step(env.action_space.sample())
            states.append(painter.frame_of(env).state)
        for max_size in (512, 256):
            def helper_ms(preview: bool) -> float:
                start = time.perf_counter()
                for state in states:
                    frame = painter.paint(state, max_size=max_size if preview else None)
                    encode_frame(downsample(frame, max_size), "jpeg", 80)
                return (time.perf_counter() - start) / len(states) * 1e3

            helper_ms(True), helper_ms(False)  # warm-up: the GL contexts, shaders, textures
            samples: dict[bool, list[float]] = {True: [], False: []}
            for index in range(rounds):
                for preview in ((True, False) if index % 2 else (False, True)):
                    samples[preview].append(helper_ms(preview))
            full, preview = statistics.median(samples[False]), statistics.median(samples[True])
            size = f"{painter.width}x{painter.height}"
            print(f"{env_id:16s} {size:>8s} {max_size:8d} {full:8.1f} {preview:8.1f} {full / preview:14.1f}x")
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--mujoco", action="store_true", help="the MuJoCo preview against full-quality frames instead")
    parser.add_argument("--rounds", type=int, default=15, help="--mujoco: alternating rounds of 10 frames each")
    args = parser.parse_args()
    if args.mujoco:
        os.environ.setdefault("MUJOCO_GL", "osmesa")
        os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])
        mujoco_preview(args.rounds)
        return
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
