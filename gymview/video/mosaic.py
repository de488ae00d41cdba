"""Mosaic videos drawn from env states: episodes side by side, labelled, each tile redrawn, shrunk
and converted to I420 only where it changed.

>>> import numpy as np
>>> from gymview.renderers import renderer_for
>>> states = [np.array([[-0.5, 0.0], [-0.4, 0.01]]), np.array([[-0.6, 0.0]])]
>>> mosaic = MosaicFrames(renderer_for("MountainCar-v0"), states, ["ep 0", "ep 1"], columns=2, factor=2)
>>> mosaic.size, mosaic.length
((600, 200), 2)
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from gymview.image.tiling import labelled_grid
from gymview.image.yuv import rgb_to_i420
from gymview.renderers import BatchRenderer
from gymview.video.drawn import Box, Picture, Windows, changed_parts, drawn_boxes

__all__ = ["MosaicFrames", "shrink"]


class MosaicFrames:
    """The frames of one mosaic video: episode ``i`` drawn from ``states[i]`` by ``renderer`` in
    tile ``i``, labelled ``labels[i]``, laid out as :func:`gymview.image.tiling.tile` lays them.

    A tile is the frame shrunk by the whole ``factor``: each pixel the average of a ``factor`` x
    ``factor`` block (rows or columns left over at the bottom or right are left out). An episode
    that has ended shows its last frame. The mosaic is as long as the longest episode.

    Args:
        renderer: The vectorized renderer of the episodes' env.
        states: One (steps, state_dim) array per episode, at least one state each.
        labels: One text per episode.
        columns: Tiles per row.
        factor: How many times smaller than a frame a tile is, at least 1.
    """

    def __init__(
        self, renderer: BatchRenderer, states: list[np.ndarray], labels: list[str], columns: int, factor: int
    ) -> None:
        self.renderer = renderer
        self.states = states
        self.factor = factor
        self.length = max(len(episode) for episode in states)
        self._tile_size = (renderer.height // factor, renderer.width // factor)
        self._frames = np.empty((len(states), renderer.height, renderer.width, 3), np.uint8)  # drawn into again
        first = renderer.render(np.stack([episode[0] for episode in states]), out=self._frames)
        self._before = drawn_boxes(renderer, len(states))
        tiles = shrink(first[:, : self._tile_size[0] * factor, : self._tile_size[1] * factor], factor)
        grid, labelled = labelled_grid(list(tiles), labels, columns)
        height, width = grid.shape[:2]
        self.size = (width + width % 2, height + height % 2)  # I420 pictures: a black column or row to even
        self._grid = np.zeros((self.size[1], self.size[0], 3), np.uint8)
        self._grid[:height, :width] = grid
        tile_height, tile_width = self._tile_size
        self._origins = [(index // columns * tile_height, index % columns * tile_width) for index in range(len(states))]
        # the labels on each tile, with their pixels: put back where the tile is redrawn under them
        self._labels: list[list[tuple[Box, np.ndarray]]] = [[] for _ in states]
        for box in filter(None, labelled):
            pixels = self._grid[box[0] : box[1], box[2] : box[3]].copy()
            for index, (top, left) in enumerate(self._origins):
                if _overlap(box, (top, top + tile_height, left, left + tile_width)):
                    self._labels[index].append((box, pixels))
        self._windows = Windows()

    def fill(self, picture: Picture) -> Iterator[None]:
        """Fill ``picture``, the Y, U and V planes of a :attr:`size` frame, with each frame of the
        mosaic in turn, yielding once it holds it; only what changed is written after the first."""
        rgb_to_i420(self._grid, *picture, self._windows.scratch)
        yield
        count = len(self.states)
        for step in range(1, self.length):
            states = np.stack([episode[min(step, len(episode) - 1)] for episode in self.states])
            self.renderer.render(states, out=self._frames)
            own = drawn_boxes(self.renderer, count)
            changed = [
                (index, part)
                for index in range(count)
                if step < len(self.states[index])  # an episode that has ended shows the same frame
                for part in changed_parts(own[index], self._before[index])
            ]
            self._before = own
            boxes = self._redraw_tiles(changed)
            self._windows.convert([self._grid] * len(boxes), boxes, self.size)
            for number in range(len(boxes)):
                self._windows.put(number, picture)
            yield

    def _redraw_tiles(self, changed: list[tuple[int, Box]]) -> list[Box]:
        """Shrink the boxes ``changed`` of the frames drawn (tile index, box in the frame) into
        the grid, labels put back over them; where they went on the grid."""
        factor = self.factor
        tile_height, tile_width = self._tile_size
        blocks = []  # (tile, top, bottom, left, right) in the tile's pixels, within the tile
        for index, (top, bottom, left, right) in changed:
            block = (index, top // factor, min(tile_height, -(-bottom // factor)), left // factor)
            blocks.append((*block, min(tile_width, -(-right // factor))))
        blocks = [block for block in blocks if block[2] > block[1] and block[4] > block[3]]
        height = max((bottom - top for _, top, bottom, _, _ in blocks), default=0)
        width = max((right - left for _, _, _, left, right in blocks), default=0)
        places = [
            (index, min(top, tile_height - height), min(left, tile_width - width)) for index, top, _, left, _ in blocks
        ]
        scratch = self._windows.scratch
        cut = scratch.array("cut", (len(places), height * factor, width * factor, 3), np.uint8)
        for window, (index, top, left) in zip(cut, places):
            rows = slice(top * factor, (top + height) * factor)
            window[...] = self._frames[index, rows, left * factor : (left + width) * factor]
        shrunk = shrink(cut, factor)
        boxes = []
        for window, (index, top, left) in zip(shrunk, places):
            row, column = self._origins[index]
            box = (row + top, row + top + height, column + left, column + left + width)
            self._grid[box[0] : box[1], box[2] : box[3]] = window
            for label, pixels in self._labels[index]:
                if _overlap(label, box):
                    self._grid[label[0] : label[1], label[2] : label[3]] = pixels
            boxes.append(box)
        return boxes


def shrink(frames: np.ndarray, factor: int) -> np.ndarray:
    """(..., H, W, 3) uint8 frames, H and W multiples of ``factor``, shrunk ``factor`` times: each
    pixel the rounded average of a ``factor`` x ``factor`` block, what
    :func:`gymview.image.frames.downsample` gives for a whole factor (in integers: a few additions
    of strided views instead of numpy's mean over two axes, several times slower).

    >>> frame = np.zeros((2, 4, 3), np.uint8)
    >>> frame[:, :2], frame[0, 2:] = 10, 255
    >>> shrink(frame, 2)[..., 0].tolist()
    [[10, 128]]
    """
    if factor == 1:
        return frames
    area = factor * factor
    total = np.zeros((*frames.shape[:-3], frames.shape[-3] // factor, frames.shape[-2] // factor, 3),
                     np.uint16 if 255 * 2 * area + area < 2**16 else np.uint32)  # fmt: skip
    for row in range(factor):
        for column in range(factor):
            total += frames[..., row::factor, column::factor, :]
    # round(sum / area), halves up: the float mean's (sum / area + 0.5) truncated
    total *= 2
    total += area
    total //= 2 * area
    return total.astype(np.uint8)


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]
