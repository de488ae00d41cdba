"""Raster primitives that draw like pygame.gfxdraw, in numpy: antialiased polygons, boxes,
circles, sprites and lines over a batch of frames."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

BLACK = (0, 0, 0)


# ---------------------------------------------------------------------------------------------
# Shapes in pygame's coordinates (x right, y up before gymnasium flips the surface; the pixel
# (i, j) has its centre at the integer point (i, j), as in pygame.gfxdraw).


def blend(patch: np.ndarray, coverage: np.ndarray, color: tuple[int, int, int]) -> None:
    """Paint ``color`` over an (N, h, w, 3) float32 patch with (N, h, w) coverage in [0, 1]."""
    keep = 1.0 - coverage
    for channel, value in enumerate(color):
        plane = patch[..., channel]  # a strided view: no copy
        plane *= keep
        if value:
            plane += np.float32(value) * coverage


class Polygon:
    """A batch of convex polygons as pygame.gfxdraw's ``aapolygon`` + ``filled_polygon`` draw them.

    gfxdraw truncates the vertices to integers, fills every pixel centre inside (edges included)
    and antialiases the edges with Wu lines, which cover an outside pixel by 1 - d, d being its
    distance from the edge along the minor axis.
    """

    def __init__(self, vertices: np.ndarray, color: tuple[int, int, int]) -> None:
        self.vertices = np.trunc(vertices)  # (N, K, 2)
        self.color = color

    def paint(self, patch: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> None:
        blend(patch, self.coverage(xs, ys), self.color)

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


class Box:
    """A batch of axis-aligned rectangles with integer corners: gfxdraw fills them exactly, no antialiasing."""

    def __init__(self, low: np.ndarray, high: np.ndarray, color: tuple[int, int, int]) -> None:
        self.low = np.trunc(low).astype(np.int64)  # (N, 2) lowest x, y (inclusive)
        self.high = np.trunc(high).astype(np.int64)  # (N, 2) highest x, y (inclusive)
        self.color = color

    def bounds(self) -> np.ndarray:
        return np.concatenate([self.low, self.high], axis=1).astype(np.float64)


class Circle:
    """A batch of circles as ``gfxdraw.aacircle`` + ``filled_circle`` draw them (integer centres)."""

    def __init__(self, centers: np.ndarray, radius: int, color: tuple[int, int, int]) -> None:
        self.centers = np.trunc(centers)  # (N, 2)
        self.radius = radius
        self.color = color

    def paint(self, patch: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> None:
        blend(patch, self.coverage(xs, ys), self.color)

    def bounds(self) -> np.ndarray:
        return np.concatenate([self.centers - self.radius - 1, self.centers + self.radius + 1], axis=1)

    def coverage(self, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        cx = self.centers[:, 0, None, None].astype(np.float32)
        cy = self.centers[:, 1, None, None].astype(np.float32)
        distance = np.sqrt((xs - cx) ** 2 + (ys - cy) ** 2)
        return np.clip(self.radius + 1.0 - distance, 0.0, 1.0, out=distance)


class Sprite(NamedTuple):
    """The visible pixels of an RGBA image: positions, colours and opacity (pygame orientation)."""

    width: int
    height: int
    rows: np.ndarray  # (K,)
    columns: np.ndarray  # (K,)
    colors: np.ndarray  # (K, 3) float32
    alpha: np.ndarray  # (K, 1) float32 in (0, 1]

    @classmethod
    def from_rgba(cls, image: np.ndarray) -> Sprite:
        rows, columns = np.nonzero(image[:, :, 3])
        pixels = image[rows, columns].astype(np.float32)
        return cls(image.shape[1], image.shape[0], rows, columns, pixels[:, :3], pixels[:, 3:] / 255)


class Sprites:
    """One sprite per frame (or None), blitted with its top-left corner at ``corners``."""

    def __init__(self, images: list[Sprite | None], corners: np.ndarray) -> None:
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


def aaline_layer(start: tuple[float, float], end: tuple[float, float], height: int, width: int) -> np.ndarray:
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


def rotate(points: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rotate (K, 2) points by each of (N,) angles like pygame's ``Vector2.rotate_rad``: (N, K, 2)."""
    cos, sin = np.cos(angles)[:, None], np.sin(angles)[:, None]
    x, y = points[None, :, 0], points[None, :, 1]
    return np.stack([x * cos - y * sin, x * sin + y * cos], axis=-1)


def grid_polygon(vertices: Sequence[tuple[float, float]], height: int, width: int) -> np.ndarray:
    """Coverage of one static gfxdraw polygon over the whole canvas."""
    ys, xs = np.mgrid[:height, :width].astype(np.float32)
    return Polygon(np.array([vertices], np.float64), BLACK).coverage(xs[None], ys[None])[0]
