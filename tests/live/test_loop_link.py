"""LoopLink: what a frame cost the loop goes into its view's budget, the helper's time only when asked."""

from types import SimpleNamespace

import pytest

from gymview.live.loop_link import LoopLink
from gymview.live.throttle import FrameThrottle


def link_with(throttle, encode_ms):
    streamer = SimpleNamespace(encodes_elsewhere=True, last_encode_ms=encode_ms)
    return LoopLink(streamer, throttle, controls=None, poller=None, is_active=lambda: True, handlers=dict,
                    keep_still_image=lambda: None, report=lambda message: None, take_keys=lambda on: None)


@pytest.mark.parametrize("count_helper, interval", [(True, (0.0001 + 0.1) / 0.1), (False, 1 / 120)])
def test_a_frame_costs_the_loop_its_own_time_and_the_helpers_only_when_that_competes(count_helper, interval):
    throttle = FrameThrottle(fps=120, max_overhead=0.1)
    link = link_with(throttle, encode_ms=100.0)
    for _ in range(2):  # the throttle ignores the first sample (a renderer's first call is slow)
        link.record_cost(0.0001, count_helper=count_helper)
    assert throttle.interval == pytest.approx(interval)
