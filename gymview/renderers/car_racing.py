"""gymnasium's CarRacing drawn from its state: each episode's track described once (a painter per track: the page
gets a new scene when a reset makes a new track), each frame the car, its skid marks, the dashboard's readings and
the view (zoom, turn, place), drawn with pygame as ``render()`` draws them, or by the page (``js/scene_car.js``).

Road tiles lose their shade when the car first touches them (CarRacing recolours them): a frame carries which have,
24 tiles a number.

>>> import gymnasium as gym
>>> env = gym.make("CarRacing-v3", render_mode="rgb_array")
>>> _ = env.reset(seed=0)
>>> frame = CarRacingPainter.for_env(env).frame_of(env)
>>> frame.painter.page_scene()["kind"], frame.state.shape == (frame.painter.state_size,)
('carracing', True)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import gymnasium as gym
import numpy as np

from gymview.renderers.grid import MAX_TILED_ENVS, grid_scene, tiled
from gymview.renderers.wrappers import wrappers_pass_frames_through

__all__ = ["CarRacingFrame", "CarRacingGrid", "CarRacingGridPainter", "CarRacingPainter", "CarRacingTrack",
           "car_racing_class"]  # fmt: skip

VIEW, ANGLE, SCORE, DASHBOARD = 0, 1, 4, 5  # zoom, turn, then the view's place (x, y); the score; 7 readings
WHEELS, WHEEL_CORNERS, HULL_CORNERS = 4, 4, 20  # each wheel's corners and its stripe's, then the hull's 4 parts'
CAR = DASHBOARD + 7
# the skid marks the car keeps, up to 30 lines of up to 30 points each: (points, on grass, x0, y0, x1, y1...) each,
# one after another, the newest that fit in MARK_POINTS points in all (full throttle from the start keeps about
# 300); NaN after
PARTICLES, MARK_POINTS = 30, 320
MARKS = CAR + 2 * (2 * WHEELS * WHEEL_CORNERS + HULL_CORNERS)
MARKS_SIZE = 2 * PARTICLES + 2 * MARK_POINTS
TILES_A_NUMBER = 24  # float32 holds whole numbers to 2**24
WHEEL, STRIPE, HULL, MUD = (0, 0, 0), (77, 77, 77), (204, 0, 0), (102, 102, 0)


def car_racing_class() -> Any:
    """gymnasium's CarRacing, if some env already imported it (never imports Box2D, an optional dependency)."""
    return getattr(sys.modules.get("gymnasium.envs.box2d.car_racing"), "CarRacing", None)


class CarRacingTrack:
    """Draws the frames of one CarRacing track (a DeferredFrame painter; picklable): its road, its colours."""

    def __init__(self, env: Any) -> None:
        from gymnasium.envs.box2d import car_racing

        self.road = [[tuple(map(float, corner)) for corner in poly] for poly, _ in env.road_poly]
        # the pieces' colours as they are now, and the road's own, which a tile takes once the car touches it
        self.shaded = [[float(c) for c in colour] for _, colour in env.road_poly]
        self.tiles = [n for n, (_, colour) in enumerate(env.road_poly) if isinstance(colour, np.ndarray)]
        self.road_colour = [float(c) for c in env.road_color]
        # as the env keeps them (pygame reads its arrays of whole or of fractional numbers alike)
        self.background, self.grass = np.array(env.bg_color), np.array(env.grass_color)
        self.hull_parts = [len(fixture.shape.vertices) for fixture in env.car.hull.fixtures]
        self.window = (car_racing.WINDOW_W, car_racing.WINDOW_H)
        self.size = (car_racing.VIDEO_W, car_racing.VIDEO_H)
        self.playfield, self.grass_dim = float(car_racing.PLAYFIELD), float(car_racing.GRASS_DIM)
        self.state_size = MARKS + MARKS_SIZE + -(-len(self.tiles) // TILES_A_NUMBER)
        self._font: Any = None

    def page_scene(self) -> dict[str, Any]:
        """The track as the page draws it (``js/scene_car.js``)."""
        return {
            "kind": "carracing",
            "width": self.size[0],
            "height": self.size[1],
            "window": list(self.window),
            # to a ten-thousandth of a metre (a sixtieth of a pixel at the closest zoom): half the JSON
            "road": [[round(corner, 4) for point in poly for corner in point] for poly in self.road],
            "colours": [[int(c) for c in colour] for colour in self.shaded],
            "tiles": self.tiles,
            "road_colour": [int(c) for c in self.road_colour],
            "background": [int(c) for c in self.background],
            "grass": [int(c) for c in self.grass],
            "hull_parts": self.hull_parts,
            # where each part of a state starts: the car's corners, the skid marks, the touched tiles' bits
            "layout": {"car": CAR, "marks": MARKS, "marks_size": MARKS_SIZE, "touched": MARKS + MARKS_SIZE},
            "playfield": self.playfield,
            "grass_dim": self.grass_dim,
        }

    def paint(self, state: np.ndarray, canvas: Any = None) -> np.ndarray:
        """``state`` drawn with pygame's calls in CarRacing's order (its ``render()``), (400, 600, 3) uint8."""
        import pygame

        surface = pygame.Surface(self.window)
        zoom, angle, move = float(state[VIEW]), float(state[ANGLE]), (float(state[2]), float(state[3]))
        self._road(surface, state, zoom, angle, move)
        self._car(surface, state, zoom, angle, move)
        surface = pygame.transform.flip(surface, False, True)
        self._dashboard(surface, state)
        if self._font is None or not pygame.font.get_init():  # pygame.quit() (another env's close) ends fonts
            pygame.font.init()
            self._font = pygame.font.Font(pygame.font.get_default_font(), 42)
        text = self._font.render(f"{state[SCORE]:04.0f}", True, (255, 255, 255), (0, 0, 0))
        place = text.get_rect()
        place.center = (60, self.window[1] - self.window[1] * 2.5 / 40.0)
        surface.blit(text, place)
        small = pygame.transform.smoothscale(surface, self.size)
        return np.transpose(np.array(pygame.surfarray.pixels3d(small)), axes=(1, 0, 2))

    def _road(self, surface: Any, state: np.ndarray, zoom: float, angle: float, move: tuple[float, float]) -> None:
        from pygame import gfxdraw

        def draw(poly: Sequence[Sequence[float]], colour: Any) -> None:
            # drawn whether on screen or not: CarRacing skips only shapes too far off to touch it
            path = [_placed(corner, zoom, angle, move) for corner in poly]
            gfxdraw.aapolygon(surface, path, colour)
            gfxdraw.filled_polygon(surface, path, colour)

        bounds = self.playfield
        draw([(bounds, bounds), (bounds, -bounds), (-bounds, -bounds), (-bounds, bounds)], self.background)
        step = self.grass_dim
        for x in range(-20, 20, 2):
            for y in range(-20, 20, 2):
                patch = [(step * x + step, step * y), (step * x, step * y), (step * x, step * y + step),
                         (step * x + step, step * y + step)]  # fmt: skip
                draw(patch, self.grass)
        touched = _unpacked(state[MARKS + MARKS_SIZE :], len(self.tiles))
        recoloured = {tile for tile, done in zip(self.tiles, touched) if done}
        for n, poly in enumerate(self.road):
            draw(poly, [int(c) for c in (self.road_colour if n in recoloured else self.shaded[n])])

    def _car(self, surface: Any, state: np.ndarray, zoom: float, angle: float, move: tuple[float, float]) -> None:
        import pygame

        marks, at = state[MARKS : MARKS + MARKS_SIZE], 0
        while at < len(marks) and not math.isnan(marks[at]):
            count, mud = int(marks[at]), marks[at + 1]
            points = [_placed(c, zoom, angle, move) for c in marks[at + 2 : at + 2 + 2 * count].reshape(-1, 2)]
            pygame.draw.lines(surface, color=MUD if mud else WHEEL, points=points, width=2, closed=False)
            at += 2 + 2 * count
        corners = state[CAR:MARKS].reshape(-1, 2)
        for wheel in range(WHEELS):
            own = corners[2 * WHEEL_CORNERS * wheel : 2 * WHEEL_CORNERS * (wheel + 1)]
            pygame.draw.polygon(surface, color=WHEEL, points=[_placed(c, zoom, angle, move) for c in own[:4]])
            if not np.isnan(own[4:]).any():
                pygame.draw.polygon(surface, color=STRIPE, points=[_placed(c, zoom, angle, move) for c in own[4:]])
        hull, start = corners[2 * WHEEL_CORNERS * WHEELS :], 0
        for count in self.hull_parts:
            path = [_placed(c, zoom, angle, move) for c in hull[start : start + count]]
            pygame.draw.polygon(surface, color=HULL, points=path)
            start += count

    def _dashboard(self, surface: Any, state: np.ndarray) -> None:
        """CarRacing's indicators (``_render_indicators``): speed, the four wheels' spin, steering, turning."""
        import pygame

        width, height = self.window
        s, h = width / 40.0, height / 40.0
        pygame.draw.polygon(surface, color=(0, 0, 0), points=[(width, height), (width, height - 5 * h),
                                                               (0, height - 5 * h), (0, height)])  # fmt: skip
        speed, *spins, steering, turning = state[DASHBOARD : DASHBOARD + 7]

        def vertical(place: float, value: float) -> list[tuple[float, float]]:
            return [(place * s, height - (h + h * value)), ((place + 1) * s, height - (h + h * value)),
                    ((place + 1) * s, height - h), ((place + 0) * s, height - h)]  # fmt: skip

        def horizontal(place: float, value: float) -> list[tuple[float, float]]:
            return [((place + 0) * s, height - 4 * h), ((place + value) * s, height - 4 * h),
                    ((place + value) * s, height - 2 * h), ((place + 0) * s, height - 2 * h)]  # fmt: skip

        bars = [(speed, vertical(5, 0.02 * speed), (255, 255, 255))]
        bars += [(spin, vertical(7 + n, 0.01 * spin), (0, 0, 255) if n < 2 else (51, 0, 255)) for n, spin in
                 enumerate(spins)]  # fmt: skip
        bars += [(steering, horizontal(20, -10.0 * steering), (0, 255, 0))]
        bars += [(turning, horizontal(30, -0.8 * turning), (255, 0, 0))]
        for value, points, colour in bars:
            if abs(value) > 1e-4:
                pygame.draw.polygon(surface, points=points, color=colour)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_font": None}  # a pygame font does not pickle

    def __repr__(self) -> str:
        return f"CarRacingTrack({len(self.road)} road pieces)"


class CarRacingFrame(NamedTuple):
    """A CarRacing frame not drawn yet (a :class:`gymview.live.DeferredFrame`): one env's, or a grid's."""

    painter: CarRacingTrack | CarRacingGrid
    state: np.ndarray

    def draw(self) -> np.ndarray:
        return self.painter.paint(self.state)

    def checked(self) -> CarRacingFrame:
        return self


class CarRacingPainter:
    """Reads a CarRacing env's frames as states (:meth:`frame_of`), each with the painter of its track."""

    def __init__(self) -> None:
        self._track: tuple[Any, CarRacingTrack] | None = None  # (which track, its painter)

    @classmethod
    def for_env(cls, env: gym.Env) -> CarRacingPainter | None:
        """A painter for a CarRacing env in ``rgb_array`` mode that its class and wrappers let draw as its own
        ``render()`` draws it, else None."""
        car_racing = car_racing_class()
        unwrapped = env.unwrapped
        if (
            car_racing is None
            or not isinstance(unwrapped, car_racing)
            or type(unwrapped).render is not car_racing.render
        ):
            return None
        if unwrapped.render_mode != "rgb_array" or not wrappers_pass_frames_through(env):
            return None
        return cls()

    def frame_of(self, env: gym.Env) -> CarRacingFrame | None:
        """The frame ``env.render()`` would draw now, as a state and its track's painter; None before a reset."""
        unwrapped: Any = env.unwrapped
        car = getattr(unwrapped, "car", None)
        if car is None or "t" not in unwrapped.__dict__:
            return None
        track = self._track_of(unwrapped)
        state = np.full(track.state_size, np.nan)
        self._view(unwrapped, state)
        corners = []
        for wheel in car.wheels:
            transform = wheel.fixtures[0].body.transform
            corners += [tuple(transform * v) for v in wheel.fixtures[0].shape.vertices]
            corners += _stripe(wheel)
        for fixture in car.hull.fixtures:
            corners += [tuple(fixture.body.transform * v) for v in fixture.shape.vertices]
        state[CAR:MARKS] = np.ravel(corners)
        marks = _marks(car.particles)
        state[MARKS : MARKS + len(marks)] = marks
        road_colour = unwrapped.road_color[0]
        touched = [unwrapped.road_poly[n][1][0] == road_colour for n in track.tiles]
        state[MARKS + MARKS_SIZE :] = _packed(touched)
        return CarRacingFrame(track, state)

    @staticmethod
    def _view(env: Any, state: np.ndarray) -> None:
        """The zoom, turn and place ``render()`` gives the view, the score and the dashboard's readings."""
        import pygame
        from gymnasium.envs.box2d import car_racing

        car = env.car
        angle = -car.hull.angle
        zoom = 0.1 * car_racing.SCALE * max(1 - env.t, 0) + car_racing.ZOOM * car_racing.SCALE * min(env.t, 1)
        scroll = pygame.math.Vector2((-(car.hull.position[0]) * zoom, -(car.hull.position[1]) * zoom))
        move = scroll.rotate_rad(angle)
        state[:4] = zoom, angle, car_racing.WINDOW_W / 2 + move[0], car_racing.WINDOW_H / 4 + move[1]
        # the score as render() writes it ("{:04.0f}": halves to even, "-000" for a small loss): rounded here, its
        # sign kept on a zero
        state[SCORE] = math.copysign(round(env.reward), env.reward)
        velocity = car.hull.linearVelocity
        speed = np.sqrt(np.square(velocity[0]) + np.square(velocity[1]))
        wheels = car.wheels
        state[DASHBOARD : DASHBOARD + 7] = (speed, *(w.omega for w in wheels), wheels[0].joint.angle,
                                            car.hull.angularVelocity)  # fmt: skip

    def _track_of(self, env: Any) -> CarRacingTrack:
        # a reset makes a new list of road pieces, which may take the old one's place in memory: its first
        # corner (random) tells them apart
        key = (id(env.road_poly), len(env.road_poly), tuple(env.road_poly[0][0][0]) if env.road_poly else None)
        if self._track is None or self._track[0] != key:
            self._track = (key, CarRacingTrack(env))
        return self._track[1]


class CarRacingGrid:
    """Draws a grid of CarRacing sub-envs, each on its own track (a DeferredFrame painter: a new one, and a new
    scene for the page, when a sub-env's reset makes a new track). A frame holds each sub-env's state, padded to
    the longest, then their returns."""

    def __init__(self, tracks: list[CarRacingTrack]) -> None:
        self.tracks = tracks
        self.state_dim = max(track.state_size for track in tracks)

    def page_scene(self) -> dict[str, Any]:
        """The grid as the page draws it: each cell its own track's scene (``cells``)."""
        cells = [track.page_scene() for track in self.tracks]
        return {**grid_scene(cells[0], len(cells), self.state_dim), "cells": cells}

    def paint(self, state: np.ndarray, canvas: Any = None) -> np.ndarray:
        """The sub-envs' states drawn, each as :meth:`CarRacingTrack.paint` draws it, in a labelled grid."""
        count, size = len(self.tracks), self.state_dim
        frames = [track.paint(state[n * size : n * size + track.state_size]) for n, track in enumerate(self.tracks)]
        return tiled(frames, state[count * size :])

    def __repr__(self) -> str:
        return f"CarRacingGrid({len(self.tracks)} tracks)"


class CarRacingGridPainter:
    """Reads the frames of a vector env's CarRacing sub-envs (:meth:`frame_of`) as one grid frame."""

    def __init__(self, painters: list[CarRacingPainter]) -> None:
        self.painters = painters
        self._grid: tuple[tuple[int, ...], CarRacingGrid] | None = None  # (its tracks' ids, the grid)

    @classmethod
    def for_envs(cls, envs: Any) -> CarRacingGridPainter | None:
        """A grid painter where every sub-env gets a :class:`CarRacingPainter` (at most ``MAX_TILED_ENVS``)."""
        if not isinstance(envs, (list, tuple)) or not envs or len(envs) > MAX_TILED_ENVS:
            return None
        painters = [CarRacingPainter.for_env(env) for env in envs]
        return None if any(painter is None for painter in painters) else cls(cast(list[CarRacingPainter], painters))

    def frame_of(self, envs: Any, returns: Any) -> CarRacingFrame | None:
        """The grid ``tiled(env.render() of each sub-env)`` would show now; None before every sub-env's reset."""
        frames = [painter.frame_of(env) for painter, env in zip(self.painters, envs)]
        if any(frame is None for frame in frames):
            return None
        tracks = [cast(CarRacingTrack, cast(CarRacingFrame, frame).painter) for frame in frames]
        key = tuple(id(track) for track in tracks)  # a painter's tracks are kept: their ids are theirs
        if self._grid is None or self._grid[0] != key:
            self._grid = (key, CarRacingGrid(tracks))
        grid = self._grid[1]
        state = np.full(grid.state_dim * len(frames) + len(frames), np.nan)
        for n, frame in enumerate(frames):
            frame = cast(CarRacingFrame, frame)
            state[n * grid.state_dim : n * grid.state_dim + frame.state.size] = frame.state
        state[grid.state_dim * len(frames) :] = np.asarray(returns, np.float64)
        return CarRacingFrame(grid, state)


def _placed(corner: Any, zoom: float, angle: float, move: tuple[float, float]) -> tuple[float, float]:
    """A point of the world on CarRacing's window, as its ``render()`` places it (pygame's rotation, then zoom)."""
    import pygame

    turned = pygame.math.Vector2((float(corner[0]), float(corner[1]))).rotate_rad(angle)
    return (turned[0] * zoom + move[0], turned[1] * zoom + move[1])


def _stripe(wheel: Any) -> list[tuple[float, float]]:
    """The corners of a wheel's white stripe (how far it has turned), as CarRacing's car draws it; NaN for none."""
    from gymnasium.envs.box2d.car_dynamics import SIZE, WHEEL_R, WHEEL_W

    a1, a2 = wheel.phase, wheel.phase + 1.2
    s1, s2, c1, c2 = math.sin(a1), math.sin(a2), math.cos(a1), math.cos(a2)
    if s1 > 0 and s2 > 0:
        return [(math.nan, math.nan)] * WHEEL_CORNERS
    c1 = np.sign(c1) if s1 > 0 else c1
    c2 = np.sign(c2) if s2 > 0 else c2
    corners = [(-WHEEL_W * SIZE, +WHEEL_R * c1 * SIZE), (+WHEEL_W * SIZE, +WHEEL_R * c1 * SIZE),
               (+WHEEL_W * SIZE, +WHEEL_R * c2 * SIZE), (-WHEEL_W * SIZE, +WHEEL_R * c2 * SIZE)]  # fmt: skip
    transform = wheel.fixtures[0].body.transform
    return [tuple(transform * corner) for corner in corners]


def _marks(particles: Any) -> list[float]:
    """The newest skid marks that fit, oldest first: (points, on grass, x0, y0, x1, y1...) each."""
    kept: list[list[float]] = []
    room = MARK_POINTS
    for particle in reversed(particles):
        if len(particle.poly) > room:
            break
        room -= len(particle.poly)
        kept.append([len(particle.poly), float(particle.grass), *(c for point in particle.poly for c in point)])
    return [number for mark in reversed(kept) for number in mark]


def _packed(flags: list[bool]) -> list[float]:
    """Flags as whole numbers of ``TILES_A_NUMBER`` bits each, the first flag the lowest bit."""
    return [
        float(sum(1 << bit for bit, flag in enumerate(flags[start : start + TILES_A_NUMBER]) if flag))
        for start in range(0, len(flags), TILES_A_NUMBER)
    ]


def _unpacked(numbers: np.ndarray, count: int) -> list[bool]:
    return [bool(int(numbers[n // TILES_A_NUMBER]) >> (n % TILES_A_NUMBER) & 1) for n in range(count)]
