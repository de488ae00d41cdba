"""The frames a view keeps: the replay history's bounds and save_clip."""

import numpy as np
import pytest
from live_helpers import ShownView

from gymview.live.encoding.replay import HEADER_BYTES, FrameHistory


def test_save_clip_writes_the_kept_frames(tmp_path):
    view = ShownView(fps=120)
    try:
        for shade in range(0, 250, 25):
            view.push(np.full((48, 64, 3), shade, np.uint8), force=True)
            view.flush()
        gif = view.save_clip(tmp_path / "clip.gif", fps=10)
        mp4 = view.save_clip(tmp_path / "clip.mp4", fps=10)
        from PIL import Image

        with Image.open(gif) as image:
            assert image.n_frames == 10
        import imageio_ffmpeg

        frames = list(imageio_ffmpeg.read_frames(str(mp4)))
        assert len(frames) - 1 == 10  # read_frames yields the metadata first
        with pytest.raises(ValueError, match=".mp4, .gif or .html"):
            view.save_clip(tmp_path / "clip.avi")
    finally:
        view.close()
    empty = ShownView()
    with pytest.raises(ValueError, match="no frames"):
        empty.save_clip(tmp_path / "none.gif")
    empty.close()


def test_the_replay_history_is_bounded_by_bytes_and_seconds():
    per_frame = 100 + HEADER_BYTES  # each kept frame counts its header too
    history = FrameHistory(seconds=10, max_bytes=10 * per_frame)
    for i in range(20):
        history.add({"seq": i}, b"x" * 100, at=float(i))
    assert len(history) == 10 and history.total_bytes == 10 * per_frame  # the byte bound
    history = FrameHistory(seconds=5, max_bytes=10**6)
    for i in range(20):
        history.add({"seq": i}, b"x", at=float(i))
    assert [history.get(k)[0]["seq"] for k in (0, -1)] == [14, 19]  # the time bound
    with pytest.raises(ValueError, match="replay_seconds"):
        FrameHistory(seconds=-1)
