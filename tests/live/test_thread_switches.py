"""While a LiveView is open in a kernel the GIL changes hands every 1 ms, and the user's setting comes back after."""

import sys

import pytest

from gymview.live import LiveView
from gymview.live.kernels.thread_switches import QUICK_SECONDS


@pytest.fixture
def default_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield
    sys.setswitchinterval(before)


def view(in_kernel):
    return LiveView(send=lambda header, buffers: None, in_kernel=in_kernel)


def test_views_in_a_kernel_shorten_the_switch_interval_until_the_last_one_closes(default_interval):
    first, second = view(True), view(True)
    assert sys.getswitchinterval() == pytest.approx(QUICK_SECONDS)
    first.close()
    first.close()  # a second close gives back nothing more
    assert sys.getswitchinterval() == pytest.approx(QUICK_SECONDS)
    second.close()
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_a_view_outside_a_kernel_leaves_the_interval_alone(default_interval):
    outside = view(False)
    assert sys.getswitchinterval() == pytest.approx(0.005)
    outside.close()
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_an_interval_the_user_sets_meanwhile_is_kept(default_interval):
    shown = view(True)
    sys.setswitchinterval(0.0002)
    shown.close()
    assert sys.getswitchinterval() == pytest.approx(0.0002)
    sys.setswitchinterval(0.0005)
    shown = view(True)  # already quicker than 1 ms: not slowed down, and not changed at close
    assert sys.getswitchinterval() == pytest.approx(0.0005)
    shown.close()
    assert sys.getswitchinterval() == pytest.approx(0.0005)


def test_a_forked_child_gets_the_previous_interval_back(default_interval):
    import os

    shown = view(True)
    child = os.fork()
    if child == 0:  # the child: its views are inert, nothing holds the 1 ms interval
        os._exit(0 if abs(sys.getswitchinterval() - 0.005) < 1e-9 else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sys.getswitchinterval() == pytest.approx(QUICK_SECONDS)  # the parent's view still holds it
    shown.close()
    assert sys.getswitchinterval() == pytest.approx(0.005)
