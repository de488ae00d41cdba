import gc
import os
import signal
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from video_checks import (
    decode,
    pattern,
    psnr,
    top_level_boxes,
)

from gymview import VideoRecorder
from gymview.errors import FFmpegError

ROOT = Path(__file__).resolve().parents[2]


def record(path, frames, **options):
    with VideoRecorder(path, **options) as recorder:
        for frame in frames:
            recorder.write(frame)
    return recorder


def assert_plain_web_mp4(path):
    boxes = top_level_boxes(path)
    assert "moof" not in boxes, boxes  # not fragmented any more
    assert boxes.index("moov") < boxes.index("mdat"), boxes  # index first: plays while loading


def test_round_trip_keeps_count_size_and_content(tmp_path):
    path = tmp_path / "v.mp4"
    expected = [pattern(i) for i in range(45)]
    recorder = record(path, expected, fps=15, crf=18)
    assert recorder.frames_written == 45 and recorder.closed and recorder.path == path
    decoded = decode(path)
    assert decoded.shape == (45, 96, 128, 3)
    for index, frame in enumerate(decoded):
        assert psnr(frame, expected[index]) > 30, index
        assert psnr(frame, expected[(index + 1) % 45]) < psnr(frame, expected[index]) - 5  # frames in order
    assert_plain_web_mp4(path)


def x264_settings(path):
    """The options x264 wrote into the stream (its SEI text): {"threads": "1", "bframes": "0", ...}."""
    data = Path(path).read_bytes()
    start = data.index(b"options: ") + len(b"options: ")
    text = data[start : data.index(b"\0", start)].decode()
    return dict(option.split("=", 1) for option in text.split() if "=" in option)


def test_x264_gets_the_settings_zerolatency_and_a_core_left_for_the_loop(tmp_path):
    path = tmp_path / "v.mp4"
    record(path, [pattern(i) for i in range(3)], crf=20)
    settings = x264_settings(path)
    assert settings["threads"] == str(max(1, os.cpu_count() - 1))
    assert settings["bframes"] == "0" and settings["mbtree"] == "0"  # zerolatency: no look-ahead
    assert settings["crf"].startswith("20.0") and settings["keyint"] == "30"


def test_tune_none_leaves_x264_tuning_alone_and_bad_tunes_are_refused(tmp_path):
    path = tmp_path / "v.mp4"
    record(path, [pattern(0)], tune=None, preset="veryfast")
    assert x264_settings(path)["bframes"] == "3"  # veryfast's own
    with pytest.raises(TypeError, match="tune must be an x264 tuning name"):
        VideoRecorder(tmp_path / "w.mp4", tune=3)
    with pytest.raises(FFmpegError, match="no-such-tune"):  # the encoder's own words name the bad value
        record(tmp_path / "x.mp4", [pattern(0)], tune="no-such-tune")


def test_copy_false_records_the_callers_arrays_and_converts_other_frames(tmp_path):
    path = tmp_path / "v.mp4"
    frames = [pattern(i) for i in range(10)]
    with VideoRecorder(path, crf=12) as recorder:
        for frame in frames:
            recorder.write(frame, copy=False)
        recorder.write(frames[0][:, :, 0], copy=False)  # gray: still converted to RGB
    decoded = decode(path)
    assert len(decoded) == 11
    for index, frame in enumerate(frames):
        assert psnr(decoded[index], frame) > 30, index
    assert psnr(decoded[10], np.repeat(frames[0][:, :, :1], 3, axis=2)) > 30


def test_still_frames_with_a_small_moving_part_survive_the_changed_box_conversion(tmp_path):
    # Only the changed boxes are converted to I420 between frames: a stale box would show here.
    path = tmp_path / "v.mp4"
    background = pattern(0, 120, 160)
    expected = []
    for index in range(20):
        frame = background.copy()
        frame[40 + index : 50 + index, 10 + 5 * index : 20 + 5 * index] = (255, 0, 0)
        expected.append(frame)
    record(path, expected, crf=12)
    for index, frame in enumerate(decode(path)):
        assert psnr(frame, expected[index]) > 30, index
        if index:  # a box left over from the previous frame would look like that frame
            assert psnr(frame, expected[index - 1]) < psnr(frame, expected[index]) - 5, index


def test_web_playable_format(tmp_path):
    import imageio_ffmpeg

    path = tmp_path / "v.mp4"
    record(path, [pattern(i) for i in range(3)], fps=30)
    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    reader.close()
    assert meta["codec"] == "h264" and meta["pix_fmt"].startswith("yuv420p") and meta["fps"] == 30


def test_odd_sizes_gain_a_black_column_and_row(tmp_path):
    path = tmp_path / "odd.mp4"
    frame = np.full((37, 51, 3), 200, np.uint8)
    record(path, [frame] * 5, crf=10)
    decoded = decode(path)
    assert decoded.shape == (5, 38, 52, 3)
    assert psnr(decoded[0, :37, :51], frame) > 35  # every recorded pixel in place, not scaled
    assert decoded[0, :, 51].max() < 40 and decoded[0, 37, :].max() < 40  # the padding is black


def test_any_frame_format_to_rgb(tmp_path):
    path = tmp_path / "v.mp4"
    gray = np.full((32, 32), 100, np.uint8)
    rgba = np.dstack([np.full((32, 32, 3), 100, np.uint8), np.zeros((32, 32), np.uint8)])
    floats = np.full((32, 32, 3), 100 / 255)
    record(path, [gray, rgba, floats], crf=10)
    decoded = decode(path)
    assert decoded.shape == (3, 32, 32, 3) and np.abs(decoded.astype(int) - 100).max() <= 3


def test_frame_size_change_names_both_sizes_and_keeps_earlier_frames(tmp_path):
    path = tmp_path / "v.mp4"
    with VideoRecorder(path) as recorder:
        recorder.write(pattern(0, 96, 128))
        with pytest.raises(ValueError, match=r"from 128x96 to 64x48"):
            recorder.write(pattern(1, 48, 64))
        recorder.write(pattern(2, 96, 128))
    assert decode(path).shape == (2, 96, 128, 3)


def test_write_after_close_and_double_close(tmp_path):
    recorder = record(tmp_path / "v.mp4", [pattern(0)])
    recorder.close()
    with pytest.raises(ValueError, match="closed"):
        recorder.write(pattern(1))


def test_no_frames_no_file(tmp_path):
    recorder = record(tmp_path / "v.mp4", [])
    assert recorder.frames_written == 0 and not (tmp_path / "v.mp4").exists()


def test_exception_inside_with_still_finishes_the_video(tmp_path):
    path = tmp_path / "v.mp4"
    with pytest.raises(KeyboardInterrupt):
        with VideoRecorder(path) as recorder:
            for i in range(20):
                recorder.write(pattern(i))
            raise KeyboardInterrupt
    assert decode(path).shape[0] == 20
    assert_plain_web_mp4(path)


def test_unwritable_folder_fails_at_construction(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(PermissionError, match="cannot write videos into"):
        VideoRecorder(blocker / "videos" / "v.mp4")


def test_missing_parent_folders_are_created(tmp_path):
    path = tmp_path / "deep" / "er" / "v.mp4"
    VideoRecorder(path).close()
    assert path.parent.is_dir()


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(path="v.avi"), "ending in .mp4"),
        (dict(path="v.mp4", fps=0), "fps"),
        (dict(path="v.mp4", crf=60), "crf"),
        (dict(path="v.mp4", crf=2.5), "crf"),
        (dict(path="v.mp4", threads=0), "threads"),
        (dict(path="v.mp4", max_queued_frames=0), "max_queued_frames"),
    ],
)
def test_bad_arguments(tmp_path, monkeypatch, arguments, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=message):
        VideoRecorder(**arguments)


def test_a_folder_is_not_a_video_path(tmp_path):
    (tmp_path / "dir.mp4").mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        VideoRecorder(tmp_path / "dir.mp4")


def test_an_encoder_pyavs_ffmpeg_lacks_fails_at_construction(tmp_path):
    with pytest.raises(ValueError, match="no video encoder 'no-such-codec'; use codec='libx264'"):
        VideoRecorder(tmp_path / "v.mp4", codec="no-such-codec")
    with pytest.raises(ValueError, match="no video encoder 'aac'"):  # an audio encoder is no video encoder
        VideoRecorder(tmp_path / "v.mp4", codec="aac")


def test_a_write_that_fails_on_disk_is_reported_once_and_the_recorder_stays_closed(tmp_path):
    path = tmp_path / "v.mp4"
    path.symlink_to("/dev/full")  # every write fails: no space left on device
    recorder = VideoRecorder(path, max_queued_frames=2)
    with pytest.raises(FFmpegError, match="v.mp4") as info:
        for i in range(500):
            recorder.write(pattern(i))
    assert "No space left on device" in str(info.value)
    recorder.close()  # the failure was reported once: closing is quiet
    with pytest.raises(ValueError, match="closed"):
        recorder.write(pattern(0))


@pytest.mark.parametrize("size", [(120, 160), (75, 101)])  # even / odd: padded
def test_frames_go_round_and_each_one_is_recorded_as_written(tmp_path, size):
    # The arrays go round between the caller and the encoder thread: one given back too early
    # (before the encoder took it, or while the converter still compares the next frame with it)
    # would show here as a frame with another frame's content.
    path = tmp_path / "v.mp4"
    background = pattern(0, *size)
    expected, arrays = [background], 0
    frame = background.copy()  # a caller reusing one array for every frame
    with VideoRecorder(path, crf=12, max_queued_frames=4) as recorder:
        recorder.write(background)
        for index in range(1, 140):
            frame[...] = background if index < 120 else pattern(index, *size)
            left = (index * 37) % (size[1] - 20)  # the box jumps: consecutive frames differ clearly
            frame[10:50, left : left + 20] = (255, 0, 0)
            expected.append(frame.copy())
            recorder.write(frame)
            arrays = max(arrays, len(recorder._feed._ours))
    assert arrays <= 4 + 3  # the queue, the frame being encoded, the previous one, the one being filled
    decoded = decode(path)
    assert len(decoded) == len(expected)
    inner = (slice(0, size[0] - 1), slice(0, size[1] - 1))  # an odd size's last row and column share chroma with the padding
    for index, frame in enumerate(decoded):
        assert psnr(frame[inner], expected[index][inner]) > 27, index  # crf 12 on small frames with sharp red edges
        if 0 < index < 120:
            assert psnr(frame[inner], expected[index - 1][inner]) < psnr(frame[inner], expected[index][inner]) - 5, index


def test_states_are_drawn_where_they_changed_and_in_order_with_written_frames(tmp_path):
    from gymview.renderers import renderer_for

    renderer = renderer_for("CartPole-v1")
    states = np.array([[x, 0.0, np.sin(x * 3) / 4, 0.0] for x in np.linspace(-2, 2, 75)])
    path = tmp_path / "v.mp4"
    with VideoRecorder(path, crf=12) as recorder:
        for state in states[:70]:  # two whole chunks and six states
            recorder.write_state(renderer, state)
        recorder.write(np.zeros((400, 600, 3), np.uint8))  # the states waiting are drawn first
        for state in states[70:]:  # drawn at close()
            recorder.write_state(renderer, state)
        assert recorder.frames_written == 76
        with pytest.raises(ValueError, match="another renderer"):
            recorder.write_state(renderer_for("CartPole-v1"), states[0])
    expected = [*renderer.render(states[:70]), np.zeros((400, 600, 3), np.uint8), *renderer.render(states[70:])]
    decoded = decode(path)
    assert len(decoded) == 76
    for index, frame in enumerate(decoded):
        assert psnr(frame, expected[index]) > 35, index
        if 0 < index < 70:
            assert psnr(frame, expected[index - 1]) < psnr(frame, expected[index]) - 3, index


def test_a_finished_video_lets_go_of_its_frames_at_once(tmp_path):
    # The encoder's thread keeps its feed in a reference cycle until a full garbage collection:
    # a feed that kept its frames would hold tens of MiB per video for minutes.
    import weakref

    with VideoRecorder(tmp_path / "v.mp4") as recorder:
        for index in range(6):
            recorder.write(pattern(index))
        gone = [weakref.ref(frame) for frame in recorder._feed._ours.values()]
    assert recorder.frames_written == 6 and gone
    assert [ref() for ref in gone] == [None] * len(gone)


def test_close_without_waiting_then_waiting(tmp_path):
    path = tmp_path / "v.mp4"
    recorder = VideoRecorder(path)
    for i in range(10):
        recorder.write(pattern(i))
    recorder.close(wait=False)
    with pytest.raises(ValueError, match="closed"):
        recorder.write(pattern(0))
    recorder.close()
    assert recorder.frames_written == 10 and decode(path).shape[0] == 10
    assert_plain_web_mp4(path)


def test_garbage_collection_finishes_the_video(tmp_path):
    path = tmp_path / "v.mp4"
    recorder = VideoRecorder(path)
    for i in range(12):
        recorder.write(pattern(i))
    del recorder
    gc.collect()
    assert decode(path).shape[0] == 12
    assert_plain_web_mp4(path)


SCRIPT_WITHOUT_CLOSE = """
import sys, numpy as np
sys.path.insert(0, {tests!r})
from gymview import VideoRecorder
from video_checks import pattern
recorder = VideoRecorder({path!r})
for i in range(50):
    recorder.write(pattern(i))
{ending}
"""


@pytest.mark.parametrize("ending", ["", "raise RuntimeError('the user code failed')"])
def test_interpreter_exit_finishes_an_unclosed_video(tmp_path, ending):
    path = tmp_path / "v.mp4"
    script = SCRIPT_WITHOUT_CLOSE.format(tests=str(ROOT / "tests" / "helpers"), path=str(path), ending=ending)
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == (1 if ending else 0), result.stderr
    assert decode(path).shape[0] == 50
    assert_plain_web_mp4(path)


MEMORY_SCRIPT = """
import sys, resource, numpy as np
sys.path.insert(0, {tests!r})
from gymview import VideoRecorder
frames = [np.full((400, 600, 3), 30 * i, np.uint8) for i in range(8)]  # cheap to encode; size is what counts
with VideoRecorder({path!r}, preset="ultrafast", crf=35, max_queued_frames=8) as recorder:
    recorder.write(frames[0])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for i in range(1, {count}):
        recorder.write(frames[i % 8])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before, after, recorder.frames_written)
"""


@pytest.mark.slow
def test_memory_stays_flat_for_a_5000_frame_episode(tmp_path):
    """5000 frames of 600x400 are 3.6 GB raw; peak RSS may grow by no more than 100 MB."""
    path = tmp_path / "long.mp4"
    script = MEMORY_SCRIPT.format(tests=str(ROOT / "tests" / "helpers"), path=str(path), count=5000)
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    before_kb, after_kb, written = map(int, result.stdout.split())
    assert written == 5000
    assert (after_kb - before_kb) / 1024 < 100, f"peak RSS grew by {(after_kb - before_kb) / 1024:.0f} MB"


def test_crash_safe_false_writes_a_plain_faststart_mp4_in_one_pass(tmp_path):
    path = tmp_path / "plain.mp4"
    with VideoRecorder(path, fps=10, crash_safe=False) as recorder:
        for index in range(12):
            recorder.write(pattern(index))
    assert len(decode(path)) == 12
    boxes = top_level_boxes(path)
    assert "moof" not in boxes and boxes.index("moov") < boxes.index("mdat")


def test_videos_finishing_behind_report_a_failure_when_the_next_is_added_and_still_finish_that_one(tmp_path):
    from gymview.errors import FFmpegError
    from gymview.video.recorder import FinishingVideos

    def recorded(path):
        recorder = VideoRecorder(path, fps=10)
        for value in (0, 120, 240):
            recorder.write(np.full((16, 16, 3), value, np.uint8))
        return recorder

    gone = tmp_path / "gone"
    gone.mkdir()
    failing = recorded(gone / "a.mp4")
    while gone.exists():  # the encoder thread may make its file while the folder goes: the file goes too
        shutil.rmtree(gone, ignore_errors=True)  # then neither its file nor the finished one can be written
    finishing = FinishingVideos()
    finishing.add(failing)
    kept = recorded(tmp_path / "b.mp4")
    with pytest.raises(FFmpegError, match="a.mp4"):
        finishing.add(kept)
    assert finishing.newest is kept
    finishing.close()
    assert finishing.newest is None and kept.closed and (tmp_path / "b.mp4").stat().st_size > 0


def test_a_video_whose_wait_was_interrupted_is_still_waited_for_by_close():
    """Ctrl-C lands most often where the loop waits: in add(), for the video finishing behind."""
    from gymview.video.recorder import FinishingVideos

    class Recorder:  # what FinishingVideos asks of a VideoRecorder
        def __init__(self, interrupt=False):
            self.interrupt, self.waited = interrupt, False

        def close(self, wait=True):
            if wait and self.interrupt:
                self.interrupt = False
                raise KeyboardInterrupt
            self.waited = self.waited or wait

    finishing = FinishingVideos()
    behind, next_one = Recorder(interrupt=True), Recorder()
    finishing.add(behind)
    with pytest.raises(KeyboardInterrupt):
        finishing.add(next_one)  # waiting for the video behind, when Ctrl-C comes
    finishing.close()  # env.close() after the interrupt
    assert behind.waited and next_one.waited and finishing.newest is None


def test_a_video_interrupted_as_it_starts_finishing_is_still_finished_by_close():
    """Ctrl-C can land in add()'s close(wait=False), which draws the last states (a kernel test met it under
    load: env.close() returned with that episode's file unfinished)."""
    from gymview.video.recorder import FinishingVideos

    class Recorder:  # what FinishingVideos asks of a VideoRecorder
        def __init__(self):
            self.closes = []

        def close(self, wait=True):
            self.closes.append(wait)
            if len(self.closes) == 1:
                raise KeyboardInterrupt

    finishing = FinishingVideos()
    recorder = Recorder()
    with pytest.raises(KeyboardInterrupt):
        finishing.add(recorder)
    finishing.close()  # env.close() after the interrupt
    assert recorder.closes == [False, True] and finishing.newest is None


def test_states_still_to_draw_when_ctrl_c_lands_are_drawn_by_the_next_close(tmp_path, monkeypatch):
    from gymview.renderers import renderer_for
    from gymview.video.encoder_feed import EncoderFeed

    renderer = renderer_for("CartPole-v1")
    path = tmp_path / "interrupted.mp4"
    recorder = VideoRecorder(path, fps=30)
    for x in np.linspace(-1, 1, 10):
        recorder.write_state(renderer, np.array([x, 0.0, 0.1, 0.0]))
    put, puts = EncoderFeed.put, []

    def interrupted_put(feed, item):
        puts.append(item)
        if len(puts) == 4:
            raise KeyboardInterrupt  # while the fourth frame is queued
        put(feed, item)

    monkeypatch.setattr(EncoderFeed, "put", interrupted_put)
    with pytest.raises(KeyboardInterrupt):
        recorder.close()
    monkeypatch.setattr(EncoderFeed, "put", put)
    recorder.close()
    assert recorder.frames_written == 10 and len(decode(path)) == 10


def test_nvenc_goes_through_the_same_path_and_a_machine_without_it_says_so(tmp_path):
    import av

    from gymview.errors import FFmpegError

    path = tmp_path / "gpu.mp4"
    frames = [np.full((64, 96, 3), shade, np.uint8) for shade in (0, 120, 240)]
    try:
        with VideoRecorder(path, fps=30, codec="h264_nvenc") as recorder:
            for frame in frames:
                recorder.write(frame)
    except FFmpegError as error:  # no NVIDIA GPU or driver here (or one without NVENC, as Hopper's)
        assert "h264_nvenc" in str(error)
        return
    with av.open(str(path)) as video:
        assert sum(1 for _ in video.decode(video=0)) == len(frames)


def test_a_recording_stopped_between_its_start_and_its_first_frame_leaves_no_file(tmp_path):
    """Ctrl-C can land after write_state() started the encoder and before the state was kept (a kernel test
    met it under load): closing then leaves no file, as a recorder that got no frames writes none."""
    from gymview.renderers import renderer_for

    renderer = renderer_for("CartPole-v1")
    recorder = VideoRecorder(tmp_path / "empty.mp4", fps=30)
    recorder._queue(None, (renderer.height, renderer.width, 3), copy=False)  # what write_state() does first
    recorder.close()
    assert recorder.frames_written == 0 and not (tmp_path / "empty.mp4").exists()
