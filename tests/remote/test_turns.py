"""Turns: a published run's loop lets its publisher's thread go round when it fell behind, and never waits long."""

from gymview.remote.publisher import LATE_SECONDS, TURN_SECONDS, PublishedRun, Turns
from gymview.remote.wire import RunInfo


class Thread:
    """A publisher's thread kept from the interpreter: it goes round once the loop has slept ``needs`` times."""

    def __init__(self, needs):
        self.now, self.needs, self.slept = 100.0, needs, 0
        self.turns = Turns(clock=lambda: self.now, sleep=self.sleep)

    def sleep(self, seconds):
        self.now += seconds
        self.slept += 1
        if self.slept == self.needs:
            self.turns.went_round()


def test_a_thread_that_went_round_lately_costs_the_loop_nothing():
    thread = Thread(needs=1)
    thread.turns.went_round()
    thread.now += LATE_SECONDS / 2
    assert not thread.turns.give() and thread.slept == 0


def test_a_late_thread_gets_the_loops_sleeps_until_it_went_round():
    thread = Thread(needs=3)
    thread.now += LATE_SECONDS
    assert thread.turns.give() and thread.slept == 3
    assert not thread.turns.give()  # it went round just now


def test_the_loop_waits_for_a_late_thread_turn_seconds_at_most():
    thread = Thread(needs=10**6)
    thread.now += LATE_SECONDS
    started = thread.now
    assert thread.turns.give()
    assert TURN_SECONDS <= thread.now - started < TURN_SECONDS + 0.001


class Publisher:
    """What a PublishedRun asks of its publisher here: its turns, and to be told the run ended."""

    def __init__(self):
        self.given = 0
        self.turns = self

    def give(self):
        self.given += 1

    def remove(self, run):
        pass


def test_a_run_that_ended_or_was_forked_waits_for_no_thread():
    for end in ("close", "go_inert"):
        publisher = Publisher()
        run = PublishedRun(publisher, RunInfo("vm/1/1", "a", "vm", 1))
        run.give_turn()
        getattr(run, end)()
        run.give_turn()  # a forked child's copy of its parent's publisher has no thread that goes round
        assert publisher.given == 1, end
