"""BatchRenderer, the base of every vectorized renderer, and Drawing, a frame not drawn yet."""

from __future__ import annotations

import base64
import threading
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from gymview.renderers.raster import Box, Circle, Polygon, Sprites

Shape = Polygon | Box | Circle | Sprites  # what a renderer's _shapes() lists


def png_url(picture: np.ndarray) -> str:
    """An RGB or RGBA picture as a PNG data URL, for a scene's pictures (the page decodes it once)."""
    from gymview.image.codec import encode_frame

    return "data:image/png;base64," + base64.b64encode(encode_frame(picture, "png")).decode("ascii")


def window_of_size(size: Any) -> Any:
    """A pygame surface of ``size`` for an env's copy to render on, or None where the env has no such size: a render
    without one makes one after initialising pygame's display, which writes an error about XDG_RUNTIME_DIR in a
    notebook without a desktop."""
    if size is None:
        return None
    import pygame

    return pygame.Surface(tuple(size))


class NotDrawable(Exception):
    """Raised by a renderer's constructor for an env of its family that it cannot draw (a board whose picture
    changes elsewhere than in the player's cell): :func:`renderer_for` gives None for it."""


class BatchRenderer:
    """Draw a batch of states of one classic-control env as (N, H, W, 3) uint8 frames.

    Get one with :func:`renderer_for`; subclasses know one env family each. Safe to share between
    threads (one render at a time).
    """

    #: number of values per state, the width of :meth:`render`'s input
    state_dim: int = 0
    #: what the columns of a state mean
    state_names: tuple[str, ...] = ()
    # the first columns must be finite (the others are not drawn, or NaN has a meaning)
    _drawn_columns = 1
    # frames drawn at a time: more saves Python overhead, fewer keep big windows in the CPU cache
    _chunk = 16

    def __init__(self, env_id: str, width: int, height: int) -> None:
        self.env_id = env_id
        self.width = int(width)
        self.height = int(height)
        # the static drawing is built in pygame's orientation (y up) and flipped once at the end
        self._canvas = np.full((self.height, self.width, 3), 255, np.float32)
        self._overlays: list[tuple[slice, slice, np.ndarray, np.ndarray]] = []
        self._lock = threading.Lock()
        self._last_out: np.ndarray | None = None
        self._dirty: list[tuple[int, int, int, int, int]] = []
        self._slots: list[list[list[int]]] = []  # per frame of the array drawn into: the boxes drawn there
        self._painted: np.ndarray | None = None  # paint()'s frame, drawn into again by the next call

    # --- public API --------------------------------------------------------------------------
    def state_of(self, env: gym.Env) -> np.ndarray:
        """A copy of what :meth:`render` needs to draw ``env`` now: a (state_dim,) float64 array."""
        raise NotImplementedError

    def render(self, states: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Draw ``states`` (N, state_dim) as (N, height, width, 3) uint8 frames, like ``env.render()``.

        ``out``: an (N, height, width, 3) uint8 array to draw into instead of a new one. Passing
        back the array of the previous call, or its first frames (``out=previous[:n]``), repaints
        only what moved, which is much cheaper when streaming many frames; don't modify it in
        between (a different array is fully repainted).

        >>> from gymview.renderers import renderer_for
        >>> renderer = renderer_for("MountainCar-v0")
        >>> renderer.render(np.array([[-0.5, 0.0], [0.4, 0.01]])).shape
        (2, 400, 600, 3)
        """
        states = self._check_states(states)
        shape = self._check_out(out, len(states))
        with self._lock:
            if out is not None and self._drew_into(out):
                frames = out
                for n, boxes in enumerate(self._slots[: len(frames)]):
                    for top, bottom, left, right in boxes:
                        frames[n, top:bottom, left:right] = self._background[top:bottom, left:right]
            else:
                frames = np.empty(shape, np.uint8) if out is None else out
                frames[...] = self._background
                self._slots = [[] for _ in frames]
            self._last_out, self._dirty = None, []
            for start in range(0, len(states), self._chunk):
                chunk = frames[start : start + self._chunk]
                shapes = self._shapes(states[start : start + self._chunk])
                windows = [self._window(shape) for shape in shapes]
                touched = self._lift_overlays(chunk, windows)
                for shape, window in zip(shapes, windows):
                    self._paint(chunk, shape, *window)
                self._lay_overlays(chunk, touched)
                for x0, y0, width, height in windows:
                    tops = self.height - y0 - height
                    self._dirty += [
                        (start + n, t, t + height, x, x + width)
                        for n, (t, x) in enumerate(zip(tops.tolist(), x0.tolist()))
                    ]
            if out is not None:  # what each frame of the array holds besides the background
                self._slots[: len(frames)] = [[] for _ in frames]
                for n, *box in self._dirty:
                    self._slots[n].append(box)
            self._last_out = out
        return frames

    def _drew_into(self, out: np.ndarray) -> bool:
        """Whether ``out`` is the array the last call drew into, or the first frames of it (a view
        of the same memory, laid out alike): its frames differ from the background only at
        ``_slots``. The last array is kept, so its memory cannot be another's meanwhile."""
        last = self._last_out
        return (
            last is not None
            and out.__array_interface__["data"][0] == last.__array_interface__["data"][0]
            and out.strides == last.strides
            and len(out) <= len(self._slots)
        )

    def page_scene(self) -> dict[str, Any] | None:
        """What a live view's page needs to draw this env's states itself (``js/scene.js``): its kind, its
        size and geometry, JSON-able; None where the page cannot draw it.

        >>> from gymview.renderers import renderer_for
        >>> renderer_for("CartPole-v1").page_scene()["kind"]
        'cartpole'
        """
        return None

    def _scene(self, kind: str, **geometry: Any) -> dict[str, Any]:
        """A :meth:`page_scene` of ``kind``, this renderer's size and ``geometry``."""
        return {"kind": kind, "width": self.width, "height": self.height, **geometry}

    def draws_like(self, other: BatchRenderer) -> bool:
        """Whether ``other`` draws any state as this renderer does (one renderer can draw both envs' states).

        >>> from gymview.renderers import renderer_for
        >>> renderer_for("CartPole-v1").draws_like(renderer_for("CartPole-v1"))
        True
        """
        return (type(other), other.width, other.height) == (type(self), self.width, self.height)

    @property
    def background(self) -> np.ndarray:
        """The frame without its moving parts: a read-only (height, width, 3) uint8 array."""
        view = self._background.view()
        view.flags.writeable = False
        return view

    def frame_keys(self, states: np.ndarray) -> list[bytes] | None:
        """One key per state of ``states`` (N, state_dim): states with equal keys draw the very
        same frame. Every shape lands on whole pixels, so a few integers say what a frame is (a
        video encoder converts such a frame once). None where the shapes include sprites.

        >>> from gymview.renderers import renderer_for
        >>> renderer = renderer_for("MountainCar-v0")
        >>> first, faster, further = renderer.frame_keys(np.array([[-0.5, 0.0], [-0.5, 0.07], [-0.4, 0.0]]))
        >>> first == faster, first == further  # the velocity is not drawn
        (True, False)
        """
        states = self._check_states(states)
        count = len(states)
        columns: list[np.ndarray] = []
        for shape in self._shapes(states):
            if isinstance(shape, Polygon):
                columns.append(shape.vertices.reshape(count, -1))
            elif isinstance(shape, Circle):
                columns += [shape.centers, np.full((count, 1), shape.radius)]
            elif isinstance(shape, Box):
                columns += [shape.low, shape.high]
            else:
                return None
            columns.append(np.broadcast_to(np.asarray(shape.color, np.float64), (count, 3)))
        return [row.tobytes() for row in np.concatenate(columns, axis=1).astype(np.int64)]

    @property
    def drawn_boxes(self) -> list[tuple[int, ...]]:
        """Where the last :meth:`render` drew: ``(frame, top, bottom, left, right)`` boxes, the
        frame's index in that call. Outside its boxes a frame is the background, so two frames
        differ only within the boxes of both (a video encoder converts only those).

        >>> from gymview.renderers import renderer_for
        >>> renderer = renderer_for("CartPole-v1")
        >>> _ = renderer.render(np.zeros((2, 4)))
        >>> sorted({box[0] for box in renderer.drawn_boxes})
        [0, 1]
        """
        return list(self._dirty)

    def paint(self, state: np.ndarray, canvas: np.ndarray | None = None) -> np.ndarray:
        """Draw one ``state`` as a (height, width, 3) frame; passing back the frame this returned
        last time as ``canvas`` repaints only what moved (see :meth:`render`)."""
        batch = self._painted
        if canvas is None or batch is None or canvas.base is not batch:
            batch = self._painted = np.empty((1, self.height, self.width, 3), np.uint8)
        return self.render(np.asarray(state)[None], out=batch)[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env_id!r}, {self.width}x{self.height}, state={self.state_names})"

    def __getstate__(self) -> dict:
        """Pickled for another process: the drawing, without the lock or the caller's last output."""
        state = dict(self.__dict__)
        del state["_lock"]
        state["_last_out"], state["_dirty"], state["_slots"], state["_painted"] = None, [], [], None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # --- for subclasses ----------------------------------------------------------------------
    def _shapes(self, states: np.ndarray) -> list:
        """The moving parts in drawing order, in pygame coordinates."""
        raise NotImplementedError

    def _draw_static(self, coverage: np.ndarray, color: tuple[int, int, int]) -> None:
        """Paint a full-canvas coverage map (pygame orientation) into the background."""
        self._canvas += (np.asarray(color, np.float32) - self._canvas) * coverage[:, :, None]

    def _add_overlay(self, coverage: np.ndarray, color: tuple[int, int, int]) -> None:
        """Static drawing that gymnasium paints after the moving parts (pygame orientation)."""
        flipped = coverage[::-1]
        ys, xs = np.nonzero(flipped > 0)
        if ys.size:
            rows = slice(int(ys.min()), int(ys.max()) + 1)
            columns = slice(int(xs.min()), int(xs.max()) + 1)
            overlay = flipped[rows, columns, None].astype(np.float32)
            self._overlays.append((rows, columns, overlay, np.asarray(color, np.float32)))

    def _finish_background(self) -> None:
        """Freeze the static drawing: the background without and with the overlays."""
        self._underlay = (self._canvas[::-1] + 0.5).astype(np.uint8)
        background = self._underlay[None].copy()
        self._lay_overlays(background, np.zeros(1, bool) == 0)
        self._background = background[0]
        del self._canvas

    # --- drawing -----------------------------------------------------------------------------
    def _check_states(self, states: object) -> np.ndarray:
        try:
            array = np.asarray(states, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise TypeError(f"{self.env_id} states must be a numeric array; got {type(states).__name__}") from error
        if array.ndim != 2 or array.shape[1] != self.state_dim:
            hint = " (for one state pass state[None])" if array.shape == (self.state_dim,) else ""
            raise ValueError(
                f"{self.env_id} states must have shape (N, {self.state_dim}) with columns {self.state_names}; "
                f"got shape {array.shape}{hint}. renderer.state_of(env) gives one state of a live env."
            )
        drawn = array[:, : self._drawn_columns]
        if not np.isfinite(drawn).all():
            raise ValueError(
                f"{self.env_id} states must be finite in columns {self.state_names[: self._drawn_columns]}"
            )
        return array

    def _check_out(self, out: np.ndarray | None, count: int) -> tuple[int, int, int, int]:
        """The shape of ``count`` frames; a clear error for an ``out`` that cannot hold them."""
        shape = (count, self.height, self.width, 3)
        if out is not None and (not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.uint8):
            got = f"{out.dtype} array of shape {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
            raise ValueError(f"out must be a uint8 array of shape {shape}; got a {got}")
        return shape

    def _window(self, shape: Shape) -> tuple[np.ndarray, np.ndarray, int, int]:
        """Per-frame origin (pygame coordinates) and common size of a window holding the shape.

        A window clamped into the screen still holds every visible pixel of the shape, so shapes
        partly off screen need no special case.
        """
        bounds = shape.bounds()
        low = np.floor(bounds[:, :2]).astype(np.int64) - 1
        high = np.ceil(bounds[:, 2:]).astype(np.int64) + 2
        width = int(min(self.width, max(1, (high[:, 0] - low[:, 0]).max(initial=1))))
        height = int(min(self.height, max(1, (high[:, 1] - low[:, 1]).max(initial=1))))
        return np.clip(low[:, 0], 0, self.width - width), np.clip(low[:, 1], 0, self.height - height), width, height

    def _paint(self, frames: np.ndarray, shape: Shape, x0: np.ndarray, y0: np.ndarray, width: int, height: int) -> None:
        """Gather each frame's window (flipped to pygame's orientation), paint the shape, put it back."""
        count = frames.shape[0]
        if isinstance(shape, Box):  # no blending needed: set the pixels
            # rows and columns of the visible part, empty (never negative: no wrapping round) off screen
            tops = (self.height - 1 - np.minimum(shape.high[:, 1], self.height - 1)).tolist()
            bottoms = np.maximum(self.height - np.maximum(shape.low[:, 1], 0), 0).tolist()
            lefts = np.maximum(shape.low[:, 0], 0).tolist()
            rights = np.maximum(np.minimum(shape.high[:, 0], self.width - 1) + 1, 0).tolist()
            for n in range(count):
                frames[n, tops[n] : bottoms[n], lefts[n] : rights[n]] = shape.color
            return
        patch = np.empty((count, height, width, 3), np.float32)
        tops = self.height - y0 - height
        for n in range(count):
            patch[n] = frames[n, tops[n] : tops[n] + height, x0[n] : x0[n] + width][::-1]
        xs = (x0[:, None, None] + np.arange(width)).astype(np.float32)
        ys = (y0[:, None, None] + np.arange(height)[:, None]).astype(np.float32)
        shape.paint(patch, xs, ys)
        patch += 0.5
        pixels = patch.astype(np.uint8)
        for n in range(count):
            frames[n, tops[n] : tops[n] + height, x0[n] : x0[n] + width] = pixels[n, ::-1]

    def _lift_overlays(self, frames: np.ndarray, windows: list) -> np.ndarray:
        """Frames where a moving part reaches an overlay: take the overlay off them (redrawn later)."""
        touched = np.zeros(frames.shape[0], bool)
        for rows, columns, _, _ in self._overlays:
            for x0, y0, width, height in windows:
                top = self.height - y0 - height
                touched |= (
                    (top < rows.stop) & (top + height > rows.start) & (x0 < columns.stop) & (x0 + width > columns.start)
                )
        if touched.any():
            for rows, columns, _, _ in self._overlays:
                frames[touched, rows, columns] = self._underlay[rows, columns]
        return touched

    def _lay_overlays(self, frames: np.ndarray, touched: np.ndarray) -> None:
        if not touched.any():
            return
        for rows, columns, coverage, color in self._overlays:
            region = frames[touched, rows, columns].astype(np.float32)
            region += (color - region) * coverage
            region += 0.5
            frames[touched, rows, columns] = region


class WholeFrameRenderer(BatchRenderer):
    """A renderer that draws each state whole, with pygame's calls in the env's own order (Box2D envs, Taxi):
    subclasses give ``_drawn(state)``."""

    def render(self, states: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Draw ``states`` as ``env.render()`` draws them, with pygame (see :meth:`BatchRenderer.render`)."""
        states = self._check_states(states)
        frames = np.empty(self._check_out(out, len(states)), np.uint8) if out is None else out
        with self._lock:
            for frame, state in zip(frames, states):
                frame[...] = self._drawn(state)
            self._dirty = [(n, 0, self.height, 0, self.width) for n in range(len(states))]
            self._last_out = None
        return frames

    def frame_keys(self, states: np.ndarray) -> list[bytes] | None:
        return None

    def _drawn(self, state: np.ndarray) -> np.ndarray:
        """One state's (height, width, 3) uint8 picture."""
        raise NotImplementedError


class Drawing(NamedTuple):
    """A frame not drawn yet: ``renderer`` draws it from ``state`` (a :meth:`BatchRenderer.state_of`).

    :func:`gymview.watch` hands these to its view, so that classic-control frames are drawn in
    the view's encoder process, away from the loop (a frame drawn after thousands of steps finds
    a cold CPU cache).

    >>> from gymview.renderers import renderer_for
    >>> env = gym.make("CartPole-v1")
    >>> _ = env.reset(seed=0)
    >>> renderer = renderer_for(env)
    >>> Drawing(renderer, renderer.state_of(env)).draw().shape
    (400, 600, 3)
    """

    renderer: BatchRenderer
    state: np.ndarray

    @property
    def painter(self) -> BatchRenderer:
        """What draws this frame in another process (a :class:`gymview.live.DeferredFrame`)."""
        return self.renderer

    def draw(self) -> np.ndarray:
        """The (height, width, 3) uint8 frame."""
        return self.renderer.render(self.state[None])[0]

    def checked(self) -> Drawing:
        """This drawing with its state checked as :meth:`BatchRenderer.render` checks states (a
        clear error now instead of one from another process later) and copied as float64."""
        if not isinstance(self.renderer, BatchRenderer):
            raise TypeError(
                "a Drawing needs a BatchRenderer (gymview.renderers.renderer_for(env)); "
                f"got {type(self.renderer).__name__}"
            )
        return Drawing(self.renderer, self.renderer._check_states([self.state])[0].copy())
