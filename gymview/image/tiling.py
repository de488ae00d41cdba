"""Arrange several frames in one labelled grid (vector envs, batch mosaics)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from gymview._checks import check_int


def tile(frames: list[np.ndarray], labels: list[str] | None = None, columns: int | None = None) -> np.ndarray:
    """Arrange (H, W, 3) uint8 frames in a grid, each with an optional label in its corner.

    Frames of different sizes are placed top-left in cells of the largest size; the grid is as
    square as possible unless ``columns`` is given. Empty cells stay black.

    >>> tile([np.zeros((2, 3, 3), np.uint8)] * 3).shape
    (4, 6, 3)
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
    if labels:
        image = Image.fromarray(grid)
        draw = ImageDraw.Draw(image)
        # Labels scale with the cells, so they stay readable after the grid is downsampled.
        font = ImageFont.load_default(size=max(10, min(cell_h, cell_w) // 12))
        for index, label in enumerate(labels):
            row, column = divmod(index, columns)
            x, y = column * cell_w + 4, row * cell_h + 3
            left, top, right, bottom = draw.textbbox((x, y), label, font=font)
            draw.rectangle((left - 2, top - 2, right + 2, bottom + 2), fill=(0, 0, 0))
            draw.text((x, y), label, fill=(255, 255, 255), font=font)
        grid = np.asarray(image)
    return grid
