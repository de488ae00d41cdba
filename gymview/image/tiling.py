"""Arrange several frames in one labelled grid (vector envs, batch mosaics)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from gymview._internal.checks import check_int


def tile(frames: list[np.ndarray], labels: list[str] | None = None, columns: int | None = None) -> np.ndarray:
    """Arrange (H, W, 3) uint8 frames in a grid, each with an optional label in its corner.

    Frames of different sizes are placed top-left in cells of the largest size. Empty cells stay
    black. Labels are drawn white on black, scaled with the cells so they stay readable after the
    grid is downsampled.

    Args:
        frames: The (H, W, 3) uint8 frames, at least one.
        labels: One text per frame, or None for no labels.
        columns: Cells per row; None makes the grid as square as possible.

    Returns:
        The grid, an (rows * cell height, columns * cell width, 3) uint8 array.

    Raises:
        ValueError: When ``frames`` is empty, ``labels`` does not have one text per frame, or
            ``columns`` is not a positive integer.

    Examples:
        >>> import numpy as np
        >>> tile([np.zeros((2, 3, 3), np.uint8)] * 3).shape
        (4, 6, 3)
        >>> frames = [np.zeros((60, 80, 3), np.uint8), np.zeros((40, 80, 3), np.uint8)]
        >>> tile(frames, labels=["env 0", "env 1"], columns=1).shape
        (120, 80, 3)
    """
    return labelled_grid(frames, labels, columns)[0]


def labelled_grid(
    frames: list[np.ndarray], labels: list[str] | None = None, columns: int | None = None
) -> tuple[np.ndarray, list[tuple[int, int, int, int] | None]]:
    """:func:`tile`'s grid, and where each label's box is drawn on it: ``(top, bottom, left,
    right)``, or None for none (no labels, or one outside the grid). A box is opaque: redrawing
    what the grid held there restores the label.

    >>> import numpy as np
    >>> grid, boxes = labelled_grid([np.zeros((60, 80, 3), np.uint8)] * 2, ["a", "b"])
    >>> grid.shape, [box[2] for box in boxes]
    ((60, 160, 3), [2, 82])
    """
    if not frames:
        raise ValueError("tile() needs at least one frame")
    if labels is not None and len(labels) != len(frames):
        raise ValueError(f"got {len(labels)} labels for {len(frames)} frames")
    count = len(frames)
    columns = check_int("columns", columns) if columns is not None else max(1, int(np.ceil(np.sqrt(count))))
    rows = -(-count // columns)
    cell_h = max(f.shape[0] for f in frames)
    cell_w = max(f.shape[1] for f in frames)
    grid = np.zeros((rows * cell_h, columns * cell_w, 3), np.uint8)
    for index, frame in enumerate(frames):
        row, column = divmod(index, columns)
        grid[row * cell_h : row * cell_h + frame.shape[0], column * cell_w : column * cell_w + frame.shape[1]] = frame
    boxes: list[tuple[int, int, int, int] | None] = [None] * count
    if labels:
        # Labels scale with the cells, so they stay readable after the grid is downsampled.
        font = _font(max(10, min(cell_h, cell_w) // 12))
        for index, label in enumerate(labels):
            row, column = divmod(index, columns)
            boxes[index] = _draw_label(grid, column * cell_w + 4, row * cell_h + 3, label, font)
    return grid, boxes


@functools.lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _draw_label(grid: np.ndarray, x: int, y: int, label: str, font: Any) -> tuple[int, int, int, int] | None:
    """White ``label`` on a black box at (x, y), drawn on just the pixels the box covers (a copy
    of the whole grid for PIL would cost more than the drawing); the box, None if off the grid."""
    left, top, right, bottom = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((x, y), label, font=font)
    y0, y1 = max(0, int(top) - 2), min(grid.shape[0], int(bottom) + 3)
    x0, x1 = max(0, int(left) - 2), min(grid.shape[1], int(right) + 3)
    if y0 >= y1 or x0 >= x1:
        return None
    patch = Image.new("RGB", (x1 - x0, y1 - y0), (0, 0, 0))
    ImageDraw.Draw(patch).text((x - x0, y - y0), label, fill=(255, 255, 255), font=font)
    grid[y0:y1, x0:x1] = np.asarray(patch)
    return y0, y1, x0, x1
