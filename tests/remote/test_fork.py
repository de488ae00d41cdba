"""A process that publishes and then forks (multiprocessing's 'fork', SB3's SubprocVecEnv with
start_method='fork', os.fork): the child never touches its parent's zmq sockets. Its copy of the parent's
view sends nothing; a view it makes publishes under its own name on sockets of its own; and the parent
goes on publishing, whatever the child does and however it ends."""

import re

import pytest
from waiting import wait_until

import gymview
from gymview.remote import runs_at

pytestmark = pytest.mark.slow

FORKING = '''
import argparse, multiprocessing, os, sys, threading, time
import numpy as np, gymnasium as gym, gymview
parser = argparse.ArgumentParser()
parser.add_argument("--publish"); parser.add_argument("--counter")
args = parser.parse_args()
counter = np.memmap(args.counter, dtype=np.int64, mode="r+", shape=(2,))

def step(env, count):
    for _ in range(count):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()

def threads():
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("gymview"))

env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=args.publish, run="parent",
                    draw="kernel")
env.reset(seed=0)

def inherited_view_sends_nothing(who):
    made = env.view.stats["frames_rendered"]
    step(env, 500)  # the parent's notebook watches the parent's run: here, no frame is made nor sent
    print(who, "INHERITED frames made", env.view.stats["frames_rendered"] - made, flush=True)

def worker():  # a multiprocessing worker, forked: its own env publishes under its own name
    inherited_view_sends_nothing("WORKER")
    own = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=args.publish, run="worker",
                        draw="kernel")
    own.reset(seed=1)
    try:
        while True:
            step(own, 1)
    except gymview.Stopped:
        print("WORKER STOPPED", flush=True)
    own.close()
    env.close()  # its copy of the parent's env: closing it tells the parent's notebook nothing
    print("WORKER THREADS", threads(), flush=True)

while env.view.stats["frames_rendered"] < 10:  # a notebook attached: frames flow on the parent's sockets
    step(env, 1)
    counter[0] += 1
child = os.fork()
if child == 0:  # a bare fork that ends as scripts do, with its exit handlers
    inherited_view_sends_nothing("FORK")
    sys.exit(0)
os.waitpid(child, 0)
print("FORK ENDED", flush=True)
worker_process = multiprocessing.get_context("fork").Process(target=worker)
worker_process.start()
for name in ("parent", "parent-again"):  # stopped, the parent publishes again while its worker runs on
    try:
        while True:
            step(env, 1)
            counter[0] += 1
    except gymview.Stopped:
        print("STOPPED", name, flush=True)
    env.close()
    if name == "parent":
        env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish=args.publish,
                            run="parent-again", draw="kernel")
        env.reset(seed=2)
worker_process.join(60)
print("WORKER ENDED", worker_process.exitcode, flush=True)
print("THREADS", threads(), flush=True)
'''


def listed(address):
    """The runs at ``address`` by name; none while nothing answers (a process taking over the address)."""
    try:
        return {run.name: run.pid for run in runs_at(address)}
    except TimeoutError:
        return {}


def stopping(page, who):
    stop = page.click("stop")
    wait_until(lambda: page.heard(stop), f"{who} to hear Stop")


def showing(address, pages, run):
    """A view attached to ``run`` at ``address``, once frames reach its page: (view, page)."""
    view = gymview.attach(address, run=run, timeout=60, display=False)
    page = pages(view)
    wait_until(lambda: len(page.frames()) > 3, f"frames from {run}")
    return view, page


def more_frames(page, what):
    seen = len(page.frames())
    wait_until(lambda: len(page.frames()) > seen + 3, what)


def test_a_forked_child_publishes_on_its_own_sockets_and_the_parent_goes_on(address, token, scripts, pages):
    script = scripts("--publish", address, code=FORKING)
    parent = gymview.attach(address, run="parent", timeout=60, display=False)
    parent_page = pages(parent)
    # print() may write its pieces one by one (PYTHONUNBUFFERED): the line is read once it is whole
    wait_until(lambda: re.search(r"WORKER INHERITED frames made \d+\n", script.output()),
               lambda: f"the children to step the parent's env: {script.output()[-2000:]}", timeout=90)
    output = script.output()
    assert "FORK INHERITED frames made 0" in output and "WORKER INHERITED frames made 0" in output, output
    wait_until(lambda: "worker" in listed(address), "the worker's own run to be listed")
    runs = listed(address)
    assert runs["parent"] == script.process.pid and runs["worker"] != script.process.pid
    worker, worker_page = showing(address, pages, "worker")  # on the worker's own sockets
    more_frames(parent_page, "the parent's frames, after the forks")
    # The parent stops publishing and publishes again: the address is free of what its children inherited.
    stopping(parent_page, "the parent")
    wait_until(lambda: "parent-again" in listed(address), f"the parent's new run to be listed: {script.output()}")
    again, again_page = showing(address, pages, "parent-again")
    more_frames(worker_page, "the worker's frames, through whichever listens now")
    stopping(worker_page, "the worker")
    stopping(again_page, "the parent's new run")
    assert script.wait(90) == 0, script.output()
    output = script.output()
    assert "WORKER STOPPED" in output and "WORKER THREADS []" in output and "WORKER ENDED 0" in output, output
    assert "STOPPED parent-again" in output and "\nTHREADS []" in output and "Traceback" not in output, output
    for view in (parent, worker, again):
        view.close()
