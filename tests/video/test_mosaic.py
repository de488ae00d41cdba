"""MosaicFrames: tiles redrawn, shrunk and converted only where they changed give exactly the whole
mosaic, tiled and labelled, converted."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from video_checks import random_states

from gymview.image.frames import downsample
from gymview.image.tiling import tile
from gymview.image.yuv import I420Converter
from gymview.renderers import renderer_for
from gymview.video.mosaic import MosaicFrames


def up_the_left_hill(count: int) -> list[np.ndarray]:
    """MountainCar states that climb the left hill, where small tiles have their labels."""
    return [np.stack([np.linspace(-0.9, -1.2 + 0.01 * index, 30), np.zeros(30)], 1) for index in range(count)]


@pytest.mark.parametrize(
    ("env_id", "screen", "count", "columns", "factor"),
    [("MountainCar-v0", None, 16, 4, 2), ("CartPole-v1", None, 5, 3, 1), ("Acrobot-v1", 301, 7, 4, 3),
     ("MountainCar-v0", "left hill", 3, 2, 10)],
)  # fmt: skip
def test_frames_equal_the_whole_mosaic_converted(env_id, screen, count, columns, factor) -> None:
    env = gym.make(env_id)
    if screen == 301:  # a frame that the factor does not divide: the rows and columns left over are left out
        env.unwrapped.SCREEN_DIM = screen
    renderer = renderer_for(env)
    if screen == "left hill":  # the car passes under the label
        states = up_the_left_hill(count)
    else:
        states = [random_states(env, renderer, 40 - 2 * index, seed=index) for index in range(count)]  # unequal
    lengths = [len(episode) for episode in states]
    # long labels spill over into the next tile, and the scene passes under them
    labels = [f"episode {index} with a long label: {'x' * 30}" for index in range(count)]
    mosaic = MosaicFrames(renderer, states, labels, columns, factor)
    width, height = mosaic.size
    picture = (np.zeros((height, width), np.uint8), *np.zeros((2, height // 2, width // 2), np.uint8))
    tile_height, tile_width = renderer.height // factor, renderer.width // factor
    filled = 0
    for step, _ in enumerate(mosaic.fill(picture)):
        frames = renderer.render(np.stack([episode[min(step, len(episode) - 1)] for episode in states]))
        size = max(tile_height, tile_width)
        tiles = [downsample(frame[: tile_height * factor, : tile_width * factor], size) for frame in frames]
        expected = I420Converter(width, height).convert(_padded(tile(tiles, labels, columns), width, height))
        got = np.concatenate([plane.ravel() for plane in picture])
        np.testing.assert_array_equal(got, expected, err_msg=f"step {step}")
        filled += 1
    assert filled == mosaic.length == max(lengths)


def _padded(grid: np.ndarray, width: int, height: int) -> np.ndarray:
    padded = np.zeros((height, width, 3), np.uint8)
    padded[: grid.shape[0], : grid.shape[1]] = grid
    return padded
