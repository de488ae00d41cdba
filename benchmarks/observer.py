"""What a watched loop pays for its view when frames are big or the view's helper process dies.

    python benchmarks/observer.py [--rounds 10] [--slice 0.5] [--no-browser]

Two cells of one notebook, run in JupyterLab with the page open in Chromium (each view scrolled into sight),
then in a kernel with no front-end:
  1920x1080  a CartPole whose ``render()`` returns 1920x1080 frames (a camera, a high-resolution MuJoCo view),
             watched with ``draw="kernel"``, against its inner env stepped without gymview's wrapper;
  killed     a watched CartPole whose helper process is killed (SIGKILL, as the OOM killer does) at the start of
             two of its slices, against its inner env.
Slices alternate in the kernel (watched, plain, plain again; then the reverse order). Printed per cell: the loop
ratio (median of watched / plain per round), the noise floor (median of plain again / plain), the worst single
step watched and plain (every step timed, in both), frames/s sent and (page open) drawn, and how the loop ended
(``ran on``, or the exception that stopped it). Run it from a checkout of the code to measure: a git worktree
of an older commit measures that commit.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "kernel"))
sys.path.insert(0, str(REPO / "tests" / "browser"))

SETUP = """
import json, signal, statistics, time, psutil, gymnasium as gym, numpy as np, gymview

class Big(gym.Wrapper):
    # an env whose render() returns 1920x1080 frames, each a little different
    def __init__(self, env):
        super().__init__(env)
        self.frame = np.random.default_rng(0).integers(0, 255, (1080, 1920, 3), np.uint8)
    def render(self):
        self.frame[:8] += 1
        return self.frame

def kill_helpers():
    for helper in psutil.Process().children():
        if helper.status() != psutil.STATUS_ZOMBIE and "encoder_child" in " ".join(helper.cmdline()):
            helper.send_signal(signal.SIGKILL)

def run_slice(env, seconds):
    worst, steps, start = 0.0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        began = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
        worst = max(worst, time.perf_counter() - began)
        steps += 1
    return steps / (time.perf_counter() - start), worst

def paired(name, watched, rounds, slice_s, kills=()):
    slots = {"watched": watched, "plain": watched.env, "plain again": watched.env}
    watched.reset(seed=0)
    run_slice(watched, 1.0)  # warm-up: the helper process, the first frames, the page's first draws
    sent = watched.view.stats["frames_sent"]
    rates = {slot: [] for slot in slots}
    worst = {slot: 0.0 for slot in slots}
    ended = "ran on"
    for index in range(rounds):
        for slot in (list(slots) if index % 2 else list(slots)[::-1]):
            if slot == "watched" and index in kills:
                kill_helpers()
            try:
                rate, slowest = run_slice(slots[slot], slice_s)
            except Exception as error:  # what the loop would have died of
                ended = type(error).__name__
                break
            rates[slot].append(rate)
            worst[slot] = max(worst[slot], slowest)
        if ended != "ran on":
            break
    rounds_run = min(len(r) for r in rates.values())
    pairs = list(zip(rates["watched"], rates["plain"], rates["plain again"]))
    result = {
        "name": name, "ended": ended, "rounds": rounds_run,
        "ratio": statistics.median(w / p for w, p, _ in pairs) if pairs else None,
        "floor": statistics.median(a / p for _, p, a in pairs) if pairs else None,
        "worst_watched_ms": worst["watched"] * 1000, "worst_plain_ms": max(worst["plain"], worst["plain again"]) * 1000,
        "fps": (watched.view.stats["frames_sent"] - sent) / max(rounds_run * slice_s, slice_s),
    }
    print("RESULT", json.dumps(result), flush=True)
watched = {}
print("READY")
"""

CELLS = {
    "1920x1080": ('Big(gym.make("CartPole-v1", render_mode="rgb_array"))', ()),
    "killed": ('gym.make("CartPole-v1", render_mode="rgb_array")', (2, 5)),
}


def cells(rounds: int, slice_s: float) -> list[str]:
    per_cell = [
        f"watched[{name!r}] = gymview.watch({make}, draw='kernel')\n"
        f"paired({name!r}, watched[{name!r}], {rounds}, {slice_s}, kills={kills!r})"
        for name, (make, kills) in CELLS.items()
    ]
    return [SETUP, *per_cell, CLOSE]


CLOSE = "for env in watched.values():\n    env.close()\nprint('CLOSED')"


def parse(text: str) -> dict:
    return json.loads(next(line for line in text.splitlines() if line.startswith("RESULT")).split(" ", 1)[1])


def in_kernel(rounds: int, slice_s: float, make_cells=None) -> dict[str, dict]:
    """Each cell of ``make_cells(rounds, slice_s)`` (by default this benchmark's: setup, one cell a result, close)
    in one kernel with no front-end; each result cell's RESULT line."""
    from conftest import running_kernel

    results = {}
    with running_kernel(str(REPO)) as kernel:
        source = (make_cells or cells)(rounds, slice_s)
        kernel.run(source[0])
        for cell in source[1:-1]:
            result = parse(kernel.run(cell, timeout=rounds * 3 * slice_s * 4 + 300).stdout)
            results[result["name"]] = result
        kernel.run(source[-1])
    return results


def in_browser(rounds: int, slice_s: float, make_cells=None) -> dict[str, dict]:
    """The same cells in JupyterLab with the page open in Chromium, each view scrolled into sight; the frames/s the
    page drew besides."""
    from lab import chromium_page, notebook_of, open_notebook, running_server, show_view, start_cell, wait_for_output

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "root"
        root.mkdir()
        source = (make_cells or cells)(rounds, slice_s)
        (root / "bench.ipynb").write_text(json.dumps(notebook_of(source)))
        with running_server(root, "lab") as server, chromium_page() as page:
            open_notebook(page, server, "bench.ipynb")
            start_cell(page, 0)
            wait_for_output(page, 0, "READY", timeout_ms=120_000)
            for index in range(1, len(source) - 1):
                start_cell(page, index)
                show_view(page, index)
                output = wait_for_output(page, index, "RESULT", timeout_ms=int(rounds * 3 * slice_s * 4e3) + 300_000)
                result = parse(output)
                results[result["name"]] = result
                drawn = page.evaluate(
                    "(i) => Number(window.jupyterapp.shell.currentWidget.content.widgets[i].node"
                    ".querySelector('.gymview').dataset.framesDrawn || 0)",
                    index,
                )
                shown = result.get("seconds_shown", result["rounds"] * slice_s)  # a cell may say how long frames came
                result["drawn_fps"] = drawn / max(shown, slice_s)
            start_cell(page, len(source) - 1)
            wait_for_output(page, len(source) - 1, "CLOSED", timeout_ms=120_000)
    return results


def main(make_cells=None, description: str = __doc__) -> None:
    """Parse the command line, run ``make_cells``' cells (by default this benchmark's) with the page open and in a
    kernel alone, and print the table."""
    parser = argparse.ArgumentParser(description=description.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--slice", type=float, default=0.5)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    runs = [("kernel only", in_kernel(args.rounds, args.slice, make_cells))]
    if not args.no_browser:
        runs.insert(0, ("page open", in_browser(args.rounds, args.slice, make_cells)))
    print(f"\n{REPO}: watched / plain, medians of {args.rounds} rounds of {args.slice} s slices\n")
    print("| cell | where | loop ratio | noise floor | worst step watched / plain | frames/s sent (drawn) | the loop |")
    print("|---|---|---:|---:|---:|---:|---|")
    for where, results in runs:
        for name, r in results.items():
            ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}x"
            floor = "-" if r["floor"] is None else f"{r['floor']:.3f}x"
            drawn = f" ({r['drawn_fps']:.1f})" if "drawn_fps" in r else ""
            print(f"| {name} | {where} | {ratio} | {floor} | {r['worst_watched_ms']:.1f} / {r['worst_plain_ms']:.1f} ms "
                  f"| {r['fps']:.1f}{drawn} | {r['ended']} |")


if __name__ == "__main__":
    main()
