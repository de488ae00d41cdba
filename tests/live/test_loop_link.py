"""LoopLink: what a frame cost the loop goes into its view's budget: its own time, sending it, and the
helper's time in the share the machine makes the loop pay (all of it when asked)."""

from types import SimpleNamespace

import pytest

from gymview.live.hidden_costs import RunQueueWait
from gymview.live.loop_link import UNMEASURED_SHARE, LoopLink
from gymview.live.throttle import FrameThrottle, HelperShare, RelayCost

RAISED = 1.0 + UNMEASURED_SHARE  # counted costs allow for what is not measured


def link_with(throttle, encode_ms, helper_share=None, streamer=None, relay_cost=None, run_queue=None):
    streamer = streamer or SimpleNamespace(encodes_elsewhere=True, last_encode_ms=encode_ms, helper_pid=4321, sent=0)
    return LoopLink(streamer, throttle, controls=None, poller=None, is_active=lambda: True, handlers=dict,
                    keep_still_image=lambda: None, report=lambda message: None, take_keys=lambda on: None,
                    # read=None: never reads the machine
                    helper_share=helper_share or HelperShare(read=None), relay_cost=relay_cost or RelayCost(read=None),
                    run_queue=run_queue or RunQueueWait(read=None))


class Machine:
    """Injected readings: (idle core-seconds, helper CPU seconds) by pid, as the test moves them; a
    clock that moves only when told."""

    def __init__(self):
        self.now, self.idle, self.helper, self.asked = 0.0, 1000.0, 0.0, []

    def read(self, pid):
        self.asked.append(pid)
        return self.idle, self.helper

    def run(self, seconds, idle_cores, helper_cores):
        self.now += seconds
        self.idle += idle_cores * seconds
        self.helper += helper_cores * seconds


@pytest.mark.parametrize("count_helper, interval", [(True, (0.0001 + 0.1) * RAISED / 0.1), (False, 1 / 120)])
def test_a_frame_costs_the_loop_its_own_time_and_the_helpers_only_when_that_competes(count_helper, interval):
    throttle = FrameThrottle(fps=120, max_overhead=0.1)
    link = link_with(throttle, encode_ms=100.0)
    for _ in range(2):  # the throttle ignores the first sample (a renderer's first call is slow)
        link.record_cost(0.0001, count_helper=count_helper)
    assert throttle.interval == pytest.approx(interval)


def test_frames_count_only_once_the_helper_has_timed_one():
    """A frame recorded before the helper's first answer lacks the helper's time: counted, it would
    start the estimate far too low (a watched SB3 VecEnv kept 120 fps after three frames)."""
    throttle = FrameThrottle(fps=120, max_overhead=0.1)
    streamer = SimpleNamespace(encodes_elsewhere=True, last_encode_ms=0.0, helper_pid=4321, sent=0)
    link = link_with(throttle, encode_ms=None, streamer=streamer)
    link.record_cost(0.0001, count_helper=True)  # the first frame: sent to the helper, no answer yet
    link.record_cost(0.0001, count_helper=True)  # the second, before the first came back
    streamer.last_encode_ms = 5.0
    for _ in range(2):  # the throttle ignores its first sample
        link.record_cost(0.0001, count_helper=True)
    assert throttle.interval == pytest.approx((0.0001 + 0.005) * RAISED / 0.1)


@pytest.mark.parametrize(
    "idle_cores, helper_cores, share",
    [(14.5, 0.5, 0.0),   # 16 cores, the loop on one: the helper has cores to spare
     (0.5, 0.25, 0.25),  # 2 cores, the loop on one, the page on a quarter: a quarter of the helper's core is missing
     (0.0, 0.5, 0.5),    # 2 cores and nothing idle: the page took half the core the helper needed
     (0.0, 0.0, 1.0)],   # nothing left at all: every helper second is taken from someone
)
def test_the_helpers_time_counts_in_the_share_the_machine_has_no_idle_core_for(idle_cores, helper_cores, share):
    machine = Machine()
    throttle = FrameThrottle(fps=120, max_overhead=0.1)
    helper_share = HelperShare(read=machine.read, period=0.5, clock=lambda: machine.now)
    link = link_with(throttle, encode_ms=100.0, helper_share=helper_share)
    link.record_cost(0.0001)  # the first reading, and the throttle's ignored first sample
    machine.run(1.0, idle_cores, helper_cores)
    link.record_cost(0.0001)
    assert helper_share.share == pytest.approx(share)
    assert throttle.interval == pytest.approx(max(1 / 120, (0.0001 + share * 0.1) * RAISED / 0.1))
    assert machine.asked == [4321, 4321]


def test_the_jupyter_servers_time_per_frame_counts_in_the_same_share():
    machine = Machine()
    server = {"seconds": 50.0}
    throttle = FrameThrottle(fps=120, max_overhead=0.1)
    clock = lambda: machine.now  # noqa: E731
    streamer = SimpleNamespace(encodes_elsewhere=True, last_encode_ms=10.0, helper_pid=4321, sent=0)
    relay = RelayCost(read=lambda: server["seconds"], period=0.5, clock=clock)
    link = link_with(throttle, 10.0, HelperShare(read=machine.read, period=0.5, clock=clock), streamer, relay)
    link.record_cost(0.0001)  # the first readings, and the throttle's ignored first sample
    machine.run(1.0, idle_cores=0.0, helper_cores=0.5)  # share 0.5: nothing idle, the page took half a core
    streamer.sent, server["seconds"] = 30, 50.6  # 30 frames cost the server 0.6 s: 20 ms a frame
    link.record_cost(0.0001)
    assert relay.per_frame == pytest.approx(0.02)
    assert throttle.interval == pytest.approx((0.0001 + 0.5 * (0.010 + 0.020)) * RAISED / 0.1)


def test_no_jupyter_server_to_read_costs_nothing_and_is_not_read_again():
    asked = []
    relay = RelayCost(read=lambda: asked.append(1), period=0.0)
    assert relay.update(frames=10) == 0.0 and relay.update(frames=20) == 0.0 and asked == [1]


def test_the_machine_is_read_at_most_once_a_period_and_a_new_helper_starts_afresh():
    machine = Machine()
    helper_share = HelperShare(read=machine.read, period=0.5, clock=lambda: machine.now)
    assert helper_share.update(pid=1) == 0.0
    machine.run(0.25, idle_cores=0.0, helper_cores=0.0)
    assert helper_share.update(pid=1) == 0.0 and len(machine.asked) == 1  # within the period: no reading
    machine.run(0.25, idle_cores=0.0, helper_cores=0.0)
    assert helper_share.update(pid=1) == 1.0 and len(machine.asked) == 2
    machine.helper = 0.0  # a restarted helper's CPU time starts from zero
    machine.run(0.5, idle_cores=2.0, helper_cores=0.5)
    assert helper_share.update(pid=2) == 1.0  # its first reading compares with nothing: the share stays
    machine.run(0.5, idle_cores=2.0, helper_cores=0.5)
    assert helper_share.update(pid=2) == 0.0
    machine.helper -= 1.0  # a counter that went back (the same pid reused): that window is skipped
    machine.run(0.5, idle_cores=0.0, helper_cores=0.0)
    assert helper_share.update(pid=2) == 0.0


def test_sending_a_frame_costs_the_loop_and_counts_with_the_next_frame():
    sent = []
    streamer = SimpleNamespace(encodes_elsewhere=False, last_encode_ms=0.0, busy=False, pump=lambda: sent.append(1) or True)
    throttle = FrameThrottle(fps=120, max_overhead=1e-6)  # any cost at all stretches the interval past 1/120
    link = link_with(throttle, encode_ms=0.0, streamer=streamer)
    link.record_cost(0.0)  # the throttle's ignored first sample
    link.pump()  # sends a frame: the comm message and the IOPub thread's turn are the loop's time
    link.record_cost(0.0)
    with_sending = throttle.interval
    assert sent and with_sending > 1 / 120  # the frame's own time was 0: sending it was not
    link.record_cost(0.0)  # counted once: the next frame cost nothing, and the estimate moves a quarter of the way
    assert throttle.interval == pytest.approx(0.75 * with_sending)


@pytest.mark.parametrize(
    "share, waited, counted",
    [(0.0, 0.004, 0.004),   # cores to spare by the machine's idle time, yet the loop's thread waited 4 ms for one
     (0.0, 0.5, 0.010),     # a machine busy with other work: at most the helper's and the server's whole time
     (0.5, 0.001, 0.005)],  # the share already counts more than the loop was seen waiting
)
def test_the_time_the_loops_thread_waited_for_a_core_counts_up_to_the_helpers_and_servers_time(share, waited, counted):
    machine = Machine()
    throttle = FrameThrottle(fps=120, max_overhead=0.1)
    streamer = SimpleNamespace(encodes_elsewhere=True, last_encode_ms=6.0, helper_pid=4321, sent=0)
    clock = lambda: machine.now  # noqa: E731
    relay = RelayCost(read=None)
    relay.per_frame = 0.004  # the server's time per frame: 4 ms, with the helper's 6 ms
    link = link_with(throttle, 6.0, HelperShare(read=machine.read, period=0.5, clock=clock), streamer, relay)
    link.record_cost(0.0001)  # the first readings, and the throttle's ignored first sample
    machine.run(1.0, idle_cores=(1 - share) - 0.3, helper_cores=0.3)  # free: the idle cores and the helper's
    link.record_cost(0.0001, waited=waited)
    assert throttle.interval == pytest.approx((0.0001 + counted) * RAISED / 0.1)


def test_a_loop_that_moves_to_another_thread_compares_its_wait_with_nothing():
    totals = {1: iter([5.0, 5.5]), 2: iter([90.0])}
    thread = [1]
    wait = RunQueueWait(read=lambda: next(totals[thread[0]]), thread_id=lambda: thread[0])
    assert wait.since_last() == 0.0
    thread[0] = 2  # a job's thread, then the kernel's main thread again
    assert wait.since_last() == 0.0
    thread[0] = 1
    assert wait.since_last() == 0.0  # compared with thread 2's reading: nothing to say
    assert RunQueueWait(read=lambda: None).since_last() == 0.0


def test_the_step_after_a_frame_counts_what_it_takes_over_the_next_one():
    throttle = FrameThrottle(fps=120, max_overhead=0.1)
    streamer = SimpleNamespace(encodes_elsewhere=False, last_encode_ms=0.0, busy=False, pump=lambda: False)
    link = link_with(throttle, 0.0, streamer=streamer)
    for first, second in [(0.0031, 0.0003)] * 3:
        link.after_frame.add(first, second)
    link.record_cost(0.0)  # the throttle's ignored first sample
    link.record_cost(0.001)
    assert throttle.interval == pytest.approx((0.001 + 0.0028) * RAISED / 0.1)
