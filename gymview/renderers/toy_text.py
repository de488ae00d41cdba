"""A renderer for gymnasium's board games of one player, FrozenLake and CliffWalking: boards of cells whose picture
changes only in the player's cell.

The env's own ``render()``, on a copy of the env, draws the board once with the player on each cell (and facing
each way, where the env's art has the player face its last move): the board without the player, and the
player's cell pictures, are cut from those. A state is then the player's cell and the way it faces, two numbers;
a frame is the board with one cell pasted on it, in the kernel or by the page (``js/scene.js``), the very picture
``env.render()`` draws. Boards of the same map share their pictures (a vector env's sub-envs): once per process,
FrozenLake's 4x4 map takes 0.1 s here, its 8x8 map 0.4 s, CliffWalking 0.2 s.
"""

from __future__ import annotations

import collections
import copy
import threading
from typing import Any

import gymnasium as gym
import numpy as np

from gymview.renderers.base import BatchRenderer, NotDrawable, png_url, window_of_size

__all__ = ["BoardRenderer"]

FACINGS = (0, 1, 2, 3, None)  # the last move a player faces, as the env's lastaction holds it (None: no move yet)
# The most renders a board's pictures may take (a render a cell and facing, each drawing every cell): a bigger map
# goes as pictures, rendered as it is played
MOST_RENDERS = 256
KEPT_BOARDS = 8  # the maps whose pictures are kept (a vector env's sub-envs of random maps each have their own)


class BoardRenderer(BatchRenderer):
    """FrozenLake-v1 and CliffWalking-v1 (the player's cell and the way it faces: its last move, 0-3, or 4 for none
    yet, where the env's art shows it; else 0)."""

    state_dim = 2
    state_names = ("cell", "facing")
    _drawn_columns = 2

    def __init__(self, env: gym.Env, env_id: str) -> None:
        """Raises :class:`~gymview.renderers.base.NotDrawable` where the env's picture changes outside the
        player's cell, or its map is too big to draw at once (more than :data:`MOST_RENDERS` cells)."""
        unwrapped: Any = env.unwrapped
        self.map_key = _map_key(unwrapped)
        board, players = _pictures(unwrapped, self.map_key)
        height, width = board.shape[:2]
        super().__init__(env_id, width, height)
        self._background, self.players = board, players
        del self._canvas
        self.columns = int(_columns(unwrapped))
        self.cells = int(unwrapped.observation_space.n)
        self.cell_size = tuple(int(x) for x in unwrapped.cell_size)

    def page_scene(self) -> dict[str, Any]:
        return self._scene(
            "board",
            columns=self.columns,
            cell_size=list(self.cell_size),
            images={
                "board": png_url(self._background),
                **{f"player{n}": png_url(p) for n, p in enumerate(self.players)},
            },
        )

    def state_of(self, env: gym.Env) -> np.ndarray:
        unwrapped: Any = env.unwrapped
        if getattr(unwrapped, "s", None) is None:
            raise ValueError("the env has no state yet: call env.reset() before renderer.state_of(env)")
        facing = FACINGS.index(unwrapped.lastaction) if len(self.players) > 1 else 0
        return np.array([float(unwrapped.s), float(facing)])

    def render(self, states: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Draw ``states`` as ``env.render()`` draws them: the board with the player's cell on it."""
        states = self._check_states(states)
        frames = np.empty(self._check_out(out, len(states)), np.uint8) if out is None else out
        with self._lock:
            self._dirty = []
            for n, (frame, state) in enumerate(zip(frames, states)):
                rows, columns = self._cell(int(state[0]))
                frame[...] = self._background
                frame[rows, columns] = self.players[int(state[1])][rows, columns]
                self._dirty.append((n, rows.start, rows.stop, columns.start, columns.stop))
            self._last_out = None
        return frames

    def draws_like(self, other: BatchRenderer) -> bool:
        """Boards of the same map only (a vector env's sub-envs may each have a map of their own)."""
        return isinstance(other, BoardRenderer) and other.map_key == self.map_key

    def frame_keys(self, states: np.ndarray) -> list[bytes] | None:
        return [row.tobytes() for row in self._check_states(states).astype(np.int64)]

    def _check_states(self, states: object) -> np.ndarray:
        array = super()._check_states(states)
        cells, facings = array[:, 0], array[:, 1]
        if ((cells < 0) | (cells >= self.cells) | (cells % 1 != 0)).any():
            raise ValueError(f"{self.env_id} states' cells must be whole numbers from 0 to {self.cells - 1}")
        if ((facings < 0) | (facings >= len(self.players)) | (facings % 1 != 0)).any():
            raise ValueError(f"{self.env_id} states' facings must be whole numbers below {len(self.players)}")
        return array

    def _cell(self, cell: int) -> tuple[slice, slice]:
        return _cell_box(cell, self.columns, self.cell_size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env_id!r}, {self.width}x{self.height}, {self.cells} cells)"


# a map's pictures, by what draws them, the last used last
_boards: collections.OrderedDict[tuple[Any, ...], tuple[np.ndarray, list[np.ndarray]]] = collections.OrderedDict()
_drawing = threading.Lock()


def _map_key(env: Any) -> tuple[Any, ...]:
    """What a board's pictures depend on: the env's class, its map and its cells' size."""
    return (type(env).__module__, type(env).__qualname__, _columns(env), int(env.observation_space.n),
            tuple(env.cell_size), np.asarray(getattr(env, "desc", ())).tobytes())  # fmt: skip


def _pictures(env: Any, key: tuple[Any, ...]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The board without the player, and for each way the player faces, a picture of every cell with the player on
    it; made once per map (the last :data:`KEPT_BOARDS` kept)."""
    with _drawing:
        if key in _boards:
            _boards.move_to_end(key)
        else:
            _boards[key] = _drawn_board(env)
            while len(_boards) > KEPT_BOARDS:
                _boards.popitem(last=False)
        return _boards[key]


def _drawn_board(env: Any) -> tuple[np.ndarray, list[np.ndarray]]:
    if int(env.observation_space.n) > MOST_RENDERS:
        raise NotDrawable(f"{type(env).__name__}'s map has more than {MOST_RENDERS} cells to draw once")
    drawing = copy.copy(env)  # the user's env is not drawn on: its copy gets a window of its own
    drawing.window_surface, drawing.clock, drawing.render_mode = (
        window_of_size(getattr(env, "window_size", None)),
        None,
        "rgb_array",
    )
    columns, cell_size, cells = _columns(env), tuple(env.cell_size), int(env.observation_space.n)

    def drawn(cell: int, facing: Any) -> np.ndarray:
        drawing.s, drawing.lastaction = cell, facing
        return np.array(drawing.render(), np.uint8)

    facings = FACINGS if any((drawn(0, f) != drawn(0, None)).any() for f in FACINGS[:4]) else (None,)
    if len(facings) * cells > MOST_RENDERS:
        raise NotDrawable(f"{type(env).__name__}'s map has more than {MOST_RENDERS} cells and facings to draw once")
    frames = [[drawn(cell, facing) for cell in range(cells)] for facing in facings]
    board = frames[0][0].copy()
    rows, columns_ = _cell_box(0, columns, cell_size)
    board[rows, columns_] = frames[0][1][rows, columns_]  # cell 0 as it is with the player elsewhere
    players = []
    for drawn_frames in frames:
        player = board.copy()
        for cell, frame in enumerate(drawn_frames):
            rows, columns_ = _cell_box(cell, columns, cell_size)
            player[rows, columns_] = frame[rows, columns_]
            pasted = board.copy()
            pasted[rows, columns_] = frame[rows, columns_]
            if not np.array_equal(pasted, frame):
                raise NotDrawable(f"{type(env).__name__}'s picture changes outside the player's cell")
        players.append(player)
    return board, players


def _columns(env: Any) -> int:
    return int(env.ncol if hasattr(env, "ncol") else env.shape[1])


def _cell_box(cell: int, columns: int, cell_size: tuple[int, ...]) -> tuple[slice, slice]:
    """A cell's rows and columns of pixels (cells numbered row by row, as the envs number their states)."""
    row, column = divmod(cell, columns)
    width, height = cell_size[:2]
    return slice(row * height, (row + 1) * height), slice(column * width, (column + 1) * width)
