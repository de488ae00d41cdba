"""VideoEncoder: several files from one encoder, each playable on its own, and frames filled in place."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from video_checks import pattern, psnr

from gymview.image.yuv import I420Converter
from gymview.video.encoder import VideoEncoder


def i420(frame: np.ndarray) -> np.ndarray:
    return I420Converter(frame.shape[1], frame.shape[0]).convert(frame).copy()


def decoded(path: Path) -> list[av.VideoFrame]:
    with av.open(str(path)) as container:
        return list(container.decode(video=0))


@pytest.mark.parametrize("tune", [None, "zerolatency"])  # x264 holding a frame back, and holding none
def test_files_one_after_another_each_play_alone_from_a_key_frame(tmp_path: Path, tune: str | None) -> None:
    encoder = VideoEncoder(128, 96, fps=30, crf=12, preset="ultrafast", tune=tune)
    lengths = {"a.mp4": 40, "b.mp4": 7, "c.mp4": 1, "d.mp4": 65}
    start = 0
    for number, (name, length) in enumerate(lengths.items()):
        encoder.start(tmp_path / name, fragmented=number == 1)
        for index in range(start, start + length):
            encoder.encode(i420(pattern(index)))
        assert encoder.finish() == length
        frames = decoded(tmp_path / name)
        assert len(frames) == length, name
        with av.open(str(tmp_path / name)) as container:  # the last frame lasts a frame, as every other
            stream = container.streams.video[0]
            assert stream.duration * stream.time_base == Fraction(length, 30), name
        assert frames[0].key_frame and frames[0].pts == 0, name
        for index, frame in zip(range(start, start + length), frames):
            assert psnr(frame.to_ndarray(format="rgb24"), pattern(index)) > 30, (name, index)
        start += length


def test_a_file_given_up_leaves_the_next_one_whole(tmp_path: Path) -> None:
    encoder = VideoEncoder(128, 96, fps=30, preset="ultrafast", tune="zerolatency")
    encoder.start(tmp_path / "given-up.mp4", fragmented=False)
    for index in range(5):
        encoder.encode(i420(pattern(index)))
    encoder.abandon()
    encoder.start(tmp_path / "next.mp4", fragmented=False)
    for index in range(50, 60):
        encoder.encode(i420(pattern(index)))
    encoder.finish()
    frames = decoded(tmp_path / "next.mp4")
    assert len(frames) == 10 and frames[0].key_frame
    assert all(psnr(frame.to_ndarray(format="rgb24"), pattern(50 + n)) > 25 for n, frame in enumerate(frames))


def test_a_picture_filled_in_place_is_what_encode_sends(tmp_path: Path) -> None:
    encoder = VideoEncoder(128, 96, fps=30, crf=12, preset="ultrafast")
    y, u, v = encoder.picture
    assert (y.shape, u.shape, v.shape) == ((96, 128), (48, 64), (48, 64))
    encoder.start(tmp_path / "v.mp4", fragmented=False)
    for index in range(3):
        planes = i420(pattern(index))
        y[...] = planes[: 96 * 128].reshape(96, 128)
        u[...] = planes[96 * 128 : 96 * 128 * 5 // 4].reshape(48, 64)
        v[...] = planes[96 * 128 * 5 // 4 :].reshape(48, 64)
        encoder.encode()
    encoder.finish()
    frames = decoded(tmp_path / "v.mp4")
    assert [psnr(frame.to_ndarray(format="rgb24"), pattern(n)) > 30 for n, frame in enumerate(frames)] == [True] * 3
