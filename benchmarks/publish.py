"""What publishing costs a script: with nobody attached, and with a notebook attached; and how long a view
takes to show a run that started again.

    python benchmarks/publish.py [--pairs 40] [--slice 1.0] [--draw auto|kernel] [--reattach 5] [--flood 20]

One process steps CartPole-v1 (``env.step(0)``, resetting at episode ends) in alternating slices of
``--slice`` seconds, each slice after 0.2 s of warm-up; each pair's ratio is its first slice's steps/s over
its second's, by wall time and by the process's CPU time (all its threads; where other programs keep the
cores busy, the CPU time is the steadier measure of what publishing costs), and the median of ``--pairs``
pairs is printed (min and max beside it):

nobody attached  ``gymview.watch(env, publish=...)`` with nobody attached (its publisher's thread listening
                 throughout), against ``gymview.watch(env)``: the same watched script, not publishing.
attached         a published env with a notebook attached throughout (another process attached with
                 ``gymview.attach``, whose page acks the newest frame four times a second and says it decodes
                 H.264 and draws WebGL, as Chromium's does), against a plain ``gymview.watch(env)``. Also
                 printed: the frames/s the run sent while it stepped, and their bytes (the data, without
                 the JSON heads).
noise floor      two plain ``gymview.watch(env)`` envs against each other.

flood     ``--flood`` pairs: a published env (a notebook attached throughout) while another process floods its
          address without the token (connections, each sent 1 MiB of random bytes, as fast as they are taken),
          against the same env while that process waits: what a flood costs the run;
          and the same env against itself, both silent (the noise floor).
          The run's CPU time is the measure (the flooding process takes a core of its own).

reattach  A run attached to is killed (SIGKILL) and started again, ``--reattach`` times: the seconds from the
          new process's start, and from its "publishing" line, to the first frame of the new run at the page.
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
HELPERS = REPO / "tests" / "helpers"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HELPERS))
sys.path.insert(0, str(REPO / "benchmarks"))

from watched_loops import steps_in  # noqa: E402 - benchmarks/ is on the path from here

VIEWER = """
import sys, gymview
from published_runs import FakePage
view = gymview.attach(sys.argv[1], timeout=60, display=False)
page = FakePage(view, codecs=("h264", "webgl"))
print("ATTACHED", flush=True)
sys.stdin.readline()
page.close(); view.close()
"""


def free_port() -> int:
    from published_runs import free_port

    return free_port()


def steps_per_second(env, seconds: float) -> tuple[float, float]:
    """Steps per second of wall time, and per second of this process's CPU time (all its threads: the
    publisher's too; not the helper process's), over ``seconds`` after 0.2 s of warm-up."""

    steps_in(env, 0.2)
    wall, cpu = time.perf_counter(), time.process_time()
    steps = steps_in(env, seconds)
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def watched(publish, draw: str):
    import gymnasium as gym

    import gymview

    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=publish, draw=draw)
    env.reset(seed=0)
    return env


def pairs_of(first, second, pairs: int, seconds: float) -> tuple[list[float], list[float]]:
    """Ratios of ``first()``'s steps/s to ``second()``'s (each call gives (env, done)), by wall time and by CPU
    time; slices alternating, each pair's order the other way round from the last's (ABBA: the order of a
    pair costs neither side)."""
    wall, cpu = [], []
    for number in range(pairs):
        speeds = {}
        for make in (first, second) if number % 2 == 0 else (second, first):
            env, done = make()
            speeds[make] = steps_per_second(env, seconds)
            done(env)
        wall.append(speeds[first][0] / speeds[second][0])
        cpu.append(speeds[first][1] / speeds[second][1])
    return wall, cpu


def summary(name: str, ratios: tuple[list[float], list[float]]) -> str:
    wall, cpu = ratios
    return (f"{name}: {statistics.median(wall):.3f} by wall time (min {min(wall):.3f}, max {max(wall):.3f}), "
            f"{statistics.median(cpu):.3f} by CPU time (min {min(cpu):.3f}, max {max(cpu):.3f})")


def speed(pairs: int, seconds: float, draw: str, env_vars: dict[str, str]) -> None:
    def kept(env):
        return lambda: (env, lambda env: None)

    alone, unpublished = watched(f"127.0.0.1:{free_port()}", draw), watched(False, draw)
    nobody = pairs_of(kept(alone), kept(unpublished), pairs, seconds)
    for env in (alone, unpublished):
        env.close()
    address = f"127.0.0.1:{free_port()}"
    published, plain, plain_again = watched(address, draw), watched(False, draw), watched(False, draw)
    viewer = subprocess.Popen([sys.executable, "-c", VIEWER, address], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env={**env_vars, "PYTHONPATH": f"{REPO}:{HELPERS}"})
    try:
        assert viewer.stdout.readline().startswith("ATTACHED")
        steps_per_second(published, 0.8)  # the page's ready goes round, frames flow
        before = published.view.stats
        attached = pairs_of(kept(published), kept(plain), pairs, seconds)
        after = published.view.stats
    finally:
        viewer.stdin.write("\n")
        viewer.stdin.flush()
        viewer.wait(60)
    frames = after["frames_sent"] - before["frames_sent"]
    page = {"frames_per_second": frames / (pairs * (seconds + 0.2)),  # the published env's slices only
            "bytes_per_frame": (after["bytes_sent"] - before["bytes_sent"]) / max(1, frames), "format": after["sent_as"]}
    floor = pairs_of(kept(plain_again), kept(plain), pairs, seconds)
    for env in (published, plain, plain_again):
        env.close()
    print(f"CartPole-v1, draw={draw!r}, {pairs} pairs of {seconds:g} s slices, steps/s ratios (median):")
    print("  " + summary("nobody attached / not published", nobody))
    print("  " + summary("a notebook attached / not published", attached))
    print("  " + summary("noise floor (not published / not published)", floor))
    print(f"  to the attached page, while the published env stepped: {page['frames_per_second']:.1f} frames/s, "
          f"{page['bytes_per_frame']:,.0f} bytes/frame of data, as {page['format']}")


FLOODER = """
import os, socket, sys, threading
host, port = sys.argv[1].split(":")
junk = os.urandom(1 << 16)
flooding, sent = threading.Event(), [0]
def commands():
    for line in sys.stdin:
        if line.strip() == "on":
            flooding.set()
        elif line.strip() == "off":
            flooding.clear()
            print("SENT", sent[0], flush=True)
        else:
            break
    flooding.set(); sent.append(None)
threading.Thread(target=commands, daemon=True).start()
print("READY", flush=True)
while sent[-1] is not None:
    if not flooding.wait(0.1):
        continue
    try:  # a connection, as much junk as it takes before the run's process closes it
        with socket.create_connection((host, int(port)), timeout=1) as sock:
            for _ in range(16):
                sock.sendall(junk)
                sent[0] += len(junk)
    except OSError:
        pass
"""


def flood(pairs: int, seconds: float, draw: str, env_vars: dict[str, str]) -> None:
    address = f"127.0.0.1:{free_port()}"
    published = watched(address, draw)
    viewer = subprocess.Popen([sys.executable, "-c", VIEWER, address], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env={**env_vars, "PYTHONPATH": f"{REPO}:{HELPERS}"})
    flooder = subprocess.Popen([sys.executable, "-c", FLOODER, address], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env={**env_vars, "PYTHONPATH": str(REPO)})
    sent = 0

    def flooded():
        flooder.stdin.write("on\n")
        flooder.stdin.flush()

        def done(env):
            nonlocal sent
            flooder.stdin.write("off\n")
            flooder.stdin.flush()
            sent += int(flooder.stdout.readline().split()[1]) - sent

        return published, done

    try:
        assert viewer.stdout.readline().startswith("ATTACHED") and flooder.stdout.readline().startswith("READY")
        steps_per_second(published, 0.8)
        def quiet():
            return published, lambda env: None

        ratios = pairs_of(flooded, quiet, pairs, seconds)
        floor = pairs_of(quiet, lambda: quiet(), pairs, seconds)  # two callables: pairs_of tells them apart
    finally:
        for process in (viewer, flooder):
            process.stdin.write("\n")
            process.stdin.flush()
            process.wait(60)
    published.close()
    print(f"CartPole-v1, draw={draw!r}, {pairs} pairs of {seconds:g} s slices, a notebook attached throughout:")
    print("  " + summary("flooded by a peer without the token / not flooded", ratios))
    print("  " + summary("noise floor (not flooded / not flooded)", floor))
    mib = sent / 2**20
    print(f"  the flooding peer sent {mib:,.0f} MiB ({mib / (pairs * (seconds + 0.2)):,.0f} MiB a second)")


def reattach(trials: int, env_vars: dict[str, str]) -> None:
    from published_runs import SCRIPT, FakePage

    from gymview.remote import attach

    folder = pathlib.Path(tempfile.mkdtemp())
    (folder / "script.py").write_text(SCRIPT)
    address = f"127.0.0.1:{free_port()}"

    def start() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(folder / "script.py"), "--publish", address], env=env_vars,
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
    print(f"reattach, {trials} restarts: the new run's first frame at the page {statistics.median(from_start):.2f} s "
          f"after its process started (max {max(from_start):.2f}), {statistics.median(from_line):.2f} s after it "
          f"said it publishes (max {max(from_line):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--slice", type=float, default=1.0)
    parser.add_argument("--draw", default="auto", choices=("auto", "kernel"))
    parser.add_argument("--reattach", type=int, default=5, help="restarts to time (0: none)")
    parser.add_argument("--flood", type=int, default=0, help="pairs of slices flooded and not (0: none)")
    args = parser.parse_args()
    token = os.environ.setdefault("GYMVIEW_TOKEN", secrets.token_urlsafe(12))
    env_vars = {**os.environ, "PYTHONPATH": str(REPO), "GYMVIEW_TOKEN": token}
    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()):  # each published env says how to attach: not here
        if args.pairs:
            speed(args.pairs, args.slice, args.draw, env_vars)
        if args.flood:
            flood(args.flood, args.slice, args.draw, env_vars)
    if args.reattach:
        reattach(args.reattach, env_vars)


if __name__ == "__main__":
    main()
