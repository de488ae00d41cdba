"""A MuJoCo model's ``qpos`` as the page's poses: the scene described once (:func:`page_scene`), each state's
bodies, tendons and camera posed here with MuJoCo's kinematics (a few microseconds a state).

>>> import mujoco
>>> model = mujoco.MjModel.from_xml_string(
...     "<mujoco><worldbody><light pos='0 0 3'/><geom type='plane' size='2 2 .1'/>"
...     "<body pos='0 0 1'><freejoint/><geom type='box' size='.1 .2 .3'/></body></worldbody></mujoco>")
>>> scene = RolloutScene(model)
>>> scene.states(np.zeros((5, model.nq))).shape  # 5 states: one body's pose and the camera's, 7 numbers each
(5, 14)
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from gymview.renderers.mujoco import dm_control_physics, mujoco_env_class
from gymview.renderers.mujoco_scene import TendonSegments, camera_pose, scene_or_why_not

__all__ = ["RolloutScene", "mujoco_model_of"]

# mujoco.Renderer's size, the one MuJoCo Playground's and MJX's notebooks render at when none is given
DEFAULT_WIDTH, DEFAULT_HEIGHT = 320, 240


def mujoco_model_of(source: Any) -> Any:
    """The ``mujoco.MjModel`` of ``source``: the model itself, a gymnasium MuJoCo env, a dm_control env through
    shimmy, or anything with an ``mj_model`` (a MuJoCo Playground env); a TypeError that says what is accepted
    for anything else."""
    if type(source).__name__ == "MjModel":
        return source
    unwrapped = getattr(source, "unwrapped", source)
    physics = dm_control_physics(unwrapped)
    if physics is not None:
        return physics.model.ptr
    mujoco_env = mujoco_env_class()
    if mujoco_env is not None and isinstance(unwrapped, mujoco_env):
        return unwrapped.model
    model = getattr(source, "mj_model", None)
    if type(model).__name__ == "MjModel":
        return model
    raise TypeError(
        "show_rollout draws MuJoCo models: pass a mujoco.MjModel, a gymnasium MuJoCo env (gym.make('Ant-v5')), "
        f"a dm_control env through shimmy or a MuJoCo Playground env; got {type(source).__name__}"
    )


class RolloutScene:
    """What the page draws for ``source`` (see :func:`mujoco_model_of`), seen as its own render sees it: a
    gymnasium env's camera, size and free camera's place; a dm_control env's ``render_kwargs``; for a model,
    ``camera`` (a name or index; None: MuJoCo's default free camera) at ``width`` x ``height`` (default 320 x
    240, ``mujoco.Renderer``'s). Raises ValueError where the page cannot draw the model, saying why."""

    def __init__(
        self, source: Any, camera: int | str | None = None, width: int | None = None, height: int | None = None
    ) -> None:
        import mujoco

        self.model = model = mujoco_model_of(source)
        self.source = source
        size, camera_id, self._free_camera_config = self._view_of(source, camera)
        self.width, self.height = int(width or size[0]), int(height or size[1])
        if camera_id is not None and not 0 <= camera_id < model.ncam:
            raise ValueError(f"camera {camera!r} is not one of the model's {model.ncam} cameras (-1: the free camera)")
        self.camera_id = -1 if camera_id is None else camera_id
        flags = self._visual_options(source)
        made = scene_or_why_not(model, self.width, self.height, self.camera_id, flags)
        if isinstance(made, str):
            raise ValueError(f"the page cannot draw this model: {made or 'its scene'}; render it with mujoco.Renderer")
        self.scene, self.poses = made
        self._data = mujoco.MjData(model)
        self._tendons = TendonSegments(model, self.poses.tendons) if self.poses.tendons else None
        self._camera: Any = None  # the free camera, placed at the first state as the env's viewer places it

    @property
    def state_size(self) -> int:
        """The numbers of one state as the page draws it."""
        return self.poses.size

    def states(self, qpos: np.ndarray) -> np.ndarray:
        """The page's float32 state for each row of ``qpos`` (shape ``[N, nq]``): the bodies' poses, the tendons'
        segments, the camera's pose."""
        import mujoco

        model, data = self.model, self._data
        if qpos.ndim != 2 or qpos.shape[1] != model.nq:
            raise ValueError(f"qpos must hold the model's nq = {model.nq} numbers a state; got shape {qpos.shape}")
        out = np.empty((len(qpos), self.state_size), np.float32)
        for row, state in enumerate(qpos):
            data.qpos[:] = state
            mujoco.mj_kinematics(model, data)
            mujoco.mj_comPos(model, data)
            mujoco.mj_camlight(model, data)
            if self._tendons is not None:
                mujoco.mj_tendon(model, data)
            parts = [self.poses.of(data.xpos, data.xquat, data.light_xpos if len(self.poses.lights) else None)]
            if self._tendons is not None:
                parts.append(self._tendons({name: getattr(data, name) for name in TendonSegments.FIELDS}))
            parts.append(self._camera_pose())
            out[row] = np.concatenate(parts)
        return out

    def _camera_pose(self) -> np.ndarray:
        import mujoco

        data = self._data
        if self.camera_id >= 0:
            quat = np.zeros(4)
            mujoco.mju_mat2Quat(quat, data.cam_xmat[self.camera_id])
            return np.concatenate([data.cam_xpos[self.camera_id], quat])
        if self._camera is None:
            if not np.isfinite(data.geom_xpos).all():  # a state that diverged: no place to aim at yet
                return np.full(7, np.nan)
            self._camera = self._free_camera()
        camera = self._camera
        return camera_pose(np.array(camera.lookat), camera.distance, camera.azimuth, camera.elevation)

    def _free_camera(self) -> Any:
        """The free camera as the source's render places it at its first state: gymnasium's viewer (at the
        geoms' median, ``extent`` away, then the env's ``default_camera_config``), else MuJoCo's default. Never
        a tracking one: gymnasium's render makes the camera free again each frame, as dm_control's does."""
        import mujoco

        camera = mujoco.MjvCamera()
        config = self._free_camera_config
        if config is None:
            mujoco.mjv_defaultFreeCamera(self.model, camera)
            return camera
        viewer = config.get("viewer")
        if viewer is not None:  # the env's own viewer, as it stands
            for name in ("distance", "azimuth", "elevation"):
                setattr(camera, name, getattr(viewer.cam, name))
            camera.lookat[:] = viewer.cam.lookat
            return camera
        camera.lookat[:] = np.median(self._data.geom_xpos, axis=0)
        camera.distance = self.model.stat.extent
        for key, value in config["settings"].items():
            if isinstance(value, np.ndarray):
                getattr(camera, key)[:] = value
            else:
                setattr(camera, key, value)
        return camera

    def _view_of(self, source: Any, camera: int | str | None) -> tuple[tuple[int, int], int | None, Any]:
        """(width, height), the camera's index (None: the free camera), and how the free camera is placed."""
        unwrapped = getattr(source, "unwrapped", source)
        physics = dm_control_physics(unwrapped)
        if physics is not None:
            settings = cast(Any, unwrapped).render_kwargs
            size = (int(settings.get("width", DEFAULT_WIDTH)), int(settings.get("height", DEFAULT_HEIGHT)))
            return size, self._index(camera if camera is not None else settings.get("camera_id", -1)), None
        renderer = getattr(unwrapped, "mujoco_renderer", None)
        if renderer is not None and self.model is getattr(unwrapped, "model", None):
            viewers = getattr(renderer, "_viewers", None)
            viewer = viewers.get("rgb_array") if isinstance(viewers, dict) else None
            config = {"viewer": viewer} if viewer is not None else {"settings": renderer.default_cam_config or {}}
            chosen = self._index(camera if camera is not None else renderer.camera_id)
            return (int(renderer.width), int(renderer.height)), chosen, config
        return (DEFAULT_WIDTH, DEFAULT_HEIGHT), self._index(camera), None

    def _index(self, camera: int | str | None) -> int | None:
        """A camera's index from its name or index; None for the free camera (None or -1)."""
        import mujoco

        if isinstance(camera, str):
            found = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
            if found < 0:
                raise ValueError(f"the model has no camera named {camera!r}")
            return int(found)
        return None if camera is None or int(camera) == -1 else int(camera)

    @staticmethod
    def _visual_options(source: Any) -> dict[int, bool] | None:
        renderer = getattr(getattr(source, "unwrapped", source), "mujoco_renderer", None)
        return dict(getattr(renderer, "_vopt", None) or {}) or None
