"""gymview.background: a function in a thread, its result or error, and its stop."""

import asyncio
import time

import gymnasium as gym
import pytest
from waiting import wait_until

import gymview


def cartpole():
    return gym.make("CartPole-v1", render_mode="rgb_array")


async def _awaited(thing):
    return await thing


def test_background_returns_the_result_or_re_raises():
    job = gymview.background(sum, [1, 2, 3], display=False)
    assert job.wait(timeout=30) == 6 and job.state == "finished"
    failing = gymview.background(lambda: 1 / 0, display=False)
    with pytest.raises(ZeroDivisionError):
        failing.wait(timeout=30)
    assert failing.state == "failed"
    with pytest.raises(TypeError, match="callable"):
        gymview.background(42)


def test_a_stopped_job_ends_its_watched_loop_and_should_stop_turns_true():
    env = gymview.watch(cartpole(), display=False)
    seen = []

    def train():
        env.reset(seed=0)
        while True:
            seen.append(gymview.should_stop())
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()

    job = gymview.background(train, display=False)
    wait_until(lambda: len(seen) >= 100, "the job stepping")
    job.stop(timeout=30)
    assert job.state == "stopped" and job.done and job.wait() is None
    assert not gymview.should_stop() and not env.feed.controls.engaged
    env.close()


def test_a_job_polling_should_stop_ends_as_stopped():
    def loop():
        while not gymview.should_stop():
            time.sleep(0.005)
        return "ended early"

    job = gymview.background(loop, display=False)
    time.sleep(0.05)
    job.stop(timeout=30)
    assert job.state == "stopped" and job.result == "ended early"
    assert asyncio_run(job) == "ended early"


def asyncio_run(awaitable):
    return asyncio.run(_awaited(awaitable))
