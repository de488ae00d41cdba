"""LoopLink: what a frame cost the loop goes into its view's budget: its own time, sending it, and the
helper's time where the helper has no core of its own (or torch fills them)."""

from types import SimpleNamespace

import pytest

from gymview.live.loop_link import LoopLink
from gymview.live.pacing.cpus import HelperCost
from gymview.live.pacing.throttle import FrameThrottle


def link_with(throttle, encode_ms, streamer=None, quota=None, cpus=16.0, waits=None):
    """A link whose machine the test describes: a cgroup quota, the CPUs, the loop thread's total waits for a
    core (None: a system that does not say)."""
    streamer = streamer or SimpleNamespace(encodes_elsewhere=True, last_encode_ms=encode_ms, last_drawn_by_page=False, sent=0)
    readings = iter(waits) if waits is not None else None
    cost = HelperCost(quota, cpus, wait=(lambda: next(readings)) if readings else lambda: None)
    return LoopLink(streamer, throttle, controls=None, view=SimpleNamespace(active=True), helper_cost=cost)


def frames(link, count, count_helper=False):
    """``count`` frames of 0.1 ms of the loop's own time, as a feed makes them."""
    for _ in range(count):
        link.helper_cost.before_frame()
        link.record_cost(0.0001, count_helper=count_helper)
        link.helper_cost.mark()


HELPER = (0.0001 + 0.1) / 0.1  # the interval when the helper's 100 ms count


@pytest.mark.parametrize("machine, count_helper, interval", [
    ({"cpus": 16.0}, False, 1 / 120),                      # cores to spare, and no word of waiting: not the loop's
    ({"cpus": 16.0}, True, HELPER),                        # torch trains on every core: it is
    ({"cpus": 2.0}, False, HELPER),                        # two CPUs and no word of waiting: it is
    ({"quota": 1.5, "cpus": 64.0, "waits": [0.0] * 4}, False, HELPER),  # the helper runs on the loop's quota
    ({"cpus": 2.0, "waits": [0.0] * 4}, False, 1 / 120),   # the loop never waited for a core: not the loop's
    ({"cpus": 2.0, "waits": [0.0, 0.0, 0.02, 0.04]}, False, (0.0001 + 0.02) / 0.1),  # 20 ms waited a frame
])
def test_a_frame_costs_the_loop_its_own_time_and_the_helpers_as_far_as_the_loop_pays(machine, count_helper, interval):
    throttle = FrameThrottle(fps=120, max_overhead=0.1)
    link = link_with(throttle, encode_ms=100.0, **machine)
    frames(link, 2, count_helper)  # the throttle ignores the first sample (a renderer's first call is slow)
    assert throttle.interval == pytest.approx(interval)


def test_frames_count_only_once_the_helper_has_timed_one():
    """A frame recorded before the helper's first answer lacks the helper's time: counted, it would
    start the estimate far too low (a watched SB3 VecEnv kept 120 fps after three frames)."""
    throttle = FrameThrottle(fps=120, max_overhead=0.1)
    streamer = SimpleNamespace(encodes_elsewhere=True, last_encode_ms=0.0, last_drawn_by_page=False, sent=0)
    link = link_with(throttle, encode_ms=None, streamer=streamer)
    link.record_cost(0.0001, count_helper=True)  # the first frame: sent to the helper, no answer yet
    link.record_cost(0.0001, count_helper=True)  # the second, before the first came back
    streamer.last_encode_ms = 5.0
    for _ in range(2):  # the throttle ignores its first sample
        link.record_cost(0.0001, count_helper=True)
    assert throttle.interval == pytest.approx((0.0001 + 0.005) / 0.1)


def test_sending_a_frame_costs_the_loop_and_counts_with_the_next_frame():
    sent, clock = [], SimpleNamespace(now=0.0)

    def pump():
        clock.now += 0.001  # sending takes the loop's thread a millisecond
        sent.append(1)
        streamer.messages += 1
        return True

    streamer = SimpleNamespace(encodes_elsewhere=False, last_encode_ms=0.0, last_drawn_by_page=False, busy=False, pump=pump,
                               messages=0)
    throttle = FrameThrottle(fps=120, max_overhead=0.01, clock=lambda: clock.now)
    link = link_with(throttle, encode_ms=0.0, streamer=streamer)
    link.record_cost(0.0)  # the throttle's ignored first sample
    link.pump()
    link.record_cost(0.0)
    assert sent and throttle.interval == pytest.approx(0.001 / 0.01)  # the frame's own time was 0: sending it was not
    link.record_cost(0.0)  # counted once: the next frame cost nothing, and the estimate moves a quarter of the way
    assert throttle.interval == pytest.approx(0.75 * 0.001 / 0.01)


@pytest.mark.parametrize("waits_for_room, back_in", [(False, 0.002), (True, 1 / 30)])
def test_the_loop_pumps_for_a_frame_in_the_encoder_and_leaves_one_held_back_for_room_to_the_watcher(waits_for_room, back_in):
    streamer = SimpleNamespace(encodes_elsewhere=True, last_encode_ms=0.0, last_drawn_by_page=False, busy=True,
                               waits_for_room=waits_for_room, pump=lambda: False, seconds_until_reply=lambda: 0.002)
    throttle = FrameThrottle(fps=30, max_overhead=0.1, clock=lambda: 0.0)
    throttle.accept()  # a frame just went: the next is due in 1/30 s
    assert link_with(throttle, encode_ms=0.0, streamer=streamer).pump() == pytest.approx(back_in)
