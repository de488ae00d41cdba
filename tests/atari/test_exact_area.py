"""ExactAreaResize gives OpenCV's INTER_AREA pixels, halfway pixels included, and the cv2 backend uses it."""

import threading

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")
pytest.importorskip("torch")

from gymview.atari import AtariPipeline  # noqa: E402
from gymview.atari.exact_area import CHUNK_FRAMES, ExactAreaResize, integer_area_weights  # noqa: E402


def opencv(frames, size=84):
    return np.stack([cv2.resize(frame, (size, size), interpolation=cv2.INTER_AREA) for frame in frames])


def halfway_pixels(frames, size=84):
    """How many output pixels lie exactly halfway between two levels (where rounding decides)."""
    rows, columns = integer_area_weights(frames.shape[1], size), integer_area_weights(frames.shape[2], size)
    sums = rows @ frames.astype(np.int64) @ columns.T
    divisor = rows[0].sum() * columns[0].sum()
    return int(((sums % divisor) * 2 == divisor).sum())


def atari_like(count, seed=0):
    """Flat areas of a few levels with sharp edges, like Atari screens: a few halfway pixels each."""
    rng = np.random.default_rng(seed)
    blocks = rng.choice(np.array([0, 74, 142, 200], np.uint8), (count, 21, 16))
    return np.repeat(np.repeat(blocks, 10, axis=1), 10, axis=2)


@pytest.mark.parametrize(
    "kind, count",
    [("random", 5), ("few levels", 3), ("atari-like", CHUNK_FRAMES + 5)],  # the last spans two chunks
)
def test_equals_opencv_inter_area_including_halfway_pixels(kind, count):
    rng = np.random.default_rng(1)
    if kind == "atari-like":
        frames = atari_like(count)
    else:
        frames = rng.integers(0, 256, (count, 210, 160), dtype=np.uint8)
        if kind == "few levels":
            frames = np.array([0, 25, 75, 150, 255], np.uint8)[frames % 5]
    expected = opencv(frames)
    halfway = halfway_pixels(frames)
    assert halfway > 0, "the frames should have pixels whose rounding is decided by OpenCV's float sums"
    rounded_up = np.floor(
        integer_area_weights(210, 84) @ frames.astype(np.int64) @ integer_area_weights(160, 84).T / 200 + 0.5
    )
    assert (rounded_up != expected).any(), "plain rounding should differ from OpenCV somewhere (else the test proves nothing)"
    out = np.empty((count, 84, 84), np.uint8)
    ExactAreaResize(210, 160, 84)(frames, out)
    np.testing.assert_array_equal(out, expected)


def test_writes_into_a_strided_output_and_reuses_one_instance_for_any_batch_size():
    resize = ExactAreaResize(210, 160, 84)
    for count in (3, 1, CHUNK_FRAMES * 2 + 1):
        frames = atari_like(count, seed=count)
        out = np.zeros((4, count, 84, 84), np.uint8)[1]  # a slot of a ring, as the frame stack passes it
        resize(frames, out)
        np.testing.assert_array_equal(out, opencv(frames))


@pytest.mark.parametrize(
    "height, width, size, supported",
    [(210, 160, 84, True), (100, 80, 80, True), (210, 160, 42, False), (250, 160, 84, False), (210, 160, 64, False), (210, 160, 211, False)],
)
def test_supported_sizes(height, width, size, supported):
    assert ExactAreaResize.supported(height, width, size) is supported
    if not supported:
        with pytest.raises(ValueError, match="cv2.resize"):
            ExactAreaResize(height, width, size)


def test_a_size_opencv_rounds_another_way_is_left_to_opencv():
    # An integer scale takes OpenCV's fast path, which rounds halves up: the check at start sees it.
    assert ExactAreaResize.supported(200, 200, 100)
    assert not ExactAreaResize(200, 200, 100).matches_cv2(cv2)
    assert ExactAreaResize(210, 160, 84).matches_cv2(cv2)
    frames = np.random.default_rng(2).integers(0, 256, (3, 200, 200, 3), dtype=np.uint8)
    with AtariPipeline(3, size=100, stack=1, device="cpu", backend="cv2") as pipe:
        out = pipe.process(frames).numpy()[:, 0]
    gray = np.stack([cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY) for frame in frames])
    np.testing.assert_array_equal(out, opencv(gray, size=100))


def test_a_pipeline_of_many_envs_splits_whole_chunks_over_threads_with_the_same_pixels():
    count = 2 * CHUNK_FRAMES + 3
    rgb = np.repeat(atari_like(count)[..., None], 3, axis=-1)
    expected = opencv(atari_like(count))
    with AtariPipeline(count, stack=1, device="cpu") as pipe:
        out = pipe.process(rgb).numpy()[:, 0]
        assert pipe.threads == min(cv2.getNumThreads(), 2)
    np.testing.assert_array_equal(out, expected)
    with AtariPipeline(CHUNK_FRAMES - 1, device="cpu") as pipe:
        pipe.process(rgb[: CHUNK_FRAMES - 1])
        assert pipe.threads == 1  # a part smaller than a chunk would only wait for the GIL
    assert not [t for t in threading.enumerate() if t.name.startswith("gymview-preprocess")]


def test_an_empty_batch_is_a_no_op_and_wrong_shapes_get_clear_errors():
    resize = ExactAreaResize(210, 160, 84)
    resize(np.zeros((0, 210, 160), np.uint8), np.zeros((0, 84, 84), np.uint8))
    frames = atari_like(2)
    out = np.zeros((2, 84, 84), np.uint8)
    resize(frames, out)  # the first batch with frames allocates after the empty one
    np.testing.assert_array_equal(out, opencv(frames))
    with pytest.raises(ValueError, match=r"frames must be uint8 gray frames of shape \(n, 210, 160\); got uint8 \(2, 210, 160, 3\)"):
        resize(np.zeros((2, 210, 160, 3), np.uint8), out)
    with pytest.raises(ValueError, match=r"frames must be .* got float32"):
        resize(frames.astype(np.float32), out)
    with pytest.raises(ValueError, match=r"out must be a uint8 array of shape \(2, 84, 84\); got uint8 \(3, 84, 84\)"):
        resize(frames, np.zeros((3, 84, 84), np.uint8))
