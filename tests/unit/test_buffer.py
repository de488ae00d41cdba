import threading

import pytest

from gymview.buffer import FrameBuffer, MessageBudget


def test_latest_frame_wins_and_memory_is_one_slot():
    buffer = FrameBuffer(fps=100)
    for i in range(5):
        assert buffer.offer(i, {"i": i}, now=float(i))
    assert buffer.take(timeout=0) == (4, {"i": 4})
    assert buffer.take(timeout=0) is None
    assert buffer.accepted == 5 and buffer.replaced == 4 and buffer.throttled == 0


def test_throttle_spaces_frames_by_the_fps_interval():
    buffer = FrameBuffer(fps=10)
    times = [0.0, 0.05, 0.099, 0.1, 0.15, 0.21]
    kept = [buffer.offer(t, {}, now=t) for t in times]
    assert kept == [True, False, False, True, False, True]
    assert buffer.throttled == 3 and buffer.replaced == 2  # two replaced before they were sent


def test_overhead_budget_stretches_the_interval_for_costly_frames():
    buffer = FrameBuffer(fps=30, max_overhead=0.05)
    assert buffer.interval == pytest.approx(1 / 30)
    buffer.record_cost(1.0)  # a first render that opened a window does not count
    assert buffer.interval == pytest.approx(1 / 30)
    for _ in range(50):
        buffer.record_cost(0.004)  # 4 ms a frame at 5% of the loop: one frame per 80 ms
    assert buffer.interval == pytest.approx(0.08, rel=0.01)
    assert buffer.offer("f", {}, now=0.0)
    assert not buffer.due(now=0.05) and buffer.due(now=0.081)
    buffer.record_cost(10.0)  # one outlier moves the estimate by at most 4x / 4
    assert buffer.interval < 0.17


def test_bad_settings_are_rejected():
    for fps in (0, -1, 121, "30", True):
        with pytest.raises(ValueError, match="fps"):
            FrameBuffer(fps=fps)
    with pytest.raises(ValueError, match="max_overhead"):
        FrameBuffer(max_overhead=0)
    with pytest.raises(ValueError, match="budget"):
        MessageBudget(rate=0, burst=1)


def test_take_waits_for_an_offer_from_another_thread():
    buffer = FrameBuffer(fps=100)
    threading.Timer(0.05, lambda: buffer.offer("late", {})).start()
    assert buffer.take(timeout=5) == ("late", {})


def test_wake_releases_a_waiting_take_and_join_tracks_handling():
    buffer = FrameBuffer(fps=100)
    threading.Timer(0.05, buffer.wake).start()
    assert buffer.take(timeout=None) is None
    buffer.offer("f", {})
    assert not buffer.join(timeout=0)
    assert buffer.take(timeout=0) == ("f", {})
    assert not buffer.join(timeout=0)  # taken but not yet handled
    buffer.task_done()
    assert buffer.join(timeout=0)


def test_message_budget_limits_the_rate():
    budget = MessageBudget(rate=100, burst=10)
    granted = sum(budget.try_acquire(now=i / 1000) for i in range(3000))  # 3 s of 1000 attempts/s
    assert 300 <= granted <= 311
