"""An episode's frame with its charts under it as one picture: the image a saved notebook keeps of
a player, and each frame of an exported episode.

>>> import numpy as np
>>> picture = composed([np.zeros((40, 60, 3), np.uint8)], [{"reward": [0.0, 1.0]}], ["reward"], 2, 1, ["step 1"])
>>> picture.size
(320, 116)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from gymview.episodes.charts import COLOURS, ROW_HEIGHT, Columns, chart_image, draw_cursor, readout_lines
from gymview.episodes.clips import Clip, read_frames

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["MIN_WIDTH", "Composer", "composed", "episode_pictures"]

MIN_WIDTH = 320  # the charts are at least this wide, as in the page
_LINE = 15  # pixels per line of text
_FONT_SIZE = 12
_GAP = 6  # pixels between pictures side by side


class Composer:
    """Frames of episodes composed with their charts, one frame after another: the charts are drawn
    once, each frame adds its pictures, the cursor and the text.

    Args:
        sizes: (height, width) of each episode's pictures.
        episodes: Each episode's columns.
        names: The columns charted.
        count: Frames the charts span.
        lines: Lines of text under the charts (one per episode).
        labels: Each picture's name, written on it in its colour (side by side pictures only).
    """

    def __init__(
        self,
        sizes: Sequence[tuple[int, int]],
        episodes: Sequence[Columns],
        names: Sequence[str],
        count: int,
        lines: int,
        labels: Sequence[str] = (),
    ) -> None:
        from PIL import Image

        self.width = max(MIN_WIDTH, sum(width for _, width in sizes) + _GAP * (len(sizes) - 1))
        self.top = max(height for height, _ in sizes)
        self.charts_bottom = self.top + len(names) * ROW_HEIGHT
        height = self.charts_bottom + _LINE * lines + 4
        self.count = count
        self.labels = list(labels) if len(sizes) > 1 else []
        self.background = Image.new("RGB", (self.width + self.width % 2, height + height % 2), "white")  # even: H.264
        if names:
            self.background.paste(chart_image(episodes, names, count, None, self.width), (0, self.top))

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of every frame."""
        return self.background.size

    def frame(self, pictures: Sequence[np.ndarray], frame: int, lines: Sequence[str]) -> Image.Image:
        """``pictures`` side by side over the charts, the cursor at ``frame``, then ``lines``
        (each in its episode's colour when there are several)."""
        from PIL import Image, ImageDraw, ImageFont

        canvas = self.background.copy()
        draw = ImageDraw.Draw(canvas)
        font = ImageFont.load_default(_FONT_SIZE)
        x = 0
        for index, picture in enumerate(pictures):
            canvas.paste(Image.fromarray(np.ascontiguousarray(picture)), (x, 0))
            if index < len(self.labels):
                draw.text((x + 6, 4), self.labels[index], fill=COLOURS[index % len(COLOURS)], font=font)
            x += picture.shape[1] + _GAP
        if self.charts_bottom > self.top:
            draw_cursor(draw, frame, self.count, self.width, (self.top, self.charts_bottom))
        for index, line in enumerate(lines):
            colour = COLOURS[index % len(COLOURS)] if len(lines) > 1 else "#222222"
            draw.text((4, self.charts_bottom + 2 + index * _LINE), line, fill=colour, font=font)
        return canvas


def composed(
    pictures: Sequence[np.ndarray],
    episodes: Sequence[Columns],
    names: Sequence[str],
    count: int,
    frame: int,
    lines: Sequence[str],
    labels: Sequence[str] = (),
) -> Image.Image:
    """One frame as :class:`Composer` makes it: ``pictures`` side by side (named by ``labels``), the
    charts of ``names`` under them with the cursor at ``frame`` of ``count``, then ``lines`` of text."""
    sizes = [(picture.shape[0], picture.shape[1]) for picture in pictures]
    return Composer(sizes, episodes, names, count, len(lines), labels).frame(pictures, frame, lines)


def episode_pictures(
    clips: Sequence[Clip], names: Sequence[str], every: int = 1, max_width: int | None = None
) -> Iterator[Image.Image]:
    """Every ``every``-th frame of the episodes ``clips`` (side by side; one that ended holds its last
    frame) composed with the charts of ``names`` and the readout, at most ``max_width`` wide."""
    from PIL import Image

    count = max(clip.count for clip in clips)
    readers = [read_frames(clip.video, clip.start, clip.count) for clip in clips]
    pictures: list[Any] = [next(reader) for reader in readers]
    columns = [clip.columns() for clip in clips]
    labels = [clip.label for clip in clips]
    composer = Composer([picture.shape[:2] for picture in pictures], columns, names, count, len(clips), labels)
    width, height = composer.size
    scaled = None if max_width is None or width <= max_width else (max_width, round(height * max_width / width))
    for frame in range(count):
        if frame:
            pictures = [next(reader, held) for reader, held in zip(readers, pictures)]
        if frame % every:
            continue
        image = composer.frame(pictures, frame, readout_lines(labels, columns, names, frame))
        if scaled is not None:
            image = image.resize((scaled[0] + scaled[0] % 2, scaled[1] + scaled[1] % 2), Image.Resampling.LANCZOS)
        yield image
