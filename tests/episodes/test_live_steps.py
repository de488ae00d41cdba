"""The live view's replay charts: a watched env keeps its latest steps, and a paused page that asks
gets the steps its kept frames span, each frame's row among them."""

import gymnasium as gym
import numpy as np
from live_helpers import browser_says
from waiting import wait_until

import gymview
from gymview.episodes.recent import RecentSteps
from gymview.episodes.rows import StepTracker
from gymview.live.feed import ViewFeed


def steps_messages(view):
    return [header for header, _ in view.sent if header.get("type") == "steps"]


def test_a_page_asking_for_steps_gets_each_kept_frame_s_row_and_the_steps_between(shown):
    view = shown()
    env = gymview.watch(gym.make("MountainCar-v0", render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    returns = []
    for step in range(1, 41):
        env.step(2)
        env.log(value=float(step))
        returns.append(env.episode_return)
        if step % 10 == 0:  # a frame of this step, kept for the replay
            env.feed.show(force=True)
            assert view.flush()
    browser_says(view, {"type": "steps", "id": "page:1"})
    wait_until(lambda: steps_messages(view), "the steps message")
    (message,) = steps_messages(view)
    kept = [header for header, _, _ in view._streamer.history.snapshot()]
    assert message["frames"] == [header["row"] for header in kept]
    forced = [row for row in message["rows"] if row is not None and row["step"] % 10 == 0 and row["step"]]
    assert [(row["step"], row["value"], row["return"]) for row in forced] == [
        (step, float(step), returns[step - 1]) for step in (10, 20, 30, 40)]
    columns = message["columns"]
    first = message["first"]
    assert message["stride"] == 1 and first == min(message["frames"])
    assert columns["step"] == list(range(first, 41)) and columns["value"][-1] == 40.0
    env.close()


def test_without_kept_frames_or_steps_the_page_gets_no_answer(shown):
    view = shown()
    browser_says(view, {"type": "steps", "id": "page:1"})
    ViewFeed(view, frame=lambda: np.zeros((8, 8, 3), np.uint8), info=dict, steps=RecentSteps(StepTracker()))
    browser_says(view, {"type": "steps", "id": "page:2"})
    view.flush()
    assert steps_messages(view) == []


def test_recent_steps_keep_the_latest_and_send_every_k_th_of_many():
    tracker = StepTracker()
    recent = RecentSteps(tracker, limit=1000)
    tracker.reset()
    for _ in range(5000):
        tracker.step(0, 1.0, False, False, {})
    assert recent.last == 5000
    assert recent.rows([3000, 4001, 5000, None])[0] is None  # aged out
    assert [row["step"] for row in recent.rows([4001, 5000])] == [4001, 5000]
    window = recent.window(first=0, max_rows=300)
    assert window["first"] == 4001 and window["stride"] == 4
    assert window["columns"]["step"][:3] == [4001, 4005, 4009] and len(window["columns"]["step"]) == 250
