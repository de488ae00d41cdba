"""The loop's speed where the user sits: watched against unwatched, with the page open or not.

    python benchmarks/live_view.py --browser [--browser-rounds 30] [--browser-runs 2]

Three envs, each in a cell of one notebook, watched with draw="kernel" (pictures; the page's own
drawing is benchmarks/scene_view.py's): CartPole-v1 (drawn by gymview's numpy renderer in the
helper process), Acrobot-v1 behind a wrapper that overrides ``render()`` (so pygame draws each frame
in the loop, as for most custom envs) and HalfCheetah-v5 (MuJoCo, painted in the helper process).
Each watched env is compared with its own inner env, stepped without gymview's wrapper while its
view idles, in short slices that alternate in the kernel (watched, plain, plain again, then the
reverse order): the median of watched / plain per round is the loop ratio, and the median of
plain again / plain the noise floor. The same notebook runs in real JupyterLab with the page open
in Chromium (on the same cores as the kernel) and in a kernel with no front-end.

The floor beside each ratio: after the paired rounds, the plain loop in as many pairs of slices alone and
beside neighbour processes (none of gymview's code) that keep busy as many cores as the rest of the machine
(the page, the server, the helper, the kernel's other threads; Linux's /proc/stat) kept busy above the plain
slices while the loop ran watched: the most a page costing that much on the same cores could leave.

Besides the ratios: frames/s the view sent during the watched slices, frames/s the page drew
(browser only), the plain loop's steps/s, the fps limit the budget set by the end, and where the loop
thread's time went: the share of the watched and of the plain slices it spent waiting for a core
(Linux's schedstat; the rest of the wall time it ran, or slept on a lock or the GIL). A second table
gives those.
"""

from __future__ import annotations

import json
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "kernel"))
sys.path.insert(0, str(REPO / "tests" / "browser"))

# Kernel code: steps per second of `env` over a slice of wall time (no braces: it goes into
# str.format templates too).
RUN_SLICE = """
def thread_times():
    # seconds the calling thread has run on a core and waited for one (Linux's schedstat; else 0)
    try:
        with open("/proc/thread-self/schedstat") as stats:
            ran, waited = stats.read().split()[:2]
    except OSError:
        return 0.0, 0.0
    return int(ran) / 1e9, int(waited) / 1e9

def machine_busy():
    # seconds every CPU of the machine has been busy (Linux's /proc/stat; else 0)
    import os
    try:
        with open("/proc/stat") as stat:
            user, nice, system, _, _, irq, softirq, steal = map(int, stat.readline().split()[1:9])
    except OSError:
        return 0.0
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")

def run_slice(env, seconds, spent=None):
    ran, waited = thread_times()
    busy = machine_busy()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        steps += 1
        if terminated or truncated:
            env.reset()
    wall = time.perf_counter() - start
    if spent is not None:  # [wall, on a core, waiting for one, the rest of the machine busy], summed over slices
        ran_now, waited_now = thread_times()
        spent[0] += wall
        spent[1] += ran_now - ran
        spent[2] += waited_now - waited
        spent[3] += machine_busy() - busy - (ran_now - ran)
    return steps / wall
"""

SETUP = """
import statistics, time, gymnasium as gym, gymview
gymview.setup(quiet=True, human=False)
""" + RUN_SLICE + """
def paired(name, watched, rounds, slice_s):
    # the inner env stepped without gymview's wrapper: two instances of one env ran up to 5% apart
    slots = {"watched": watched, "plain": watched.env, "plain again": watched.env}
    watched.reset(seed=0)
    watched.action_space.seed(0)
    run_slice(watched, 1.0)  # warm-up: the helper process, the first frames, the page's first draws
    sent = watched.view.stats["frames_sent"]
    print("WARM", sent, flush=True)  # what was sent once (the scene, the page's modules) is behind this line
    rates = {slot: [] for slot in slots}
    spent = {slot: [0.0, 0.0, 0.0, 0.0] for slot in slots}
    for index in range(rounds):
        for slot in (list(slots) if index % 2 else list(slots)[::-1]):
            rates[slot].append(run_slice(slots[slot], slice_s, spent[slot]))
    ratio = statistics.median(w / p for w, p in zip(rates["watched"], rates["plain"]))
    floor = statistics.median(a / p for a, p in zip(rates["plain again"], rates["plain"]))
    fps = (watched.view.stats["frames_sent"] - sent) / (rounds * slice_s)
    # the loop thread's share of the slices' wall time on a core and waiting for one, watched and plain
    times = [spent[slot][part] / spent[slot][0] for slot in ("watched", "plain") for part in (1, 2)]
    # the cores the rest of the machine (the page, the server, the helper, the kernel's other threads) kept busy
    # while the loop ran watched, above while it ran plain: a neighbour spends as much beside the plain loop
    cores = max(0.0, spent["watched"][3] / spent["watched"][0] - spent["plain"][3] / spent["plain"][0])
    print("PAIRED", name, ratio, floor, fps, statistics.median(rates["plain"]), rounds * slice_s, *times,
          watched.view.stats["fps_limit"], cores, neighbour_floor(watched.env, cores, rounds, slice_s), flush=True)

NEIGHBOUR = '''
import ctypes, os, select, signal, sys, time
ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: it dies with the kernel, even killed
if os.getppid() != int(sys.argv[1]):
    os._exit(1)
print("ready", flush=True)
share = 0.0
while True:
    if select.select([sys.stdin], [], [], 0)[0]:
        line = sys.stdin.readline()
        if not line:
            break
        share = float(line)
    end = time.perf_counter() + share * 0.01
    while time.perf_counter() < end:
        pass
    time.sleep(max(0.0, 0.01 - share * 0.01))
'''

def neighbour_floor(plain, cores, rounds, slice_s):
    # the plain loop beside neighbour processes busy for `cores` of the machine (none of gymview's code),
    # against the plain loop alone, in alternating slices: the most a page costing that much could leave
    import subprocess, sys, os
    count = max(1, int(-(-cores // 1)))
    helpers = [subprocess.Popen([sys.executable, "-c", NEIGHBOUR, str(os.getpid()), "gymview-neighbour"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(count)]
    for helper in helpers:
        helper.stdout.readline()  # started: its start-up falls in no slice
    def busy(share):
        for helper in helpers:
            helper.stdin.write(f"{share}\\n")
            helper.stdin.flush()
        time.sleep(0.03)
    try:
        ratios = []
        for index in range(rounds):
            pair = {}
            for loaded in ((False, True) if index % 2 else (True, False)):
                busy(cores / count if loaded else 0.0)
                pair[loaded] = run_slice(plain, slice_s)
            ratios.append(pair[True] / pair[False])
        return statistics.median(ratios)
    finally:
        for helper in helpers:
            helper.kill()
            helper.wait()
class OwnRender(gym.Wrapper):
    # overrides render(): gymview calls env.render() in the loop (pygame) for such envs
    def render(self):
        return self.env.render()
watched = {}
print("READY")
"""

ENVS = {
    "CartPole-v1": ('gym.make("CartPole-v1", render_mode="rgb_array")', 0.25),
    "Acrobot-v1 (own render())": ('OwnRender(gym.make("Acrobot-v1", render_mode="rgb_array"))', 0.25),
    "HalfCheetah-v5": ('gym.make("HalfCheetah-v5", render_mode="rgb_array")', 0.5),
}


def cells(rounds: int) -> list[str]:
    """The notebook's cells: set-up, one per env (its view stays open until the last cell), close."""
    per_env = [
        f"watched[{name!r}] = gymview.watch({make}, draw='kernel')\npaired({name.split()[0]!r}, watched[{name!r}], {rounds}, {slice_s})"
        for name, (make, slice_s) in ENVS.items()
    ]
    return [SETUP, *per_env, "for env in watched.values():\n    env.close()\nprint('CLOSED')"]


def parse(text: str) -> dict:
    """The PAIRED line of a cell's output."""
    line = next(line for line in text.splitlines() if line.startswith("PAIRED"))
    fields = line.split()[2:]
    ratio, floor, fps, plain, watched_s, ran, waited, plain_ran, plain_waited, limit, cores, neighbour = fields
    return {"ratio": float(ratio), "floor": float(floor), "fps": float(fps), "plain": float(plain),
            "watched_s": float(watched_s), "ran": float(ran), "waited": float(waited),
            "plain_ran": float(plain_ran), "plain_waited": float(plain_waited), "fps_limit": float(limit),
            "cores": float(cores), "neighbour": float(neighbour)}


def in_kernel(rounds: int) -> dict[str, dict]:
    """The cells run in a kernel with no front-end: {env: results}."""
    from conftest import running_kernel

    results = {}
    with running_kernel(str(REPO)) as kernel:
        source = cells(rounds)
        kernel.run(source[0], timeout=120)
        for name, cell in zip(ENVS, source[1:]):
            results[name] = parse(kernel.run(cell, timeout=rounds * 3 * 2 + 300).stdout)
        kernel.run(source[-1], timeout=120)
    return results


def in_browser(rounds: int, tmp: pathlib.Path) -> dict[str, dict]:
    """The cells run one by one in JupyterLab with the page open in Chromium, each view scrolled into
    sight while its cell runs: {env: results, with "drawn_fps" the page's}."""
    from lab import chromium_page, notebook_of, open_notebook, running_server, show_view, start_cell, wait_for_output

    root = tmp / "root"
    root.mkdir(parents=True)
    source = cells(rounds)
    (root / "bench.ipynb").write_text(json.dumps(notebook_of(source)))
    results = {}
    with running_server(root, "lab") as server, chromium_page() as page:
        open_notebook(page, server, "bench.ipynb")
        start_cell(page, 0)
        wait_for_output(page, 0, "READY", timeout_ms=120_000)
        for index, name in enumerate(ENVS, 1):
            start_cell(page, index)
            show_view(page, index)
            text = wait_for_output(page, index, "PAIRED", timeout_ms=(rounds * 3 * 2 + 300) * 1000)
            results[name] = parse(text)
            drawn = page.evaluate(
                "(i) => Number(window.jupyterapp.shell.currentWidget.content.widgets[i].node"
                ".querySelector('.gymview').dataset.framesDrawn || 0)", index)
            results[name]["drawn_fps"] = drawn / results[name]["watched_s"]  # warm-up frames included
        start_cell(page, len(source) - 1)
        wait_for_output(page, len(source) - 1, "CLOSED", timeout_ms=120_000)
    return results


def table(runs: list[tuple[dict, dict]]) -> str:
    """Two markdown tables: per env, each run's ratio with the page open and without, the noise floors and rates;
    then where the loop thread's time went in the watched and the plain slices."""

    def rows(cells) -> list[str]:
        return [f"| {name} | {index} | {cells(browser[name], kernel[name])} |"
                for name in ENVS for index, (browser, kernel) in enumerate(runs, 1)]

    return "\n".join([
        "| env | run | with the page open: watched / plain | noise floor | neighbour floor (cores) "
        "| frames/s sent (drawn) | kernel only: watched / plain | noise floor | neighbour floor (cores) "
        "| frames/s sent |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows(lambda b, k: f"{b['ratio']:.3f}x | {b['floor']:.3f}x | {b['neighbour']:.3f}x ({b['cores']:.2f}) "
                           f"| {b['fps']:.1f} ({b['drawn_fps']:.1f}) | {k['ratio']:.3f}x | {k['floor']:.3f}x "
                           f"| {k['neighbour']:.3f}x ({k['cores']:.2f}) | {k['fps']:.1f}"),
        "",
        "| env | run | page open: waiting for a core, watched / plain | on a core, watched / plain | fps limit at the end "
        "| kernel only: waiting, watched / plain | on a core, watched / plain |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows(lambda b, k: f"{b['waited']:.1%} / {b['plain_waited']:.1%} | {b['ran']:.1%} / {b['plain_ran']:.1%} "
                           f"| {b['fps_limit']:.1f} | {k['waited']:.1%} / {k['plain_waited']:.1%} "
                           f"| {k['ran']:.1%} / {k['plain_ran']:.1%}"),
    ])


def main(rounds: int, runs: int) -> None:
    """Run the kernel-only and the browser measurement ``runs`` times, interleaved; print the table."""
    import tempfile

    measured = []
    for run in range(runs):
        kernel = in_kernel(rounds)
        with tempfile.TemporaryDirectory() as tmp:
            browser = in_browser(rounds, pathlib.Path(tmp))
        measured.append((browser, kernel))
        print(f"run {run + 1} of {runs} done", flush=True)
    print(f"\nwatched loop / its inner env unwatched, medians of {rounds} rounds of alternating slices "
          "(0.25 s; HalfCheetah 0.5 s):\n")
    print(table(measured))
