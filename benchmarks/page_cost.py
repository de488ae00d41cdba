"""Where the CPU goes for each frame the page draws: the kernel's loop, the kernel's other threads, the
Jupyter server and Chromium, with a watched env running in JupyterLab.

    python benchmarks/page_cost.py [--seconds 15] [--runs 3] [--envs CartPole-v1,HalfCheetah-v5] [--fps 60]

Each env is watched with draw="page" in one notebook open in Chromium (on the same cores as the
kernel) and run free for ``--seconds`` with a random policy, ``--runs`` times, each run after one of
its inner env, unwatched, for as long (the page open, its picture still). Around each run the
CPU time (user + system, /proc) of each process is read: the kernel's main thread (the loop), the
kernel's other threads (and each of them by name), the Jupyter server, and every Chromium process.
Prints the CPU milliseconds each part spent per frame the page drew, above what it spent in the
unwatched run (JupyterLab's own work for a busy kernel, the loop's stepping), and the medians. The
loop's thread runs for the same wall time in both runs, so its figure is the time it spent off a core or
waiting for the interpreter, less its own work on frames (negative when the waits are larger). CPU
time per frame moves less than wall-time ratios when other work shares the machine, so this is the
measure to compare when making frames cheaper; benchmarks/scene_view.py gives the loop's ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO / "benchmarks"))

from browser_loop import RUN_SLICE  # noqa: E402
from lab import chromium_page, notebook_of, open_notebook, running_server, start_cell, wait_for_output  # noqa: E402
from scene_view import WARM_UP, children  # noqa: E402

MAKE = {
    "CartPole-v1": 'gym.make("CartPole-v1", render_mode="rgb_array")',
    "HalfCheetah-v5": 'gym.make("HalfCheetah-v5", render_mode="rgb_array")',
}
TICK = os.sysconf("SC_CLK_TCK")

SETUP = (
    """
import os, time, threading
import gymnasium as gym, gymview
gymview.setup()
print("KERNEL", os.getpid(), threading.get_native_id(), flush=True)
def thread_names():
    return "THREADS " + " ".join(f"{t.native_id}={t.name.replace(' ', '_')}" for t in threading.enumerate())
"""
    + RUN_SLICE
    + WARM_UP
    + """
print("READY")
"""
)


def cpu_seconds(path: str) -> float:
    """utime + stime of a /proc/.../stat file, in seconds (0 when it is gone)."""
    try:
        fields = pathlib.Path(path).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def chromium_part(pid: int) -> str | None:
    """ "chromium <its --type>" (renderer, gpu-process...; "browser" for the main one), or None."""
    try:
        if "chrom" not in pathlib.Path(f"/proc/{pid}/comm").read_text():
            return None
        # Chromium rewrites its arguments as one string
        arguments = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
    except OSError:
        return None
    kinds = [a.split(b"=", 1)[1].decode() for a in arguments if a.startswith(b"--type=")]
    return f"chromium {kinds[0] if kinds else 'browser'}"


def kernel_threads(kernel: int) -> dict[int, float]:
    """CPU seconds of each of the kernel's threads, by native thread id."""
    tasks = pathlib.Path(f"/proc/{kernel}/task")
    return {int(task.name): cpu_seconds(f"{task}/stat") for task in tasks.iterdir()}


def reading(kernel: int, loop_thread: int, server: int) -> dict[str, float]:
    kernel_all = cpu_seconds(f"/proc/{kernel}/stat")
    loop = cpu_seconds(f"/proc/{kernel}/task/{loop_thread}/stat")
    server_own = cpu_seconds(f"/proc/{server}/stat")
    parts = {
        "loop": loop,
        "kernel, other threads": kernel_all - loop,
        "server": server_own,
        "chromium renderer": 0.0,
        "chromium gpu-process": 0.0,
        "chromium browser": 0.0,
        "chromium other": 0.0,
    }
    for pid in children(os.getpid()):
        part = chromium_part(pid)
        if part is not None:
            part = part if part in parts else "chromium other"
            parts[part] += cpu_seconds(f"/proc/{pid}/stat")
    return parts


def drawn(page, cell: int) -> int:
    return page.evaluate(
        "(i) => Number(window.jupyterapp.shell.currentWidget.content.widgets[i].node"
        ".querySelector('.gymview')?.dataset.framesDrawn || 0)",
        cell,
    )


def run_cell(page, cell: int, seconds: float, kernel: int, loop_thread: int, server: int) -> tuple[dict, dict, str]:
    """Run ``cell`` (a run_slice); the CPU seconds each part and each kernel thread took meanwhile, and its output."""
    threads_before = kernel_threads(kernel)
    before = reading(kernel, loop_thread, server)
    start_cell(page, cell)
    text = wait_for_output(page, cell, "RAN", int(seconds * 1000 * 4 + 60_000))
    after = reading(kernel, loop_thread, server)
    threads_after = kernel_threads(kernel)
    if "Error" in text:
        raise RuntimeError(text)
    names = dict(pair.split("=", 1) for pair in text.split("THREADS")[1].split())
    threads: dict[str, float] = {}  # by name: threads of one name (two views' watchers) add up
    for tid in threads_after:
        if tid != loop_thread:
            name = names.get(str(tid), f"thread {tid}")
            threads[name] = threads.get(name, 0.0) + threads_after[tid] - threads_before.get(tid, 0.0)
    return {part: after[part] - before[part] for part in after}, threads, text


def measure(names: list[str], runs: int, seconds: float, fps: float) -> dict[str, list[dict[str, float]]]:
    source = [SETUP]
    for name in names:  # a cell that makes the view, then per run a cell stepping the inner env and one the watched
        source.append(f"env = gymview.watch({MAKE[name]}, fps={fps}, draw='page')\nuntil_drawn(env)\nprint('WARM')")
        for _ in range(runs):
            source.append(f"print('RAN', run_slice(env.env, {seconds}), thread_names())")
            source.append(f"print('RAN', run_slice(env, {seconds}), thread_names())")
        source.append("env.close()\nprint('CLOSED')")
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "root"
        root.mkdir()
        (root / "cost.ipynb").write_text(json.dumps(notebook_of(source)))
        with running_server(root, "lab") as server, chromium_page() as page:
            open_notebook(page, server, "cost.ipynb")
            start_cell(page, 0)
            ready = wait_for_output(page, 0, "READY", 120_000)
            kernel, loop_thread = map(int, ready.split("KERNEL")[1].split()[:2])
            cell = 1
            for name in names:
                view_cell = cell
                start_cell(page, view_cell)
                warm = wait_for_output(page, view_cell, "WARM", 300_000)
                if "Error" in warm:
                    raise RuntimeError(warm)
                for _ in range(runs):
                    plain, plain_threads, _ = run_cell(page, cell + 1, seconds, kernel, loop_thread, server.process.pid)
                    drawn_before = drawn(page, view_cell)
                    watched, threads, text = run_cell(page, cell + 2, seconds, kernel, loop_thread, server.process.pid)
                    frames = max(drawn(page, view_cell) - drawn_before, 1)
                    cell += 2
                    # what each part spent for a frame drawn, above what it spent while the inner env ran unwatched
                    run = {part: (watched[part] - plain[part]) * 1000 / frames for part in watched}
                    run.update(frames_drawn_per_s=frames / seconds, steps_per_s=float(text.split("RAN")[1].split()[0]))
                    added = {
                        thread: (spent - plain_threads.get(thread, 0.0)) * 1000 / frames
                        for thread, spent in threads.items()
                    }
                    # the threads alive at the end of each run, by name: a thread that ended during a run (a view's
                    # watcher idles out after 10 s) is left out, where the process's total would count it in that run
                    run["kernel, other threads"] = sum(added.values())
                    results[name].append(run)
                    print(name, " ".join(f"{key}={value:.2f}" for key, value in run.items()), flush=True)
                    busiest = sorted(added.items(), key=lambda item: -item[1])[:5]
                    print("  the kernel's other threads:", ", ".join(f"{thread} {ms:.2f}" for thread, ms in busiest))
                    unwatched = sorted(plain_threads.items(), key=lambda item: -item[1])[:5]
                    print(
                        "  the same, CPU ms a second while the inner env ran:",
                        ", ".join(f"{thread} {spent * 1000 / seconds:.1f}" for thread, spent in unwatched),
                    )
                cell += 1
                start_cell(page, cell)
                wait_for_output(page, cell, "CLOSED", 120_000)
                cell += 1
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fps", type=float, default=60.0)
    parser.add_argument("--envs", default=",".join(MAKE))
    args = parser.parse_args()
    results = measure(args.envs.split(","), args.runs, args.seconds, args.fps)
    load = os.getloadavg()[0]
    print(
        f"\nCPU ms per frame drawn, above the same parts' while the inner env ran unwatched (the page open, its"
        f" picture still; medians of {args.runs} runs of {args.seconds:.0f} s each; load {load:.1f}):"
    )
    parts = list(next(iter(results.values()))[0])
    print("| env | " + " | ".join(parts) + " |")
    print("|---|" + "---:|" * len(parts))
    for name, runs in results.items():
        medians = [statistics.median(run[part] for run in runs) for part in parts]
        print(f"| {name} | " + " | ".join(f"{value:.2f}" for value in medians) + " |")


if __name__ == "__main__":
    main()
