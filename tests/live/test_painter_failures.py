"""A painter that misbehaves in the helper process never hangs or kills the caller: each failure reaches
the user as a clear error at the next push, flush or close, and the view goes on.

The cases that hung or killed the caller before run as a separate process, a plain script using
``LiveView(send=..., in_kernel=True)`` as other front-ends do, so that a regression fails the test
rather than the test run."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import psutil
import pytest
from waiting import wait_until

from gymview.errors import EncoderProcessError, FrameError
from gymview.live.encoding import encoder_process
from gymview.live.streamer import FrameStreamer
from gymview.live.widget import LiveView


@pytest.fixture(autouse=True)
def painters_by_value():
    """This module's painters travel by value, as a notebook's do (the helper cannot import a test module)."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def helper_processes():
    return [p for p in psutil.Process().children() if "gymview.live.encoding.encoder_child" in " ".join(p.cmdline())]


class Frame:
    """A DeferredFrame of any painter."""

    def __init__(self, painter, value=0.0):
        self.painter = painter
        self.state = np.array([value], np.float64)

    def draw(self):
        return self.painter.paint(self.state, None)

    def checked(self):
        return self


class Gray:
    def paint(self, state, canvas):
        return np.full((24, 32, 3), int(state[0]), np.uint8)


class RaisesOnSeven:
    def paint(self, state, canvas):
        if state[0] == 7:
            raise ValueError("painter bug 7")
        return np.full((24, 32, 3), int(state[0]), np.uint8)


class HoldsALock(Gray):
    def __init__(self):
        self.lock = threading.Lock()


VIEWS = []


@pytest.fixture(autouse=True)
def close_views():
    """Close every view a test made, even one that failed: no helper outlives its test."""
    yield
    while VIEWS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            VIEWS.pop().close()


def make_view():
    sent = []
    view = LiveView(send=lambda header, buffers: sent.append(header), in_kernel=True)
    VIEWS.append(view)
    return view, sent


def test_a_painter_that_raises_is_reported_with_its_traceback_and_the_view_goes_on():
    view, sent = make_view()
    painter = RaisesOnSeven()
    view.push(Frame(painter, 7), force=True, step=7)
    with pytest.raises(FrameError) as raised:
        view.flush()
    assert "painter bug 7" in str(raised.value) and "in paint" in str(raised.value)  # the painter's own line
    for step in (8, 9):  # no error is left behind, and frames flow again
        assert view.push(Frame(painter, step), force=True, step=step)
        assert view.flush()
    view.close()
    assert [header["step"] for header in sent] == [8, 9] and view.stats["frames_dropped"] == 1


def test_the_error_of_a_lost_frame_is_raised_by_the_next_push_and_that_push_takes_nothing():
    view, sent = make_view()
    painter = RaisesOnSeven()
    view.push(Frame(painter, 7), force=True, step=7)
    wait_until(lambda: view.stats["frames_dropped"] == 1, "the watcher to collect the helper's answer")
    with pytest.raises(FrameError, match="painter bug 7"):
        view.push(Frame(painter, 8), force=True, step=8)
    assert view.push(Frame(painter, 9), force=True, step=9) and view.flush()
    view.close()
    assert [header["step"] for header in sent] == [9]


def test_close_warns_of_a_frame_lost_since_the_last_push():
    view, _ = make_view()
    view.push(Frame(RaisesOnSeven(), 7), force=True)
    with pytest.warns(RuntimeWarning, match="painter bug 7"):
        view.close()
    assert helper_processes() == []


def test_an_unpicklable_painter_is_refused_at_push_naming_what_cannot_be_pickled():
    view, sent = make_view()
    with pytest.raises(TypeError, match=r"HoldsALock cannot be pickled.*attribute 'lock' \(_thread\.lock\)"):
        view.push(Frame(HoldsALock()), force=True)
    # nothing was taken, so nothing waits: no helper was started and close has nothing to wait for
    assert helper_processes() == [] and not view._streamer.busy
    assert view.push(Frame(Gray(), 5), force=True) and view.flush()
    view.close()
    assert len(sent) == 1


def test_a_painter_whose_module_the_helper_cannot_import_is_reported(tmp_path, monkeypatch):
    (tmp_path / "painters_only_here.py").write_text(
        "import numpy as np\n"
        "class Gray:\n"
        "    def paint(self, state, canvas):\n"
        "        return np.zeros((8, 8, 3), np.uint8)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))  # importable here, not in the helper: pickled by reference
    import painters_only_here

    view, _ = make_view()
    view.push(Frame(painters_only_here.Gray()), force=True)
    with pytest.raises(FrameError, match="(?s)could not be loaded in gymview's helper process.*painters_only_here"):
        view.flush()
    view.close()


SCRIPT = """
import json, os, sys, time
import numpy as np
from gymview.errors import EncoderProcessError, FrameError
from gymview.live.widget import LiveView

class Frame:
    def __init__(self, painter, value):
        self.painter, self.state = painter, np.array([value], np.float64)
    def draw(self):
        return self.painter.paint(self.state, None)
    def checked(self):
        return self

{painter}

sent, errors = [], []
view = LiveView(send=lambda header, buffers: sent.append(header["step"]), in_kernel=True)
painter = Painter()
for step in range(5):
    try:
        view.push(Frame(painter, step), force=True, step=step)
        view.flush()
    except (EncoderProcessError, FrameError) as error:
        errors.append(f"{{type(error).__name__}}: {{error}}")
view.push(np.zeros((8, 8, 3), np.uint8), force=True, step=99)  # pixels after it all
view.flush()
view.close()
print(json.dumps({{"sent": sent, "errors": errors}}))
"""


def run_script(painter: str) -> dict:
    """Run a plain script that pushes five frames of ``painter``, then pixels; what it sent and caught."""
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(painter=textwrap.dedent(painter))],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"the caller died ({done.returncode}): {done.stderr[-2000:]}"
    return json.loads(done.stdout.splitlines()[-1])


def test_a_painter_that_prints_does_not_disturb_the_frames():
    result = run_script("""
        class Painter:
            def paint(self, state, canvas):
                print("painting", state[0], "x" * 100)
                os.write(1, b"and as C code would, straight to descriptor 1\\n")
                return np.full((24, 32, 3), int(state[0]), np.uint8)
    """)
    assert result == {"sent": [0, 1, 2, 3, 4, 99], "errors": []}


def test_a_helper_that_dies_drawing_is_reported_with_its_signal_and_the_caller_lives_on():
    result = run_script("""
        class Painter:
            def paint(self, state, canvas):
                if state[0] == 2:
                    print("about to abort", file=sys.stderr, flush=True)
                    os.abort()
                return np.full((24, 32, 3), int(state[0]), np.uint8)
    """)
    assert result["sent"] == [0, 1, 3, 4, 99]  # frame 2 was never drawn in the caller
    (error,) = result["errors"]
    assert error.startswith("EncoderProcessError") and "killed by SIGABRT" in error and "about to abort" in error


def test_a_painter_that_fails_where_no_helper_can_run_is_reported_the_same_way():
    sent = []
    streamer = FrameStreamer(lambda header, buffers: sent.append(header["step"]), offload=False)
    streamer.offer(Frame(RaisesOnSeven(), 7), {"step": 7})  # drawn in this process: no helper here
    with pytest.raises(FrameError, match="painter bug 7"):
        streamer.offer(Frame(RaisesOnSeven(), 8), {"step": 8})
    streamer.offer(Frame(RaisesOnSeven(), 9), {"step": 9})
    streamer.stop()
    assert sent == [9] and not streamer.busy


class Hangs:
    def paint(self, state, canvas):
        import time

        time.sleep(3600)


def test_a_painter_that_hangs_is_stopped_and_reported_by_stop():
    view, sent = make_view()
    view.push(Frame(Hangs()), force=True)
    with pytest.raises(EncoderProcessError, match="did not finish a frame in time"):
        view.stop(timeout=0.5)
    assert helper_processes() == []  # killed, not waited for
    assert view.push(Frame(Gray(), 3), force=True, step=3) and view.flush()
    assert [header["step"] for header in sent] == [3]


def test_a_helper_killed_by_a_signal_without_a_name_is_reported_by_number():
    import signal

    view, _ = make_view()
    view.push(Frame(Gray(), 1), force=True)
    view.flush()
    (helper,) = helper_processes()
    helper.suspend()  # it takes the next frame and never answers
    view.push(Frame(Gray(), 2), force=True)
    helper.send_signal(signal.SIGRTMIN + 2)
    helper.resume()
    with pytest.raises(EncoderProcessError, match=f"killed by signal {int(signal.SIGRTMIN) + 2}"):
        view.flush()


DRAWN_HERE = []


class CountsWhereItDraws(Gray):
    def paint(self, state, canvas):
        DRAWN_HERE.append(os.getpid())
        return super().paint(state, canvas)


def test_after_a_helper_died_a_helper_that_cannot_start_never_moves_drawing_into_the_caller(monkeypatch):
    view, sent = make_view()
    view.push(Frame(CountsWhereItDraws(), 1), force=True)
    view.flush()
    (helper,) = helper_processes()
    helper.kill()
    helper.wait()
    monkeypatch.setattr(encoder_process.sys, "executable", "/nonexistent/python")  # no new helper can start
    DRAWN_HERE.clear()
    view.push(Frame(CountsWhereItDraws(), 2), force=True)
    with pytest.raises(EncoderProcessError):
        view.flush()
    assert os.getpid() not in DRAWN_HERE and len(sent) == 1


class Counted:
    """Paints how many painters of its kind the helper unpickled before it, itself included (counted in
    the helper's environment: each pickle brings its class anew)."""

    def __init__(self, label):
        self.label = label

    def __setstate__(self, state):
        self.number = int(os.environ.get("GYMVIEW_TEST_UNPICKLED", "0")) + 1
        os.environ["GYMVIEW_TEST_UNPICKLED"] = str(self.number)

    def paint(self, state, canvas):
        return np.full((8, 8, 3), self.number, np.uint8)


def test_a_painter_sent_to_the_helper_again_is_the_one_it_unpickled_before():
    # two views' MuJoCo painters taking turns in one helper made an OpenGL context (94 MB) at each turn
    import io

    from PIL import Image

    helper = encoder_process.EncoderProcess()
    try:
        first, second = Counted("first"), Counted("second")
        painted = [
            np.asarray(Image.open(io.BytesIO(helper.encode(Frame(painter), 8, "png", 0)[0])))[0, 0, 0]
            for painter in (first, second, first, second, first)
        ]
    finally:
        helper.close()
    assert painted == [1, 2, 1, 2, 1]
