"""Runs published by scripts in subprocesses, and a stand-in for the browser page of an attached view: for
tests/remote, tests/kernel and tests/browser."""

from __future__ import annotations

import os
import pathlib
import secrets
import signal
import socket
import subprocess
import sys
import threading

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
# A script as users write one: it watches CartPole (published when GYMVIEW_PUBLISH is set, or with
# --publish), steps until it is stopped or killed (or --seconds pass), and writes its step count and whether its loop
# is held (paused) into a file the test reads.
SCRIPT = '''
import argparse, sys, threading, time
import numpy as np, gymnasium as gym, gymview
parser = argparse.ArgumentParser()
parser.add_argument("--publish"); parser.add_argument("--run"); parser.add_argument("--seconds", type=float, default=600)
parser.add_argument("--counter"); parser.add_argument("--draw", default="kernel")
args = parser.parse_args()
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=args.publish, run=args.run, draw=args.draw)
counter = np.memmap(args.counter, dtype=np.int64, mode="r+", shape=(2,)) if args.counter else np.zeros(2, np.int64)
def report_holding():
    while True:
        counter[1] = env.feed.controls.holding
        time.sleep(0.005)
threading.Thread(target=report_holding, daemon=True).start()
obs, info = env.reset(seed=0)
print("STEPPING", flush=True)
ended = time.monotonic() + args.seconds
try:
    while time.monotonic() < ended:
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        counter[0] += 1
        if terminated or truncated:
            obs, info = env.reset()
    print("DONE", flush=True)
except gymview.Stopped:
    print("STOPPED", flush=True)
env.close()
print("THREADS", sorted(t.name for t in threading.enumerate() if t.name.startswith("gymview")), flush=True)
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Script:
    """A published script in a subprocess (its own session, so it can be killed with its children)."""

    def __init__(self, folder: pathlib.Path, *args: str, code: str = SCRIPT, env: dict | None = None) -> None:
        self.counter_path = folder / f"counter-{secrets.token_hex(4)}"
        np.zeros(2, np.int64).tofile(self.counter_path)
        path = folder / "script.py"
        path.write_text(code)
        self.log = folder / f"script-{secrets.token_hex(4)}.log"
        self.process = subprocess.Popen(
            [sys.executable, str(path), *args, "--counter", str(self.counter_path)],
            stdout=self.log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        )
        self.counter = np.memmap(self.counter_path, dtype=np.int64, mode="r", shape=(2,))

    @property
    def steps(self) -> int:
        return int(self.counter[0])

    @property
    def held(self) -> bool:
        """The script's loop waits in step() because the run is paused."""
        return bool(self.counter[1])

    def output(self) -> str:
        return self.log.read_text()

    def wait(self, timeout: float = 60) -> int:
        return self.process.wait(timeout)

    def kill(self) -> None:
        """Kill the script (and its children); what it printed goes to the test's output, which pytest shows
        when the test failed."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)
        print(f"script pid {self.process.pid} (exit {self.process.returncode}) printed:\n{self.output()[-3000:]}")


class FakePage:
    """What a browser page does with an attached view: says it is ready, keeps the messages that come,
    acks the newest frame four times a second, clicks."""

    def __init__(self, view, client: str = "test-page", codecs: tuple = ()) -> None:
        self.view, self.client = view, client
        self.messages: list[tuple[dict, list]] = []
        self._lock = threading.Lock()
        view.send = self._receive
        self._clicks = 0
        self._stop = threading.Event()
        self._acker = threading.Thread(target=self._ack, name="test-page-acks", daemon=True)
        view._from_page({"type": "ready", "v": 2, "client": client, "codecs": list(codecs)})
        self._acker.start()

    def _receive(self, content, buffers=None):
        with self._lock:
            self.messages.append((content, list(buffers or [])))

    def frames(self) -> list[dict]:
        with self._lock:
            return [content for content, _ in self.messages if content.get("type") == "frame" and "replay" not in content]

    def states(self) -> list[dict]:
        with self._lock:
            return [content for content, _ in self.messages if content.get("type") == "state"]

    def state(self) -> str | None:
        states = self.states()
        return states[-1]["state"] if states else None

    def click(self, action: str, **fields) -> str:
        self._clicks += 1
        click = f"{self.client}:{self._clicks}"
        self.view._from_page({"type": "control", "action": action, "id": click, **fields})
        return click

    def heard(self, click: str) -> bool:
        return any(click in state.get("heard", []) for state in self.states())

    def _ack(self) -> None:
        while not self._stop.wait(0.25):
            frames = self.frames()
            if frames:
                self.view._from_page({"type": "ack", "seq": frames[-1]["seq"], "client": self.client})

    def close(self) -> None:
        self._stop.set()
        self._acker.join(5)
