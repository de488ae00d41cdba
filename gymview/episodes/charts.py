"""Charts of step values drawn with Pillow, as the player draws them in the page (``js/charts.js``):
one row per value, every episode's line in it, a cursor at a frame. For the picture a saved
notebook keeps and for episodes exported as video.

>>> image = chart_image([{"reward": [0.0, 1.0, 1.0], "return": [0.0, 1.0, 2.0]}], ["reward", "return"], 3, 1, 200)
>>> image.size
(200, 112)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image, ImageDraw

__all__ = ["COLOURS", "ROW_HEIGHT", "chart_image", "draw_cursor", "format_value", "readout", "readout_lines"]

ROW_HEIGHT = 56  # pixels per chart row, as in js/charts.js
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]
MISSING = "\u2013"  # an en dash: a cell without a number
_CURSOR = "#e53935"
_LABEL = "#555555"

Columns = Mapping[str, Sequence[float | None]]


def format_value(value: float | int | None) -> str:
    """A number as the readout shows it: whole numbers whole, others to 4 significant digits.

    >>> format_value(120), format_value(1.0), format_value(0.123456), format_value(float("nan")) == MISSING
    ('120', '1', '0.1235', True)
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    rounded = float(f"{value:.4g}")
    return str(int(rounded)) if rounded.is_integer() and abs(rounded) < 1e15 else repr(rounded)


def readout(columns: Columns, names: Sequence[str], index: int) -> str:
    """ "step 120 · reward 1 · value 60" for row ``index``, as the player's text at its cursor.

    >>> readout({"step": [0, 1], "reward": [0.0, 1.0], "terminated": [0, 1]}, ["reward"], 1)
    'step 1 · reward 1 · terminated'
    """

    def at(name: str) -> float | None:
        values = columns.get(name)
        return values[index] if values is not None and index < len(values) else None

    parts = [f"step {format_value(at('step'))}"]
    parts += [f"{name} {format_value(at(name))}" for name in names if name != "step"]
    if at("terminated") == 1:
        parts.append("terminated")
    elif at("truncated") == 1:
        parts.append("truncated")
    return " · ".join(parts)


def readout_lines(labels: Sequence[str], episodes: Sequence[Columns], names: Sequence[str], frame: int) -> list[str]:
    """The readout of each episode at ``frame`` (an episode that ended: its last row), each prefixed
    by its label when there are several.

    >>> readout_lines(["a", "b"], [{"step": [0, 1]}, {"step": [0]}], [], 1)
    ['a: step 1', 'b: step 0']
    """
    lines = []
    for label, columns in zip(labels, episodes):
        rows = len(next(iter(columns.values()), ()))
        text = readout(columns, names, min(frame, rows - 1))
        lines.append(f"{label}: {text}" if len(episodes) > 1 else text)
    return lines


def _range(lists: Sequence[Sequence[float | None]], count: int) -> tuple[float, float]:
    found = [v for values in lists for v in values[:count] if v is not None and not math.isnan(v)]
    if not found:
        return 0.0, 1.0
    low, high = min(found), max(found)
    return (low - 1, high + 1) if low == high else (low, high)


def _x(index: int, count: int, width: int) -> float:
    return width / 2 if count <= 1 else (index + 0.5) / count * width


def chart_image(
    episodes: Sequence[Columns], names: Sequence[str], count: int, cursor: int | None, width: int
) -> Image.Image:
    """The charts of ``names``: each episode's values (its columns) as a line in its colour over
    ``count`` frames, the cursor at frame ``cursor`` (None: no cursor, see ``draw_cursor``);
    ``width`` x ``len(names) * ROW_HEIGHT`` pixels."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (width, max(1, len(names) * ROW_HEIGHT)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(11)
    for row, name in enumerate(names):
        top = row * ROW_HEIGHT
        lists = [episode.get(name, ()) for episode in episodes]
        low, high = _range(lists, count)
        draw.rectangle((0, top, width, top + ROW_HEIGHT - 1), fill="#f0f0f0" if row % 2 == 0 else "#f8f8f8")
        for index, values in enumerate(lists):
            points: list[tuple[float, float]] = []
            for frame, value in enumerate(values[:count]):
                if value is None or math.isnan(value):
                    _polyline(draw, points, COLOURS[index % len(COLOURS)])
                    points = []
                    continue
                y = top + 14 + (ROW_HEIGHT - 20) * (1 - (value - low) / (high - low))
                points.append((_x(frame, count, width), y))
            _polyline(draw, points, COLOURS[index % len(COLOURS)])
        draw.text((4, top + 1), name, fill=_LABEL, font=font)
        span = f"{format_value(low)} … {format_value(high)}"
        draw.text((width - 4 - draw.textlength(span, font=font), top + 1), span, fill=_LABEL, font=font)
    if cursor is not None:
        draw_cursor(draw, cursor, count, width, (0, image.height))
    return image


def draw_cursor(draw: ImageDraw.ImageDraw, cursor: int, count: int, width: int, span: tuple[int, int]) -> None:
    """The cursor's line at frame ``cursor`` of ``count``, from y ``span[0]`` to ``span[1]``."""
    x = round(_x(cursor, count, width))
    draw.line((x, span[0], x, span[1]), fill=_CURSOR, width=1)


def _polyline(draw: ImageDraw.ImageDraw, points: list[tuple[float, float]], colour: str) -> None:
    if len(points) > 1:
        draw.line(points, fill=colour, width=2)
    elif points:
        x, y = points[0]
        draw.ellipse((x - 1, y - 1, x + 1, y + 1), fill=colour)
