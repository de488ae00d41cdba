import numpy as np
import pytest

from gymview.image.frames import check_frame, downsample, fit_size, to_rgb_uint8
from gymview.image.tiling import tile


@pytest.mark.parametrize(
    "frame, expected",
    [
        (np.full((2, 3, 3), 7, np.uint8), 7),
        (np.full((2, 3, 4), 9, np.uint8), 9),
        (np.full((2, 3), 5, np.uint8), 5),
        (np.full((2, 3, 1), 6, np.uint8), 6),
        (np.ones((2, 3), bool), 255),
        (np.full((2, 3, 3), 1.0, np.float32), 255),
        (np.full((2, 3, 3), 0.5, np.float64), 128),
        (np.full((2, 3, 3), 200, np.int64), 200),
        (np.full((2, 3, 3), 200, np.uint16), 200),
    ],
)
def test_accepted_frames_become_rgb_uint8(frame, expected):
    out = to_rgb_uint8(frame)
    assert out.shape == (2, 3, 3) and out.dtype == np.uint8 and out.flags.c_contiguous
    assert (out == expected).all()


def test_result_never_aliases_the_input():
    frame = np.zeros((4, 4, 3), np.uint8)
    out = to_rgb_uint8(frame)
    frame[:] = 99
    assert (out == 0).all()


def test_non_contiguous_and_odd_sizes():
    base = np.arange(7 * 9 * 3, dtype=np.uint8).reshape(7, 9, 3)
    view = base[::-1, ::2]
    out = to_rgb_uint8(view)
    assert out.flags.c_contiguous and np.array_equal(out, view)


@pytest.mark.parametrize(
    "frame, message",
    [
        (None, "render_mode='rgb_array'"),
        (np.zeros((2, 3, 2), np.uint8), "got shape (2, 3, 2)"),
        (np.zeros((2,), np.uint8), "got shape (2,)"),
        (np.zeros((0, 3, 3), np.uint8), "empty frame"),
        (np.zeros((2, 2, 3), np.complex64), "dtype complex64"),
        (np.array([["a"]]), "dtype <U1"),
        (np.full((2, 2, 3), 2.0), "values in [0, 1]"),
        (np.full((2, 2, 3), np.nan), "NaN"),
        (np.full((2, 2, 3), 300, np.int32), "0..255"),
        (np.full((2, 2, 3), -1, np.int8), "0..255"),
    ],
)
def test_bad_frames_get_clear_errors(frame, message):
    with pytest.raises(ValueError, match="expected|values|NaN|render_mode") as info:
        to_rgb_uint8(frame)
    assert message in str(info.value)


def test_check_frame_does_not_convert():
    frame = np.zeros((3, 3), np.float64)
    assert check_frame(frame) is frame


def test_fit_size_keeps_aspect_ratio_and_never_upscales():
    assert fit_size(400, 600, 512) == (341, 512)
    assert fit_size(100, 50, 512) == (100, 50)
    assert fit_size(1000, 1, 10) == (10, 1)
    with pytest.raises(ValueError, match="max_size"):
        fit_size(10, 10, 0)


def test_downsample_averages_areas_without_aliasing():
    # A one-pixel checkerboard must become flat grey, not a moire of black and white.
    checker = (np.indices((400, 600)).sum(axis=0) % 2 * 255).astype(np.uint8)
    frame = np.repeat(checker[:, :, None], 3, axis=2)
    for max_size in (300, 200, 97):
        small = downsample(frame, max_size)
        assert max(small.shape[:2]) == max_size
        assert abs(float(small.mean()) - 127.5) < 2
        assert small.std() < 50  # point sampling would give about 127
    assert abs(float(downsample(frame, 512).mean()) - 127.5) < 2


def test_downsample_integer_factor_is_exact_mean():
    frame = np.zeros((4, 4, 3), np.uint8)
    frame[0, 0] = 255
    small = downsample(frame, 2)
    assert small.shape == (2, 2, 3)
    assert small[0, 0, 0] == 64 and small[1, 1, 0] == 0


@pytest.mark.parametrize("factor", [2, 3, 4, 5, 6])
def test_downsample_by_whole_blocks_is_each_block_s_mean_rounded(factor):
    frame = np.random.default_rng(factor).integers(0, 256, (24 * factor, 32 * factor, 3), np.uint8)
    blocks = frame.reshape(24, factor, 32, factor, 3).astype(np.float64)
    expected = np.floor(blocks.mean(axis=(1, 3)) + 0.5).astype(np.uint8)
    assert np.array_equal(downsample(frame, 32), expected)


def test_downsample_by_blocks_of_more_than_257_rows_does_not_overflow():
    white = np.full((258 * 2, 258 * 3, 3), 255, np.uint8)  # each block sums 258 x 258 x 255
    assert np.array_equal(downsample(white, 3), np.full((2, 3, 3), 255, np.uint8))


def test_downsample_leaves_small_frames_alone():
    frame = np.zeros((10, 20, 3), np.uint8)
    assert downsample(frame, 512) is frame


def test_tile_places_frames_and_labels():
    frames = [np.full((10, 20, 3), i * 60, np.uint8) for i in range(5)]
    grid = tile(frames)
    assert grid.shape == (20, 60, 3)
    assert (grid[10:, 40:] == 0).all()  # the empty sixth cell
    assert (grid[0:10, 20:40] == 60).all()
    labelled = tile([np.full((40, 60, 3), 128, np.uint8)] * 2, labels=["env 0", "env 1"])
    assert (labelled[:20, :60] > 200).any() and (labelled[:20, 60:] > 200).any()
    assert (labelled[:20, :60] < 50).any()  # the label's dark backing box
    assert tile(frames, columns=5).shape == (10, 100, 3)


def test_tile_rejects_bad_arguments():
    with pytest.raises(ValueError, match="at least one"):
        tile([])
    with pytest.raises(ValueError, match="labels"):
        tile([np.zeros((2, 2, 3), np.uint8)], labels=["a", "b"])


def test_result_never_aliases_buffers_that_are_not_ndarrays():
    backing = bytearray(4 * 4 * 3)
    out = to_rgb_uint8(memoryview(backing).cast("B", (4, 4, 3)))
    backing[:] = b"\x07" * len(backing)
    assert (out == 0).all()
