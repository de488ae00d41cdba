import av
import gymnasium as gym
import numpy as np
import pytest
from video_checks import pattern

from gymview.image.yuv import I420Converter, changed_boxes


def ffmpeg_i420(frame: np.ndarray) -> np.ndarray:
    """FFmpeg's own rgb24 -> yuv420p conversion of one frame (its scaler, through PyAV)."""
    planes = av.VideoFrame.from_ndarray(frame, format="rgb24").reformat(format="yuv420p").to_ndarray()
    return planes.reshape(-1)


def mountain_car_frames(count: int) -> list[np.ndarray]:
    env = gym.make("MountainCar-v0", render_mode="rgb_array")
    observation, _ = env.reset(seed=3)
    frames = [env.render()]
    for _ in range(count - 1):
        observation, *_ = env.step(2 if observation[1] >= 0 else 0)
        frames.append(env.render())
    env.close()
    return frames


@pytest.mark.parametrize("source", ["mountain_car", "pattern"])
def test_matches_ffmpegs_own_conversion(source):
    frame = mountain_car_frames(1)[0] if source == "mountain_car" else pattern(5, 96, 128)
    height, width = frame.shape[:2]
    ours = I420Converter(width, height).convert(frame).astype(int)
    theirs = ffmpeg_i420(frame).astype(int)
    luma = height * width
    assert ours.shape == theirs.shape == (luma * 3 // 2,)
    assert np.abs(ours[:luma] - theirs[:luma]).max() <= 1
    # Chroma: ffmpeg downsamples with a bicubic filter, we average 2x2; they differ only at sharp
    # colour edges, where bicubic rings.
    chroma = np.abs(ours[luma:] - theirs[luma:])
    assert np.mean(chroma > 2) < 0.01 and chroma.max() <= 12
    assert np.abs(ours - theirs).mean() < 0.2


def test_converting_only_changed_boxes_equals_converting_everything():
    rng = np.random.default_rng(0)
    frame = np.asarray(pattern(0, 64, 90))
    incremental = I420Converter(90, 64)
    for step in range(40):
        frame = frame.copy()
        for _ in range(rng.integers(0, 4)):  # a few boxes change, sometimes none, at odd places
            top, left = rng.integers(0, 64), rng.integers(0, 90)
            frame[top : top + rng.integers(1, 20), left : left + rng.integers(1, 30)] = rng.integers(0, 256, 3)
        expected = I420Converter(90, 64).convert(frame)
        np.testing.assert_array_equal(incremental.convert(frame), expected, err_msg=f"step {step}")


def test_mountain_car_converts_about_one_percent_of_each_frame():
    frames = mountain_car_frames(30)
    fractions = [
        sum((bottom - top) * (right - left) for top, bottom, left, right in changed_boxes(b, a)) / (400 * 600)
        for a, b in zip(frames, frames[1:])
    ]
    assert 0 < np.median(fractions) < 0.05


@pytest.mark.parametrize("width", [90, 92, 94, 96, 2])  # row bytes divisible by 2, 4, 8 and neither
def test_boxes_cover_every_changed_pixel_with_even_edges(width):
    rng = np.random.default_rng(width)
    for _ in range(30):
        a = rng.integers(0, 3, (40, width, 3), dtype=np.uint8)
        b = a.copy()
        for _ in range(rng.integers(1, 4)):
            b[rng.integers(0, 40), rng.integers(0, width), rng.integers(0, 3)] += 1
        covered = np.zeros((40, width), bool)
        for top, bottom, left, right in changed_boxes(b, a):
            assert all(edge % 2 == 0 for edge in (top, bottom, left, right))
            assert 0 <= top < bottom <= 40 and 0 <= left < right <= width
            covered[top:bottom, left:right] = True
        assert covered[(a != b).any(axis=2)].all()
    assert changed_boxes(a, a) == []


def test_bad_sizes_and_frames_are_refused():
    with pytest.raises(ValueError, match="frame size must be positive; got 0x4"):
        I420Converter(0, 4)
    converter = I420Converter(4, 4)
    with pytest.raises(ValueError, match=r"C-contiguous \(4, 4, 3\) uint8 frame; got uint8 \(4, 6, 3\)"):
        converter.convert(np.zeros((4, 6, 3), np.uint8))
    with pytest.raises(ValueError, match="C-contiguous"):
        converter.convert(np.zeros((4, 8, 3), np.uint8)[:, ::2])


def test_odd_frames_are_padded_black_and_converted_where_they_changed():
    frame = np.full((5, 7, 3), 255, np.uint8)
    converter = I420Converter(7, 5)
    assert converter.even_size == (8, 6)
    planes = converter.convert(frame).copy()
    luma = planes[:48].reshape(6, 8)
    assert (luma[:5, :7] == 235).all() and (luma[5] == 16).all() and (luma[:, 7] == 16).all()
    changed = frame.copy()
    changed[4, 6] = 0  # the corner pixel beside both padded edges
    np.testing.assert_array_equal(converter.convert(changed), I420Converter(7, 5).convert(changed))


def test_boxes_told_by_the_caller_are_the_only_ones_converted():
    rng = np.random.default_rng(1)
    first = rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)
    second = first.copy()
    second[11:13, 21:30] = 0
    converter = I420Converter(60, 40)
    converter.convert(first)
    told = converter.convert(second, [(11, 13, 21, 30)]).copy()
    np.testing.assert_array_equal(told, I420Converter(60, 40).convert(second))
    stale = converter.convert(first, [])  # told nothing changed: the planes stay those of `second`
    np.testing.assert_array_equal(stale, told)
