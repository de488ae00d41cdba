"""What the view's controls cost a watched loop, and how fast a click acts on it.

    python benchmarks/controls.py [--rounds 40] [--clicks 20] [--no-browser]

1. A watched CartPole loop with the controls' check (one attribute read a step) against the same
   wrapper without it, in 0.25 s slices that alternate in one process; the ratio of two identical
   loops is the noise floor. (No notebook here, so no frames are sent: this isolates the check.)
2. In real JupyterLab with Chromium: a blocking watched loop; Pause is clicked ``--clicks`` times
   (Play between), and each click's latency is from the page sending it (the button's click
   event, epoch ms) to the last step the kernel ran before holding (epoch s, same machine).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from watched_loops import steps_in, without_bookkeeping  # noqa: E402 - benchmarks/ is on the path from here


def paired_overhead(rounds: int, slice_s: float = 0.25) -> tuple[float, float]:
    """(with check / without) and (without / without again) medians of alternating slices."""
    import gymnasium as gym

    import gymview

    def make(checked):  # without the check: WatchedEnv.step as it was before the controls existed
        env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), display=False)
        if not checked:
            without_bookkeeping(env, controls=False)
        env.reset(seed=0)
        return env

    checked, plain, plain_again = make(True), make(False), make(False)
    ratios, floors = [], []
    for _ in range(rounds):
        a, b, c = (steps_in(env, slice_s) for env in (plain, checked, plain_again))
        ratios.append(b / a)
        floors.append(c / a)
    return statistics.median(ratios), statistics.median(floors)


def click_latency(tmp: pathlib.Path, clicks: int) -> list[float]:
    """Milliseconds from each Pause click leaving the page to the kernel's last step before it held."""
    from lab import chromium_page, notebook_of, open_notebook, running_server, start_cell, wait_for_output
    from test_controls_browser import BLOCKING  # the browser test's blocking watched loop

    root = tmp / "root"
    root.mkdir(parents=True, exist_ok=True)
    (root / "latency.ipynb").write_text(json.dumps(notebook_of([BLOCKING])))
    pauses = []
    with running_server(root, "lab") as server, chromium_page() as page:
        open_notebook(page, server, "latency.ipynb")
        start_cell(page, 0)
        page.wait_for_function("() => Number(document.querySelector('.gymview')?.dataset.framesDrawn || 0) > 5",
                               timeout=60_000)
        view = page.locator(".gymview").first
        for _ in range(clicks):
            view.get_by_role("button", name="Pause").click()
            pauses.append(float(view.get_attribute("data-last-click-at")) / 1000)
            page.wait_for_function("() => document.querySelector('.gymview').dataset.state === 'paused'", timeout=30_000)
            page.wait_for_timeout(300)
            view.get_by_role("button", name="Play").click()
            page.wait_for_function("() => document.querySelector('.gymview').dataset.state === 'running'", timeout=30_000)
            page.wait_for_timeout(300)
        view.get_by_role("button", name="Stop").click()
        wait_for_output(page, 0, "Stopped")
    times = json.loads((root / "times.json").read_text())
    latencies = []
    for clicked in pauses:
        before_hold = [t for t in times if clicked - 1 < t < clicked + 1]
        # the hold: the first gap of over 0.2 s in the steps after the click
        last = next((a for a, b in zip(before_hold, before_hold[1:]) if a >= clicked and b - a > 0.2), None)
        if last is not None:
            latencies.append((last - clicked) * 1000)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=40, help="alternating slice rounds (default 40)")
    parser.add_argument("--clicks", type=int, default=20, help="Pause clicks in the browser (default 20)")
    parser.add_argument("--no-browser", action="store_true", help="skip the JupyterLab latency part")
    args = parser.parse_args()
    ratio, floor = paired_overhead(args.rounds)
    print(f"watched loop with the controls' check / without: {ratio:.3f} (noise floor, identical loops: {floor:.3f})")
    if not args.no_browser:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            latencies = sorted(click_latency(pathlib.Path(tmp), args.clicks))
        p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
        print(f"Pause click -> loop held, JupyterLab, blocking cell, {len(latencies)} clicks: "
              f"median {statistics.median(latencies):.1f} ms, p95 {p95:.1f} ms, max {latencies[-1]:.1f} ms")


if __name__ == "__main__":
    main()
