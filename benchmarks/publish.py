"""What publishing costs a script: with nobody attached, and with a notebook attached; and how long a view
takes to show a run that started again.

    python benchmarks/publish.py [--seconds 4] [--rounds 7] [--draw auto|kernel] [--reattach 5]

speed     The same watched CartPole script in a new process per run, in rounds, each round in a rotated
          order: ``plain`` (``gymview.watch(env)``, not published), ``published`` (``publish=``, nobody
          attached) and ``attached`` (``publish=``, a notebook attached: another process attached with
          ``gymview.attach`` whose page acks the newest frame four times a second, as Chromium's does, and
          decodes H.264 and WebGL as Chromium says it does). Each run steps for 1 s, then counts its steps for
          ``--seconds``. Printed: the medians of steps/s, the ratios published / plain and attached / plain,
          and the frames/s and bytes/frame that reached the attached page.
reattach  A run attached to is killed (SIGKILL) and started again: the seconds from the new process's
          start, and from its "publishing" line, to the first frame of the new run at the page.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "helpers"))

LOOP = """
import json, sys, time, gymnasium as gym, gymview
publish, seconds, draw = sys.argv[1] or False, float(sys.argv[2]), sys.argv[3]
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=publish, draw=draw)
env.reset(seed=0)
print("READY", flush=True)
sys.stdin.readline()  # the benchmark says go (once the notebook is attached, for "attached")

def steps_for(duration):
    count, end = 0, time.perf_counter() + duration
    while time.perf_counter() < end:
        for _ in range(100):
            _, _, terminated, truncated, _ = env.step(0)
            if terminated or truncated:
                env.reset()
        count += 100
    return count

steps_for(1.0)
print(json.dumps({"steps_per_second": steps_for(seconds) / seconds, "frames": env.view.stats["frames_sent"]}), flush=True)
env.close()
"""

VIEWER = """
import json, sys, time, gymview
from published_runs import FakePage
view = gymview.attach(sys.argv[1], timeout=60, display=False)
page = FakePage(view, codecs=("h264", "webgl"))
print("ATTACHED", flush=True)
sys.stdin.readline()
start = len(page.frames()), sum(len(b[0]) for c, b in page.messages if c.get("type") == "frame"), time.monotonic()
sys.stdin.readline()
messages = page.frames()[start[0]:]
frames = sum(len(message.get("frames", [message])) for message in messages)  # scene frames go a few a message
data = sum(len(b[0]) for c, b in page.messages if c.get("type") == "frame") - start[1]
seconds = time.monotonic() - start[2]
print(json.dumps({"frames_per_second": frames / seconds, "bytes_per_frame": data / max(1, frames),
                  "formats": sorted({message["format"] for message in messages})}), flush=True)
page.close(); view.close()
"""


def free_port() -> int:
    from published_runs import free_port

    return free_port()


def python(code: str, *args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env, start_new_session=True)


def wait_for_line(process: subprocess.Popen, marker: str) -> str:
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"the process ended before saying {marker}")
        if line.startswith(marker):
            return line


def one_run(kind: str, seconds: float, draw: str, env: dict[str, str]) -> dict:
    address = f"127.0.0.1:{free_port()}" if kind != "plain" else ""
    loop = python(LOOP, address, str(seconds), draw, env=env)
    viewer = None
    try:
        wait_for_line(loop, "READY")
        if kind == "attached":
            viewer = python(VIEWER, address, env={**env, "PYTHONPATH": f"{REPO}:{REPO / 'tests' / 'helpers'}"})
            wait_for_line(viewer, "ATTACHED")
            time.sleep(1.0)  # the page's ready went round: frames flow
            viewer.stdin.write("\n")
            viewer.stdin.flush()
        loop.stdin.write("\n")
        loop.stdin.flush()
        result = json.loads(wait_for_line(loop, "{"))
        if viewer is not None:
            viewer.stdin.write("\n")
            viewer.stdin.flush()
            result.update(json.loads(wait_for_line(viewer, "{")))
        return result
    finally:
        for process in (loop, viewer):
            if process is not None:
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)


def speed(rounds: int, seconds: float, draw: str, env: dict[str, str]) -> None:
    kinds = ["plain", "published", "attached"]
    results: dict[str, list[dict]] = {kind: [] for kind in kinds}
    for round_number in range(rounds):
        order = kinds[round_number % 3:] + kinds[:round_number % 3]
        for kind in order:
            results[kind].append(one_run(kind, seconds, draw, env))
        print(f"round {round_number + 1}: " + ", ".join(
            f"{kind} {results[kind][-1]['steps_per_second']:,.0f}" for kind in kinds), flush=True)
    median = {kind: statistics.median(r["steps_per_second"] for r in results[kind]) for kind in kinds}
    print(f"\nCartPole-v1, draw={draw!r}, {rounds} rounds of {seconds:g} s, steps/s medians: "
          + ", ".join(f"{kind} {median[kind]:,.0f}" for kind in kinds))
    ratios = {kind: [r["steps_per_second"] / p["steps_per_second"] for r, p in zip(results[kind], results["plain"])]
              for kind in ("published", "attached")}
    for kind, values in ratios.items():
        print(f"{kind} / plain: median of the rounds' ratios {statistics.median(values):.3f} "
              f"(min {min(values):.3f}, max {max(values):.3f})")
    attached = results["attached"]
    print(f"attached page: {statistics.median(r['frames_per_second'] for r in attached):.1f} frames/s, "
          f"{statistics.median(r['bytes_per_frame'] for r in attached):,.0f} bytes/frame, "
          f"formats {sorted({f for r in attached for f in r['formats']})}")


def reattach(trials: int, env: dict[str, str]) -> None:
    from gymview.remote import attach
    from published_runs import SCRIPT, FakePage

    folder = pathlib.Path(tempfile.mkdtemp())
    (folder / "script.py").write_text(SCRIPT)
    address = f"127.0.0.1:{free_port()}"

    def start() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(folder / "script.py"), "--publish", address], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)

    run = start()
    view = attach(address, timeout=60, display=False)
    page = FakePage(view)
    from_start, from_line = [], []
    try:
        for _ in range(trials):
            while len(page.frames()) < 3:
                time.sleep(0.01)
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
            while view.run is not None:
                time.sleep(0.01)
            seen = len(page.frames())
            started = time.monotonic()
            run = start()
            run.stderr.readline()  # "gymview: publishing ...": the run is there
            publishing = time.monotonic()
            while len(page.frames()) <= seen:
                time.sleep(0.005)
            shown = time.monotonic()
            from_start.append(shown - started)
            from_line.append(shown - publishing)
    finally:
        page.close()
        view.close()
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    print(f"\nreattach, {trials} restarts: first frame of the new run {statistics.median(from_start):.2f} s after its "
          f"process started (max {max(from_start):.2f}), {statistics.median(from_line):.2f} s after it said it "
          f"publishes (max {max(from_line):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--draw", default="auto", choices=("auto", "kernel"))
    parser.add_argument("--reattach", type=int, default=5, help="restarts to time (0: none)")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO), "GYMVIEW_TOKEN": secrets.token_urlsafe(12)}
    os.environ["GYMVIEW_TOKEN"] = env["GYMVIEW_TOKEN"]
    speed(args.rounds, args.seconds, args.draw, env)
    if args.reattach:
        reattach(args.reattach, env)


if __name__ == "__main__":
    main()
