import threading

import pytest

from gymview._internal.worker import Worker
from gymview.errors import WorkerError


def test_start_and_stop_are_idempotent():
    started = []

    def loop(stop):
        started.append(1)
        stop.wait()

    worker = Worker("t", loop)
    worker.start()
    worker.start()
    assert worker.running
    worker.stop()
    worker.stop()
    assert not worker.running and started == [1]


def test_error_is_reraised_once_on_next_call():
    def loop(stop):
        raise KeyError("boom")

    worker = Worker("t", loop)
    worker.start()
    worker._thread.join(5)
    with pytest.raises(WorkerError, match="boom") as info:
        worker.check()
    assert isinstance(info.value.__cause__, KeyError)
    worker.check()  # reported once


def test_stop_reraises_and_restart_works():
    calls = []

    def loop(stop):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("first run fails")
        stop.wait()

    worker = Worker("t", loop)
    worker.start()
    worker._thread.join(5)
    with pytest.raises(WorkerError):
        worker.stop()
    worker.start()
    worker.stop()
    assert calls == [1, 1]


def test_stop_times_out_on_a_stuck_thread():
    release = threading.Event()
    worker = Worker("stuck", lambda stop: release.wait())
    worker.start()
    with pytest.raises(TimeoutError, match="stuck"):
        worker.stop(timeout=0.05)
    release.set()


def test_wake_is_called_on_stop():
    woken = []
    worker = Worker("t", lambda stop: stop.wait(), wake=lambda: woken.append(1))
    worker.start()
    worker.stop()
    assert woken == [1]


def test_a_thread_that_asks_to_keep_running_while_it_is_stopped_does_not_hold_up_stop():
    # a stream's watcher, finishing its chores when the view closes, asks for itself again
    worker = None

    def loop(stop):
        stop.wait()
        worker.start()

    worker = Worker("asks again", loop)
    worker.start()
    worker.stop(timeout=60)
    assert not worker.running


def test_a_start_from_another_thread_while_stop_waits_starts_the_next_thread():
    let_end, ending, second = threading.Event(), threading.Event(), threading.Event()
    runs = []

    def loop(stop):
        runs.append(1)
        if len(runs) == 1:
            stop.wait()
            ending.set()
            let_end.wait()
        else:
            second.set()
            stop.wait()

    worker = Worker("next", loop)
    worker.start()
    stopper = threading.Thread(target=worker.stop, kwargs={"timeout": 60})
    stopper.start()
    ending.wait(60)
    worker.start()  # new work came while the last thread ends: a thread must look at it
    let_end.set()
    stopper.join(60)
    assert second.wait(60) and worker.running and runs == [1, 1]
    worker.stop()
    assert not worker.running


def test_after_a_stop_that_timed_out_a_start_leaves_the_stuck_thread_alone():
    release = threading.Event()
    worker = Worker("stuck-once-stopped", lambda stop: release.wait())
    worker.start()
    with pytest.raises(TimeoutError):
        worker.stop(timeout=0.05)
    worker.start()  # the stuck thread is still this worker's: no second one
    assert [t.name for t in threading.enumerate()].count("gymview-stuck-once-stopped") == 1
    release.set()
    worker.stop()
