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

__all__ = ["STATES_SUFFIX", "read_states", "states_path", "write_states"]

STATES_SUFFIX = ".states.npz"


def states_path(video: str | os.PathLike[str]) -> Path:
    """The kept states of ``video``: beside it, ``<stem>.states.npz``.

    >>> states_path("videos/episode-3.mp4").as_posix()
    'videos/episode-3.states.npz'
    """
    path = Path(os.fspath(video))
    return path.with_name(path.stem + STATES_SUFFIX)


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
