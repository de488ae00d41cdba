"""The live view's H.264 stream, kernel side: which frames go as video, key frames, kept frames, still images."""

import io

import numpy as np
import psutil
import pytest
from live_helpers import STREAMERS
from PIL import Image
from waiting import wait_until

from gymview.errors import EncoderProcessError
from gymview.image.codec import encode_frame
from gymview.live.pacing import page_acks
from gymview.live.encoding.h264 import KEY_INTERVAL, decode_h264
from gymview.live.encoding.replay import HEADER_BYTES, FrameHistory
from gymview.live.streamer import FrameStreamer
from gymview.live.pacing.throttle import MessageBudget


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def make(**kwargs):
    sent = []
    kwargs.setdefault("budget", MessageBudget(10_000, 100))
    kwargs.setdefault("clock", Clock())
    streamer = FrameStreamer(lambda header, buffers: sent.append((header, buffers[0])), **kwargs)
    STREAMERS.append(streamer)
    return streamer, sent


def scene(i, h=240, w=360):
    """A still background and a moving block, as in CartPole."""
    picture = np.full((h, w, 3), 255, np.uint8)
    picture[h // 2 :, :, 1] = 200
    x = 20 + (7 * i) % (w - 60)
    picture[100:140, x : x + 40] = (40, 40, 160)
    return picture


def send(streamer, frames, start=0):
    for i, picture in enumerate(frames, start):
        streamer.offer(picture, {"step": i})
        assert streamer.flush()


def test_an_h264_view_sends_a_stream_every_frame_of_which_decodes_close_to_the_picture():
    streamer, sent = make(codec="h264", max_size=512)
    pictures = [scene(i) for i in range(12)]
    send(streamer, pictures)
    headers = [header for header, _ in sent]
    assert [h["format"] for h in headers] == ["h264"] * 12
    assert [h["key"] for h in headers] == [True] + [False] * 11
    assert len({h["codec"] for h in headers}) == 1 and headers[0]["codec"].startswith("avc1.42") and (headers[0]["width"], headers[0]["height"]) == (360, 240)
    decoded = decode_h264([data for _, data in sent])
    assert len(decoded) == 12
    for picture, out in zip(pictures, decoded):
        assert np.abs(picture.astype(int) - out).mean() < 3
    jpeg = np.mean([len(encode_frame(p, "jpeg", 80)) for p in pictures[1:]])
    assert np.mean([len(data) for _, data in sent[1:]]) < jpeg / 5


def test_auto_sends_images_until_every_page_decodes_h264_then_the_stream_from_a_key_frame():
    clock = Clock()
    streamer, sent = make(clock=clock)
    send(streamer, [scene(0)])
    streamer.page_ready("A", ("h264",))
    send(streamer, [scene(1), scene(2)], start=1)
    streamer.page_ready("B", None)  # a page of an older front-end: images only
    send(streamer, [scene(3)], start=3)
    clock.now += page_acks.PAGE_FORGOTTEN_SECONDS  # B went away; A is still there (a view rendered again)
    streamer.page_ready("A", ("h264",))
    send(streamer, [scene(4), scene(5)], start=4)
    assert [(h["format"], h.get("key")) for h, _ in sent] == [
        ("jpeg", None), ("h264", True), ("h264", False), ("jpeg", None), ("h264", True), ("h264", False),
    ]


def test_a_page_that_asks_gets_a_key_frame_and_key_frames_come_every_key_interval():
    streamer, sent = make(codec="h264")
    send(streamer, [scene(i) for i in range(3)])
    streamer.want_key_frame()
    send(streamer, [scene(i) for i in range(3, KEY_INTERVAL + 2)], start=3)
    keys = [h["seq"] for h, _ in sent if h["key"]]
    assert keys == [0, 3, KEY_INTERVAL]


def test_a_new_frame_size_starts_a_new_stream():
    streamer, sent = make(codec="h264")
    send(streamer, [scene(0), scene(1), scene(2, h=120, w=180), scene(3, h=120, w=180)])
    assert [(h["key"], h["width"]) for h, _ in sent] == [(True, 360), (False, 360), (True, 180), (False, 180)]
    assert decode_h264([data for _, data in sent[2:]])[1].shape == (120, 180, 3)


def test_odd_sizes_keep_their_size_padded_by_a_row_and_a_column_the_page_does_not_draw():
    streamer, sent = make(codec="h264", max_size=301)
    send(streamer, [scene(0, h=201, w=301)])
    header, data = sent[0]
    assert (header["width"], header["height"]) == (301, 201)
    assert decode_h264([data])[0].shape == (202, 302, 3)
    header, data = streamer.latest
    assert Image.open(io.BytesIO(data)).size == (301, 201)


def test_the_stream_is_the_same_encoded_in_the_calling_thread():
    streamer, sent = make(codec="h264", offload=False)
    send(streamer, [scene(i) for i in range(3)])
    assert [h["key"] for h, _ in sent] == [True, False, False]
    assert len(decode_h264([data for _, data in sent])) == 3


def test_a_killed_helper_process_restarts_the_stream_with_a_key_frame():
    streamer, sent = make(codec="h264")
    send(streamer, [scene(0), scene(1)])
    (child,) = [p for p in psutil.Process().children() if "encoder_child" in " ".join(p.cmdline())]
    child.kill()
    wait_until(lambda: child.status() == psutil.STATUS_ZOMBIE)
    streamer.offer(scene(2), {"step": 2})
    with pytest.raises(EncoderProcessError, match="SIGKILL"):  # that frame is lost with its helper
        streamer.flush()
    send(streamer, [scene(3), scene(4)], start=3)
    assert [h["key"] for h, _ in sent] == [True, False, True, False]


def test_the_latest_frame_and_a_page_that_just_rendered_get_an_image():
    streamer, sent = make(codec="h264")
    pictures = [scene(i) for i in range(5)]
    send(streamer, pictures)
    header, data = streamer.latest
    still = np.asarray(Image.open(io.BytesIO(data)))
    assert header["format"] == "jpeg" and header["seq"] == 4 and still.shape == (240, 360, 3)
    assert np.abs(still.astype(int) - pictures[4]).mean() < 4
    streamer.resend_latest()
    streamer.flush()
    wait_until(lambda: len(sent) == 6)
    assert sent[5][0]["format"] == "jpeg" and sent[5][0]["seq"] == 4 and sent[5][1] == data


def test_kept_h264_frames_replay_as_images_and_save_as_a_clip(tmp_path):
    history = FrameHistory(seconds=30)
    streamer, sent = make(codec="h264", history=history)
    pictures = [scene(i) for i in range(KEY_INTERVAL + 5)]
    send(streamer, pictures)
    header, data = history.get(KEY_INTERVAL - 3)  # three frames before the second key frame
    replayed = np.asarray(Image.open(io.BytesIO(data)))
    assert header["format"] == "jpeg" and header["seq"] == KEY_INTERVAL - 3
    assert np.abs(replayed.astype(int) - pictures[KEY_INTERVAL - 3]).mean() < 4
    import imageio.v3 as iio

    clip = history.save(tmp_path / "clip.mp4", fps=30)
    assert iio.improps(clip, plugin="pyav").shape[0] == len(pictures)


def test_kept_frames_always_start_at_a_key_frame():
    history = FrameHistory(seconds=1.0)
    for seq in range(10):
        history.add({"seq": seq, "format": "h264", "key": seq in (0, 6)}, b"x", at=seq * 0.25)
    assert [history.get(i)[0]["seq"] for i in range(0, 0)] == []
    kept = [header["seq"] for header, _, _ in history.snapshot()]
    assert kept == [6, 7, 8, 9]  # 5 is young enough, but nothing before it is kept to decode it from


def test_without_an_h264_encoder_auto_sends_images_and_h264_says_why(monkeypatch):
    from gymview.live import LiveView
    from gymview.live.encoding import h264

    monkeypatch.setattr(h264, "h264_unavailable", lambda: "H.264 live frames need PyAV: pip install av")
    streamer, sent = make()
    streamer.page_ready("A", ("h264",))
    send(streamer, [scene(0)])
    assert sent[0][0]["format"] == "jpeg"
    with pytest.raises(RuntimeError, match="codec='h264' cannot stream here: H.264 live frames need PyAV"):
        LiveView(codec="h264", in_kernel=False)
    view = LiveView(in_kernel=False)
    with pytest.raises(RuntimeError, match="pip install av"):
        view.codec = "h264"
    view.close()


def test_unknown_codecs_are_refused_with_the_choices():
    from gymview.live import LiveView

    with pytest.raises(ValueError, match=r"codec must be one of \('auto', 'h264', 'jpeg', 'png'\); got 'vp9'"):
        LiveView(codec="vp9", in_kernel=False)


def test_h264_frames_are_shrunk_to_the_size_images_get_and_look_the_same():
    from gymview.image.frames import downsample

    streamer, sent = make(codec="h264", max_size=512)
    picture = scene(3, h=400, w=600)
    send(streamer, [picture])
    header, data = sent[0]
    assert (header["width"], header["height"]) == (512, 341)
    decoded = decode_h264([data])[0][:341].astype(int)
    assert np.abs(decoded - downsample(picture, 512)).mean() < 3


def test_a_page_behind_a_slow_link_holds_frames_until_the_queue_drains_and_is_not_taken_for_gone():
    clock = Clock()
    streamer, sent = make(clock=clock, max_lag=0.5)
    streamer.acknowledge(-1, "far")
    send(streamer, [scene(0)])
    clock.now += 0.1
    streamer.acknowledge(0, "far")  # drawn 0.1 s after it left: the link's own delay
    send(streamer, [scene(1)], start=1)
    clock.now += 0.3
    send(streamer, [scene(2)], start=2)
    clock.now += 0.4
    streamer.acknowledge(1, "far")  # frame 1 drawn 0.7 s after it left: 0.6 s queued on the way
    assert streamer.can_send()  # once is a slow draw (a page starting up), and frame 2 left 0.4 s ago
    send(streamer, [scene(3)], start=3)
    clock.now += 0.3
    streamer.acknowledge(2, "far")  # 0.7 s again: frames queue on the link
    assert not streamer.can_send()  # frame 3 left only 0.3 s ago, but new frames wait for the queue to drain
    clock.now += 1.2  # no ack for longer than ACK_FRESH_SECONDS, but a page 0.7 s behind acks late
    assert not streamer.can_send()
    streamer.acknowledge(3, "far")  # the queue drained (frame 3 drawn 1.5 s late): everything sent is drawn
    assert streamer.can_send()
    send(streamer, [scene(4)], start=4)
    clock.now += 2.5
    assert not streamer.can_send()  # frame 4 is late, and the page still counts: 1.5 s behind, it acks late
    clock.now += 0.6  # silent for more than twice its lag: gone
    assert streamer.can_send()


def test_a_link_with_a_long_delay_but_no_queue_keeps_its_frame_rate():
    clock = Clock()
    streamer, sent = make(codec="h264", clock=clock, max_lag=0.5)
    streamer.acknowledge(-1, "far")
    streamer.acknowledge(-1, "near")
    seq = 0
    for _ in range(20):  # frames every 0.1 s; the far page draws each 0.4 s after it left, the near one at once
        send(streamer, [scene(seq)], start=seq)
        clock.now += 0.05
        streamer.acknowledge(seq, "near")
        if seq >= 4:
            streamer.acknowledge(seq - 4, "far")
        clock.now += 0.05
        seq += 1
    assert streamer.skipped == 0


def test_frames_after_a_key_frame_too_big_to_keep_are_not_kept_either():
    history = FrameHistory(seconds=30, max_bytes=150 + 3 * HEADER_BYTES)
    history.add({"seq": 0, "format": "h264", "key": True}, b"k" * 50, at=0.0)
    history.add({"seq": 1, "format": "h264", "key": False}, b"d" * 10, at=0.1)
    history.add({"seq": 2, "format": "h264", "key": True}, b"K" * 2000, at=0.2)  # over max_bytes
    history.add({"seq": 3, "format": "h264", "key": False}, b"d" * 10, at=0.3)  # follows frame 2: undecodable
    history.add({"seq": 4, "format": "h264", "key": True}, b"k" * 50, at=0.4)
    assert [header["seq"] for header, _, _ in history.snapshot()] == [0, 1, 4]


def test_auto_keeps_lossless_images_for_a_view_that_asked_for_png():
    streamer, sent = make(image_format="png")
    streamer.page_ready("A", ("h264",))
    send(streamer, [scene(0)])
    assert sent[0][0]["format"] == "png"


def test_a_forced_h264_stream_tells_the_user_once_when_a_page_cannot_decode_it():
    import warnings

    streamer, _ = make(codec="h264")
    with pytest.warns(UserWarning, match="cannot decode H.264.*codec='auto'"):
        streamer.page_ready("A", ())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        streamer.page_ready("B", None)  # said once is enough
        streamer.page_ready("C", ("h264",))


def test_a_page_whose_first_acks_are_already_seconds_late_holds_new_frames():
    # a page that rendered while frames piled up behind a slow link: its link's own delay is unknown,
    # but frames drawn two seconds late are late
    clock = Clock()
    streamer, sent = make(clock=clock, max_lag=0.5)
    streamer.acknowledge(-1, "far")
    send(streamer, [scene(0), scene(1)])
    clock.now += 2.0
    streamer.acknowledge(0, "far")
    clock.now += 0.1
    streamer.acknowledge(1, "far")  # both drawn 2 s after they left
    send(streamer, [scene(2)], start=2)  # frame 2 went before the second ack was read
    assert not streamer.can_send()  # frame 2 left just now, but the page draws frames 2 s late
