import pytest

from gymview.live.pacing.throttle import FrameThrottle, MessageBudget


def test_throttle_spaces_frames_by_the_fps_interval():
    throttle = FrameThrottle(fps=10)
    times = [0.0, 0.05, 0.099, 0.1, 0.15, 0.21]
    assert [throttle.accept(now=t) for t in times] == [True, False, False, True, False, True]
    assert (throttle.accepted, throttle.throttled) == (3, 3)
    assert throttle.seconds_until_due(now=0.25) == pytest.approx(0.06)
    assert throttle.accept(now=0.22, force=True) and throttle.accepted == 4


def test_overhead_budget_stretches_the_interval_for_costly_frames():
    throttle = FrameThrottle(fps=30, max_overhead=0.05)
    assert throttle.interval == pytest.approx(1 / 30)
    throttle.record_cost(1.0)  # a first render that opened a window does not count
    assert throttle.interval == pytest.approx(1 / 30)
    for _ in range(50):
        throttle.record_cost(0.004)  # 4 ms a frame at 5% of the loop: one frame per 80 ms
    assert throttle.interval == pytest.approx(0.08, rel=0.01)
    assert throttle.accept(now=0.0)
    assert throttle.seconds_until_due(now=0.05) > 0 >= throttle.seconds_until_due(now=0.081)
    throttle.record_cost(10.0)  # one outlier moves the estimate by at most 4x / 4
    assert throttle.interval < 0.17


def test_bad_settings_are_rejected():
    for fps in (0, -1, 121, "30", True):
        with pytest.raises(ValueError, match="fps"):
            FrameThrottle(fps=fps)
    for overhead in (0, 1.5, "0.1", True):
        with pytest.raises(ValueError, match="max_overhead"):
            FrameThrottle(max_overhead=overhead)


def test_message_budget_limits_the_rate():
    budget = MessageBudget(rate=10, burst=2)
    assert [budget.try_acquire(now=0.0) for _ in range(3)] == [True, True, False]
    assert budget.try_acquire(now=0.05) is False  # half a token back
    assert budget.try_acquire(now=0.1) is True
    assert [budget.try_acquire(now=100.0) for _ in range(3)] == [True, True, False]  # never above burst
