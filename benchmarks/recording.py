"""Recording benchmark: gymnasium's RecordVideo vs an imageio writer loop vs gymview.RecordVideo.

Part 1, MountainCar-v0 with the goal-reaching policy (push in the direction of the velocity), one
video file per episode, full resolution (600x400). gymview.RecordVideo runs twice: as it comes
(classic-control frames drawn by gymview's numpy renderers) and with ``fast_render=False``
(frames from ``env.render()``, pygame, like gymnasium's), so the renderer's share is visible.
Prints frames/s end to end (stepping, rendering, encoding, files closed), wall time and peak
resident memory, with ratios against gymnasium's RecordVideo. Part 2, one 5000-frame CartPole episode (termination ignored, so the
episode goes on): peak resident memory of each recorder.

Every variant runs in a fresh subprocess, so each peak RSS is that variant's own (the Python
process; gymnasium's and imageio's encode in an ffmpeg child, whose memory does not grow with the
episode; gymview's in-process). "CPU s" is user + system time of the variant and its ffmpeg
children: on a shared machine it says more than the wall time about what a variant costs.

    python benchmarks/recording.py               # 100 episodes
    python benchmarks/recording.py --episodes 10 # quick mode
    python benchmarks/recording.py --repeats 3   # interleaved runs, medians
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = {
    "gymnasium": "gymnasium.wrappers.RecordVideo (moviepy, frames kept per episode)",
    "imageio": "imageio writer loop (imageio-ffmpeg, encoded in the loop)",
    "gymview": "gymview.RecordVideo (numpy renderer, 32 states a call, PyAV)",
    "gymview-pygame": "gymview.RecordVideo(fast_render=False) (frames from pygame)",
}


def goal_policy(observation) -> int:
    return 2 if observation[1] >= 0 else 0


def mountain_car_episodes(variant: str, episodes: int, folder: str) -> int:
    """Record ``episodes`` MountainCar episodes, one file each; return the number of frames."""
    import gymnasium as gym

    env = gym.make("MountainCar-v0", render_mode="rgb_array")
    frames = 0
    if variant == "imageio":
        import imageio.v2 as imageio

        for episode in range(episodes):
            observation, _ = env.reset(seed=episode)
            with imageio.get_writer(f"{folder}/episode-{episode}.mp4", fps=env.metadata["render_fps"]) as writer:
                writer.append_data(env.render())
                frames += 1
                done = False
                while not done:
                    observation, _, terminated, truncated, _ = env.step(goal_policy(observation))
                    writer.append_data(env.render())
                    frames += 1
                    done = terminated or truncated
        env.close()
        return frames
    if variant == "gymnasium":
        from gymnasium.wrappers import RecordVideo
    else:
        from gymview import RecordVideo
    options = {"fast_render": False} if variant == "gymview-pygame" else {}
    env = RecordVideo(env, folder, episode_trigger=lambda episode: True, disable_logger=True, **options)
    for episode in range(episodes):
        observation, _ = env.reset(seed=episode)
        frames += 1
        done = False
        while not done:
            observation, _, terminated, truncated, _ = env.step(goal_policy(observation))
            frames += 1
            done = terminated or truncated
    env.close()
    return frames


def long_episode(variant: str, length: int, folder: str) -> int:
    """One CartPole episode of ``length`` frames (the pole is put back up instead of ending it)."""
    import gymnasium as gym

    class NeverEnds(gym.Wrapper):
        def step(self, action):
            observation, reward, terminated, truncated, info = self.env.step(action)
            if terminated or truncated:
                observation, info = self.env.reset()
            return observation, reward, False, False, info

    env = NeverEnds(gym.make("CartPole-v1", render_mode="rgb_array", max_episode_steps=None))
    if variant == "gymnasium":
        from gymnasium.wrappers import RecordVideo
    else:
        from gymview import RecordVideo
    env = RecordVideo(env, folder, episode_trigger=lambda episode: True, disable_logger=True)
    env.reset(seed=0)
    for step in range(length - 1):
        env.step(step % 2)
    env.close()
    return length


def run_variant(arguments: argparse.Namespace) -> None:
    """Child process: run one variant, print its measurements as JSON."""
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        if arguments.long:
            frames = long_episode(arguments.variant, arguments.long, folder)
        else:
            frames = mountain_car_episodes(arguments.variant, arguments.episodes, folder)
        wall = time.perf_counter() - start
        files = len(list(Path(folder).glob("*.mp4")))
    print(json.dumps({
        "frames": frames,
        "files": files,
        "wall_s": wall,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "cpu_s": sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for field in ("ru_utime", "ru_stime")),
    }))  # fmt: skip


def measure(variant: str, *extra: str) -> dict:
    command = [sys.executable, __file__, "--variant", variant, *extra]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=100, help="MountainCar episodes per variant (default 100)")
    parser.add_argument("--long-frames", type=int, default=5000, help="length of the long episode (default 5000)")
    parser.add_argument("--repeats", type=int, default=1, help="interleaved runs of part 1; medians are printed")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--long", type=int, default=0, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.variant:
        run_variant(arguments)
        return

    print(f"MountainCar-v0, {arguments.episodes} episodes, goal-reaching policy, one 600x400 video per episode")
    print(f"{'variant':<62} {'frames':>7} {'files':>5} {'wall s':>7} {'frames/s':>9} {'x gym':>6} {'peak RSS MB':>11} {'CPU s':>6}")
    runs: dict[str, list[dict]] = {name: [] for name in VARIANTS}
    for _ in range(arguments.repeats):  # interleaved, so a slow spell of the machine hits every variant
        for name in VARIANTS:
            runs[name].append(measure(name, "--episodes", str(arguments.episodes)))
    results = {name: {key: statistics.median(r[key] for r in rows) for key in rows[0]} for name, rows in runs.items()}
    base = results["gymnasium"]["frames"] / results["gymnasium"]["wall_s"]
    for name, r in results.items():
        rate = r["frames"] / r["wall_s"]
        print(
            f"{VARIANTS[name]:<62} {r['frames']:>7.0f} {r['files']:>5.0f} {r['wall_s']:>7.1f} {rate:>9.0f} "
            f"{rate / base:>6.2f} {r['peak_rss_mb']:>11.0f} {r['cpu_s']:>6.1f}"
        )
    if arguments.repeats > 1:
        ratios = [a["wall_s"] / b["wall_s"] for a, b in zip(runs["gymnasium"], runs["gymview"])]
        print(f"gymview / gymnasium frames/s, run by run: {', '.join(f'{r:.2f}x' for r in ratios)}")
    print(f"\nOne CartPole episode of {arguments.long_frames} frames (600x400), peak resident memory")
    print(f"{'variant':<62} {'wall s':>7} {'peak RSS MB':>11} {'CPU s':>6}")
    for name in ("gymnasium", "gymview"):
        r = measure(name, "--long", str(arguments.long_frames))
        print(f"{VARIANTS[name]:<62} {r['wall_s']:>7.1f} {r['peak_rss_mb']:>11.0f} {r['cpu_s']:>6.1f}")


if __name__ == "__main__":
    main()
