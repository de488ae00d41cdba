"""Joining MP4 files without re-encoding: fragments appended as bytes, times moved on, each file
on disk as soon as it is added."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import pytest
from video_checks import decode, pattern, psnr, top_level_boxes

from gymview.errors import FFmpegError
from gymview.image.yuv import I420Converter
from gymview.video.encoder import VideoEncoder
from gymview.video.mp4 import Joiner, join
from gymview.video.recorder import VideoRecorder


def fragmented_parts(folder: Path, lengths: list[int], size: tuple[int, int] = (128, 96)) -> list[Path]:
    """Parts as record_batch's workers write them for concat: fragmented, from one encoder kept
    across files, frame ``i`` of them all showing ``pattern(i)``."""
    width, height = size
    encoder = VideoEncoder(width, height, fps=30, crf=12, preset="ultrafast", tune="zerolatency")
    converter = I420Converter(width, height)
    parts, start = [], 0
    for number, length in enumerate(lengths):
        path = folder / f"part-{number}-{width}x{height}.mp4"
        encoder.start(path, fragmented=True)
        for index in range(start, start + length):
            encoder.encode(converter.convert(pattern(index, height, width)))
        encoder.finish()
        parts.append(path)
        start += length
    return parts


def assert_plays_patterns(path: Path, count: int) -> None:
    frames = decode(path)
    assert frames.shape[0] == count
    for index, frame in enumerate(frames):  # each frame the right one, in order
        assert psnr(frame, pattern(index)) > 30, index


def test_joined_parts_play_one_after_another_with_times_counted_through(tmp_path: Path) -> None:
    lengths = [35, 50, 1, 64]  # key frames (fragments) every 30 frames: parts of 2, 2, 1 and 3 fragments
    target = tmp_path / "joined.mp4"
    assert join(fragmented_parts(tmp_path, lengths), target) == 150
    assert top_level_boxes(target)[:4] == ["ftyp", "moov", "moof", "mdat"]  # fragmented: crash-safe as written
    assert_plays_patterns(target, 150)
    with av.open(str(target)) as container:
        stream = container.streams.video[0]
        times = [packet.pts * stream.time_base for packet in container.demux(stream) if packet.dts is not None]
        assert times == [Fraction(index, 30) for index in range(150)]
        assert container.duration == 5 * av.time_base  # written into the header on close: 150 frames at 30 fps
        assert stream.duration * stream.time_base == 5


def test_a_plain_mp4_is_joined_too(tmp_path: Path) -> None:
    parts = []
    for number, frames in enumerate((range(0, 20), range(20, 45))):
        parts.append(tmp_path / f"plain-{number}.mp4")
        with VideoRecorder(parts[-1], fps=30, crf=12, threads=1, crash_safe=False) as recorder:
            for index in frames:
                recorder.write(pattern(index))
        assert "moof" not in top_level_boxes(parts[-1])
    assert join(parts, tmp_path / "joined.mp4") == 45
    assert_plays_patterns(tmp_path / "joined.mp4", 45)


def test_each_part_plays_once_added_and_one_that_does_not_match_is_refused(tmp_path: Path) -> None:
    first, second = fragmented_parts(tmp_path, [40, 25])
    (smaller,) = fragmented_parts(tmp_path, [10], size=(64, 48))
    target = tmp_path / "joined.mp4"
    joiner = Joiner(target)
    joiner.add(first)
    assert_plays_patterns(target, 40)  # on disk before close(): a kill now leaves these frames
    joiner.add(second)
    assert_plays_patterns(target, 65)
    with pytest.raises(FFmpegError, match="differs from the first"):
        joiner.add(smaller)
    joiner.close()
    joiner.close()  # idempotent
    assert_plays_patterns(target, 65)  # what was joined before is intact


def test_a_file_that_is_not_an_mp4_is_refused_saying_which(tmp_path: Path) -> None:
    (first,) = fragmented_parts(tmp_path, [5])
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(first.read_bytes()[:-100])  # cut short
    joiner = Joiner(tmp_path / "joined.mp4")
    with pytest.raises(FFmpegError, match=r"broken\.mp4"):
        joiner.add(broken)
    joiner.close()
    with pytest.raises(FFmpegError, match="could not open"):
        Joiner(tmp_path)  # a folder
