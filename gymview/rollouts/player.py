"""``gymview.show_rollout``: states of a MuJoCo model (``qpos`` from JAX, MJX, MuJoCo Playground, torch or NumPy)
played by the page, as one picture or a grid of envs, with charts of values under it; ``RolloutPlayer.save``
writes it as one HTML file.

>>> import mujoco, numpy as np
>>> model = mujoco.MjModel.from_xml_string(
...     "<mujoco><worldbody><light pos='0 0 3'/><geom type='plane' size='2 2 .1'/>"
...     "<body pos='0 0 1'><joint type='slide' axis='0 0 1'/><geom type='sphere' size='.1'/></body>"
...     "</worldbody></mujoco>")
>>> qpos = np.linspace(0, -0.9, 50)[:, None, None] * np.ones((1, 4, 1))  # 50 steps of 4 envs
>>> player = show_rollout(model, qpos, values={"height": 1 + qpos[:, :, 0]}, fps=25)
>>> player.frames, player.envs
(50, 4)
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping
from typing import Any

import anywidget
import numpy as np
import traitlets

from gymview._internal import frontend
from gymview.episodes.page_file import MAX_CHARTED, Segment, value_lists, write_page
from gymview.live import protocol
from gymview.renderers.grid import grid_scene
from gymview.rollouts.arrays import host_array
from gymview.rollouts.mujoco_states import RolloutScene

__all__ = ["MAX_GRID", "RolloutPlayer", "show_rollout"]

#: the most envs a grid draws (each cell is a WebGL draw a frame); more: pass a slice, ``qpos[:, :16]``
MAX_GRID = 64


def show_rollout(
    env_or_model: Any,
    qpos: Any,
    values: Mapping[str, Any] | None = None,
    fps: float | None = None,
    *,
    camera: int | str | None = None,
    width: int | None = None,
    height: int | None = None,
    title: str = "",
) -> RolloutPlayer:
    """Play a rollout's states, drawn by the page from the model's scene: Play, a slider, the arrow keys, and
    charts of ``values`` under it. Several envs show as a grid; a click on one shows it alone, another click
    the grid again.

    Args:
        env_or_model: A ``mujoco.MjModel``, a gymnasium MuJoCo env, a dm_control env through shimmy, or a MuJoCo
            Playground env (its ``mj_model``): drawn as that env's render draws it.
        qpos: Positions ``[T, nq]`` or ``[T, B, nq]`` (B envs): a NumPy, JAX or torch array, moved to the host once.
        values: Numbers to chart, name -> ``[T]`` or ``[T, B]`` (rewards, a value estimate).
        fps: Frames a second; None: the env's ``render_fps``, ``1 / env.dt`` (Playground), or the model's
            ``1 / opt.timestep``.
        camera: The model's camera, by name or index (None: the env's own, or MuJoCo's free camera).
        width: The picture's width in pixels (None: the env's, else 320).
        height: Its height (None: the env's, else 240).
        title: Shown above the player.

    Returns:
        The player: display it (the last line of a cell), ``player.save("rollout.html")`` writes it as one file.

    Raises:
        TypeError: When ``env_or_model`` is not a MuJoCo model or env, or ``qpos`` is not an array of numbers.
        ValueError: When a shape does not fit the model, or the page cannot draw the model (it says why).

    Examples:
        >>> import gymnasium as gym, numpy as np, gymview
        >>> env = gym.make("InvertedPendulum-v5")
        >>> _ = env.reset(seed=0)
        >>> qpos = np.stack([env.unwrapped.data.qpos.copy() for _ in range(3)])
        >>> gymview.show_rollout(env, qpos).frames
        3
    """
    return RolloutPlayer(
        RolloutScene(env_or_model, camera, width, height),
        host_array(qpos, "qpos"),
        None if values is None else {name: host_array(value, f"values[{name!r}]") for name, value in values.items()},
        fps if fps is not None else _default_fps(env_or_model),
        title,
    )


class RolloutPlayer(anywidget.AnyWidget):
    """A rollout's states played by the page (made by :func:`show_rollout`, which checks its arguments).

    Args:
        scene: What the page draws, and the states of each ``qpos``.
        qpos: Positions ``[T, nq]`` or ``[T, B, nq]``, on the host.
        values: Numbers to chart, name -> ``[T]`` or ``[T, B]``.
        fps: Frames a second.
        title: Shown above the player.

    Attributes:
        frame: The frame shown (set it to move there).
        focus: The env shown alone, or -1 for the grid.
        values: The names charted.

    Examples:
        >>> import mujoco, numpy as np
        >>> model = mujoco.MjModel.from_xml_string("<mujoco><worldbody><light pos='0 0 3'/>"
        ...     "<body><freejoint/><geom type='box' size='.1 .1 .1'/></body></worldbody></mujoco>")
        >>> player = RolloutPlayer(RolloutScene(model), np.tile(model.qpos0, (10, 2, 1)), None, fps=20)
        >>> player.focus = 1  # env 1 alone, as a click on it shows it
        >>> player
        RolloutPlayer(10 frames, 2 envs, 20 fps)
    """

    _esm = frontend.EPISODES_ESM  # text, not a path: see LiveView
    _css = frontend.CSS
    _view = traitlets.Unicode("rollout").tag(sync=True)
    _scenes = traitlets.List(traitlets.Dict()).tag(sync=True)
    _segments = traitlets.List(traitlets.Dict()).tag(sync=True)
    _states = traitlets.Bytes().tag(sync=True)
    _values = traitlets.Dict().tag(sync=True)
    fps = traitlets.Float(30.0, help="Frames a second.").tag(sync=True)
    frame = traitlets.Int(0, help="The frame shown.").tag(sync=True)
    focus = traitlets.Int(-1, help="The env shown alone; -1: all of them.").tag(sync=True)
    values = traitlets.List(traitlets.Unicode(), help="The names charted.").tag(sync=True)
    title = traitlets.Unicode("", help="Shown above the player.").tag(sync=True)

    def __init__(
        self,
        scene: RolloutScene,
        qpos: np.ndarray,
        values: Mapping[str, np.ndarray] | None,
        fps: float,
        title: str = "",
    ) -> None:
        if qpos.ndim == 2:
            qpos = qpos[:, None, :]
        if qpos.ndim != 3 or len(qpos) == 0 or qpos.shape[1] == 0:
            raise ValueError(f"qpos must be [T, nq] or [T, B, nq] with T and B at least 1; got shape {qpos.shape}")
        frames, envs = qpos.shape[:2]
        if envs > MAX_GRID:
            raise ValueError(f"a grid draws at most {MAX_GRID} envs; got {envs}: pass a slice, e.g. qpos[:, :16]")
        if not (isinstance(fps, (int, float)) and not isinstance(fps, bool) and fps > 0 and np.isfinite(fps)):
            raise ValueError(f"fps must be a number above 0; got {fps!r}")
        arrays = {name: _checked_values(name, value, frames, envs) for name, value in (values or {}).items()}
        states = scene.states(qpos.reshape(frames * envs, -1)).reshape(frames, envs, -1)
        if envs == 1:
            page_scene, page_states = scene.scene, states[:, 0]
        else:
            page_scene = grid_scene(scene.scene, envs, scene.state_size)
            rewards = arrays.get("reward")
            if rewards is None:
                page_scene["labels"] = "index"
                labels = np.zeros((frames, envs), np.float32)
            else:
                labels = np.nancumsum(rewards, axis=0).astype(np.float32)
            page_states = np.concatenate([states.reshape(frames, -1), labels], axis=1)
        self.segment = Segment(page_scene, np.ascontiguousarray(page_states, np.float32))
        self.value_arrays = arrays
        self.envs = envs
        super().__init__(
            _scenes=[page_scene],
            _segments=[{"scene": 0, "frames": frames, "size": page_states.shape[1]}],
            _states=self.segment.states.astype("<f4").tobytes(),
            _values={name: value_lists(value) for name, value in arrays.items()},
            fps=float(fps),
            values=list(arrays)[:MAX_CHARTED],
            title=title,
        )
        self.on_msg(self._page_message)

    @property
    def frames(self) -> int:
        """How many frames the rollout has."""
        return len(self.segment.states)

    def save(self, path: str | os.PathLike[str]) -> pathlib.Path:
        """Write the player as one HTML file that plays in a browser opened from disk, no network needed.

        Args:
            path: The file to write, ending in ``.html``; missing folders are made.

        Returns:
            The path written.

        Examples:
            >>> import mujoco, numpy as np, tempfile, os
            >>> model = mujoco.MjModel.from_xml_string("<mujoco><worldbody><light pos='0 0 3'/>"
            ...     "<body><freejoint/><geom type='box' size='.1 .1 .1'/></body></worldbody></mujoco>")
            >>> show_rollout(model, np.tile(model.qpos0, (10, 1))).save(
            ...     os.path.join(tempfile.mkdtemp(), "rollout.html")).suffix
            '.html'
        """
        return write_page(path, [self.segment], self.fps, self.value_arrays, self.title, self.values)

    def _page_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        message = protocol.read(content)
        if message is not None and message.type == protocol.MODULE and message.name == "mujoco":
            self.send(protocol.module_message("mujoco"), buffers=[frontend.SCENE3D_ESM.encode("utf-8")])

    def __repr__(self) -> str:
        return f"RolloutPlayer({self.frames} frames, {self.envs} env{'s' * (self.envs != 1)}, {self.fps:g} fps)"


def _checked_values(name: str, value: np.ndarray, frames: int, envs: int) -> np.ndarray:
    """``value`` as ``[frames, envs]``: one number a frame and env, or a frame's number for every env."""
    if value.shape not in ((frames,), (frames, envs), (frames, 1)) or (value.ndim == 1 and envs != 1):
        wanted = f"[{frames}]" if envs == 1 else f"[{frames}, {envs}]"
        raise ValueError(f"values[{name!r}] must be {wanted}, a number a frame and env; got shape {value.shape}")
    return np.broadcast_to(value.reshape(frames, -1), (frames, envs))


def _default_fps(source: Any) -> float:
    metadata = getattr(source, "metadata", None)
    if isinstance(metadata, dict) and metadata.get("render_fps"):
        return float(metadata["render_fps"])
    dt = getattr(source, "dt", None)
    if isinstance(dt, (int, float)) and dt > 0:
        return 1.0 / float(dt)
    model = getattr(source, "mj_model", source)
    return 1.0 / float(model.opt.timestep) if type(model).__name__ == "MjModel" else 30.0
