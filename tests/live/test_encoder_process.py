"""EncoderProcess never makes its caller wait for the child: frames and painters of any size are handed over
while the child cannot read, and a child found dying is told of at once, how it ended later."""

import io
import os
import signal
import sys
import threading

import numpy as np
import psutil
import pytest
from PIL import Image
from waiting import wait_until

from gymview.image.frames import downsample
from gymview.live.encoding.encoder_process import EncoderProcess, HelperEnding

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the shared frame file is POSIX's")


@pytest.fixture(autouse=True)
def painters_by_value():
    """This module's painters travel by value, as a notebook's do (the helper cannot import a test module)."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def helper_of(encoder):
    """The encoder's child, found as a user would (the kernel's children), not through its privates."""
    (child,) = [p for p in psutil.Process().children() if "encoder_child" in " ".join(p.cmdline())]
    return child


def handed_over_while_stopped(encoder, submit):
    """Run ``submit()`` while the child is stopped (it reads nothing); True if it returned. A pipe write of more
    than the pipe holds would wait for the child for ever: the thread is given a minute, then the child goes on."""
    child = helper_of(encoder)
    child.send_signal(signal.SIGSTOP)
    try:
        thread = threading.Thread(target=submit, daemon=True)
        thread.start()
        thread.join(60)
        return not thread.is_alive()
    finally:
        child.send_signal(signal.SIGCONT)


class Stripes:
    """A painter with megabytes of its own (as a renderer's precomputed geometry is)."""

    def __init__(self):
        self.table = np.arange(12 << 20, dtype=np.uint8)  # more than the widest pipe (8 MiB)

    def paint(self, state, canvas):
        return np.full((24, 32, 3), int(state[0]) + int(self.table[7]), np.uint8)


class Frame:
    def __init__(self, painter, value):
        self.painter, self.state = painter, np.array([value], np.float64)


def test_a_4k_frame_goes_to_a_child_that_cannot_read_and_arrives_whole():
    encoder = EncoderProcess()
    try:
        encoder.encode(np.zeros((8, 8, 3), np.uint8), 512, "png", 0)  # the child runs
        frame = np.random.default_rng(1).integers(0, 255, (2160, 3840, 3), np.uint8)  # 25 MB: no pipe holds it
        assert handed_over_while_stopped(encoder, lambda: encoder.submit(frame, 480, "png", 0))
        data, _, _ = encoder.receive()
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(data))), downsample(frame, 480))
    finally:
        encoder.close()


def test_a_painter_of_megabytes_goes_to_a_child_that_cannot_read():
    encoder = EncoderProcess()
    try:
        encoder.encode(np.zeros((8, 8, 3), np.uint8), 512, "png", 0)
        painter = Stripes()
        assert handed_over_while_stopped(encoder, lambda: encoder.submit(Frame(painter, 3), 512, "png", 0))
        encoder.receive()
        assert encoder.encode(Frame(painter, 4), 512, "png", 0)[1:] == (32, 24)
    finally:
        encoder.close()


class ClosesItsPipesAndLivesOn:
    def paint(self, state, canvas):
        import time

        os.closerange(0, 256)
        time.sleep(60)


def test_a_child_that_closed_its_pipes_is_told_at_once_and_how_it_ended_comes_after():
    ended = []
    encoder = EncoderProcess(on_ended=ended.append)
    try:
        encoder.submit(Frame(ClosesItsPipesAndLivesOn(), 0), 512, "png", 0)
        with pytest.raises(HelperEnding, match="closed its pipe"):
            encoder.receive()  # no wait for the child: it lives on
        wait_until(lambda: ended, "the helper's end to be told", timeout=60)
        assert "killed by SIGKILL" in str(ended[0])  # it did not end on its own, so it was ended
        assert encoder.encode(np.zeros((8, 8, 3), np.uint8), 512, "png", 0)[1:] == (8, 8)  # a new child
    finally:
        encoder.close()
