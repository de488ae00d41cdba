"""Scenes drawn by the page against pictures made in the kernel, with the page open, side by side in one run.

    python benchmarks/scene_view.py [--rounds 20] [--fps 60] [--links 0,1] [--envs CartPole-v1,HalfCheetah-v5]

Each env is watched twice in one JupyterLab notebook open in Chromium (on the same cores as the kernel):
with draw="page" (the page draws each frame from its state: js/scene.js) and with draw="kernel" (the
helper process draws, shrinks and encodes a picture: H.264 to this page). Each watched env is compared
with its own inner env stepped without gymview's wrapper, in short alternating slices (watched, plain,
plain again, then the reverse order; benchmarks/browser_loop.py): the median of watched / plain per
round is the loop ratio, the median of plain again / plain the noise floor; the neighbour floor is the plain
loop beside processes that keep as many cores busy as the page and the rest did (benchmarks/browser_loop.py).
Per run: the ratio and floors, frames/s sent and drawn by the page after the warm-up (which lasts until the page
draws: it gets the scene and its modules first), the bytes of each frame's data and the bytes on the wire per
frame after the warm-up (Jupyter's envelope and the acks' busy/idle messages included, measured at the
proxy), and what the frames went as. ``--links``: 0 is localhost (through the proxy, unlimited), 1 is
1 Mbit/s each way with 40 ms of latency (tests/browser/slow_link.py). ``--apart`` holds the kernel on one
CPU (with its helper process) and the rest on another, checked every 0.5 s: what the page costs the loop
beside the share of the cores it takes.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import threading

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "kernel"))
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO / "benchmarks"))

from browser_loop import SETUP, parse  # noqa: E402

MAKE = {
    "CartPole-v1": ('gym.make("CartPole-v1", render_mode="rgb_array")', 0.25),
    "HalfCheetah-v5": ('gym.make("HalfCheetah-v5", render_mode="rgb_array")', 0.5),
    "CarRacing-v3": ('gym.make("CarRacing-v3", render_mode="rgb_array")', 0.5),
}

WARM_UP = """
def until_drawn(env, frames=10, timeout=120):
    # the page has the scene and its modules (three.js takes 4.4 s at 1 Mbit/s) and draws: it acks
    env.reset(seed=0)
    started = time.perf_counter()
    while env.view.stats["last_acked_seq"] < frames and time.perf_counter() - started < timeout:
        run_slice(env, 0.25)
"""

REPORT = """
stats = watched[{key!r}].view.stats
print("SCENE", stats["frames_sent"], stats["bytes_sent"], stats["sent_as"], flush=True)
"""


def cells(runs: list[tuple[str, str]], rounds: int, fps: float) -> list[str]:
    """Set-up, then per (env, draw) one cell that watches it, pairs it with its plain env and reports."""
    per_run = []
    for index, (name, draw) in enumerate(runs):
        make, slice_s = MAKE[name]
        key = f"{name} {draw} {index}"
        per_run.append(
            f"watched[{key!r}] = gymview.watch({make}, fps={fps}, draw={draw!r}, title={key!r})\n"
            f"until_drawn(watched[{key!r}])\n"
            f"paired({name!r}, watched[{key!r}], {rounds}, {slice_s})\n" + REPORT.format(key=key)
        )
    return [SETUP + WARM_UP, *per_run, "for env in watched.values():\n    env.close()\nprint('CLOSED')"]


def drawn_in(page, cell: int) -> int:
    return page.evaluate(
        "(i) => Number(window.jupyterapp.shell.currentWidget.content.widgets[i].node"
        ".querySelector('.gymview')?.dataset.framesDrawn || 0)", cell)


def children(pid: int) -> list[int]:
    """Every descendant of ``pid``."""
    parents: dict[int, list[int]] = {}
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def keep_apart(stop: threading.Event) -> None:
    """Until ``stop``: every 0.5 s the kernels and their helper processes on this machine's first CPU, and
    everything else this benchmark started (the server, Chromium, the proxy and this process) on its last."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("--apart: this process may run on one CPU only; nothing is kept apart", flush=True)
        return
    while not stop.wait(0.5):
        started = [os.getpid(), *children(os.getpid())]
        kernels = [pid for pid in started if b"ipykernel_launcher" in _command_line(pid)]
        # a neighbour (browser_loop's floor) stands in for the page: it goes with the page
        kernel_side = {pid for pid in set(kernels).union(*(children(pid) for pid in kernels))
                       if b"gymview-neighbour" not in _command_line(pid)}
        for pid in started:
            try:
                for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
                    os.sched_setaffinity(int(task.name), {cpus[0] if pid in kernel_side else cpus[-1]})
            except OSError:  # a process or thread that ended meanwhile
                continue


def _command_line(pid: int) -> bytes:
    try:
        return pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def measure(links: list[float], names: list[str], rounds: int, fps: float) -> list[dict]:
    from lab import chromium_page, notebook_of, open_notebook, running_server, start_cell, wait_for_output
    from slow_link import SlowLink

    runs = [(name, draw) for name in names for draw in ("page", "kernel")]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "root"
        root.mkdir()
        source = cells([run for _ in links for run in runs], rounds, fps)
        (root / "scenes.ipynb").write_text(json.dumps(notebook_of(source)))
        with running_server(root, "lab") as server, SlowLink(server.port) as link, chromium_page() as page:
            open_notebook(page, server, "scenes.ipynb", port=link.port)
            start_cell(page, 0)
            wait_for_output(page, 0, "READY", timeout_ms=120_000)
            for index, ((name, draw), rate) in enumerate(((run, rate) for rate in links for run in runs), 1):
                link.limit(rate * 1e6 if rate else None, 0.040 if rate else 0.0)
                start_cell(page, index)
                page.wait_for_function(
                    """(i) => { const el = window.jupyterapp.shell.currentWidget.content.widgets[i].node
                                .querySelector('.gymview');
                                if (!el) return false; el.scrollIntoView({block: 'center'}); return true; }""",
                    arg=index, timeout=120_000,
                )
                warm = wait_for_output(page, index, "WARM", timeout_ms=300_000)
                carried_warm, drawn_warm = link.down.carried, drawn_in(page, index)
                text = wait_for_output(page, index, "SCENE", timeout_ms=(rounds * 3 * 2 + 300) * 1000)
                carried = link.down.carried - carried_warm
                result = parse(text)
                sent_warm = int(next(line for line in warm.splitlines() if line.startswith("WARM")).split()[1])
                _, sent, data_bytes, sent_as = next(line for line in text.splitlines() if line.startswith("SCENE")).split()
                result.update(
                    env=name, draw=draw, link=rate, sent_as=sent_as, data_bytes=int(data_bytes) / max(int(sent), 1),
                    wire_bytes=carried / max(int(sent) - sent_warm, 1),
                    drawn_fps=(drawn_in(page, index) - drawn_warm) / result["watched_s"],
                )
                results.append(result)
                print(f"{name} draw={draw} link={rate or 'localhost'}: {result['ratio']:.3f}x, "
                      f"{result['fps']:.1f} sent / {result['drawn_fps']:.1f} drawn frames/s, "
                      f"the plain loop {result['plain']:,.0f} steps/s", flush=True)
            link.limit(None, 0.0)
            start_cell(page, len(source) - 1)
            wait_for_output(page, len(source) - 1, "CLOSED", timeout_ms=120_000)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20, help="alternating slices per run")
    parser.add_argument("--fps", type=float, default=60.0, help="the views' fps")
    parser.add_argument("--links", default="0,1", help="Mbit/s each way, 0 for localhost (unlimited)")
    parser.add_argument("--envs", default="CartPole-v1,HalfCheetah-v5", help=f"comma-separated, of {', '.join(MAKE)}")
    parser.add_argument("--apart", action="store_true",
                        help="hold the kernel on the first CPU and the server and Chromium on the last (Linux)")
    args = parser.parse_args()
    stop = threading.Event()
    if args.apart:
        threading.Thread(target=keep_apart, args=(stop,), daemon=True).start()
    try:
        results = measure([float(x) for x in args.links.split(",")], args.envs.split(","), args.rounds, args.fps)
    finally:
        stop.set()
    print(f"\nwatched / plain, medians of {args.rounds} rounds of alternating slices, fps={args.fps:g}, the page open:\n")
    print("| link | env | draw | loop ratio | noise floor | neighbour floor (cores) | frames/s sent | frames/s drawn "
          "| data bytes/frame | bytes/frame on the wire | sent as |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        link = f"{r['link']:g} Mbit/s" if r["link"] else "localhost"
        print(f"| {link} | {r['env']} | {r['draw']} | {r['ratio']:.3f}x | {r['floor']:.3f}x "
              f"| {r['neighbour']:.3f}x ({r['cores']:.2f}) | {r['fps']:.1f} "
              f"| {r['drawn_fps']:.1f} | {r['data_bytes']:,.0f} | {r['wire_bytes']:,.0f} | {r['sent_as']} |")


if __name__ == "__main__":
    main()
