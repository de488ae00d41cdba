import io
import threading
import time
import sys

import numpy as np
import pytest
from PIL import Image

from gymview._worker import WorkerError
from gymview.buffer import FrameBuffer, MessageBudget
from gymview import stream
from gymview.encode import encode_frame
from gymview.frames import downsample
from gymview.stream import FrameStreamer


class Recorder:
    def __init__(self):
        self.messages = []
        self.lock = threading.Lock()

    def __call__(self, header, buffers):
        with self.lock:
            self.messages.append((header, buffers))


def make(fps=1000 / 9, **kwargs):
    sent = Recorder()
    streamer = FrameStreamer(FrameBuffer(fps=min(fps, 120)), sent, budget=MessageBudget(10_000, 100), **kwargs)
    return streamer, sent


def frame(value=0, h=400, w=600):
    return np.full((h, w, 3), value, np.uint8)


def test_frames_are_downsampled_encoded_and_numbered_without_gaps():
    streamer, sent = make(max_size=300)
    streamer.start()
    for i in range(5):
        streamer.buffer.offer(frame(i * 40), {"step": i, "episode": 1, "episode_return": float(i)}, now=i)
        assert streamer.flush()
    streamer.stop()
    headers = [h for h, _ in sent.messages]
    assert [h["seq"] for h in headers] == [0, 1, 2, 3, 4]
    assert all((h["width"], h["height"], h["format"], h["v"]) == (300, 200, "jpeg", 1) for h in headers)
    assert headers[3]["step"] == 3 and headers[3]["episode_return"] == 3.0
    image = Image.open(io.BytesIO(sent.messages[4][1][0]))
    assert image.format == "JPEG" and image.size == (300, 200)
    assert abs(np.asarray(image).mean() - 160) < 3
    assert streamer.sent == 5 and streamer.bytes_sent == sum(len(b[0]) for _, b in sent.messages)


def test_png_frames_are_lossless():
    streamer, sent = make(image_format="png", max_size=64)
    streamer.start()
    pattern = (np.arange(32 * 48 * 3) % 251).astype(np.uint8).reshape(32, 48, 3)
    streamer.buffer.offer(pattern, {})
    streamer.flush()
    streamer.stop()
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(sent.messages[0][1][0]))), pattern)


def test_acks_bound_the_frames_in_flight_only_while_they_arrive():
    streamer, _ = make(max_in_flight=2)
    streamer._seq = 5
    assert streamer.can_send(now=100.0)  # no ack ever: the time throttle alone rules
    streamer.acknowledge(3, now=100.0)
    assert not streamer.can_send(now=100.1)  # frames 4 and 5 in flight
    streamer.acknowledge(4, now=100.2)
    assert streamer.can_send(now=100.3)
    streamer._seq = 7
    assert not streamer.can_send(now=100.4)
    assert streamer.can_send(now=101.5)  # acks stopped arriving (blocked cell, closed tab): go on


def test_budget_and_flow_control_skip_frames_and_count_them():
    sent = Recorder()
    streamer = FrameStreamer(FrameBuffer(fps=120), sent, budget=MessageBudget(rate=1, burst=1))
    streamer.start()
    for i in range(3):
        streamer.buffer.offer(frame(h=20, w=20), {}, now=float(i))
        streamer.flush()
    streamer.stop()
    assert len(sent.messages) == 1 and streamer.skipped == 2


def test_resend_latest_repeats_the_last_frame_with_its_number():
    streamer, sent = make()
    streamer.resend_latest()  # nothing sent yet: nothing to repeat
    streamer.start()
    streamer.buffer.offer(frame(h=20, w=20), {"step": 7})
    streamer.flush()
    streamer.resend_latest()
    streamer.flush()
    streamer.stop()
    assert [h["seq"] for h, _ in sent.messages] == [0, 0]
    assert sent.messages[0][1] == sent.messages[1][1]


def test_send_errors_reach_the_user_on_the_next_call():
    def broken(header, buffers):
        raise ConnectionError("iopub closed")

    streamer = FrameStreamer(FrameBuffer(fps=30), broken, budget=MessageBudget(100, 10))
    streamer.start()
    streamer.buffer.offer(frame(h=20, w=20), {})
    with pytest.raises(WorkerError, match="iopub closed"):
        streamer.flush()
        streamer.check()


def test_bad_settings_are_rejected():
    buffer = FrameBuffer()
    with pytest.raises(ValueError, match="max_size"):
        FrameStreamer(buffer, print, max_size=8)
    with pytest.raises(ValueError, match="max_in_flight"):
        FrameStreamer(buffer, print, max_in_flight=0)
    with pytest.raises(ValueError, match="format"):
        FrameStreamer(buffer, print, image_format="bmp")
    with pytest.raises(ValueError, match="quality"):
        FrameStreamer(buffer, print, quality=0)


def streaming_through_the_encoder_process():
    """A started streamer that has sent one frame; its encoder process is up."""
    streamer, sent = make()
    streamer.start()
    streamer.buffer.offer(frame(h=20, w=20), {})
    streamer.flush()
    return streamer, sent, streamer._encoder._process


def test_no_thread_or_process_left_after_stop():
    streamer, _, encoder = streaming_through_the_encoder_process()
    assert encoder is not None and encoder.poll() is None
    streamer.stop()
    assert not streamer.running and encoder.poll() is not None


def test_encoder_process_and_in_thread_paths_give_the_same_picture():
    pattern = (np.indices((90, 130)).sum(axis=0) % 7 * 30).astype(np.uint8)
    picture = np.repeat(pattern[:, :, None], 3, axis=2)
    results = []
    for offload in (True, False):
        sent = Recorder()
        streamer = FrameStreamer(FrameBuffer(fps=30), sent, max_size=64, image_format="png",
                                 budget=MessageBudget(100, 10), offload=offload)
        streamer.start()
        streamer.buffer.offer(picture, {})
        streamer.flush()
        streamer.stop()
        header, buffers = sent.messages[0]
        results.append(((header["width"], header["height"]), buffers[0]))
    assert results[0] == results[1] and results[0][0] == (64, 44)


def test_a_killed_encoder_process_is_replaced():
    streamer, sent, first = streaming_through_the_encoder_process()
    first.kill()
    first.wait()
    streamer.buffer.offer(frame(h=20, w=20), {}, force=True)
    streamer.flush()
    streamer.stop()
    assert len(sent.messages) == 2 and streamer._encoder is not None


def test_an_encoder_process_that_cannot_start_falls_back_to_the_thread(monkeypatch):
    import gymview._encoder

    monkeypatch.setattr(gymview._encoder.sys, "executable", "/nonexistent/python")
    streamer, sent = make()
    streamer.start()
    with pytest.warns(UserWarning, match="stream thread from now on"):
        streamer.buffer.offer(frame(h=20, w=20), {})
        streamer.flush()
    streamer.stop()
    assert len(sent.messages) == 1 and streamer._encoder is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are a Linux feature")
def test_the_encoder_pipe_holds_a_whole_frame():
    import fcntl

    from gymview._encoder import EncoderProcess

    encoder = EncoderProcess()
    encoder.encode(frame(h=400, w=600), 512, "jpeg", 80)
    size = fcntl.fcntl(encoder._process.stdin.fileno(), fcntl.F_GETPIPE_SZ)
    encoder.close()
    assert size >= 400 * 600 * 3 + 16  # one write, no wait for the child, one GIL hand-over


def wait_until(condition, timeout=5.0):
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.002)


@pytest.fixture
def patient_thread(monkeypatch):
    """Encoded frames wait for a pump for 30 s instead of 50 ms: only pump, flush or stop free them."""
    monkeypatch.setattr(stream, "PUMP_WAIT_SECONDS", 30.0)


def test_an_encoded_frame_is_sent_when_the_producer_pumps(patient_thread):
    streamer, sent = make()
    streamer.start()
    assert streamer.pump() is False  # nothing encoded yet
    streamer.buffer.offer(frame(h=40, w=60), {"step": 1})
    streamer.hand_over()
    assert streamer.reply_expected and streamer._parked == streamer.buffer.accepted  # thread parked
    wait_until(streamer._encoder.reply_ready)
    time.sleep(0.05)
    assert sent.messages == [] and streamer.reply_expected  # encoded, but the thread waits its turn
    assert streamer.pump() is True
    assert len(sent.messages) == 1 and not streamer.reply_expected  # sent before pump returned
    assert streamer.last_encode_ms > 0
    streamer.stop()


def test_a_frame_nobody_pumps_for_goes_out_by_itself():
    streamer, sent = make()
    streamer.start()
    streamer.buffer.offer(frame(h=40, w=60), {"step": 1})
    streamer.hand_over()
    wait_until(lambda: len(sent.messages) == 1)  # after PUMP_WAIT_SECONDS
    streamer.stop()


def test_flush_and_stop_do_not_wait_for_a_pump(patient_thread):
    streamer, sent = make()
    streamer.start()
    streamer.buffer.offer(frame(h=40, w=60), {"step": 1})
    assert streamer.flush(timeout=5) is True and len(sent.messages) == 1
    streamer.buffer.offer(frame(h=40, w=60), {"step": 2}, force=True)
    streamer.hand_over()
    streamer.stop(timeout=5)  # no TimeoutError, and the frame still goes out
    assert [header["step"] for header, _ in sent.messages] == [1, 2]


def test_a_frame_offered_while_another_is_encoded_is_taken_up_after_it(patient_thread):
    streamer, sent = make()
    streamer.start()
    streamer.buffer.offer(frame(h=40, w=60), {"step": 1})
    streamer.hand_over()
    streamer.buffer.offer(frame(h=40, w=60), {"step": 2}, force=True)
    streamer.hand_over()  # returns at once: the thread holds frame 1
    wait_until(streamer._encoder.reply_ready)
    assert streamer.pump() is True
    assert streamer.reply_expected  # pump also handed frame 2 to the encoder
    wait_until(lambda: streamer.pump())
    assert [header["step"] for header, _ in sent.messages] == [1, 2]
    streamer.stop()


def test_the_encoder_process_keeps_a_submitted_frame_until_received():
    from gymview._encoder import EncoderProcess

    encoder = EncoderProcess()
    with pytest.raises(RuntimeError, match="submit"):
        encoder.receive()
    encoder.encode(frame(h=20, w=20), 64, "png", 80)  # the child is up
    encoder.submit(frame(value=200, h=40, w=60), 30, "png", 80)
    encoder._process.kill()  # it dies holding the frame
    encoder._process.wait()
    data, width, height = encoder.receive()  # a fresh child is asked again
    encoder.close()
    assert (width, height) == (30, 20) and encoder.last_encode_seconds > 0
    assert np.asarray(Image.open(io.BytesIO(data)))[0, 0].tolist() == [200, 200, 200]


def test_drawings_are_drawn_in_the_encoder_process_like_in_the_thread():
    import gymnasium as gym

    from gymview._encoder import EncoderProcess
    from gymview.renderers import Drawing, renderer_for

    env = gym.make("MountainCar-v0")
    env.reset(seed=3)
    renderer = renderer_for(env)
    encoder = EncoderProcess()
    pictures = []
    for step in range(3):  # the child draws each into its previous frame
        drawing = Drawing(renderer, renderer.state_of(env))
        expected = encode_frame(downsample(drawing.draw(), 300), "png", 80)
        assert encoder.encode(drawing, 300, "png", 80) == (expected, 300, 200)
        pictures.append(expected)
        for _ in range(20):
            env.step(2)
    assert len(set(pictures)) == 3  # the car moved: three different pictures
    encoder._process.kill()  # a fresh child gets the renderer again
    encoder._process.wait()
    drawing = Drawing(renderer, renderer.state_of(env))
    assert encoder.encode(drawing, 300, "png", 80)[0] == encode_frame(downsample(drawing.draw(), 300), "png", 80)
    encoder.close()
