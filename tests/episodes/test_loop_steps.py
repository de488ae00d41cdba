"""A watched loop's steps, kept as the loop gave them and made rows when read: the same rows, counts and
returns as the step tracker that recordings use, however the steps are settled."""

import gc
import random
import threading

import gymnasium as gym
import numpy as np
import pytest
from live_helpers import browser_says
from waiting import wait_until

import gymview
from gymview.episodes.loop_steps import LoopSteps
from gymview.episodes.recent import RecentSteps
from gymview.episodes.rows import StepTracker


def same_steps(seed, steps=3000, limit=500, infos=({}, {"lives": 1, "text": "x"})):
    """A LoopSteps and a StepTracker (with its RecentSteps) given the same random steps (some before the first
    reset), resets (some back to back), and logged values (some on a reset's row 0); the LoopSteps settled at
    random moments, now and then after more steps than it keeps. Each step's info is one of ``infos``."""
    rng = random.Random(seed)
    loop, tracker = LoopSteps(limit=limit), StepTracker()
    recent = RecentSteps(tracker, limit=limit)
    settle_every = 0.02
    for n in range(steps):
        if n > 5 and rng.random() < 0.02:
            for _ in range(rng.choice([1, 1, 2])):
                loop.reset()
                tracker.reset()
            if rng.random() < 0.3:
                loop.log({"at_reset": 1.0})
                tracker.log({"at_reset": 1.0})
        action = rng.choice([rng.randrange(3), np.array([rng.random(), -1.0]), None])
        reward = rng.choice([1.0, -0.25, np.float32(0.1), 3])
        terminated, truncated = rng.random() < 0.01, False
        info = dict(rng.choice(infos))
        loop.record((action, reward, terminated, truncated, info))
        tracker.step(action, reward, terminated, truncated, info)
        if rng.random() < 0.05:
            values = {"value": rng.random()}
            loop.log(values)
            tracker.log(values)
        if n == steps // 2:
            settle_every = 0.0  # a stretch of more steps than the limit between two settles
        if n == steps // 2 + 2 * limit:
            settle_every = 0.02
        if rng.random() < settle_every:
            loop.settle()
    loop.settle()
    return loop, tracker, recent


@pytest.mark.parametrize(("seed", "infos"), [(1, None), (2, None), (3, None), (4, ({},)), (5, ({}, {}, {"lives": 2}))])
def test_the_rows_counts_and_returns_are_the_step_tracker_s(seed, infos):
    """Infos all empty (most envs'), now and then set, or mixed."""
    loop, tracker, recent = same_steps(seed, **({} if infos is None else {"infos": infos}))
    assert (loop.count, loop.resets, loop.episode, loop.steps) == (
        tracker.count,
        tracker.resets,
        tracker.episode,
        tracker.steps,
    )
    assert loop.episode_return == tracker.episode_return
    assert loop.last == recent.last
    numbers = [None, 0, recent.last - 600, recent.last - 499, recent.last - 250, recent.last]
    assert loop.rows(numbers) == recent.rows(numbers)
    assert loop.rows([recent.last - 500])[0] is None  # the latest 500 are kept, no more
    for first, max_rows in ((0, 2000), (recent.last - 100, 2000), (0, 70)):
        assert loop.window(first, max_rows) == recent.window(first, max_rows)


def test_what_is_kept_stays_within_the_limit_however_often_it_settles():
    loop = LoopSteps(limit=100)
    loop.reset()
    for _ in range(10_000):
        loop.record((0, 1.0, False, False, {}))
        loop.settle()  # a chunk a step: the most chunks there can be
    window = loop.window(first=0, max_rows=10**6)
    assert window["first"] == 10_000 - 99 and window["columns"]["step"] == list(range(9901, 10_001))


def test_steps_recorded_while_another_thread_settles_are_all_counted():
    loop = LoopSteps(limit=100)
    recorded = 200_000
    done = threading.Event()

    def settle_until_done():
        while not done.is_set():
            loop.settle()

    settler = threading.Thread(target=settle_until_done)
    settler.start()
    try:
        for _ in range(recorded):
            loop.record((0, 1.0, False, False, None))
    finally:
        done.set()
        settler.join(30)
    loop.settle()
    assert loop.count == recorded and loop.episode_return == float(recorded)


def test_log_before_any_step_says_to_reset_first():
    with pytest.raises(RuntimeError, match=r"call env\.reset"):
        LoopSteps().log({"value": 1.0})


def test_a_watched_env_keeps_the_action_an_array_held_at_its_step(shown):
    view = shown()
    env = gymview.watch(gym.make("MountainCarContinuous-v0", render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    action = np.zeros(1, np.float32)
    for value in (0.5, -0.5):
        action[0] = value  # the caller fills the same array for each step
        env.step(action)
    env.feed.show(force=True)
    assert view.flush() and env.total_steps == 2
    browser_says(view, {"type": "steps", "id": "page:1"})
    wait_until(lambda: [header for header, _ in view.sent if header.get("type") == "steps"], "the steps message")
    (message,) = [header for header, _ in view.sent if header.get("type") == "steps"]
    assert message["columns"]["action"][-2:] == [0.5, -0.5]
    env.close()


def test_an_info_whose_truth_is_ambiguous_is_kept_and_loses_no_step():
    """Gymnasium's infos are dicts; an env that returns an array still has its steps counted and kept."""
    loop = LoopSteps(limit=100)
    loop.reset()
    loop.record((0, 1.0, False, False, np.zeros(2)))
    loop.record((1, 2.0, False, False, {}))
    loop.settle()
    assert (loop.count, loop.resets, loop.steps, loop.episode_return) == (3, 1, 2, 3.0)
    assert [row["return"] for row in loop.rows([1, 2])] == [1.0, 3.0]


class InstantEnv(gym.Env):
    """An env whose step costs next to nothing (a tabular env, a jitted one): the wrapper's own work shows."""

    observation_space = gym.spaces.Discrete(4)
    action_space = gym.spaces.Discrete(2)
    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}
    render_mode = "rgb_array"

    def __init__(self):
        self.steps = 0

    def render(self):
        return np.zeros((8, 8, 3), np.uint8)

    def step(self, action):
        self.steps += 1
        return 0, 1.0, self.steps % 10 == 0, False, {}

    def reset(self, seed=None, options=None):
        return 0, {}


def test_keeping_a_fast_loop_s_steps_leaves_the_garbage_collector_idle():
    """Settling makes no object a step (a transposition with zip() makes an iterator a step): on a loop this
    fast, the collector would run every few hundred steps, and full collections of the whole process follow."""
    env = gymview.watch(InstantEnv())
    env.reset()
    gc.collect()
    before = [generation["collections"] for generation in gc.get_stats()]
    for _ in range(100_000):
        _, _, terminated, truncated, _ = env.step(0)
        if terminated or truncated:
            env.reset()
    young, middle, full = (g["collections"] - b for g, b in zip(gc.get_stats(), before))
    env.close()
    assert env.total_steps == 100_000
    assert young < 30 and middle < 3 and full == 0, (young, middle, full)
