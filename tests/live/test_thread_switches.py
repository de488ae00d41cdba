"""While frames flow to a LiveView in a kernel the GIL changes hands every 1 ms; the user's setting comes
back when the last stream goes quiet, also for views that were never closed."""

import gc
import os
import sys
import weakref

import numpy as np
import pytest
from live_helpers import ShownView
from waiting import wait_until

from gymview.live import LiveView, stream_watcher
from gymview.live.controls import RunControls
from gymview.live.kernels import registry
from gymview.live.kernels.thread_switches import QUICK_SECONDS


@pytest.fixture
def default_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield
    sys.setswitchinterval(before)


def streaming(in_kernel=True):
    """A view in a kernel (or not) that has shown a frame: its stream's watcher runs."""
    view = ShownView() if in_kernel else LiveView(send=lambda header, buffers: None, in_kernel=False)
    view.push(np.zeros((8, 8, 3), np.uint8), force=True)
    view.flush()
    if in_kernel:  # the stream's watcher thread takes the hold as it starts
        wait_until(lambda: sys.getswitchinterval() <= QUICK_SECONDS + 1e-9, "the watcher to hold the interval")
    return view


def test_streams_in_a_kernel_shorten_the_switch_interval_until_the_last_one_ends(default_interval):
    first = ShownView()
    assert sys.getswitchinterval() == pytest.approx(0.005)  # no frame yet: nothing to hurry
    first.close()
    first, second = streaming(), streaming()
    assert sys.getswitchinterval() == pytest.approx(QUICK_SECONDS)
    first.close()
    first.close()  # a second close gives back nothing more
    assert sys.getswitchinterval() == pytest.approx(QUICK_SECONDS)
    second.stop()  # a stopped view, still open, holds nothing
    assert sys.getswitchinterval() == pytest.approx(0.005)
    second.push(np.zeros((8, 8, 3), np.uint8), force=True)  # frames again: quick again
    wait_until(lambda: sys.getswitchinterval() == pytest.approx(QUICK_SECONDS), "the interval held again")
    second.close()
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_a_view_never_closed_gives_the_interval_back_once_its_stream_goes_quiet(default_interval, monkeypatch):
    monkeypatch.setattr(stream_watcher, "IDLE_EXIT_SECONDS", 0.2)
    forgotten = streaming()  # a cell run again: the old view is never closed
    assert sys.getswitchinterval() == pytest.approx(QUICK_SECONDS)
    wait_until(lambda: sys.getswitchinterval() == pytest.approx(0.005), "the idle stream to give the interval back")
    forgotten.close()


def test_a_view_outside_a_kernel_leaves_the_interval_alone(default_interval):
    outside = streaming(in_kernel=False)
    assert sys.getswitchinterval() == pytest.approx(0.005)
    outside.close()


def test_an_interval_the_user_sets_meanwhile_is_kept(default_interval):
    shown = streaming()
    sys.setswitchinterval(0.0002)
    shown.close()
    assert sys.getswitchinterval() == pytest.approx(0.0002)
    sys.setswitchinterval(0.0005)
    shown = streaming()  # already quicker than 1 ms: not slowed down, and not changed at close
    assert sys.getswitchinterval() == pytest.approx(0.0005)
    shown.close()
    assert sys.getswitchinterval() == pytest.approx(0.0005)


def test_gymview_keeps_no_view_alive_that_its_owner_dropped():
    class View:
        pass

    view, controls = View(), RunControls()
    registry.add(view, lambda view: None, lambda view, content: None)
    dropped = weakref.ref(view), weakref.ref(controls)
    del view, controls
    gc.collect()
    assert [ref() for ref in dropped] == [None, None]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_the_previous_interval_back(default_interval):
    shown = streaming()
    child = os.fork()
    if child == 0:  # the child: its views are inert, nothing holds the 1 ms interval
        os._exit(0 if abs(sys.getswitchinterval() - 0.005) < 1e-9 else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sys.getswitchinterval() == pytest.approx(QUICK_SECONDS)  # the parent's stream still holds it
    shown.close()
    assert sys.getswitchinterval() == pytest.approx(0.005)
