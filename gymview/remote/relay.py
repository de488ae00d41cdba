"""What a notebook hands its page from a run elsewhere: checked, and numbered on from the frames before.

The page draws a frame only if its number is above the last one's, and an H.264 page acks by number: a
run that starts again numbers its frames from 0, and a notebook may attach to a run that has sent frames
before. :class:`Renumbering` shifts each run's numbers so the page sees one sequence, and shifts the page's
acks back. :func:`for_page` lets through only the frame and state messages the page takes, well-formed.

>>> numbers = Renumbering()
>>> numbers.out({"type": "frame", "seq": 40, "acked": 39})["seq"]   # the first frame seen: number 0
0
>>> numbers.new_run(); numbers.out({"type": "frame", "seq": 0, "acked": -1})["seq"]
1
>>> numbers.back({"type": "ack", "seq": 1, "client": "k3x9"})["seq"]
0
"""

from __future__ import annotations

from typing import Any

from gymview.live import protocol

__all__ = ["FORMATS", "Renumbering", "for_page"]

FORMATS = ("jpeg", "png", "h264", "scene")
MAX_SIDE = 16384  # pixels: a frame's width and height
MAX_BATCH = 64  # frames in one message of scene frames


def _count(value: Any, low: int = 0, high: int = 2**53) -> bool:
    """An int (JSON's numbers without a fraction are) in [low, high]."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def for_page(content: Any, buffers: list[bytes]) -> bool:
    """Whether ``content`` (with ``buffers``) is a message the page takes: a frame with its one buffer, or a state.

    >>> for_page({"type": "frame", "seq": 0, "format": "jpeg", "width": 4, "height": 2}, [b"..."])
    True
    >>> for_page({"type": "frame", "seq": -1, "format": "jpeg", "width": 4, "height": 2}, [b"..."])
    False
    """
    if not isinstance(content, dict):
        return False
    if content.get("type") == protocol.STATE:
        return not buffers and isinstance(content.get("state"), str) and isinstance(content.get("heard", []), list)
    if content.get("type") != protocol.FRAME or len(buffers) != 1:
        return False
    sizes = all(_count(content.get(side), 1, MAX_SIDE) for side in ("width", "height"))
    frames = content.get("frames")
    batch = frames is None or (
        isinstance(frames, list)
        and 0 < len(frames) <= MAX_BATCH
        and all(isinstance(frame, dict) and _count(frame.get("seq")) for frame in frames)
    )
    replay = "replay" not in content or _count(content.get("replay"))
    return _count(content.get("seq")) and content.get("format") in FORMATS and sizes and batch and replay


class Renumbering:
    """Frame numbers as the page sees them: each run's shifted past the frames before it."""

    def __init__(self) -> None:
        self.top = -1  # the highest number the page has been given
        self._shift: int | None = None  # None until the current run's first frame

    def new_run(self) -> None:
        """Frames from now on come from another run (or the same one, attached again)."""
        self._shift = None

    def out(self, header: dict[str, Any]) -> dict[str, Any]:
        """A copy of a run's frame header with the page's numbers (``seq``, ``acked``, each batched frame's ``seq``)."""
        frames = header.get("frames")
        if "replay" not in header and self._shift is None:
            first = min(frame["seq"] for frame in frames) if isinstance(frames, list) else header["seq"]
            self._shift = self.top + 1 - first
        shift = self._shift or 0
        shifted = {**header, "seq": header["seq"] + shift}
        if _count(header.get("acked"), -1):
            shifted["acked"] = header["acked"] + shift
        if isinstance(frames, list):
            shifted["frames"] = [{**frame, "seq": frame["seq"] + shift} for frame in frames]
        if "replay" not in header:
            self.top = max(self.top, shifted["seq"])
        return shifted

    def back(self, content: dict[str, Any]) -> dict[str, Any] | None:
        """A page's message with the run's numbers (an ack); None for an ack of frames before this run's."""
        if content.get("type") != protocol.ACK or not _count(content.get("seq")):
            return content
        if self._shift is None:
            return None
        seq = content["seq"] - self._shift
        return {**content, "seq": seq} if seq >= 0 else None
