"""The last frame a notebook got from a run, as the picture its still image shows: JPEG as it came, H.264
decoded from its key frame on, a scene's state (drawn by the page) leaving the last picture."""

import io

import numpy as np
from PIL import Image

from gymview.image.codec import encode_frame
from gymview.live.encoding.h264 import H264Encoder
from gymview.remote.still import LastFrame


def frame(seq, kind, **fields):
    return {"type": "frame", "v": 2, "seq": seq, "format": kind, "width": 64, "height": 48, **fields}


def pictures(count):
    """A still background and a moving block."""
    made = []
    for n in range(count):
        picture = np.full((48, 64, 3), 40, np.uint8)
        picture[10:30, 4 + 6 * n: 20 + 6 * n] = (250, 200, 30)
        made.append(picture)
    return made


def test_the_last_h264_frame_is_decoded_into_the_picture():
    encoder, last = H264Encoder(), LastFrame()
    made = pictures(6)
    for seq, picture in enumerate(made):
        packet, key = encoder.encode(picture, size=(64, 48), key=seq == 0)
        assert not last.keep(frame(seq, "h264", key=key), [packet])
    header, data = last.picture()
    still = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    assert header["format"] == "jpeg" and header["seq"] == 5 and still.shape == (48, 64, 3)
    assert np.abs(still.astype(int) - made[-1]).mean() < 6
    assert np.abs(still.astype(int) - made[0]).mean() > 6, "the last frame, not the key frame"


def test_too_many_packets_since_a_key_frame_are_dropped_and_a_key_frame_is_asked_for():
    encoder, rng = H264Encoder(), np.random.default_rng(0)
    noise = [rng.integers(0, 256, (48, 64, 3), np.uint8) for _ in range(12)]  # each packet a few KB
    packets = [encoder.encode(picture, (64, 48), key=seq == 0) for seq, picture in enumerate(noise)]
    last = LastFrame(max_video_bytes=sum(len(packet) for packet, _ in packets[:5]))
    asked = [last.keep(frame(seq, "h264", key=key), [packet]) for seq, (packet, key) in enumerate(packets)]
    assert asked[:5] == [False] * 5 and asked[5], "over the limit: the packets are dropped, a key frame asked for"
    assert last.picture() is None  # nothing left to decode, and no JPEG came
    packet, key = encoder.encode(noise[0], (64, 48), key=True)  # the key frame the run sends when asked
    last.keep(frame(12, "h264", key=key), [packet])
    assert last.picture()[0]["seq"] == 12


def test_a_scene_drawn_by_the_page_leaves_the_last_picture_that_came():
    last = LastFrame()
    assert last.picture() is None
    jpeg = encode_frame(pictures(1)[0], "jpeg", 80)
    last.keep(frame(3, "jpeg"), [jpeg])
    last.keep(frame(4, "scene", scene=1), [np.zeros(4, "<f4").tobytes()])
    assert last.drawn_by_page and last.picture() == (frame(3, "jpeg"), jpeg) and last.pictured.is_set()
    last.keep(frame(2, "jpeg", replay=0), [b"old"])  # a replayed frame is not the last one
    assert last.picture()[1] == jpeg
