"""The states a video's frames were drawn from, kept beside it: ``episode-3.mp4`` gets ``episode-3.states.npz``
(``states``: float32, one row a frame, as the page draws them; ``scene``: the page's description, JSON). A recording
whose frames the page could draw keeps them (a few bytes to a few hundred a frame), so that ``export_episode`` can
write the episode as an HTML page that plays from its states.

>>> import os, tempfile
>>> video = os.path.join(tempfile.mkdtemp(), "episode-0.mp4")
>>> write_states(video, {"kind": "cartpole"}, np.zeros((3, 4)))
>>> scene, states = read_states(video)
>>> scene, states.shape
({'kind': 'cartpole'}, (3, 4))
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from gymview.episodes.table import beside_video

__all__ = ["STATES_SUFFIX", "KeptStates", "read_states", "states_path", "write_states"]

STATES_SUFFIX = ".states.npz"


class KeptStates:
    """A recording's states, one a frame, as float32 rows of chunks (no object a frame: a long recording keeps
    only their numbers). States of another size than the first stop the keeping (:attr:`whole` turns False).

    >>> kept = KeptStates(chunk=2)
    >>> for x in range(5):
    ...     kept.add(np.array([x, -x]))
    >>> len(kept), kept.array()[:, 0].tolist()
    (5, [0.0, 1.0, 2.0, 3.0, 4.0])
    """

    def __init__(self, chunk: int = 4096) -> None:
        self._chunk = chunk
        self._chunks: list[np.ndarray] = []
        self._filled = 0  # rows of the last chunk
        self.whole = True

    def add(self, state: np.ndarray) -> None:
        """Keep one frame's state."""
        row = np.asarray(state, np.float32).ravel()
        if not self.whole:
            return
        if self._chunks and self._chunks[-1].shape[1] != row.size:
            self.whole = False
            return
        if not self._chunks or self._filled == self._chunk:
            self._chunks.append(np.empty((self._chunk, row.size), np.float32))
            self._filled = 0
        self._chunks[-1][self._filled] = row
        self._filled += 1

    def __len__(self) -> int:
        return max(0, len(self._chunks) - 1) * self._chunk + (self._filled if self._chunks else 0)

    def array(self) -> np.ndarray:
        """The states kept, ``[frames, numbers]``."""
        if not self._chunks:
            return np.zeros((0, 0), np.float32)
        return np.concatenate([*self._chunks[:-1], self._chunks[-1][: self._filled]])


def states_path(video: str | os.PathLike[str]) -> Path:
    """The kept states of ``video``: beside it, ``<stem>.states.npz``.

    >>> states_path("videos/episode-3.mp4").as_posix()
    'videos/episode-3.states.npz'
    """
    return beside_video(video, STATES_SUFFIX)


def write_states(video: str | os.PathLike[str], scene: dict[str, Any], states: np.ndarray) -> None:
    """Keep ``states`` (one row a frame of ``video``) and the ``scene`` they are drawn in beside the video."""
    with open(states_path(video), "wb") as file:
        np.savez(file, states=np.asarray(states, np.float32), scene=np.array(json.dumps(scene)))


def read_states(video: str | os.PathLike[str]) -> tuple[dict[str, Any], np.ndarray] | None:
    """The scene and states kept beside ``video``, or None where none were kept."""
    path = states_path(video)
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as kept:
        return json.loads(str(kept["scene"])), kept["states"]
