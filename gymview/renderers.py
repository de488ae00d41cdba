"""Vectorized numpy renderers for Gymnasium's classic-control environments.

A :class:`BatchRenderer` draws a whole batch of states at once from a cached static background,
matching what ``env.render()`` returns for MountainCar(-Continuous), CartPole, Acrobot and
Pendulum (gymnasium's pygame drawing: same geometry, colours, flips and antialiased edges) at a
fraction of the cost. :meth:`BatchRenderer.state_of` snapshots (copies) what is needed to draw an
env, so the cheap part runs where the env lives and the drawing can run elsewhere (a thread, a
worker process, later from stored states).

>>> import gymnasium as gym
>>> env = gym.make("CartPole-v1")
>>> _ = env.reset(seed=0)
>>> renderer = renderer_for(env)
>>> renderer.render(np.stack([renderer.state_of(env)] * 2)).shape
(2, 400, 600, 3)
>>> renderer_for("FrozenLake-v1") is None
True
"""

from __future__ import annotations

import math
import threading
from os import path
from typing import NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import (
    AcrobotEnv,
    CartPoleEnv,
    Continuous_MountainCarEnv,
    MountainCarEnv,
    PendulumEnv,
)

__all__ = ["BatchRenderer", "Drawing", "renderer_for"]

_BLACK = (0, 0, 0)


# ---------------------------------------------------------------------------------------------
# Shapes in pygame's coordinates (x right, y up before gymnasium flips the surface; the pixel
# (i, j) has its centre at the integer point (i, j), as in pygame.gfxdraw).


def _blend(patch: np.ndarray, coverage: np.ndarray, color: tuple[int, int, int]) -> None:
    """Paint ``color`` over an (N, h, w, 3) float32 patch with (N, h, w) coverage in [0, 1]."""
    keep = 1.0 - coverage
    for channel, value in enumerate(color):
        plane = patch[..., channel]  # a strided view: no copy
        plane *= keep
        if value:
            plane += np.float32(value) * coverage


class _Polygon:
    """A batch of convex polygons as pygame.gfxdraw's ``aapolygon`` + ``filled_polygon`` draw them.

    gfxdraw truncates the vertices to integers, fills every pixel centre inside (edges included)
    and antialiases the edges with Wu lines, which cover an outside pixel by 1 - d, d being its
    distance from the edge along the minor axis.
    """

    def __init__(self, vertices: np.ndarray, color: tuple[int, int, int]) -> None:
        self.vertices = np.trunc(vertices)  # (N, K, 2)
        self.color = color

    def paint(self, patch: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> None:
        _blend(patch, self.coverage(xs, ys), self.color)

    def bounds(self) -> np.ndarray:
        return np.concatenate([self.vertices.min(axis=1), self.vertices.max(axis=1)], axis=1)

    def coverage(self, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        v = self.vertices
        x, y = v[..., 0], v[..., 1]
        dx, dy = np.roll(x, -1, axis=1) - x, np.roll(y, -1, axis=1) - y
        area = np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1)
        orientation = np.where(area < 0, -1.0, 1.0)
        minor = np.maximum(np.abs(dx), np.abs(dy))
        # per edge: 1 + (signed distance along the minor axis), positive inside; degenerate edges ignored
        norm = np.where(minor > 0, orientation[:, None] / np.maximum(minor, 1e-12), 0.0)
        ax, ay = -dy * norm, dx * norm
        c = np.where(minor > 0, 1.0 - ax * x - ay * y, np.inf)
        inside = np.empty(np.broadcast_shapes(xs.shape, ys.shape), np.float32)
        distance = np.empty_like(inside)
        for k in range(v.shape[1]):
            x_term = (ax[:, k, None, None] * xs + c[:, k, None, None]).astype(np.float32)
            y_term = (ay[:, k, None, None] * ys).astype(np.float32)
            np.add(x_term, y_term, out=inside if k == 0 else distance)
            if k:
                np.minimum(inside, distance, out=inside)
        return np.clip(inside, 0.0, 1.0, out=inside)


class _Box:
    """A batch of axis-aligned rectangles with integer corners: gfxdraw fills them exactly, no antialiasing."""

    def __init__(self, low: np.ndarray, high: np.ndarray, color: tuple[int, int, int]) -> None:
        self.low = np.trunc(low).astype(np.int64)  # (N, 2) lowest x, y (inclusive)
        self.high = np.trunc(high).astype(np.int64)  # (N, 2) highest x, y (inclusive)
        self.color = color

    def bounds(self) -> np.ndarray:
        return np.concatenate([self.low, self.high], axis=1).astype(np.float64)


class _Circle:
    """A batch of circles as ``gfxdraw.aacircle`` + ``filled_circle`` draw them (integer centres)."""

    def __init__(self, centers: np.ndarray, radius: int, color: tuple[int, int, int]) -> None:
        self.centers = np.trunc(centers)  # (N, 2)
        self.radius = radius
        self.color = color

    def paint(self, patch: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> None:
        _blend(patch, self.coverage(xs, ys), self.color)

    def bounds(self) -> np.ndarray:
        return np.concatenate([self.centers - self.radius - 1, self.centers + self.radius + 1], axis=1)

    def coverage(self, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        cx = self.centers[:, 0, None, None].astype(np.float32)
        cy = self.centers[:, 1, None, None].astype(np.float32)
        distance = np.sqrt((xs - cx) ** 2 + (ys - cy) ** 2)
        return np.clip(self.radius + 1.0 - distance, 0.0, 1.0, out=distance)


class _Sprite(NamedTuple):
    """The visible pixels of an RGBA image: positions, colours and opacity (pygame orientation)."""

    width: int
    height: int
    rows: np.ndarray  # (K,)
    columns: np.ndarray  # (K,)
    colors: np.ndarray  # (K, 3) float32
    alpha: np.ndarray  # (K, 1) float32 in (0, 1]

    @classmethod
    def from_rgba(cls, image: np.ndarray) -> _Sprite:
        rows, columns = np.nonzero(image[:, :, 3])
        pixels = image[rows, columns].astype(np.float32)
        return cls(image.shape[1], image.shape[0], rows, columns, pixels[:, :3], pixels[:, 3:] / 255)


class _Sprites:
    """One sprite per frame (or None), blitted with its top-left corner at ``corners``."""

    def __init__(self, images: list[_Sprite | None], corners: np.ndarray) -> None:
        self.images = images
        self.corners = corners.astype(np.int64)  # (N, 2)

    def bounds(self) -> np.ndarray:
        sizes = np.array([(0, 0) if im is None else (im.width, im.height) for im in self.images])
        return np.concatenate([self.corners, self.corners + np.maximum(sizes - 1, 0)], axis=1).astype(np.float64)

    def paint(self, patch: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> None:
        for n, image in enumerate(self.images):
            if image is None:
                continue
            left, top = self.corners[n, 0] - int(xs[n, 0, 0]), self.corners[n, 1] - int(ys[n, 0, 0])
            target = (image.rows + top, image.columns + left)
            pixels = patch[n][target]
            patch[n][target] = pixels + (image.colors - pixels) * image.alpha


def _aaline_layer(start: tuple[float, float], end: tuple[float, float], height: int, width: int) -> np.ndarray:
    """Coverage of one ``pygame.draw.aaline`` segment on an (height, width) grid (pygame-ce 2.5).

    Pixels on either side of the line along its minor axis are covered by 1 - d**2, d being their
    distance from the line along that axis.
    """
    (x1, y1), (x2, y2) = start, end
    coverage = np.zeros((height, width), np.float32)
    steep = abs(y2 - y1) > abs(x2 - x1)
    if steep:  # work with x as the minor axis by swapping the roles of x and y
        coverage = coverage.T
        x1, y1, x2, y2 = y1, x1, y2, x2
    if x2 < x1:
        x1, y1, x2, y2 = x2, y2, x1, y1
    slope = (y2 - y1) / (x2 - x1) if x2 != x1 else 0.0
    major = np.arange(max(0, math.ceil(x1)), min(coverage.shape[1] - 1, math.floor(x2)) + 1)
    minor_exact = y1 + (major - x1) * slope
    for offset in (0, 1):
        minor = np.floor(minor_exact).astype(int) + offset
        distance = np.abs(minor_exact - minor)
        valid = (minor >= 0) & (minor < coverage.shape[0])
        np.maximum.at(coverage, (minor[valid], major[valid]), (1.0 - distance[valid] ** 2).astype(np.float32))
    return coverage.T if steep else coverage


# ---------------------------------------------------------------------------------------------


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
        self._dirty: list[tuple[int, int, int, int, np.ndarray]] = []

    # --- public API --------------------------------------------------------------------------
    def state_of(self, env: gym.Env) -> np.ndarray:
        """A copy of what :meth:`render` needs to draw ``env`` now: a (state_dim,) float64 array."""
        raise NotImplementedError

    def render(self, states: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Draw ``states`` (N, state_dim) as (N, height, width, 3) uint8 frames, like ``env.render()``.

        ``out``: an (N, height, width, 3) uint8 array to draw into instead of a new one. Passing
        back the array of the previous call repaints only what moved, which is much cheaper when
        streaming many frames; don't modify it in between (a different array is fully repainted).

        >>> renderer = renderer_for("MountainCar-v0")
        >>> renderer.render(np.array([[-0.5, 0.0], [0.4, 0.01]])).shape
        (2, 400, 600, 3)
        """
        states = self._check_states(states)
        shape = (states.shape[0], self.height, self.width, 3)
        if out is not None and (not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.uint8):
            got = f"{out.dtype} array of shape {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
            raise ValueError(f"out must be a uint8 array of shape {shape}; got a {got}")
        with self._lock:
            if out is not None and out is self._last_out:
                frames = out
                for n, top, bottom, left, right in self._dirty:
                    frames[n, top:bottom, left:right] = self._background[top:bottom, left:right]
            else:
                frames = np.empty(shape, np.uint8) if out is None else out
                frames[...] = self._background
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
                    self._dirty += [(start + n, t, t + height, x, x + width) for n, (t, x) in enumerate(zip(tops, x0))]
            self._last_out = out
        return frames


    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env_id!r}, {self.width}x{self.height}, state={self.state_names})"

    def __getstate__(self) -> dict:
        """Pickled for another process: the drawing, without the lock or the caller's last output."""
        state = dict(self.__dict__)
        del state["_lock"]
        state["_last_out"], state["_dirty"] = None, []
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
        self._canvas += (np.float32(color) - self._canvas) * coverage[:, :, None]

    def _add_overlay(self, coverage: np.ndarray, color: tuple[int, int, int]) -> None:
        """Static drawing that gymnasium paints after the moving parts (pygame orientation)."""
        flipped = coverage[::-1]
        rows, columns = np.nonzero(flipped > 0)
        if rows.size:
            rows = slice(int(rows.min()), int(rows.max()) + 1)
            columns = slice(int(columns.min()), int(columns.max()) + 1)
            self._overlays.append((rows, columns, flipped[rows, columns, None].astype(np.float32), np.float32(color)))

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
            raise ValueError(f"{self.env_id} states must be finite in columns {self.state_names[: self._drawn_columns]}")
        return array


    def _window(self, shape: object) -> tuple[np.ndarray, np.ndarray, int, int]:
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

    def _paint(self, frames: np.ndarray, shape: object, x0: np.ndarray, y0: np.ndarray, width: int, height: int) -> None:
        """Gather each frame's window (flipped to pygame's orientation), paint the shape, put it back."""
        count = frames.shape[0]
        if isinstance(shape, _Box):  # no blending needed: set the pixels
            x_low, y_low = np.clip(shape.low, 0, None).T
            x_high = np.minimum(shape.high[:, 0], self.width - 1)
            y_high = np.minimum(shape.high[:, 1], self.height - 1)
            for n in range(count):
                frames[n, self.height - 1 - y_high[n] : self.height - y_low[n], x_low[n] : x_high[n] + 1] = shape.color
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
                touched |= (top < rows.stop) & (top + height > rows.start) & (x0 < columns.stop) & (x0 + width > columns.start)
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


class Drawing(NamedTuple):
    """A frame not drawn yet: ``renderer`` draws it from ``state`` (a :meth:`BatchRenderer.state_of`).

    :func:`gymview.watch` hands these to its view, so that classic-control frames are drawn in
    the view's encoder process, away from the loop (a frame drawn after thousands of steps finds
    a cold CPU cache: about 0.9 ms instead of 0.4).

    >>> env = gym.make("CartPole-v1")
    >>> _ = env.reset(seed=0)
    >>> renderer = renderer_for(env)
    >>> Drawing(renderer, renderer.state_of(env)).draw().shape
    (400, 600, 3)
    """

    renderer: BatchRenderer
    state: np.ndarray

    def draw(self) -> np.ndarray:
        """The (height, width, 3) uint8 frame."""
        return self.renderer.render(self.state[None])[0]

    def checked(self) -> Drawing:
        """This drawing with its state checked as :meth:`BatchRenderer.render` checks states (a
        clear error now instead of one from another process later) and copied as float64."""
        if not isinstance(self.renderer, BatchRenderer):
            raise TypeError(f"a Drawing needs a BatchRenderer (gymview.renderers.renderer_for(env)); got {type(self.renderer).__name__}")
        return Drawing(self.renderer, self.renderer._check_states([self.state])[0].copy())


def _rotate(points: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rotate (K, 2) points by each of (N,) angles like pygame's ``Vector2.rotate_rad``: (N, K, 2)."""
    cos, sin = np.cos(angles)[:, None], np.sin(angles)[:, None]
    x, y = points[None, :, 0], points[None, :, 1]
    return np.stack([x * cos - y * sin, x * sin + y * cos], axis=-1)


def _grid_polygon(vertices: list[tuple[float, float]], height: int, width: int) -> np.ndarray:
    """Coverage of one static gfxdraw polygon over the whole canvas."""
    ys, xs = np.mgrid[:height, :width].astype(np.float32)
    return _Polygon(np.array([vertices], np.float64), _BLACK).coverage(xs[None], ys[None])[0]


# ---------------------------------------------------------------------------------------------


class MountainCarRenderer(BatchRenderer):
    """MountainCar-v0 and MountainCarContinuous-v0: states are (position, velocity)."""

    state_dim = 2
    state_names = ("position", "velocity")
    _chunk = 64  # small shapes

    def __init__(self, env: MountainCarEnv | Continuous_MountainCarEnv, env_id: str) -> None:
        super().__init__(env_id, env.screen_width, env.screen_height)
        self.min_position = float(env.min_position)
        self.scale = self.width / (float(env.max_position) - self.min_position)
        xs = np.linspace(self.min_position, float(env.max_position), 100)
        points = list(zip((xs - self.min_position) * self.scale, self._height(xs) * self.scale))
        track = np.zeros((self.height, self.width), np.float32)
        for start, end in zip(points[:-1], points[1:]):
            track = np.maximum(track, _aaline_layer(start, end, self.height, self.width))
        self._draw_static(track, _BLACK)
        # the flag is drawn after the car
        goal = float(env.goal_position)
        flag_x = int((goal - self.min_position) * self.scale)
        flag_y1 = int(self._height(goal) * self.scale)
        flag_y2 = flag_y1 + 50
        pole = np.zeros((self.height, self.width), np.float32)
        pole[max(flag_y1, 0) : flag_y2 + 1, flag_x : flag_x + 1] = 1.0
        self._add_overlay(pole, _BLACK)
        triangle = [(flag_x, flag_y2), (flag_x, flag_y2 - 10), (flag_x + 25, flag_y2 - 5)]
        self._add_overlay(_grid_polygon(triangle, self.height, self.width), (204, 204, 0))
        self._finish_background()

    @staticmethod
    def _height(xs: np.ndarray | float) -> np.ndarray:
        return np.sin(3 * np.asarray(xs)) * 0.45 + 0.55

    def state_of(self, env: gym.Env) -> np.ndarray:
        state = _unwrapped_state(env)
        return np.array(state, dtype=np.float64).reshape(self.state_dim)

    def _shapes(self, states: np.ndarray) -> list:
        position = states[:, 0]
        angle = np.cos(3 * position)
        origin = np.stack([(position - self.min_position) * self.scale, 10 + self._height(position) * self.scale], 1)
        body = _rotate(np.array([(-20.0, 0.0), (-20.0, 20.0), (20.0, 20.0), (20.0, 0.0)]), angle) + origin[:, None]
        wheels = _rotate(np.array([(10.0, 0.0), (-10.0, 0.0)]), angle) + origin[:, None]
        radius = int(20 / 2.5)
        return [
            _Polygon(body, _BLACK),
            _Circle(wheels[:, 0], radius, (128, 128, 128)),
            _Circle(wheels[:, 1], radius, (128, 128, 128)),
        ]


class CartPoleRenderer(BatchRenderer):
    """CartPole-v1: states are (x, x_dot, theta, theta_dot), the observation itself."""

    state_dim = 4
    state_names = ("x", "x_dot", "theta", "theta_dot")
    _chunk = 64  # small shapes
    _drawn_columns = 3

    def __init__(self, env: CartPoleEnv, env_id: str) -> None:
        super().__init__(env_id, env.screen_width, env.screen_height)
        self.scale = self.width / (float(env.x_threshold) * 2)
        self.pole_length = self.scale * (2 * float(env.length))
        track = np.zeros((self.height, self.width), np.float32)
        if 0 <= 100 < self.height:
            track[100, :] = 1.0
        self._add_overlay(track, _BLACK)
        self._finish_background()

    def state_of(self, env: gym.Env) -> np.ndarray:
        return np.array(_unwrapped_state(env), dtype=np.float64).reshape(self.state_dim)

    def _shapes(self, states: np.ndarray) -> list:
        cart_x = states[:, 0] * self.scale + self.width / 2.0
        cart_y, axle = 100.0, 100.0 + 30.0 / 4.0
        count = len(states)
        cart = _Box(
            np.stack([cart_x - 25.0, np.full(count, cart_y - 15.0)], 1),
            np.stack([cart_x + 25.0, np.full(count, cart_y + 15.0)], 1),
            _BLACK,
        )
        pole = np.array([(-5.0, -5.0), (-5.0, self.pole_length - 5.0), (5.0, self.pole_length - 5.0), (5.0, -5.0)])
        pole = _rotate(pole, -states[:, 2]) + np.stack([cart_x, np.full(count, axle)], 1)[:, None]
        hub = np.stack([np.trunc(cart_x), np.full(count, float(int(axle)))], 1)
        return [cart, _Polygon(pole, (202, 152, 101)), _Circle(hub, 5, (129, 132, 203))]


class AcrobotRenderer(BatchRenderer):
    """Acrobot-v1: states are the env's internal (theta1, theta2, dtheta1, dtheta2), not the observation."""

    state_dim = 4
    state_names = ("theta1", "theta2", "dtheta1", "dtheta2")
    _drawn_columns = 2

    def __init__(self, env: AcrobotEnv, env_id: str) -> None:
        size = int(env.SCREEN_DIM)
        super().__init__(env_id, size, size)
        self.link_lengths = (float(env.LINK_LENGTH_1), float(env.LINK_LENGTH_2))
        self.scale = size / ((sum(self.link_lengths) + 0.2) * 2)
        self.offset = size / 2
        line = np.zeros((size, size), np.float32)
        row = int(1 * self.scale + self.offset)
        if 0 <= row < size:
            line[row, max(0, int(-2.2 * self.scale + self.offset)) : int(2.2 * self.scale + self.offset) + 1] = 1.0
        self._draw_static(line, _BLACK)
        self._finish_background()

    def state_of(self, env: gym.Env) -> np.ndarray:
        return np.array(_unwrapped_state(env), dtype=np.float64).reshape(self.state_dim)

    def _shapes(self, states: np.ndarray) -> list:
        theta1, theta2 = states[:, 0], states[:, 1]
        length1, length2 = (length * self.scale for length in self.link_lengths)
        count = len(states)
        joint = np.stack([length1 / self.scale * np.sin(theta1), -length1 / self.scale * np.cos(theta1)], 1)
        starts = [np.full((count, 2), self.offset), joint * self.scale + self.offset]
        shapes: list = []
        half = 0.1 * self.scale
        for start, angle, length in zip(starts, (theta1 - np.pi / 2, theta1 + theta2 - np.pi / 2), (length1, length2)):
            link = _rotate(np.array([(0.0, -half), (0.0, half), (length, half), (length, -half)]), angle)
            shapes.append(_Polygon(link + start[:, None], (0, 204, 204)))
            shapes.append(_Circle(start, int(0.1 * self.scale), (204, 204, 0)))
        return shapes


class PendulumRenderer(BatchRenderer):
    """Pendulum-v1: states are (theta, theta_dot, last_u); last_u is NaN before the first step."""

    state_dim = 3
    state_names = ("theta", "theta_dot", "last_u")

    def __init__(self, env: PendulumEnv, env_id: str) -> None:
        size = int(env.screen_dim)
        super().__init__(env_id, size, size)
        self.scale = size / (2.2 * 2)
        self.offset = size // 2
        self._finish_background()
        from PIL import Image

        from gymnasium.envs.classic_control import pendulum

        arrow_file = path.join(path.dirname(pendulum.__file__), "assets/clockwise.png")
        self._arrow = Image.open(arrow_file).convert("RGBA")
        self._arrows: dict[tuple[int, bool], _Sprite] = {}

    def state_of(self, env: gym.Env) -> np.ndarray:
        theta, theta_dot = _unwrapped_state(env)
        last_u = env.unwrapped.last_u
        return np.array([theta, theta_dot, np.nan if last_u is None else last_u], dtype=np.float64)

    def _check_states(self, states: object) -> np.ndarray:
        array = super()._check_states(states)
        if np.isinf(array[:, 2]).any():
            raise ValueError(f"{self.env_id} last_u must be finite, or NaN for 'no action yet'; got inf")
        return array

    def _arrow_image(self, size: int, mirrored: bool) -> _Sprite:
        key = (size, mirrored)
        if key not in self._arrows:
            from PIL import Image

            image = np.asarray(self._arrow.resize((size, size), Image.Resampling.BILINEAR, reducing_gap=None))
            image = image[::-1]  # gymnasium flips the arrow upside down (and then the whole picture)
            self._arrows[key] = _Sprite.from_rgba(image[:, ::-1] if mirrored else image)
        return self._arrows[key]

    def _shapes(self, states: np.ndarray) -> list:
        theta, last_u = states[:, 0], states[:, 2]
        count = len(states)
        rod_length, rod_width = self.scale, 0.2 * self.scale
        center = np.full((count, 2), float(self.offset))
        rod = np.array([(0.0, -rod_width / 2), (0.0, rod_width / 2), (rod_length, rod_width / 2), (rod_length, -rod_width / 2)])
        rod = _rotate(rod, theta + np.pi / 2) + center[:, None]
        tip = _rotate(np.array([(rod_length, 0.0)]), theta + np.pi / 2)[:, 0] + center
        arrows: list[_Sprite | None] = []
        corners = np.zeros((count, 2))
        for n, u in enumerate(last_u):
            size = 0 if np.isnan(u) else int(self.scale * abs(u) / 2)
            arrows.append(self._arrow_image(size, bool(u > 0)) if size > 0 else None)
            corners[n] = self.offset - size // 2
        red = (204, 77, 77)
        return [
            _Polygon(rod, red),
            _Circle(center, int(rod_width / 2), red),
            _Circle(tip, int(rod_width / 2), red),
            _Sprites(arrows, corners),
            _Circle(center, int(0.05 * self.scale), _BLACK),
        ]


# ---------------------------------------------------------------------------------------------

_RENDERERS: tuple[tuple[type, type[BatchRenderer]], ...] = (
    (MountainCarEnv, MountainCarRenderer),
    (Continuous_MountainCarEnv, MountainCarRenderer),
    (CartPoleEnv, CartPoleRenderer),
    (AcrobotEnv, AcrobotRenderer),
    (PendulumEnv, PendulumRenderer),
)


def _unwrapped_state(env: gym.Env) -> object:
    state = env.unwrapped.state
    if state is None:
        raise ValueError("the env has no state yet: call env.reset() before renderer.state_of(env)")
    return state


def renderer_for(env_or_id: gym.Env | str) -> BatchRenderer | None:
    """A :class:`BatchRenderer` for this env (or registered env id), or None if there is none.

    An id that is not registered raises gymnasium's ``NameNotFound``/``VersionNotFound``.

    Reads the env's render size and geometry (screen size, link lengths, ...) from the unwrapped
    env, so a resized env renders at its own size. Envs whose class overrides ``render`` get None,
    and so do envs inside a wrapper that overrides ``render`` (it may draw on the frames), except
    gymnasium's checkers that pass frames through (``OrderEnforcing``, ``PassiveEnvChecker``).

    >>> renderer_for("Acrobot-v1").render(np.zeros((1, 4))).shape
    (1, 500, 500, 3)
    """
    if isinstance(env_or_id, str):
        entry_point = gym.spec(env_or_id).entry_point  # raises gymnasium's error for unknown ids
        if not any(entry_point == f"{cls.__module__}:{cls.__name__}" for cls, _ in _RENDERERS):
            return None
        env = gym.make(env_or_id)
        try:
            return renderer_for(env)
        finally:
            env.close()
    if not isinstance(env_or_id, gym.Env):
        raise TypeError(f"renderer_for() takes a gymnasium env or an env id string; got {type(env_or_id).__name__}")
    if not _wrappers_pass_frames_through(env_or_id):
        return None
    unwrapped = env_or_id.unwrapped
    env_id = unwrapped.spec.id if unwrapped.spec is not None else type(unwrapped).__name__
    for env_class, renderer_class in _RENDERERS:
        if type(unwrapped) is env_class or (
            isinstance(unwrapped, env_class) and type(unwrapped).render is env_class.render
        ):
            return renderer_class(unwrapped, env_id)
    return None


def _wrappers_pass_frames_through(env: gym.Env) -> bool:
    """False if a wrapper around the unwrapped env overrides ``render`` (it may change the frames)."""
    from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker

    while isinstance(env, gym.Wrapper):
        if type(env).render is not gym.Wrapper.render and not isinstance(env, (OrderEnforcing, PassiveEnvChecker)):
            return False
        env = env.env
    return True
