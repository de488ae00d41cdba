"""A rollout saved as one HTML file and played in Chromium from disk: how big the file is, how soon it draws, and how
many frames a second the page draws while it plays.

    python benchmarks/rollout_player.py [--steps 1000] [--envs 1,4] [--env HalfCheetah-v5] [--seconds 5]

For each count of envs: a seeded random walk of ``--steps`` steps per env (gymnasium, MuJoCo), its positions played
by ``show_rollout(...).save()`` at 60 frames a second (above what a page on this machine draws, so that the page's
own pace shows); printed: the file's size and its bytes per frame beyond the player's bundle (states and rewards),
the seconds from opening the file to its first drawn frame, and frames drawn a second (median of three plays of
``--seconds``; in software WebGL here, each env of a grid a draw of its own).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "browser"), str(REPO / "tests" / "helpers")]

from lab import chromium_page  # noqa: E402
from random_rollouts import random_rollout  # noqa: E402

import gymview  # noqa: E402
from gymview._internal import frontend  # noqa: E402

DRAWN = "() => Number(document.querySelector('.gymview-rollout').dataset.drawn ?? 0)"


def played_rate(page, seconds: float) -> float:
    page.keyboard.press("Home")
    before = page.evaluate(DRAWN)
    page.keyboard.press("Space")
    time.sleep(seconds)
    after = page.evaluate(DRAWN)
    page.keyboard.press("Space")
    return (after - before) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--envs", default="1,4")
    parser.add_argument("--env", default="HalfCheetah-v5")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    bundle = len(frontend.ROLLOUT_FILE_ESM.encode()) + len(frontend.CSS.encode())
    folder = pathlib.Path(tempfile.mkdtemp(prefix="gymview-rollout-"))
    print(f"{args.env}, {args.steps} steps; the player's bundle and style: {bundle / 1e3:.0f} KB")
    print("envs | file | bytes/frame (data) | first drawn | frames/s drawn (at fps=60)")
    for envs in [int(n) for n in args.envs.split(",")]:
        env, qpos, rewards = random_rollout(args.env, args.steps, envs)
        started = time.perf_counter()
        player = gymview.show_rollout(env, qpos if envs > 1 else qpos[:, 0], values={"reward": rewards}, fps=60)
        made = time.perf_counter() - started
        path = player.save(folder / f"{envs}.html")
        size = path.stat().st_size
        with chromium_page() as page:
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
            opened = time.perf_counter()
            page.goto(path.as_uri())
            page.wait_for_function(f"() => ({DRAWN})() > 0", timeout=120_000)
            first = time.perf_counter() - opened
            page.locator(".gymview-rollout").focus()
            rates = [played_rate(page, args.seconds) for _ in range(3)]
        print(f"{envs} | {size / 1e6:.2f} MB | {(size - bundle) / args.steps:.0f} | {first:.2f} s | "
              f"{statistics.median(rates):.1f} ({', '.join(f'{r:.1f}' for r in rates)}); show_rollout took {made:.2f} s")


if __name__ == "__main__":
    main()
