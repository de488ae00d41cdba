"""A run as one HTML file: the player's bundle (three.js with it), its style, the scenes and the states inline,
so that the file plays in a browser opened from disk, with no network.

States are stored as whole multiples of a step (``STEP``, 7.6e-6: far below a pixel, in metres or pixels; larger
where a segment's numbers are too big for 31 bits), each number's change from the frame before, its four bytes
regrouped by their place, then by number, over time (small changes: the high bytes are zeros), deflated and
written as base64; the page inflates them with the browser's ``DecompressionStream``. A HalfCheetah frame of 56
numbers (224 bytes) takes about 70 bytes of the file. Charted values are kept exactly: float32 ``[T, envs]`` each,
their bytes regrouped the same way.

>>> import json, tempfile, pathlib
>>> scene = {"kind": "cartpole", "width": 600, "height": 400, "scale": 120.0, "pole_length": 120.0}
>>> states = np.zeros((3, 4), np.float32)
>>> path = write_page(pathlib.Path(tempfile.mkdtemp()) / "run.html", [Segment(scene, states)], fps=50)
>>> text = path.read_text()
>>> text.startswith("<!doctype html>") and "gymview-rollout" in text
True
>>> unpacked_states(json.loads(page_data(text))["segments"][0]).shape
(3, 4)
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import pathlib
import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from gymview._internal import frontend

__all__ = ["MAX_CHARTED", "Segment", "page_data", "unpacked_states", "unpacked_values", "value_lists", "write_page"]

_DATA_ID = "gymview-rollout"
#: the states' step: a power of two, so that whole numbers (counts, bits) come back exactly
STEP = 2.0**-17
_MISSING = -(2**31)  # a missing number (NaN) among the states' multiples
#: the values charted when a page opens, at most
MAX_CHARTED = 6


class Segment(NamedTuple):
    """Frames of one scene, in order: its description (as the page draws it) and a float32 state a frame."""

    scene: dict[str, Any]
    states: np.ndarray


def write_page(
    path: str | os.PathLike[str],
    segments: Sequence[Segment],
    fps: float,
    values: Mapping[str, np.ndarray] | None = None,
    title: str = "",
    charted: Sequence[str] | None = None,
) -> pathlib.Path:
    """Write ``segments`` (played one after another) as a self-contained HTML page at ``path`` (its folders
    made); ``values``: name -> ``[frames]`` or ``[frames, envs]`` numbers, ``charted`` of them under the picture
    at first (None: the first six; the page's chips pick others)."""
    path = pathlib.Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"the file must end in .html; got {str(path)!r}")
    scenes: list[dict[str, Any]] = []
    packed = []
    for segment in segments:
        if segment.scene not in scenes:
            scenes.append(segment.scene)
        packed.append({"scene": scenes.index(segment.scene), **_stepped(np.asarray(segment.states, np.float64))})
    data = {
        "scenes": scenes,
        "segments": packed,
        "values": {name: _exact(_per_env(array)) for name, array in (values or {}).items()},
        "charted": list((values or {}) if charted is None else charted)[:MAX_CHARTED],
        "fps": float(fps),
        "title": title,
    }
    # every "<" as JSON's "\u003c" (the same string): nothing in the data can end its script element, nor open
    # the "<!--" that keeps a parser from seeing the end
    text = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
    page = _TEMPLATE.format(
        title=html.escape(title or "gymview rollout"),
        css=frontend.CSS,
        data_id=_DATA_ID,
        data=text,
        bundle=_inline_script(frontend.ROLLOUT_FILE_ESM),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def page_data(page: str) -> str:
    """The JSON a page written by :func:`write_page` carries."""
    found = re.search(f'<script type="application/json" id="{_DATA_ID}">(.*?)</script>', page, re.S)
    if found is None:
        raise ValueError("not a page written by gymview (no rollout data in it)")
    return found.group(1)


def unpacked_states(segment: Mapping[str, Any]) -> np.ndarray:
    """A packed segment's states, or values, as :func:`write_page` packed them: ``[frames, numbers]`` float32."""
    frames, size = int(segment["frames"]), int(segment["size"])
    planes = np.frombuffer(zlib.decompress(base64.b64decode(segment["data"])), np.uint8)
    words = planes.reshape(4, size, frames).transpose(2, 1, 0).copy().view("<u4").reshape(frames, size)
    if "step" not in segment:  # exact float32
        return words.view("<f4")
    changes = (words >> 1).astype(np.int64) ^ -(words & 1).astype(np.int64)  # zigzag back to signed
    whole = (np.cumsum(changes, axis=0) + 2**31) % 2**32 - 2**31  # the running sum, wrapping as int32 does
    return np.where(whole == _MISSING, np.nan, whole * float(segment["step"])).astype(np.float32)


def unpacked_values(data: Mapping[str, Any]) -> dict[str, list[list[float | None]]]:
    """A page's values (:func:`page_data`'s JSON, parsed) as :func:`value_lists` gives them: a list of T an env.

    >>> import tempfile
    >>> scene = {"kind": "cartpole", "width": 600, "height": 400}
    >>> page = write_page(tempfile.mkdtemp() + "/run.html", [Segment(scene, np.zeros((2, 4), np.float32))], 50,
    ...                   {"reward": np.array([1.0, np.nan])})
    >>> unpacked_values(json.loads(page_data(page.read_text())))
    {'reward': [[1.0, None]]}
    """
    return {name: value_lists(unpacked_states(packed)) for name, packed in data["values"].items()}


def _per_env(array: np.ndarray) -> np.ndarray:
    """Values ``[T]`` or ``[T, B]`` as float32 ``[T, B]``."""
    array = np.asarray(array, np.float32)
    return array.reshape(len(array), -1)


def _stepped(states: np.ndarray) -> dict[str, Any]:
    """States as whole multiples of a step (NaN and infinities: ``_MISSING``), as each one's change from the frame
    before, wrapping as int32 does, in zigzag order (small changes either way: small numbers)."""
    if states.ndim != 2:
        raise ValueError(f"a segment's states must be [frames, numbers]; got shape {states.shape}")
    finite = np.isfinite(states)
    largest = float(np.abs(states[finite]).max(initial=0.0))
    step = STEP if largest < STEP * 2**30 else 2.0 ** math.ceil(math.log2(largest / 2**30))
    whole = np.where(finite, np.round(np.where(finite, states, 0.0) / step), _MISSING).astype(np.int64)
    changes = np.diff(whole, axis=0, prepend=0).astype(np.int32)  # wrapping: the page adds them up as int32
    zigzag = ((changes.astype(np.int64) << 1) ^ (changes.astype(np.int64) >> 31)).astype("<u4")
    return {**_planes(zigzag), "step": step}


def _exact(values: np.ndarray) -> dict[str, Any]:
    """Values kept exactly, as float32."""
    return _planes(np.ascontiguousarray(values.astype("<f4")).view("<u4"))


def _planes(words: np.ndarray) -> dict[str, Any]:
    """``[frames, numbers]`` 32-bit words, their bytes regrouped by place, then number, over time; deflated."""
    frames, size = words.shape
    planes = np.ascontiguousarray(words).view(np.uint8).reshape(frames, size, 4).transpose(2, 1, 0)
    data = base64.b64encode(zlib.compress(np.ascontiguousarray(planes).tobytes(), 9)).decode("ascii")
    return {"frames": frames, "size": size, "data": data}


def value_lists(array: np.ndarray) -> list[list[float | None]]:
    """Values ``[T]`` or ``[T, B]`` as B lists of T, None (JSON's null) where a number is missing.

    >>> value_lists(np.array([[1.0, 2.0], [np.nan, 4.0]]))
    [[1.0, None], [2.0, 4.0]]
    """
    array = np.asarray(array, np.float64)
    columns = array.reshape(len(array), -1).T
    return [[v if math.isfinite(v) else None for v in column.tolist()] for column in columns]


def _inline_script(code: str) -> str:
    """``code`` as the text of a script element: "</script" can stand only in its strings, regular expressions
    and comments, where "<\\/script" means the same."""
    code = re.sub(r"</(script)", r"<\\/\1", code, flags=re.I)
    if re.search(r"<!--|<script", code, re.I):
        raise ValueError("the player's bundle holds '<!--' or '<script', which an inline script cannot hold")
    return code


_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 16px; }}
{css}
</style>
</head>
<body>
<div id="gymview"></div>
<script type="application/json" id="{data_id}">{data}</script>
<script type="module">
{bundle}
</script>
</body>
</html>
"""
