"""StreamWatcher: chores under the stream's lock, their follow-up after it, retirement when idle, failures kept."""

import threading
import time
from types import SimpleNamespace

import pytest

from gymview.errors import WorkerError
from gymview.live import stream_watcher
from gymview.live.stream_watcher import StreamWatcher
from tests.helpers.waiting import wait_until


def test_what_a_chore_hands_back_runs_after_the_lock_is_let_go():
    lock, seen = threading.Lock(), []

    def later():
        seen.append(lock.acquire(blocking=False))
        lock.release()

    watcher = StreamWatcher(lock, lambda: (True, later), retire=lambda: None)
    with lock:
        watcher.keep_going()
    watcher.wake()
    wait_until(lambda: seen, "the chore's follow-up")
    watcher.stop()
    assert seen[0] is True


def test_an_idle_watcher_retires_ends_the_helper_and_a_new_one_starts_on_the_next_work(monkeypatch):
    monkeypatch.setattr(stream_watcher, "PUMP_WAIT_SECONDS", 0.001)
    clock, lock, ended, chores, watching = SimpleNamespace(now=0.0), threading.Lock(), [], [], []

    def chore():
        chores.append(clock.now)
        clock.now += stream_watcher.IDLE_EXIT_SECONDS  # nothing to do, for long enough
        return False, None

    watcher = StreamWatcher(lock, chore, retire=lambda: ended.append, on_watching=watching.append,
                            clock=lambda: clock.now)
    with lock:
        watcher.keep_going()
    wait_until(lambda: not watcher.running, "the idle watcher to end")
    assert ended == [5.0] and watching == [True, False]
    with lock:
        watcher.keep_going()
    wait_until(lambda: watching == [True, False, True, False], "a second watcher to start and retire")
    watcher.stop()


def test_a_chore_that_raises_ends_the_watcher_and_is_raised_once():
    lock = threading.Lock()

    def chore():
        raise OSError("disk gone")

    watcher = StreamWatcher(lock, chore, retire=lambda: None)
    with lock:
        watcher.keep_going()
    watcher.wake()
    wait_until(lambda: watcher.failed, "the failure")
    with pytest.raises(WorkerError, match="disk gone"):
        watcher.check()
    watcher.check()  # once
    watcher.stop()


def test_work_that_comes_while_an_idled_out_watcher_still_ends_the_helper_gets_a_new_watcher(monkeypatch):
    monkeypatch.setattr(stream_watcher, "PUMP_WAIT_SECONDS", 0.001)
    clock, lock, ending, chores = SimpleNamespace(now=0.0), threading.Lock(), threading.Event(), []

    def chore():
        chores.append(threading.current_thread())
        clock.now += stream_watcher.IDLE_EXIT_SECONDS
        return False, None

    def retire():
        return lambda timeout: ending.wait(30)  # the helper takes its time to end

    watcher = StreamWatcher(lock, chore, retire, clock=lambda: clock.now)
    with lock:
        watcher.keep_going()
    wait_until(lambda: chores, "the first watcher's chores")
    first = chores[0]
    with lock:
        watcher.keep_going()  # the first is still ending the helper: a new one, not waited for
    wait_until(lambda: any(thread is not first for thread in chores), "a second watcher's chores")
    ending.set()
    watcher.stop()


def sleepy_watcher():
    """(its lock, its looks, a watcher that never has anything left after a look and whose clock stands still)."""
    lock, looks = threading.Lock(), []

    def chore():
        looks.append(1)
        return False, None

    return lock, looks, StreamWatcher(lock, chore, retire=lambda: None, clock=lambda: 0.0, next_look=lambda: None)


def test_a_watcher_with_nothing_left_sleeps_until_new_work_wakes_it(monkeypatch):
    """Each look takes the interpreter from a busy loop: with nothing left (``next_look`` None) the watcher does not
    look again, its idle exit far off, until keep_going() brings work."""
    monkeypatch.setattr(stream_watcher, "PUMP_WAIT_SECONDS", 0.001)
    monkeypatch.setattr(stream_watcher, "IDLE_EXIT_SECONDS", 600.0)  # only keep_going() can bring the second look
    lock, looks, watcher = sleepy_watcher()
    with lock:
        watcher.keep_going()
    wait_until(lambda: looks and watcher.sleeping, "the first look, and the sleep after it")
    time.sleep(0.2)  # a watcher looking every PUMP_WAIT_SECONDS would have looked again by now
    assert len(looks) == 1
    with lock:
        watcher.keep_going()
    wait_until(lambda: len(looks) == 2, "the look at the new work")
    watcher.stop()


def test_a_nudge_the_first_look_already_answers_brings_no_second_look(monkeypatch):
    """The watcher's first wait may end before keep_going() (which holds the lock) nudges it: the look that follows
    answers that nudge, so the watcher sleeps after it rather than looking again."""
    monkeypatch.setattr(stream_watcher, "PUMP_WAIT_SECONDS", 0.0)  # the first wait ends at once
    monkeypatch.setattr(stream_watcher, "IDLE_EXIT_SECONDS", 600.0)
    lock, looks, watcher = sleepy_watcher()
    with lock:
        watcher.keep_going()
        time.sleep(0.05)  # the new thread's wait has ended: it waits for the lock, its nudge still to come
    wait_until(lambda: looks and watcher.sleeping, "the first look, and the sleep after it")
    time.sleep(0.2)
    assert len(looks) == 1
    watcher.stop()
