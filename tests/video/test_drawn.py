"""DrawnFrames: env states drawn and converted to I420 only where frames changed give exactly the
whole frames converted."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from video_checks import random_states

from gymview.image.yuv import I420Converter
from gymview.renderers import renderer_for
from gymview.video.drawn import KEPT_BYTES, DrawnFrames


def whole_frames(renderer, states: np.ndarray) -> list[np.ndarray]:
    return [I420Converter(renderer.width, renderer.height).convert(frame).copy() for frame in renderer.render(states)]


ENVS = [("MountainCar-v0", None), ("CartPole-v1", None), ("Acrobot-v1", None), ("Pendulum-v1", None),
        ("MountainCar-v0", (301, 199)), ("CartPole-v1", (97, 63))]  # fmt: skip


# kept_bytes: frames kept for reuse (by default), none kept, or so few that the oldest keep going
@pytest.mark.parametrize("kept_bytes", [KEPT_BYTES, 0, 30_000])
@pytest.mark.parametrize(("env_id", "size"), ENVS)
def test_frames_equal_whole_frames_converted_across_calls_videos_and_pictures(env_id, size, kept_bytes) -> None:
    env = gym.make(env_id)
    if size is not None:  # odd sizes: a black column and row, as I420Converter pads
        env.unwrapped.screen_width, env.unwrapped.screen_height = size
    renderer = renderer_for(env)
    first, second = random_states(env, renderer, 75, seed=1), random_states(env, renderer, 40, seed=2)
    drawn = DrawnFrames(renderer, chunk=16, kept_bytes=kept_bytes)
    # two calls, the first ending inside a chunk; then another video's states; then the first
    # video's again, cut into other chunks: frames drawn before, kept from other calls
    calls = (first[:37], first[37:], second, first[5:60])
    got = [planes.copy() for states in calls for planes in drawn.planes(states)]
    expected = whole_frames(renderer, first) + whole_frames(renderer, second)
    expected += expected[5:60]
    assert len(got) == len(expected) == 170
    for index, (ours, whole) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(ours, whole, err_msg=f"frame {index}")
    # a picture of someone else's, then the own one again: each starts from a whole frame
    width, height = drawn.even_size
    picture = (np.zeros((height, width), np.uint8), *np.zeros((2, height // 2, width // 2), np.uint8))
    for index, _ in enumerate(drawn.fill(first[10:30], picture)):
        filled = np.concatenate([plane.ravel() for plane in picture])
        np.testing.assert_array_equal(filled, expected[10 + index], err_msg=f"picture, frame {10 + index}")
    again = [planes.copy() for planes in drawn.planes(second[:20])]
    for index, ours in enumerate(again):
        np.testing.assert_array_equal(ours, expected[75 + index], err_msg=f"again, frame {index}")


def test_frames_drawn_again_are_converted_once() -> None:
    renderer = renderer_for("MountainCar-v0")
    back_and_forth = np.stack([np.r_[np.linspace(-0.9, -0.2, 40), np.linspace(-0.2, -0.9, 40)], np.zeros(80)], 1)
    drawn = DrawnFrames(renderer)
    converted = []
    convert = drawn._windows.convert
    drawn._windows.convert = lambda images, boxes, size: (converted.append(len(boxes)), convert(images, boxes, size))
    got = [planes.copy() for planes in drawn.planes(back_and_forth)]
    keys = renderer.frame_keys(back_and_forth)
    assert sum(converted) == len(set(keys)) < 70  # going back, most frames are those of the way there
    expected = whole_frames(renderer, back_and_forth)
    for index, (ours, whole) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(ours, whole, err_msg=f"frame {index}")
