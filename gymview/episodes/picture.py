"""An episode's frame with its charts under it as one picture: the image a saved notebook keeps of
a player, and each frame of an exported episode.

>>> import numpy as np
>>> picture = composed([np.zeros((40, 60, 3), np.uint8)], [{"reward": [0.0, 1.0]}], ["reward"], 2, 1, ["step 1"])
>>> picture.size
(320, 114)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gymview.episodes.charts import COLOURS, ROW_HEIGHT, Columns, chart_image

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["MIN_WIDTH", "composed"]

MIN_WIDTH = 320  # the charts are at least this wide, as in the page
_LINE = 14  # pixels per line of text


def composed(
    pictures: Sequence[np.ndarray],
    episodes: Sequence[Columns],
    names: Sequence[str],
    count: int,
    frame: int,
    lines: Sequence[str],
) -> Image.Image:
    """``pictures`` side by side (one per episode, 6 pixels apart), the charts of ``names`` under them
    with the cursor at ``frame`` of ``count``, then ``lines`` of text (each in its episode's colour
    when there are several)."""
    from PIL import Image, ImageDraw, ImageFont

    gap = 6
    width = max(MIN_WIDTH, sum(picture.shape[1] for picture in pictures) + gap * (len(pictures) - 1))
    top = max(picture.shape[0] for picture in pictures)
    height = top + len(names) * ROW_HEIGHT + _LINE * len(lines) + 4
    canvas = Image.new("RGB", (width + width % 2, height + height % 2), "white")  # even: H.264 in yuv420p
    x = 0
    for picture in pictures:
        canvas.paste(Image.fromarray(np.ascontiguousarray(picture)), (x, 0))
        x += picture.shape[1] + gap
    if names:
        canvas.paste(chart_image(episodes, names, count, frame, width), (0, top))
    draw = ImageDraw.Draw(canvas)
    font = ImageFont.load_default()
    for index, line in enumerate(lines):
        colour = COLOURS[index % len(COLOURS)] if len(lines) > 1 else "#222222"
        draw.text((4, top + len(names) * ROW_HEIGHT + 2 + index * _LINE), line, fill=colour, font=font)
    return canvas
