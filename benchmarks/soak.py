"""Soak: a watched and recorded MountainCar loop in one real IPython kernel, for minutes.

    python benchmarks/soak.py [--minutes 10] [--every 10]

Every ``--every`` seconds the kernel prints its resident memory, threads, open file descriptors
and child processes; at the end the script prints the table and the RSS growth after warm-up
(the first minute), which should be flat: frames stream and videos are written, nothing piles up.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "kernel"))

LOOP = """
import os, time, psutil, gymnasium as gym, gymview
me = psutil.Process()
env = gymview.watch(gym.make("MountainCar-v0", render_mode="rgb_array"), record={folder!r})
obs, _ = env.reset(seed=0)
start = next_report = time.perf_counter()
steps = 0
while time.perf_counter() - start < {seconds}:
    obs, _, terminated, truncated, _ = env.step(2 if obs[1] >= 0 else 0)  # reaches the goal
    steps += 1
    if terminated or truncated:
        obs, _ = env.reset()
    if time.perf_counter() >= next_report:
        next_report += {every}
        print("SOAK", round(time.perf_counter() - start), me.memory_info().rss // 2**20, me.num_threads(),
              me.num_fds(), len(me.children(recursive=True)), steps, env.view.stats["frames_sent"], flush=True)
env.close()
print("VIDEOS", len(os.listdir({folder!r})))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between reports")
    args = parser.parse_args()
    from conftest import running_kernel

    with tempfile.TemporaryDirectory() as folder, running_kernel(str(REPO)) as kernel:
        code = LOOP.format(folder=folder, seconds=args.minutes * 60, every=args.every)
        result = kernel.run(code, timeout=args.minutes * 60 + 300)
    rows = [list(map(int, line.split()[1:])) for line in result.stdout.splitlines() if line.startswith("SOAK")]
    print("| s | RSS MiB | threads | fds | children | steps | frames sent |\n|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(f"{value:,}" for value in row) + " |")
    print(result.stdout.strip().splitlines()[-1])
    warm = [row for row in rows if row[0] >= 60] or rows
    print(f"RSS after warm-up: {warm[0][1]} MiB at {warm[0][0]} s, {warm[-1][1]} MiB at {warm[-1][0]} s "
          f"({warm[-1][1] - warm[0][1]:+d} MiB); peak {max(row[1] for row in rows)} MiB")


if __name__ == "__main__":
    main()
