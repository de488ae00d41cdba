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
