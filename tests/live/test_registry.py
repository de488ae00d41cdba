"""A view in a process forked from the kernel (multiprocessing's fork, SB3's SubprocVecEnv, NEAT's
pool) must stay silent: the child shares the kernel's sockets."""

import multiprocessing

import gymnasium as gym
import numpy as np
import pytest

import gymview
from gymview.live.widget import LiveView

fork = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")


PARENT_VIEWS = []  # inherited by the forked children


def in_child(_):
    """Run in a forked child: use the parent's view, step a watched env, make a new view."""
    view = PARENT_VIEWS[0]
    before = len(view.sent)
    pushed = view.push(np.zeros((8, 8, 3), np.uint8), force=True)
    view.flush()
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), fps=120, display=False)
    env.reset(seed=0)
    for _ in range(2000):
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()
    env.view.close()
    view.close()
    return pushed, len(view.sent) - before, view.stats["active"], env.view.stats["active"], env.view.stats["frames_rendered"]


@fork
def test_views_in_a_forked_child_are_inert_and_the_parent_streams_on(shown):
    view = shown(fps=120)
    view.push(np.zeros((8, 8, 3), np.uint8))
    view.flush()
    PARENT_VIEWS[:] = [view]
    try:
        with multiprocessing.get_context("fork").Pool(2, maxtasksperchild=1) as pool:  # each a fresh fork
            results = pool.map(in_child, [0, 1])
    finally:
        PARENT_VIEWS.clear()
    assert results == [(False, 0, False, False, 0)] * 2
    assert view.stats["active"] and view in gymview.live_views()
    assert view.push(np.full((8, 8, 3), 200, np.uint8), force=True) and view.flush()
    assert [header["seq"] for header, _ in view.sent] == [0, 1]


def test_a_view_made_outside_a_fork_still_defaults_to_the_kernel_check():
    assert LiveView().stats["active"] is False  # no kernel here: inactive, as before


@fork
def test_a_forked_child_lets_go_of_the_helpers_pipes(shown):
    """Else the helper never reads end-of-file while such a child lives (a fork pool, SB3's forkserver), and every
    stop or close of the view waits for it, then kills it."""
    import os

    import psutil

    view = shown(fps=120)
    view.push(np.zeros((8, 8, 3), np.uint8), force=True)
    view.flush()
    (helper,) = [p for p in psutil.Process().children() if "encoder_child" in " ".join(p.cmdline())]
    helper_stdin = os.stat(f"/proc/{helper.pid}/fd/0").st_ino
    child = os.fork()
    if child == 0:  # the at-fork hook made the views inert: no descriptor of the helper's stdin pipe is left
        held = [fd for fd in os.listdir("/proc/self/fd") if _inode(f"/proc/self/fd/{fd}") == helper_stdin]
        os._exit(0 if not held else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _inode(path):
    import os

    try:
        return os.stat(path).st_ino
    except OSError:
        return None
