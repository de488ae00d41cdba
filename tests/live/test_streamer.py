import io
import os
import sys
import threading
import time
import warnings

import numpy as np
import psutil
import pytest
from PIL import Image

from live_helpers import STREAMERS
from waiting import wait_until
from gymview.errors import EncoderProcessError, FrameError, WorkerError
from gymview.image.codec import encode_frame
from gymview.image.frames import downsample
from gymview.live.pacing import page_acks
from gymview.live import stream_watcher
from gymview.live import streamer as stream
from gymview.live import protocol
from gymview.live.encoding.encoder_process import EncoderProcess, encoder_command
from gymview.live.streamer import FrameStreamer
from gymview.live.pacing.throttle import MessageBudget


class Recorder:
    def __init__(self):
        self.messages = []
        self.lock = threading.Lock()

    def __call__(self, header, buffers):
        with self.lock:
            self.messages.append((header, buffers))

    def steps(self):
        with self.lock:
            return [header["step"] for header, _ in self.messages]


class Budget:
    """A message budget the test opens and closes, counting how often it was asked."""

    def __init__(self, open_=True):
        self.open = open_
        self.asked = 0

    def try_acquire(self):
        self.asked += 1
        return self.open


class Clock:
    """Flow control's time, which moves only when the test says: load on the machine cannot age an ack."""

    def __init__(self):
        self.now = 100.0
        self.reads = 0  # each flow-control decision reads it once: a test waits for the next decision

    def __call__(self):
        self.reads += 1
        return self.now



def make(send=None, **kwargs):
    sent = Recorder() if send is None else send
    kwargs.setdefault("budget", MessageBudget(10_000, 100))
    kwargs.setdefault("clock", Clock())
    streamer = FrameStreamer(sent, **kwargs)
    STREAMERS.append(streamer)
    return streamer, sent


def frame(value=0, h=400, w=600):
    return np.full((h, w, 3), value, np.uint8)


def encoder_children():
    return [p for p in psutil.Process().children() if "gymview.live.encoding.encoder_child" in " ".join(p.cmdline())]


@pytest.fixture
def patient_watcher(monkeypatch):
    """The watcher thread looks every 30 s instead of 50 ms: only pump, flush or stop send."""
    monkeypatch.setattr(stream_watcher, "PUMP_WAIT_SECONDS", 30.0)


def test_frames_are_downsampled_encoded_and_numbered_without_gaps():
    streamer, sent = make(max_size=300)
    for i in range(5):
        streamer.offer(frame(i * 40), {"step": i, "episode": 1, "episode_return": float(i)})
        assert streamer.flush()
    streamer.stop()
    headers = [h for h, _ in sent.messages]
    assert [h["seq"] for h in headers] == [0, 1, 2, 3, 4]
    assert all((h["width"], h["height"], h["format"], h["v"]) == (300, 200, "jpeg", protocol.PROTOCOL_VERSION) for h in headers)
    assert headers[3]["step"] == 3 and headers[3]["episode_return"] == 3.0
    image = Image.open(io.BytesIO(sent.messages[4][1][0]))
    assert image.format == "JPEG" and image.size == (300, 200)
    assert abs(np.asarray(image).mean() - 160) < 3
    assert streamer.sent == 5 and streamer.bytes_sent == sum(len(b[0]) for _, b in sent.messages)


def test_png_frames_are_lossless():
    streamer, sent = make(image_format="png", max_size=64)
    pattern = (np.arange(32 * 48 * 3) % 251).astype(np.uint8).reshape(32, 48, 3)
    streamer.offer(pattern, {})
    streamer.stop()
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(sent.messages[0][1][0]))), pattern)


def send_through(streamer, step):
    """Offer a small frame and wait until it is sent."""
    streamer.offer(frame(h=20, w=20), {"step": step})
    streamer.flush()


def test_acks_bound_how_far_the_browser_lags_only_while_they_arrive(patient_watcher):
    clock = Clock()
    streamer, sent = make(max_lag=0.5, clock=clock)

    send_through(streamer, 0)
    assert streamer.can_send()  # no ack ever: the time throttle alone rules
    streamer.acknowledge(0)
    send_through(streamer, 1)
    send_through(streamer, 2)
    clock.now += 0.4
    assert streamer.can_send()  # frames 1 and 2 are unacknowledged, but for less than max_lag
    clock.now += 0.1
    assert not streamer.can_send()  # frame 1 left max_lag ago, unacknowledged, while acks arrive
    streamer.acknowledge(1)  # one ack covers every frame up to its number
    assert not streamer.can_send()  # frame 2 left as long ago
    streamer.offer(frame(h=20, w=20), {"step": 3})
    assert streamer.busy and not streamer.pump() and sent.steps() == [0, 1, 2]  # waits for the browser
    streamer.acknowledge(2)
    wait_until(streamer.pump)
    assert sent.steps() == [0, 1, 2, 3] and streamer.skipped == 0
    clock.now += page_acks.ACK_FRESH_SECONDS
    assert streamer.can_send()  # acks stopped arriving (blocked cell, closed tab): go on
    send_through(streamer, 4)
    clock.now += 1.0
    streamer.acknowledge(2)  # acks resume: frames 3 and 4, sent during the silence, are not held against it
    assert streamer.can_send()
    streamer.stop()


def test_each_page_is_held_to_max_lag_until_its_acks_stop(patient_watcher):
    clock = Clock()
    streamer, _ = make(max_lag=0.5, clock=clock)

    streamer.acknowledge(-1, "fast")
    streamer.acknowledge(-1, "slow")
    send_through(streamer, 0)
    send_through(streamer, 1)
    clock.now += 0.5
    streamer.acknowledge(1, "fast")
    assert not streamer.can_send()  # the slow page has drawn nothing for max_lag: it holds frames back
    streamer.acknowledge(0, "slow")
    assert not streamer.can_send()  # frame 1 is still owed to it
    streamer.acknowledge(1, "slow")
    assert streamer.can_send() and streamer.acked == 1
    send_through(streamer, 2)
    clock.now += 0.6
    streamer.acknowledge(2, "fast")  # the slow page went away (a reload): its acks stopped
    assert not streamer.can_send()  # for less than ACK_FRESH_SECONDS it still counts
    clock.now += page_acks.ACK_FRESH_SECONDS - 0.6
    streamer.acknowledge(2, "fast")
    assert streamer.can_send()  # after that only the page still acking counts
    streamer.acknowledge(2, "new")  # a page that appears holds nothing sent before it came against it
    assert streamer.can_send()
    streamer.stop()


def pump_until_sent(streamer):
    wait_until(lambda: not (streamer.pump(), streamer.busy)[1])


def test_a_frame_without_room_waits_for_it_and_a_newer_one_takes_its_place(patient_watcher):
    clock = Clock()
    streamer, sent = make(clock=clock)
    streamer.acknowledge(-1)  # the browser acks
    streamer.offer(frame(h=20, w=20), {"step": 0})
    streamer.flush()
    clock.now += streamer.max_lag
    streamer.acknowledge(-1)  # frame 0 unacknowledged for max_lag while acks arrive: no room
    streamer.offer(frame(h=20, w=20), {"step": 1})
    clock.now += 0.9  # a wait longer than any between acks: the frame is kept all the same
    streamer.acknowledge(-1)
    assert streamer.busy and not streamer.pump()
    streamer.offer(frame(h=20, w=20), {"step": 2})  # the loop went on: the newer frame waits instead
    assert streamer.waits_for_room
    streamer.acknowledge(0)
    wait_until(lambda: not streamer.waits_for_room, "the watcher woken by the ack", timeout=10)
    pump_until_sent(streamer)
    assert sent.steps() == [0, 2] and (streamer.replaced, streamer.skipped) == (1, 0)
    clock.now += streamer.max_lag
    streamer.acknowledge(0)
    streamer.offer(frame(h=20, w=20), {"step": 3})  # a loop that pauses here: its last frame
    assert not streamer.pump()
    assert streamer.flush() and sent.steps() == [0, 2, 3]  # flushed whether or not the page has room
    streamer.stop()


def test_a_spent_budget_holds_the_frame_back_until_it_allows(patient_watcher):
    budget = Budget(open_=False)
    streamer, sent = make(budget=budget)
    streamer.offer(frame(h=20, w=20), {"step": 0})
    assert not streamer.pump() and streamer.busy
    streamer.offer(frame(h=20, w=20), {"step": 1})
    budget.open = True
    pump_until_sent(streamer)
    streamer.stop()
    assert sent.steps() == [1] and (streamer.replaced, streamer.skipped) == (1, 0)


def test_a_resend_repeats_the_last_frame_within_the_budget_and_the_ack_bound():
    budget = Budget()
    clock = Clock()
    streamer, sent = make(budget=budget, clock=clock)
    streamer.acknowledge(-1)  # the browser acks
    streamer.resend_latest()  # nothing sent yet: nothing to repeat, no thread started
    assert not streamer.running
    streamer.offer(frame(h=20, w=20), {"step": 7})
    streamer.flush()
    budget.open, asked = False, budget.asked
    streamer.resend_latest()
    wait_until(lambda: budget.asked >= asked + 2)  # the watcher asked twice and was refused
    assert len(sent.messages) == 1
    clock.now += streamer.max_lag
    streamer.acknowledge(-1)  # frame 0 unacknowledged for max_lag while acks arrive: no room either
    budget.open = True
    reads = clock.reads
    wait_until(lambda: clock.reads >= reads + 2)  # the watcher weighed the resend again, with the budget open
    assert len(sent.messages) == 1
    streamer.acknowledge(0)
    wait_until(lambda: len(sent.messages) == 2)
    streamer.stop()
    assert [h["seq"] for h, _ in sent.messages] == [0, 0]
    assert sent.messages[0][1] == sent.messages[1][1]


def test_send_errors_reach_the_user(patient_watcher):
    def broken(header, buffers):
        raise ConnectionError("iopub closed")

    streamer, _ = make(broken, budget=MessageBudget(100, 10))
    streamer.offer(frame(h=20, w=20), {})
    with pytest.raises(FrameError, match="could not be sent.*iopub closed") as caught:  # sent by the caller's flush
        streamer.flush()
    assert isinstance(caught.value.__cause__, ConnectionError)
    streamer.stop()


def test_a_send_that_fails_in_the_watcher_reaches_the_user_and_the_watcher_goes_on():
    failing = threading.Event()
    failing.set()
    sent = []

    def flaky(header, buffers):
        if failing.is_set():
            failing.clear()
            raise ConnectionError("iopub closed")
        sent.append(header["seq"])

    streamer, _ = make(flaky, budget=MessageBudget(100, 10))
    streamer.offer(frame(h=20, w=20), {})  # nobody pumps: the watcher sends it, and fails
    wait_until(lambda: not failing.is_set())
    with pytest.raises(FrameError, match="iopub closed"):
        streamer.offer(frame(h=20, w=20), {})
    assert streamer.running, "a failed send does not end the watcher"
    streamer.offer(frame(h=20, w=20), {})
    wait_until(lambda: sent)  # the watcher sends it
    streamer.stop()
    assert sent == [1]


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="max_size"):
        FrameStreamer(print, max_size=8)
    for bad in (0, -1.0, True, "1"):
        with pytest.raises(ValueError, match="max_lag"):
            FrameStreamer(print, max_lag=bad)
    with pytest.raises(ValueError, match="format"):
        FrameStreamer(print, image_format="bmp")
    with pytest.raises(ValueError, match="quality"):
        FrameStreamer(print, quality=0)


def test_no_thread_or_process_left_after_stop():
    streamer, _ = make()
    streamer.offer(frame(h=20, w=20), {})
    streamer.flush()
    children = encoder_children()
    assert len(children) == 1 and streamer.running
    streamer.stop()
    assert not streamer.running and not children[0].is_running()
    streamer.stop()  # idempotent


def test_encoder_process_and_in_thread_paths_give_the_same_picture():
    pattern = (np.indices((90, 130)).sum(axis=0) % 7 * 30).astype(np.uint8)
    picture = np.repeat(pattern[:, :, None], 3, axis=2)
    results = []
    for offload in (True, False):
        streamer, sent = make(max_size=64, image_format="png", offload=offload)
        streamer.offer(picture, {})
        streamer.stop()
        header, buffers = sent.messages[0]
        results.append(((header["width"], header["height"]), buffers[0]))
    assert results[0] == results[1] and results[0][0] == (64, 44)


def test_a_killed_encoder_process_is_reported_with_its_signal_and_replaced():
    streamer, sent = make()
    streamer.offer(frame(h=20, w=20), {"step": 0})
    streamer.flush()
    (first,) = encoder_children()
    first.kill()  # not reaped here: the streamer reads how it ended
    wait_until(lambda: first.status() == psutil.STATUS_ZOMBIE)
    streamer.offer(frame(h=20, w=20), {"step": 1})
    with pytest.raises(EncoderProcessError, match=r"killed by SIGKILL\): the frame it was given is lost"):
        streamer.flush()
    assert not streamer.busy and streamer.skipped == 1
    streamer.offer(frame(h=20, w=20), {"step": 2})
    streamer.flush()
    (second,) = encoder_children()
    assert sent.steps() == [0, 2] and second.pid != first.pid


def test_an_encoder_process_that_cannot_start_falls_back_to_the_calling_thread(monkeypatch):
    import gymview.live.encoding.encoder_process

    monkeypatch.setattr(gymview.live.encoding.encoder_process.sys, "executable", "/nonexistent/python")
    streamer, sent = make()
    with pytest.warns(UserWarning, match="calling thread from now on"):
        streamer.offer(frame(h=20, w=20), {})
    streamer.flush()
    streamer.stop()
    assert len(sent.messages) == 1 and encoder_children() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are a Linux feature")
def test_the_encoder_pipe_holds_a_whole_frame():
    import fcntl

    encoder = EncoderProcess()
    encoder.encode(frame(h=400, w=600), 512, "jpeg", 80)
    (child,) = encoder_children()
    with open(f"/proc/{child.pid}/fd/0", "wb") as pipe:
        size = fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ)
    encoder.close()
    assert size >= 400 * 600 * 3 + 20  # one write that does not wait for the child


def test_an_encoded_frame_is_sent_when_the_producer_pumps(patient_watcher):
    streamer, sent = make()
    streamer.offer(frame(h=20, w=20), {"step": 1})
    assert streamer.busy and sent.messages == []  # offer never waits for the encoder
    wait_until(streamer.pump)
    assert sent.steps() == [1] and not streamer.busy
    streamer.stop()


def test_a_frame_nobody_pumps_for_goes_out_by_itself():
    streamer, sent = make()
    streamer.offer(frame(h=20, w=20), {"step": 1})
    wait_until(lambda: sent.steps() == [1])
    streamer.stop()


def test_flush_and_stop_do_not_wait_for_the_watcher(patient_watcher):
    streamer, sent = make()
    streamer.offer(frame(h=20, w=20), {"step": 1})
    assert streamer.flush() and sent.steps() == [1]
    streamer.offer(frame(h=20, w=20), {"step": 2})
    streamer.stop()
    assert sent.steps() == [1, 2]


def test_frames_offered_while_one_is_encoded_wait_and_only_the_newest_is_kept(patient_watcher):
    streamer, sent = make()
    for step in (1, 2, 3):  # 1 goes to the encoder; 2 waits and is replaced by 3
        streamer.offer(frame(h=20, w=20), {"step": step})
    wait_until(lambda: streamer.pump() and len(sent.messages) == 2 or not streamer.busy)
    assert sent.steps() == [1, 3] and streamer.replaced == 1
    assert sent.messages[1][0]["dropped"] == 1
    streamer.stop()


def test_a_frame_in_a_helper_that_dies_is_reported_and_the_next_one_goes_to_a_new_helper():
    encoder = EncoderProcess()
    with pytest.raises(RuntimeError, match="submit"):
        encoder.receive()
    encoder.encode(frame(h=20, w=20), 64, "png", 80)  # the child is up
    (child,) = encoder_children()
    child.suspend()  # it takes the next frame and never answers
    encoder.submit(frame(value=200, h=40, w=60), 30, "png", 80)
    with pytest.raises(RuntimeError, match="receive"):
        encoder.submit(frame(h=20, w=20), 64, "png", 80)
    child.kill()  # it dies holding the frame
    # its exit status is known (not reaped: the encoder does that); before that, receive() raises HelperEnding at
    # once and tells how it ended later (tests/live/test_encoder_process.py)
    wait_until(lambda: child.status() == psutil.STATUS_ZOMBIE, "the killed helper to be a zombie")
    with pytest.raises(EncoderProcessError, match="killed by SIGKILL"):
        encoder.receive()
    data, width, height = encoder.encode(frame(value=200, h=40, w=60), 30, "png", 80)  # a new child
    encoder.close()
    assert (width, height) == (30, 20) and encoder.last_encode_seconds > 0
    assert np.asarray(Image.open(io.BytesIO(data)))[0, 0].tolist() == [200, 200, 200]


def test_drawings_are_drawn_in_the_encoder_process_like_in_the_thread():
    import gymnasium as gym

    from gymview.renderers import Drawing, renderer_for

    env = gym.make("MountainCar-v0")
    env.reset(seed=3)
    renderer = renderer_for(env)
    encoder = EncoderProcess()
    pictures = []
    for _ in range(3):  # the child draws each into its previous frame
        drawing = Drawing(renderer, renderer.state_of(env))
        expected = encode_frame(downsample(drawing.draw(), 300), "png", 80)
        assert encoder.encode(drawing, 300, "png", 80) == (expected, 300, 200)
        pictures.append(expected)
        for _ in range(20):
            env.step(2)
    assert len(set(pictures)) == 3  # the car moved: three different pictures
    (child,) = encoder_children()
    child.kill()  # a fresh child gets the renderer again
    wait_until(lambda: child.status() == psutil.STATUS_ZOMBIE)
    drawing = Drawing(renderer, renderer.state_of(env))
    with pytest.raises(EncoderProcessError, match="SIGKILL"):
        encoder.encode(drawing, 300, "png", 80)
    assert encoder.encode(drawing, 300, "png", 80)[0] == encode_frame(downsample(drawing.draw(), 300), "png", 80)
    encoder.close()


class Stripes:
    """A painter that is not a renderer: any picklable object with paint(state, canvas)."""

    def paint(self, state, canvas):
        picture = np.zeros((40, 60, 3), np.uint8)
        picture[:, : int(state[0])] = 255
        return picture


class StripeFrame:
    painter = Stripes()

    def __init__(self, width):
        self.state = np.array([width], np.float64)

    def draw(self):
        return self.painter.paint(self.state, None)

    def checked(self):
        return self


def test_any_deferred_frame_is_drawn_in_the_encoder_process():
    import cloudpickle

    # The child cannot import this test module; a notebook's own classes travel by value like this.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    streamer, sent = make(image_format="png", max_size=60)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # falling back to drawing here would warn
            for width in (10, 20, 30):
                streamer.offer(StripeFrame(width), {})
            streamer.stop()
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    pictures = [np.asarray(Image.open(io.BytesIO(buffers[0]))) for _, buffers in sent.messages]
    assert [int((p[0, :, 0] == 255).sum()) for p in pictures] == [10, 30]  # 20 was replaced by 30


class SlowStripes(Stripes):
    def paint(self, state, canvas):
        time.sleep(1.0)  # like a MuJoCo frame in software OpenGL, only longer
        return super().paint(state, canvas)


class SlowStripeFrame(StripeFrame):
    painter = SlowStripes()


def test_a_producer_is_told_to_wait_for_a_slow_frame_rather_than_poll(patient_watcher):
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    streamer, sent = make(image_format="png", max_size=60)
    try:
        streamer.offer(SlowStripeFrame(10), {})
        assert streamer.seconds_until_reply() == stream.POLL_SECONDS  # no frame timed yet
        assert streamer.flush()
        streamer.offer(SlowStripeFrame(20), {})
        # the next look is due shortly before the reply is likely back, not in a millisecond
        assert stream.POLL_SECONDS < streamer.seconds_until_reply() <= 0.9 * streamer.last_encode_ms / 1000
        streamer.stop()
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert len(sent.messages) == 2 and streamer.seconds_until_reply() == stream.POLL_SECONDS


def test_the_encoder_process_imports_gymview_from_the_folder_it_was_imported_from():
    # not from gymview/ itself: that made gymview's modules (errors, video, image...) top-level names there
    import pathlib

    import gymview

    assert pathlib.Path(encoder_command()[-1]) / "gymview" == pathlib.Path(gymview.__file__).resolve().parent


def test_the_encoder_process_finds_the_standard_library_before_gymview_s_folder(tmp_path):
    # A module named like a standard one beside gymview (site-packages, a checkout) must not win.
    (tmp_path / "struct.py").write_text("raise ImportError('the shadowing struct.py was imported')\n")
    (tmp_path / "gymview").symlink_to(os.path.dirname(os.path.dirname(stream.__file__)))
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(encoder_command(str(tmp_path)), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # it imported, read end-of-input and ended


def test_a_frame_stuck_in_a_hung_encoder_is_dropped_by_stop_and_streaming_goes_on():
    streamer, sent = make()
    streamer.offer(frame(h=20, w=20), {"step": 0})
    streamer.flush()
    (child,) = encoder_children()
    child.suspend()  # it takes the next frame and never answers
    try:
        streamer.offer(frame(h=20, w=20), {"step": 1})
        with pytest.raises(EncoderProcessError, match="did not finish a frame in time"):
            streamer.stop(timeout=0.2)  # the hung child is killed at once, and said so
    finally:
        if child.is_running():
            child.resume()
    assert streamer.skipped == 1 and not streamer.busy
    streamer.offer(frame(h=20, w=20), {"step": 2})
    streamer.stop()
    assert sent.steps() == [0, 2]


def test_only_the_newest_state_waits_for_the_budget_and_replays_keep_their_place():
    streamer, sent = make(budget=Budget(open_=False), offload=False)
    for number in range(1000):  # a state change at every step of a loop while the budget is spent
        streamer.post({"type": "state", "state": "running", "message": f"lost a frame ({number} times so far)"})
    streamer.post({"type": "frame", "seq": 1, "replay": 0}, [b"replayed"])
    streamer.post({"type": "state", "state": "paused", "message": None})
    streamer.stop()  # what is owed to the page goes out
    assert [(header["type"], header.get("state")) for header, _ in sent.messages] == [("frame", None),
                                                                                       ("state", "paused")]


def test_a_frame_offered_while_the_watcher_sleeps_goes_out_without_the_producer_pumping(monkeypatch):
    """One step a cell: the loop offers a frame and stops. The watcher, asleep with nothing left to do (each look takes
    the interpreter from a busy thread), wakes for the frame and sends it soon: a single offer is not a loop
    streaming, whose frames the watcher leaves to it for QUIET_LOOK_SECONDS."""
    monkeypatch.setattr(stream_watcher, "IDLE_EXIT_SECONDS", 600.0)
    monkeypatch.setattr(stream, "QUIET_LOOK_SECONDS", 600.0)
    clock = Clock()
    streamer, sent = make(clock=clock)
    for index in range(2):
        streamer.offer(frame(index), {})
        wait_until(lambda: streamer.sent == index + 1, f"frame {index}, from the watcher")
        clock.now += 1.0  # the cell ended: with nothing left, the watcher sleeps
        wait_until(lambda: streamer._watcher.sleeping, "the watcher to sleep")
    streamer.stop()


def test_a_streaming_producer_keeps_its_helper_however_little_it_leaves_the_watcher(monkeypatch):
    """A loop that pumps its own frames leaves the watcher nothing to do; its offers still count as the stream's
    activity, so the watcher does not idle out and let the helper go under a running loop."""
    monkeypatch.setattr(stream_watcher, "IDLE_EXIT_SECONDS", 0.2)
    before = {child.pid for child in encoder_children()}
    streamer, sent = make()  # its clock stands still: each offer comes right after the last, as in a loop
    helpers = set()
    for index in range(20):
        streamer.offer(frame(index), {})
        assert streamer.flush()
        helpers |= {child.pid for child in encoder_children()} - before
        time.sleep(0.05)
    streamer.stop()
    assert len(helpers) == 1 and streamer.sent == 20
