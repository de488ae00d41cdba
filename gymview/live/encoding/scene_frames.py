"""SceneFrames: frames the page draws itself from a state, for a FrameStreamer (which holds its lock).

A DeferredFrame whose painter has ``page_scene()`` (a JSON-able description of what it draws, or None) can
go to the page as its state alone, or the part of it the painter's ``page_state(state)`` keeps: a few
float32 numbers a frame, drawn by the page (``js/scene.js``) from the description it got once (the view's
``_scene`` trait, so reloads and second tabs have it too). Nothing is drawn or encoded in the kernel, and
no helper process starts. ``draw`` says where frames are drawn: ``"auto"`` (by the page wherever it can),
``"page"`` (an error for a frame it cannot draw) or ``"kernel"``.

>>> import numpy as np
>>> class Dots:
...     def page_scene(self): return {"kind": "dots", "width": 60, "height": 40}
...     def paint(self, state, canvas): return np.zeros((40, 60, 3), np.uint8)
>>> class DotsFrame:
...     painter = Dots()
...     state = np.array([1.5, 2.0])
>>> published = []
>>> scenes = SceneFrames("auto", lambda scene: published.append(scene))
>>> scenes.take(DotsFrame()), published
(True, [{'kind': 'dots', 'width': 60, 'height': 40, 'id': 1}])
>>> data, width, height = scenes.pack(DotsFrame(), max_size=30)
>>> np.frombuffer(data, "<f4").tolist(), (width, height)
([1.5, 2.0], (30, 20))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gymview.image.frames import fit_size

__all__ = ["DRAW_MODES", "SCENE", "SCENE_BATCH", "SCENE_BATCH_SECONDS", "SceneFrames", "check_draw"]

SCENE = "scene"  # the format name in frame messages
DRAW_MODES = ("auto", "page", "kernel")
# Scene frames go out together, up to this many in one message, held at most this long: every message
# costs the kernel, the Jupyter server and the page far more than a state's bytes (about 1.1 KB of
# Jupyter's envelope), and the page shows them one per display refresh anyway.
SCENE_BATCH = 3
SCENE_BATCH_SECONDS = 0.05
# What differs from frame to frame in a message of several: the rest is the first frame's
PER_FRAME = ("seq", "step", "episode", "episode_return", "dropped", "agent", "returns")


def check_draw(draw: str) -> str:
    """Return ``draw`` if it is one of :data:`DRAW_MODES`, else raise ValueError.

    >>> check_draw("page")
    'page'
    """
    if draw not in DRAW_MODES:
        raise ValueError(f"draw must be one of {DRAW_MODES}; got {draw!r}")
    return draw


class SceneFrames:
    """Which frames go as scenes, and the scene the page draws them with (``publish`` tells the view)."""

    def __init__(self, draw: str, publish: Callable[[dict[str, Any]], None]) -> None:
        self.draw = check_draw(draw)
        self._publish = publish
        self.painter: Any = None  # the painter of the scene published last
        self.scene: dict[str, Any] = {}
        self.scene_id = 0
        self.needs_webgl = False  # the page draws the scene with three.js
        self._held: list[tuple[dict[str, Any], bytes]] = []  # frames for the next message
        self._held_since = 0.0

    def take(self, frame: Any) -> bool:
        """True when the page draws ``frame`` (an array or a DeferredFrame); a new painter's scene is published."""
        painter = getattr(frame, "painter", None)
        if painter is not None and painter is self.painter:
            return self.draw != "kernel"
        scene = self._scene_of(painter) if self.draw != "kernel" else None
        if scene is None:
            if self.draw == "page":
                raise ValueError(
                    f"draw='page': the page cannot draw these frames ({_what(frame)}); it draws gymnasium's classic "
                    "control, LunarLander, FrozenLake, CliffWalking and MuJoCo envs from their states. Use "
                    "draw='auto' to send the others as pictures"
                )
            return False
        self.painter, self.scene_id = painter, self.scene_id + 1
        self.scene = {**scene, "id": self.scene_id}
        self.needs_webgl = "mujoco" in (scene.get("kind"), scene.get("cell", {}).get("kind"))
        self._publish(self.scene)
        return True

    def draws(self, frame: Any) -> bool:
        """True for a frame :meth:`take` gave to the page, whose scene is still the current one."""
        return self.draw != "kernel" and self.painter is not None and getattr(frame, "painter", None) is self.painter

    def pack(self, frame: Any, max_size: int) -> tuple[bytes, int, int]:
        """The frame's state as little-endian float32 bytes (what the painter's ``page_state(state)`` keeps
        of it, where it has one), and the size it is shown at."""
        height, width = fit_size(int(self.scene["height"]), int(self.scene["width"]), max_size)
        page_state = getattr(self.painter, "page_state", None)
        state = frame.state if page_state is None else page_state(frame.state)
        return np.asarray(state, "<f4").tobytes(), width, height

    def hold(self, header: dict[str, Any], data: bytes, now: float) -> None:
        """Keep a numbered scene frame for the next message."""
        if not self._held:
            self._held_since = now
        self._held.append((header, data))

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def fits(self, header: dict[str, Any]) -> bool:
        """Whether a frame can join the frames held (one message holds frames of one scene)."""
        return not self._held or self._held[0][0]["scene"] == header["scene"]

    def ready(self, now: float, due_only: bool, wait: float = SCENE_BATCH_SECONDS) -> bool:
        """Whether the frames held go out now: any when asked (``due_only`` false), else once ``SCENE_BATCH``
        are held or the first waited ``wait`` seconds."""
        if not self._held:
            return False
        return not due_only or len(self._held) >= SCENE_BATCH or now - self._held_since >= wait

    def batch(self) -> tuple[dict[str, Any], bytes, list[int]] | None:
        """The frames held, as one message (header, data, their numbers), or None when none are.

        The header is the last frame's, with ``frames``: each frame's own fields, in order; the data the
        frames' states one after another (of one size: a scene's states are).
        """
        held = self._held
        if not held:
            return None
        self._held = []
        if len(held) == 1:
            return held[0][0], held[0][1], [held[0][0]["seq"]]
        frames = [{key: header[key] for key in PER_FRAME} for header, _ in held]
        header = {**held[-1][0], "frames": frames}
        return header, b"".join(data for _, data in held), [frame["seq"] for frame in frames]

    @staticmethod
    def _scene_of(painter: Any) -> dict[str, Any] | None:
        page_scene = getattr(painter, "page_scene", None)
        return None if page_scene is None else page_scene()


def _what(frame: Any) -> str:
    painter = getattr(frame, "painter", None)
    if painter is None:
        return "pixels: an env that is rendered, not drawn from its state"
    return f"drawn by {type(painter).__name__}"
