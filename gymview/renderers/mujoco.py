"""MuJoCo envs drawn in another process from a copy of their simulation state.

A gymnasium ``MujocoEnv`` renders with software OpenGL in tens of milliseconds, far longer
than a step. :class:`MujocoPainter` lets the view's encoder process draw it instead: the loop
copies what MuJoCo's scene is built from (body, geom, site, camera and light poses, tendons,
the free camera and the visual options; a few kilobytes), and the painter rebuilds the scene
from its own copy of the model with gymnasium's own off-screen viewer, so the picture is
pixel-equal to ``env.render()``.

A painter made with ``preview=True`` (what :func:`gymview.watch` makes for the live view) draws a
frame the view will shrink to ``max_size`` at that size instead, without multisampling and with a
shadow map sized to the picture (MuJoCo's defaults, 4x MSAA and a 4096x4096 shadow map, cost most of
a software-GL frame); the camera, the scene and its options are the same. Frames drawn without a
``max_size`` (recording, ``draw()``) keep the env's own size and quality.

Poses are copied, not recomputed: after ``mj_step`` MuJoCo's poses are those of the start of
the last substep, and ``env.render()`` draws exactly those.

>>> import gymnasium as gym
>>> env = gym.make("InvertedPendulum-v5", render_mode="rgb_array")   # doctest: +SKIP
>>> painter = MujocoPainter.for_env(env)                               # doctest: +SKIP
>>> _ = env.reset(seed=0); _ = env.render()   # the first render makes gymnasium's camera  # doctest: +SKIP
>>> bool((painter.frame_of(env).draw() == env.render()).all())         # doctest: +SKIP
True
"""

from __future__ import annotations

import atexit
import copy
import pickle
import sys
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import gymnasium as gym
import numpy as np

from gymview.image.frames import fit_size
from gymview.renderers.grid import grid_scene, tiled
from gymview.renderers.mujoco_scene import ScenePoses, TendonSegments, camera_pose, scene_or_why_not
from gymview.renderers.wrappers import wrappers_pass_frames_through

if TYPE_CHECKING:
    from gymnasium.envs.mujoco.mujoco_env import MujocoEnv

__all__ = [
    "MujocoFrame",
    "MujocoGridPainter",
    "MujocoPainter",
    "dm_control_physics",
    "first_render_makes_gl_context",
    "mujoco_env_class",
    "preview_quality",
]

# What mjv_updateScene reads from MjData: poses (copied, see the module docstring), tendon
# paths, actuator and sensor values, flex vertices.
DATA_FIELDS = (
    "qpos",
    "qvel",
    "act",
    "ctrl",
    "mocap_pos",
    "mocap_quat",
    "xpos",
    "xquat",
    "xmat",
    "xipos",
    "ximat",
    "xanchor",
    "xaxis",
    "subtree_com",
    "geom_xpos",
    "geom_xmat",
    "site_xpos",
    "site_xmat",
    "cam_xpos",
    "cam_xmat",
    "light_xpos",
    "light_xdir",
    "ten_wrapadr",
    "ten_wrapnum",
    "wrap_obj",
    "wrap_xpos",
    "ten_length",
    "actuator_length",
    "sensordata",
    "flexvert_xpos",
    "flexelem_aabb",
    "flexedge_length",
)
# The visual options users change (gymnasium's visual_options, or viewer.vopt directly).
OPTION_ARRAYS = (
    "flags",
    "geomgroup",
    "sitegroup",
    "jointgroup",
    "tendongroup",
    "actuatorgroup",
    "flexgroup",
    "skingroup",
)
OPTION_VALUES = ("frame", "label", "bvh_depth", "flex_layer")
CAMERA_VALUES = ("type", "fixedcamid", "trackbodyid", "distance", "azimuth", "elevation", "orthographic")


def preview_quality(model: Any, height: int, width: int) -> Any:
    """A copy of ``model`` whose visual quality suits a (height, width) preview: no multisampling,
    a shadow map twice the picture's long side (a power of two, at most the model's own) and an
    offscreen buffer that holds the picture. Simulation values are untouched.

    Args:
        model: A ``mujoco.MjModel``.
        height: The preview's height in pixels.
        width: The preview's width in pixels.

    Returns:
        The changed copy (``model`` itself is left as it was).

    Examples:
        >>> import mujoco
        >>> model = mujoco.MjModel.from_xml_string("<mujoco><worldbody><geom size='1'/></worldbody></mujoco>")
        >>> cheap = preview_quality(model, 240, 320)
        >>> cheap.vis.quality.offsamples, cheap.vis.quality.shadowsize, model.vis.quality.shadowsize
        (0, 1024, 4096)
    """
    cheap = copy.deepcopy(model)
    quality, buffer = cheap.vis.quality, cheap.vis.global_
    quality.offsamples = 0
    quality.shadowsize = min(int(quality.shadowsize), 1 << (2 * max(height, width) - 1).bit_length())
    buffer.offwidth, buffer.offheight = max(int(buffer.offwidth), width), max(int(buffer.offheight), height)
    return cheap


def mujoco_env_class() -> type[MujocoEnv] | None:
    """gymnasium's MujocoEnv, if some env already imported it (never imports mujoco itself)."""
    module = sys.modules.get("gymnasium.envs.mujoco.mujoco_env")
    return getattr(module, "MujocoEnv", None)


def dm_control_physics(env: Any) -> Any:
    """The dm_control ``Physics`` of a dm_control env made by shimmy (``gym.make("dm_control/cheetah-run-v0")``)
    that draws with shimmy's own ``render`` and only the settings this painter follows (size, camera), else None.

    The one place gymview reads shimmy's private ``_env`` (shimmy 1 and 2 keep the dm_control env there): without
    it, or on any other env, frames are the env's own pictures.
    """
    module = sys.modules.get("shimmy.dm_control_compatibility")
    shimmy_env = getattr(module, "DmControlCompatibilityV0", None)
    if shimmy_env is None or not isinstance(env, shimmy_env) or type(env).render is not shimmy_env.render:
        return None
    settings = getattr(env, "render_kwargs", None)
    if not isinstance(settings, dict) or set(settings) - {"width", "height", "camera_id"}:
        return None
    physics = getattr(getattr(env, "_env", None), "physics", None)
    model, data = (
        getattr(getattr(physics, "model", None), "ptr", None),
        getattr(getattr(physics, "data", None), "ptr", None),
    )
    return physics if type(model).__name__ == "MjModel" and type(data).__name__ == "MjData" else None


def _camera_index(model: Any, camera: int | str) -> int | None:
    """A dm_control ``camera_id`` (an index, -1 for the free camera, or a camera's name) as an index; None for
    a camera the model does not have (the env's own render says so)."""
    if isinstance(camera, str):
        import mujoco

        found = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
        return int(found) if found >= 0 else None
    index = int(camera)
    return index if -1 <= index < model.ncam else None


def _dm_control_max_geom(model: Any) -> int:
    """The geoms dm_control's scenes hold for ``model`` (its MjvScene's estimate): a scene of fewer would drop some
    that ``env.render()`` draws."""
    frames = max(model.nbody, model.ngeom, model.nsite, model.ncam, model.nlight)
    estimate = 3 * frames + 4 * model.ngeom + 3 * model.nbody + model.nsite + model.ntendon + model.njnt + model.nu
    return max(1000, estimate + model.nskin + model.ncam + model.nlight)


def _dm_control_view(model: Any, camera_id: int) -> np.ndarray:
    """What dm_control's ``physics.render`` draws with, as :meth:`MujocoPainter.frame_of` lays it out after the
    data: a new camera each render (the free camera at its default place, or the fixed one), default options
    without rangefinder rays, a new scene's flags."""
    import mujoco

    camera = mujoco.MjvCamera()
    if camera_id == -1:
        camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        mujoco.mjv_defaultFreeCamera(model, camera)
    else:
        camera.type, camera.fixedcamid = mujoco.mjtCamera.mjCAMERA_FIXED, camera_id
    options = mujoco.MjvOption()
    options.flags[mujoco.mjtVisFlag.mjVIS_RANGEFINDER] = 0
    scene = mujoco.MjvScene()
    parts: list[Any] = [[getattr(camera, name) for name in CAMERA_VALUES], camera.lookat]
    parts += [getattr(options, name) for name in OPTION_ARRAYS]
    parts += [[getattr(options, name) for name in OPTION_VALUES], scene.flags]
    return np.concatenate(parts, dtype=np.float64, casting="unsafe")


def first_render_makes_gl_context(env: Any) -> bool:
    """True for a gymnasium MuJoCo env (or a vector env of them here) that has not rendered yet:
    its next render creates an OpenGL context, which fails when no backend works."""
    mujoco_env = mujoco_env_class()
    if mujoco_env is None:
        return False
    sub_envs = getattr(env, "envs", None)
    first = sub_envs[0] if isinstance(sub_envs, (list, tuple)) and sub_envs else env
    unwrapped = getattr(first, "unwrapped", None)
    return isinstance(unwrapped, mujoco_env) and unwrapped.mujoco_renderer.viewer is None


class MujocoPainter:
    """Draws one MuJoCo env's frames from :meth:`frame_of` states (a DeferredFrame painter).

    Picklable: the model travels with it; the GL context is made where it first paints. With
    ``preview``, a frame painted for a ``max_size`` is drawn at that size with cheap settings
    (:func:`preview_quality`); without a ``max_size`` it is ``env.render()``'s picture.
    """

    draws_with_opengl = True  # the kernel draws its pictures on one thread (gymview.live.encoding.drawn_here)

    def __init__(self, env: gym.Env, preview: bool = False) -> None:
        self.preview = bool(preview)
        physics = dm_control_physics(env.unwrapped)
        # a dm_control env's view never changes: its camera, options and scene flags, as frame_of adds them
        self._dm_control_view: np.ndarray | None = None
        if physics is not None:
            settings = cast(Any, env.unwrapped).render_kwargs
            self.model, data = physics.model.ptr, physics.data.ptr
            self.width, self.height = int(settings.get("width", 320)), int(settings.get("height", 240))
            self.max_geom = _dm_control_max_geom(self.model)
            self.camera_id = cast(int, _camera_index(self.model, settings.get("camera_id", -1)))  # see for_env
            self.visual_options: dict[int, bool] = {}
            self._dm_control_view = _dm_control_view(self.model, self.camera_id)
        else:
            unwrapped = cast("MujocoEnv", env.unwrapped)  # see for_env
            renderer = unwrapped.mujoco_renderer
            self.model, data = unwrapped.model, unwrapped.data
            # typed Optional in gymnasium, which fills them in from the model when not given
            self.width, self.height = int(renderer.width), int(renderer.height)  # type: ignore[arg-type]
            self.max_geom = int(renderer.max_geom)
            self.camera_id = renderer.camera_id
            self.visual_options = dict(renderer._vopt)  # gymnasium's visual_options: mjVIS flags changed
        self._page: tuple[dict[str, Any], ScenePoses] | None = None  # page_scene(), once made
        self._page_made = False
        self.why_not_drawn: str | None = None  # what the page cannot draw, once page_scene() found it
        self._tendons: TendonSegments | None = None  # made at the first page state of a model with tendons
        # (name, offset, shape, dtype) of each piece of the state vector
        self._layout: list[tuple[str, int, tuple[int, ...], np.dtype]] = []
        size = 1  # data.time first
        for name in DATA_FIELDS:
            array = getattr(data, name, None)
            if isinstance(array, np.ndarray) and array.size:
                self._layout.append((name, size, array.shape, array.dtype))
                size += array.size
        self._data_size = size
        self._data: Any = None
        self._viewer: Any = None
        self._previews: dict[tuple[int, int], Any] = {}  # (height, width) -> viewer, kept: see _preview_viewer

    @property
    def draws_to_max_size(self) -> bool:
        """Whether the encoder process passes ``max_size`` to :meth:`paint` (a preview painter)."""
        return self.preview

    @classmethod
    def for_env(cls, env: gym.Env, preview: bool = False) -> MujocoPainter | None:
        """A painter for a gymnasium ``MujocoEnv``, or a dm_control env through shimmy, in ``rgb_array`` mode
        whose class and wrappers keep its own ``render``, else None; ``preview``: see the class."""
        mujoco_env = mujoco_env_class()
        unwrapped = env.unwrapped
        physics = dm_control_physics(unwrapped)
        camera = cast(Any, unwrapped).render_kwargs.get("camera_id", -1) if physics is not None else -1
        if physics is not None and _camera_index(physics.model.ptr, camera) is None:
            return None  # a camera the model lacks: the env's own render raises its error
        ours = physics is not None or (
            mujoco_env is not None and isinstance(unwrapped, mujoco_env) and type(unwrapped).render is mujoco_env.render
        )
        if not ours or unwrapped.render_mode != "rgb_array" or not wrappers_pass_frames_through(env):
            return None
        return cls(env, preview)

    # -- the loop's side ------------------------------------------------------------------------
    def frame_of(self, env: gym.Env) -> MujocoFrame | None:
        """The frame ``env.render()`` would draw now, as a state to paint elsewhere; None when the
        frame must be rendered here (before gymnasium made its viewer, or with markers or text
        overlays added to it)."""
        if self._dm_control_view is not None:
            data = cast(Any, dm_control_physics(env.unwrapped)).data.ptr  # the env this painter was made for
            fields = [[data.time], *(getattr(data, name).ravel() for name, _, _, _ in self._layout)]
            return MujocoFrame(self, np.concatenate([*fields, self._dm_control_view], dtype=np.float64))
        unwrapped = cast("MujocoEnv", env.unwrapped)  # the env this painter was made for
        viewer = unwrapped.mujoco_renderer._viewers.get("rgb_array")
        if viewer is None or viewer._markers or viewer._overlays:
            return None
        data, camera, options = unwrapped.data, viewer.cam, viewer.vopt
        parts: list[Any] = [[data.time]]
        parts += [getattr(data, name).ravel() for name, _, _, _ in self._layout]
        parts.append([getattr(camera, name) for name in CAMERA_VALUES])
        parts.append(camera.lookat)
        parts += [getattr(options, name) for name in OPTION_ARRAYS]
        parts.append([getattr(options, name) for name in OPTION_VALUES])
        parts.append(viewer.scn.flags)
        return MujocoFrame(self, np.concatenate(parts, dtype=np.float64, casting="unsafe"))

    # -- the painting side ------------------------------------------------------------------------
    def paint(self, state: np.ndarray, canvas: np.ndarray | None = None, max_size: int | None = None) -> np.ndarray:
        """Draw ``state`` (from :meth:`frame_of`) as ``env.render()`` would: (height, width, 3) uint8;
        a preview painter given ``max_size`` draws it at most that long, with cheap settings."""
        viewer = self._viewer_for(max_size)
        data = self._data
        data.time = state[0]
        for name, offset, shape, dtype in self._layout:
            count = int(np.prod(shape))
            getattr(data, name)[...] = state[offset : offset + count].reshape(shape).astype(dtype)
        rest = iter(np.split(state[self._data_size :], np.cumsum(self._option_sizes(viewer))))
        camera, options = viewer.cam, viewer.vopt
        for name, value in zip(CAMERA_VALUES, next(rest)):
            setattr(camera, name, type(getattr(camera, name))(value))
        camera.lookat[:] = next(rest)
        for name in OPTION_ARRAYS:
            target = getattr(options, name)
            target[:] = next(rest).astype(target.dtype)
        for name, value in zip(OPTION_VALUES, next(rest)):
            setattr(options, name, int(value))
        viewer.scn.flags[:] = next(rest).astype(viewer.scn.flags.dtype)
        # One process may hold several GL contexts (painters of other models, the user's own envs),
        # and closing any of them can leave none current: draw in this painter's own.
        viewer.make_context_current()
        return viewer.render("rgb_array", self.camera_id)

    # -- the page's side: a scene described once, poses per frame (renderers/mujoco_scene.py) ------------
    def page_scene(self) -> dict[str, Any] | None:
        """The scene as the page draws it with three.js (see :func:`gymview.renderers.mujoco_scene.page_scene`),
        or None where the page cannot draw it faithfully (:attr:`why_not_drawn` says why)."""
        if not self._page_made:
            made = scene_or_why_not(
                self.model, self.width, self.height, self.camera_id, self.visual_options, self.max_geom
            )
            self._page, self.why_not_drawn = (None, made) if isinstance(made, str) else (made, None)
            self._page_made = True
        return None if self._page is None else self._page[0]

    def page_state(self, state: np.ndarray) -> np.ndarray:
        """What the page needs of a :meth:`frame_of` state: the moving bodies' poses (x, y, z, qw, qx, qy, qz
        each), the tendons' segments (:class:`gymview.renderers.mujoco_scene.TendonSegments`), then the camera's
        pose."""
        poses = self._poses()
        bodies = poses.of(
            self._field(state, "xpos"),
            self._field(state, "xquat"),
            self._field(state, "light_xpos") if len(poses.lights) else None,
        )
        if not poses.tendons:
            return np.concatenate([bodies, self._camera(state)])
        if self._tendons is None:
            self._tendons = TendonSegments(self.model, poses.tendons)
        fields = [name for name, _, _, _ in self._layout if name in TendonSegments.FIELDS]
        segments = self._tendons({name: self._field(state, name) for name in fields})
        return np.concatenate([bodies, segments, self._camera(state)])

    def paint_page_state(self, page_state: np.ndarray, max_size: int | None = None) -> np.ndarray:
        """Draw a :meth:`page_state` as :meth:`paint` draws the state it came from: the bodies placed by
        their poses, the geoms, sites and lights by theirs on their bodies (what MuJoCo's kinematics does)."""
        import mujoco

        bodies, following = self._poses().bodies, self._poses().lights
        viewer = self._viewer_for(max_size)
        model, data = self.model, self._data
        # the bodies welded to the world, and their lights and cameras, where page states have none
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        mujoco.mj_camlight(model, data)
        poses = np.asarray(page_state, np.float64)[: 7 * (len(bodies) + len(following))].reshape(-1, 7)
        poses, light_poses = poses[: len(bodies)], poses[len(bodies) :]
        data.xpos[bodies], data.xquat[bodies] = poses[:, :3], poses[:, 3:]
        for body, quat in zip(bodies, poses[:, 3:]):
            mujoco.mju_quat2Mat(data.xmat[body], quat)
        for kind in ("geom", "site"):
            _place_on_bodies(model, data, bodies, kind)
        if model.ntendon:
            mujoco.mj_tendon(model, data)  # the tendons' paths past the sites and geoms just placed
        lights = np.setdiff1d(np.flatnonzero(np.isin(model.light_bodyid, bodies)), following)
        owners = data.xmat[model.light_bodyid[lights]].reshape(-1, 3, 3)
        data.light_xpos[lights] = data.xpos[model.light_bodyid[lights]] + np.einsum(
            "nij,nj->ni", owners, model.light_pos[lights]
        )
        data.light_xdir[lights] = np.einsum("nij,nj->ni", owners, model.light_dir[lights])
        data.light_xpos[following] = light_poses[:, :3]  # their directions never turn: mj_camlight set them
        self._place_camera(viewer, np.asarray(page_state, np.float64)[-7:])
        viewer.make_context_current()
        return viewer.render("rgb_array", self.camera_id)

    def _poses(self) -> ScenePoses:
        self.page_scene()
        if self._page is None:
            raise ValueError(f"the page cannot draw this MuJoCo scene ({self!r}), so it has no page states")
        return self._page[1]

    def _place_camera(self, viewer: Any, pose: np.ndarray) -> None:
        """Put the camera at a page state's camera pose (eye, quaternion)."""
        import mujoco

        rotation = np.zeros(9)
        mujoco.mju_quat2Mat(rotation, pose[3:])
        if self.camera_id is not None and self.camera_id >= 0:
            self._data.cam_xpos[self.camera_id], self._data.cam_xmat[self.camera_id] = pose[:3], rotation
            return
        forward = -rotation.reshape(3, 3)[:, 2]  # the free camera: no roll, looking down its -z axis
        camera = viewer.cam
        camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        camera.distance = 1.0
        camera.lookat[:] = pose[:3] + forward
        camera.azimuth = float(np.degrees(np.arctan2(forward[1], forward[0])))
        camera.elevation = float(np.degrees(np.arcsin(np.clip(forward[2], -1.0, 1.0))))

    def _field(self, state: np.ndarray, name: str) -> np.ndarray:
        """One MjData field of a :meth:`frame_of` state."""
        for field, offset, shape, _ in self._layout:
            if field == name:
                return state[offset : offset + int(np.prod(shape))].reshape(shape)
        raise KeyError(name)

    def _camera(self, state: np.ndarray) -> np.ndarray:
        """The pose of the camera a :meth:`frame_of` state is seen from."""
        import mujoco

        if self.camera_id is not None and self.camera_id >= 0:
            quat = np.zeros(4)
            mujoco.mju_mat2Quat(quat, self._field(state, "cam_xmat")[self.camera_id])
            return np.concatenate([self._field(state, "cam_xpos")[self.camera_id], quat])
        values = state[self._data_size : self._data_size + len(CAMERA_VALUES) + 3]
        settings = dict(zip(CAMERA_VALUES, values))
        return camera_pose(values[-3:], settings["distance"], settings["azimuth"], settings["elevation"])

    def _option_sizes(self, viewer: Any) -> list[int]:
        options = viewer.vopt
        return [len(CAMERA_VALUES), 3, *(getattr(options, name).size for name in OPTION_ARRAYS), len(OPTION_VALUES)]

    def _viewer_for(self, max_size: int | None) -> Any:
        """The viewer that draws at ``max_size`` (a preview painter's), else at the env's size."""
        if self.preview and max_size is not None:
            size = fit_size(self.height, self.width, int(max_size))
            return self._previews.get(size) or self._preview_viewer(*size)
        return self._viewer_here()

    def _preview_viewer(self, height: int, width: int) -> Any:
        from gymnasium.envs.mujoco.mujoco_rendering import OffScreenViewer

        # Kept, never freed before exit: in one process, a freed OSMesa viewer left the viewers made
        # after it drawing black. max_size seldom changes, so there are one or two.
        viewer = OffScreenViewer(
            preview_quality(self.model, height, width), self._data_here(), width, height, self.max_geom
        )
        atexit.register(viewer.free)
        self._previews[(height, width)] = viewer
        return viewer

    def _data_here(self) -> Any:
        if self._data is None:
            import mujoco

            self._data = mujoco.MjData(self.model)
        return self._data

    def _viewer_here(self) -> Any:
        if self._viewer is None:
            from gymnasium.envs.mujoco.mujoco_rendering import OffScreenViewer

            self._viewer = OffScreenViewer(self.model, self._data_here(), self.width, self.height, self.max_geom)
            # Freed before the interpreter tears down the GL modules its __del__ would need.
            atexit.register(self._viewer.free)
        return self._viewer

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_data"] = state["_viewer"] = state["_page"] = state["_tendons"] = None
        state["_previews"], state["_page_made"], state["why_not_drawn"] = {}, False, None
        return state

    def __repr__(self) -> str:
        kind = ", preview" if self.preview else ""
        return f"MujocoPainter({self.width}x{self.height}, {len(self._layout)} data fields{kind})"


def _place_on_bodies(model: Any, data: Any, bodies: np.ndarray, kind: str) -> None:
    """The world poses of the model's geoms or sites (``kind``) on ``bodies``, from their poses on them
    (what MuJoCo's kinematics does)."""
    import mujoco

    owner, xpos, xmat = getattr(model, f"{kind}_bodyid"), getattr(data, f"{kind}_xpos"), getattr(data, f"{kind}_xmat")
    placed = np.flatnonzero(np.isin(owner, bodies))
    owners = data.xmat[owner[placed]].reshape(-1, 3, 3)
    local_pos, local_quat = getattr(model, f"{kind}_pos"), getattr(model, f"{kind}_quat")
    xpos[placed] = data.xpos[owner[placed]] + np.einsum("nij,nj->ni", owners, local_pos[placed])
    for item, rotation in zip(placed, owners):
        local = np.zeros(9)
        mujoco.mju_quat2Mat(local, local_quat[item])
        xmat[item] = (rotation @ local.reshape(3, 3)).ravel()


class MujocoFrame(NamedTuple):
    """A MuJoCo frame, or a grid of MuJoCo sub-envs, not drawn yet (a :class:`gymview.live.DeferredFrame`)."""

    painter: MujocoPainter | MujocoGridPainter
    state: np.ndarray

    def draw(self) -> np.ndarray:
        """The (height, width, 3) uint8 frame, drawn here."""
        return self.painter.paint(self.state)

    def checked(self) -> MujocoFrame:
        """This frame: the painter's ``frame_of`` made its state from live envs already."""
        return self


class MujocoGridPainter:
    """Draws the sub-envs of a vector env of one MuJoCo model as a labelled grid, like
    :func:`gymview.renderers.grid.tiled`.

    One :class:`MujocoPainter` (one model, one GL context where it paints) draws every sub-env
    from its own state: its poses, camera and visual options. Picklable like the painter.
    """

    draws_with_opengl = True

    def __init__(self, painter: MujocoPainter, count: int) -> None:
        self.painter = painter
        self.count = count

    @property
    def draws_to_max_size(self) -> bool:
        """Whether the encoder process passes ``max_size`` to :meth:`paint` (a preview painter)."""
        return self.painter.preview

    @classmethod
    def for_envs(cls, envs: Any, preview: bool = False) -> MujocoGridPainter | None:
        """A grid painter for these sub-envs if each gets a :class:`MujocoPainter` and all have one
        model (equal in every value, as a vector env of one env id without randomised models), else None.
        Like :class:`MujocoPainter`, it paints with the model as it is now; ``preview``: each sub-env
        drawn at the size of its cell in a grid of ``max_size``, with cheap settings."""
        if not isinstance(envs, (list, tuple)) or not envs:
            return None
        painters = [MujocoPainter.for_env(env, preview) for env in envs]
        first = painters[0]
        if first is None or any(
            p is None or (p.width, p.height, p.camera_id) != (first.width, first.height, first.camera_id)
            for p in painters
        ):
            return None
        model = pickle.dumps(first.model)
        if any(p is None or pickle.dumps(p.model) != model for p in painters[1:]):
            return None
        return cls(first, len(envs))

    def frame_of(self, envs: Any, returns: Any) -> MujocoFrame | None:
        """The grid ``tiled(env.render() of each sub-env)`` would show now, as states to paint
        elsewhere; None when some sub-env must be rendered here (see :meth:`MujocoPainter.frame_of`)."""
        states = []
        for env in envs:
            frame = self.painter.frame_of(env)
            if frame is None:
                return None
            states.append(frame.state)
        return MujocoFrame(self, np.concatenate([*states, np.asarray(returns, np.float64)]))

    def paint(self, state: np.ndarray, canvas: np.ndarray | None = None, max_size: int | None = None) -> np.ndarray:
        """``state``: the sub-envs' states one after another, then their returns; ``max_size``: the
        grid's longest side as shown (a preview painter draws each cell that small)."""
        per_env = (len(state) - self.count) // self.count
        cell = self._cell_size(max_size)
        frames = [
            self.painter.paint(state[index * per_env : (index + 1) * per_env], max_size=cell)
            for index in range(self.count)
        ]
        return tiled(frames, state[self.count * per_env :])

    def _cell_size(self, max_size: int | None) -> int | None:
        """The longest side a preview painter draws a cell at, for a grid of ``max_size``."""
        # tile() makes the grid as square as possible: ceil(sqrt(count)) cells a row
        return None if max_size is None else max(16, int(max_size) // int(np.ceil(np.sqrt(self.count))))

    def page_scene(self) -> dict[str, Any] | None:
        """The grid as the page draws it: each cell the sub-env's MuJoCo scene, labelled (None where the page
        cannot draw the scene)."""
        cell = self.painter.page_scene()
        return None if cell is None else grid_scene(cell, self.count, self.painter._poses().size)

    def page_state(self, state: np.ndarray) -> np.ndarray:
        """Each sub-env's :meth:`MujocoPainter.page_state`, then their returns."""
        per_env = (len(state) - self.count) // self.count
        cells = [self.painter.page_state(state[i * per_env : (i + 1) * per_env]) for i in range(self.count)]
        return np.concatenate([*cells, state[self.count * per_env :]])

    def paint_page_state(self, page_state: np.ndarray, max_size: int | None = None) -> np.ndarray:
        """Draw a :meth:`page_state` as :meth:`paint` draws the state it came from."""
        per_env = (len(page_state) - self.count) // self.count
        cell = self._cell_size(max_size)
        frames = [
            self.painter.paint_page_state(page_state[i * per_env : (i + 1) * per_env], max_size=cell)
            for i in range(self.count)
        ]
        return tiled(frames, page_state[self.count * per_env :])

    def __repr__(self) -> str:
        return f"MujocoGridPainter({self.count} x {self.painter!r})"
