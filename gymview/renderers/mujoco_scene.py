"""A MuJoCo model's scene as the page draws it with three.js (``js/scene3d.js``): described once, posed per frame.

:func:`page_scene` describes, as JSON-able values, what gymnasium's off-screen renderer draws for a model: each
geom MuJoCo's ``mjv_updateScene`` puts in the scene (type, size, colour and material, the body it moves with and
its pose on that body), meshes, heightfields and textures (base64 float32/int32 arrays, PNG data URLs), the look
of each spatial tendon, lights (the headlight included) and the camera's field of view and clipping planes. It
returns None for a scene the page cannot draw faithfully: flexes, skins, signed-distance geoms, decorations
(contact points, labels), tendons drawn as hanging strings or coloured by their limits, orthographic cameras,
lights that follow a body's centre of mass, and visual options changed from MuJoCo's defaults.

Each frame then needs only the poses of the bodies that move and carry something drawn (:class:`ScenePoses`:
position and quaternion, 7 numbers a body), each tendon segment's ends and width (7 more each) and the camera's
pose (7 more): HalfCheetah's frame is 56 float32 numbers, 224 bytes.

>>> import mujoco
>>> model = mujoco.MjModel.from_xml_string(
...     "<mujoco><worldbody><light pos='0 0 3'/><geom type='plane' size='2 2 .1'/>"
...     "<body pos='0 0 1'><freejoint/><geom type='box' size='.1 .2 .3' rgba='1 0 0 1'/></body>"
...     "</worldbody></mujoco>")
>>> scene, poses = page_scene(model, width=64, height=48, camera_id=-1)
>>> [(geom["type"], geom["body"]) for geom in scene["geoms"]], poses.bodies.tolist()
([('plane', -1), ('box', 0)], [1])
"""

from __future__ import annotations

import base64
from typing import Any, NamedTuple

import numpy as np

from gymview._internal.warn import warn_user
from gymview.image.codec import encode_frame

__all__ = ["GEOM_TYPES", "ScenePoses", "TendonSegments", "camera_pose", "page_scene", "scene_or_why_not"]

# MuJoCo's mjtGeom values the page draws, by name (sdf, flex, skin and the decor shapes are left to the kernel's
# renderer)
GEOM_TYPES = {0: "plane", 1: "hfield", 2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box", 7: "mesh"}
TEXTURE_TYPES = {0: "2d", 1: "cube", 2: "skybox"}
LIGHT_TYPES = {0: "spot", 1: "directional"}  # point and image lights: MuJoCo's classic renderer skips them
# mjtCamLight modes the page follows: fixed on its body; placed by its body (or its subtree's centre of mass) but
# never turned, each frame carrying its place. A light aimed at a body turns with it: not drawn.
FIXED, TRACK, TRACKCOM = 0, 1, 2
ORTHOGRAPHIC = 1  # mjtProjection
LIGHT_MODES = (FIXED, TRACK, TRACKCOM)
OBJ_GEOM, OBJ_SITE, OBJ_TENDON = 5, 6, 18  # mjtObj: scene geoms made from model geoms, sites and tendons
WRAP_PULLEY, WRAP_SITE = 2, 3  # mjtWrap: a tendon path's pulley divides it; its sites are points on it
ROLE_RGB = 1  # mjtTextureRole.mjTEXROLE_RGB: a material's colour texture
# scn.flags (mjtRndFlag) the page follows: shadow 0, reflection 2, skybox 4; these others it cannot draw
WIREFRAME, SEGMENT, IDCOLOR = 1, 7, 8


class ScenePoses(NamedTuple):
    """Which bodies' poses a frame carries (``bodies``: model body ids, in order), which lights' places
    (``lights``: light ids of lights that follow a body but keep their direction, each posed as one more body), and
    which tendons' segments (``tendons``: (tendon id, segments at most) each, in order: see :class:`TendonSegments`)."""

    bodies: np.ndarray
    tendons: tuple[tuple[int, int], ...] = ()
    lights: np.ndarray = np.zeros(0, np.int64)

    def of(self, xpos: np.ndarray, xquat: np.ndarray, light_xpos: np.ndarray | None = None) -> np.ndarray:
        """The bodies' poses, (x, y, z, qw, qx, qy, qz) each, one after another, then the lights' (unturned).

        >>> ScenePoses(np.array([1])).of(np.arange(6.0).reshape(2, 3), np.eye(4)[:2]).tolist()
        [3.0, 4.0, 5.0, 0.0, 1.0, 0.0, 0.0]
        >>> ScenePoses(np.array([], int), lights=np.array([0])).of(np.zeros((0, 3)), np.zeros((0, 4)), np.ones((1, 3)))
        array([1., 1., 1., 1., 0., 0., 0.])
        """
        poses = [xpos[self.bodies], xquat[self.bodies]]
        if len(self.lights) and light_xpos is not None:
            unturned = np.tile([1.0, 0.0, 0.0, 0.0], (len(self.lights), 1))
            poses = [np.concatenate([part, lit]) for part, lit in zip(poses, (light_xpos[self.lights], unturned))]
        return np.concatenate(poses, axis=1).ravel()

    @property
    def size(self) -> int:
        """The numbers of a frame: 7 a body, 7 a light that follows one, 7 a tendon segment, 7 for the camera."""
        return 7 * (len(self.bodies) + len(self.lights) + sum(slots for _, slots in self.tendons) + 1)


class TendonSegments:
    """The segments MuJoCo draws for a model's spatial tendons at a state, as the page places them: straight
    between path points, along the surface a tendon wraps round, or hanging under gravity, as this version of
    MuJoCo's ``mjv_updateScene`` makes them (a few microseconds; nothing else is put in its scene)."""

    #: the MjData fields a state needs for its tendons' segments
    FIELDS = ("ten_wrapadr", "ten_wrapnum", "wrap_obj", "wrap_xpos", "ten_length", "geom_xpos", "geom_xmat")

    def __init__(self, model: Any, tendons: tuple[tuple[int, int], ...]) -> None:
        import mujoco

        self.model, self.tendons = model, tendons
        self._data = mujoco.MjData(model)
        self._scene = mujoco.MjvScene(model, sum(slots for _, slots in tendons) + 1)
        self._option = mujoco.MjvOption()
        self._option.geomgroup[:] = self._option.sitegroup[:] = 0  # the tendons alone
        self._camera, self._perturb = mujoco.MjvCamera(), mujoco.MjvPerturb()
        self._told = False  # of a tendon cut short

    def __call__(self, fields: dict[str, np.ndarray]) -> np.ndarray:
        """Each tendon's segments at the state whose MjData ``fields`` (the tendons' paths, the geoms' poses,
        their lengths) are given: (x0, y0, z0, x1, y1, z1, radius) each, a tendon's unused ones of radius 0."""
        import mujoco

        data = self._data
        for name, values in fields.items():
            target = getattr(data, name)
            target[...] = np.asarray(values).reshape(target.shape)
        scene = self._scene
        mujoco.mjv_updateScene(
            self.model, data, self._option, self._perturb, self._camera, mujoco.mjtCatBit.mjCAT_DYNAMIC, scene
        )
        made = {tendon: np.zeros((slots, 7)) for tendon, slots in self.tendons}
        filled = dict.fromkeys(made, 0)
        for geom in (scene.geoms[i] for i in range(scene.ngeom)):
            tendon = int(geom.objid)
            if geom.objtype != OBJ_TENDON or tendon not in made:
                continue
            if filled[tendon] >= len(made[tendon]):
                if not self._told:
                    self._told = True
                    warn_user(f"gymview: tendon {tendon} has more segments than the page draws; it is cut short")
                continue
            half = geom.mat.reshape(3, 3)[:, 2] * geom.size[2]  # a connector lies along its z axis
            made[tendon][filled[tendon]] = [*(geom.pos - half), *(geom.pos + half), geom.size[0]]
            filled[tendon] += 1
        return np.concatenate([made[tendon].ravel() for tendon, _ in self.tendons])


def camera_pose(lookat: np.ndarray, distance: float, azimuth: float, elevation: float) -> np.ndarray:
    """MuJoCo's free camera as (x, y, z, qw, qx, qy, qz): its eye and its orientation, looking down its
    -z axis with y up (three.js's camera frame, and MuJoCo's).

    >>> (np.round(camera_pose(np.zeros(3), 2.0, 90.0, 0.0), 3) + 0.0).tolist()  # + 0.0: no -0.0
    [0.0, -2.0, 0.0, 0.707, 0.707, 0.0, 0.0]
    """
    import mujoco

    azimuth, elevation = np.radians(azimuth), np.radians(elevation)
    forward = np.array([np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth), np.sin(elevation)])
    up = np.array([-np.sin(elevation) * np.cos(azimuth), -np.sin(elevation) * np.sin(azimuth), np.cos(elevation)])
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.stack([np.cross(forward, up), up, -forward], axis=1).ravel())
    return np.concatenate([np.asarray(lookat, np.float64) - distance * forward, quat])


def page_scene(
    model: Any, width: int, height: int, camera_id: int, flags: dict[int, bool] | None = None, max_geom: int = 1000
) -> tuple[dict[str, Any], ScenePoses] | None:
    """What gymnasium's renderer draws for ``model`` (its ``flags``: gymnasium's ``visual_options``), as the page
    draws it, and which bodies' poses each frame needs; None when the page cannot draw it faithfully (see
    :func:`scene_or_why_not`)."""
    made = scene_or_why_not(model, width, height, camera_id, flags, max_geom)
    return None if isinstance(made, str) else made


def scene_or_why_not(
    model: Any, width: int, height: int, camera_id: int, flags: dict[int, bool] | None = None, max_geom: int = 1000
) -> tuple[dict[str, Any], ScenePoses] | str:
    """:func:`page_scene`'s scene and poses, or what the page cannot draw faithfully, in words."""
    import mujoco

    if flags:
        return "visual options changed from MuJoCo's defaults (visual_options)"
    if (camera_id >= 0 and _orthographic(model, camera_id)) or model.vis.global_.orthographic:
        return "an orthographic camera"
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    scene = mujoco.MjvScene(model, max_geom)
    camera = mujoco.MjvCamera()
    if camera_id >= 0:
        camera.type, camera.fixedcamid = mujoco.mjtCamera.mjCAMERA_FIXED, camera_id
    mujoco.mjv_updateScene(
        model, data, mujoco.MjvOption(), mujoco.MjvPerturb(), camera, mujoco.mjtCatBit.mjCAT_ALL, scene
    )
    tendons = _tendons(model, [scene.geoms[i] for i in range(scene.ngeom) if scene.geoms[i].objtype == OBJ_TENDON])
    drawn = [scene.geoms[i] for i in range(scene.ngeom) if scene.geoms[i].objtype != OBJ_TENDON]
    why_not = _undrawable(model, scene, drawn, tendons)
    if why_not is not None or tendons is None:
        return why_not or ""
    lit = [light for light in range(model.nlight) if model.light_active[light]]
    following = [light for light in lit if model.light_mode[light] != FIXED]
    moving = _moving_bodies(
        model,
        [_body_of(model, geom) for geom in drawn]
        + [model.light_bodyid[light] for light in lit if light not in following],
    )
    index = {body: n for n, body in enumerate(moving)}
    meshes, hfields = (
        sorted({int(model.geom_dataid[geom.objid]) for geom in drawn if GEOM_TYPES[int(geom.type)] == kind})
        for kind in ("mesh", "hfield")
    )
    fovy = model.cam_fovy[camera_id] if camera_id >= 0 else model.vis.global_.fovy
    extent = float(model.stat.extent)
    description = {
        "kind": "mujoco",
        "width": int(width),
        "height": int(height),
        "bodies": len(moving) + len(following),  # a light that follows a body is posed as one more
        "geoms": [_geom(model, data, geom, index, meshes, hfields) for geom in drawn],
        "meshes": [_mesh(model, mesh) for mesh in meshes],
        "hfields": [_hfield(model, hfield) for hfield in hfields],
        "tendons": [{**look, "segments": slots} for _, slots, look in tendons],
        "textures": [_texture(model, texture) for texture in range(model.ntex)],
        "lights": [_headlight(model)] * bool(model.vis.headlight.active)
        + [
            _light(model, data, light, index, len(moving) + following.index(light) if light in following else None)
            for light in lit
        ],
        "camera": {
            "fovy": float(fovy),
            "znear": float(model.vis.map.znear) * extent,
            "zfar": float(model.vis.map.zfar) * extent,
        },
        "shadows": bool(scene.flags[0]),
        "shadow_clip": float(model.vis.map.shadowclip) * extent,
        "shadow_size": int(min(model.vis.quality.shadowsize, 2048)),
        "skybox": bool(scene.flags[4]),
        "reflection": bool(scene.flags[2]),
    }
    return description, ScenePoses(
        np.array(moving, np.int64),
        tuple((tendon, slots) for tendon, slots, _ in tendons),
        np.array(following, np.int64),
    )


def _undrawable(model: Any, scene: Any, drawn: list[Any], tendons: list[Any] | None) -> str | None:
    """What of MuJoCo's ``scene`` the page cannot draw faithfully, in words; None if nothing."""
    import mujoco

    undrawn = [geom for geom in drawn if not _drawable(geom)]
    if tendons is None:
        return "a tendon MuJoCo colours by its limit, or a textured one"
    if undrawn:
        kind = mujoco.mjtGeom(int(undrawn[0].type)).name.removeprefix("mjGEOM_").lower()
        owner = mujoco.mjtObj(int(undrawn[0].objtype)).name.removeprefix("mjOBJ_").lower()
        return f"a {kind}" if owner in (kind, "geom") else f"a {kind} {owner}"
    if any(scene.flags[flag] for flag in (WIREFRAME, SEGMENT, IDCOLOR)):
        return "wireframe or segmentation drawing"
    if any(model.light_mode[i] not in LIGHT_MODES for i in range(model.nlight)):
        return "a light aimed at a body (targetbody)"
    if any(_light_type(model, i) not in LIGHT_TYPES for i in range(model.nlight)):
        return "a point or image light"
    return None


def _orthographic(model: Any, camera: int) -> bool:
    """Whether a model's camera is orthographic (``cam_projection`` in newer MuJoCo, ``cam_orthographic`` in older)."""
    projection = getattr(model, "cam_projection", None)
    if projection is not None:
        return int(projection[camera]) == ORTHOGRAPHIC
    return bool(model.cam_orthographic[camera])


def _drawable(geom: Any) -> bool:
    """Whether the page draws this scene geom: a model geom of a shape it knows, or a site (never a mesh)."""
    kind = GEOM_TYPES.get(int(geom.type))
    return kind is not None and (geom.objtype == OBJ_GEOM or (geom.objtype == OBJ_SITE and kind != "mesh"))


def _tendons(model: Any, drawn: list[Any]) -> list[tuple[int, int, dict[str, Any]]] | None:
    """The spatial tendons drawn (those with segments in the scene: in a group shown), each as (tendon id, the
    segments MuJoCo may draw it with at most, its look as the page draws its segments); None when one is drawn
    in colours that change (by how hard its limit pulls) or with a texture."""
    looks: dict[int, dict[str, Any]] = {}
    for geom in drawn:  # a scene geom's own texture from MuJoCo 3.3, else its material's
        material = int(model.tendon_matid[int(geom.objid)])
        texture = int(getattr(geom, "texid", -1))
        if texture < 0 and material >= 0:
            texture = int(model.mat_texid[material, ROLE_RGB])
        looks.setdefault(int(geom.objid), _look(geom, texture) | {"type": "capsule"})
    tendons = []
    for tendon, look in sorted(looks.items()):
        if _coloured_by_limit(model, tendon) or look["texture"] >= 0:
            return None
        kinds = model.wrap_type[model.tendon_adr[tendon] : model.tendon_adr[tendon] + model.tendon_num[tendon]]
        wraps = int(np.sum(kinds > WRAP_SITE))  # round a sphere or cylinder: two points, and an arc between
        points = int(np.sum(kinds == WRAP_SITE) + np.sum(kinds == WRAP_PULLEY)) + 2 * wraps
        slots = points - 1 + wraps * (int(model.vis.quality.numslices) + 1)
        hanging = min(int(model.vis.quality.numslices), 99) if _may_hang(model, tendon) else 0
        tendons.append((tendon, max(1, slots, hanging), look))
    return tendons


def _may_hang(model: Any, tendon: int) -> bool:
    """Whether MuJoCo may draw ``tendon`` as a string hanging under gravity in up to ``numslices`` segments
    (``mjv_isCatenary``, MuJoCo >= 3.3) at some length: two sites, no damping or friction, no actuator, a deadband
    spring or a length limit from 0."""
    stiff = bool(model.tendon_stiffness[tendon]) or _any_polynomial(model, "tendon_stiffnesspoly", tendon)
    lengths = np.ravel(model.tendon_lengthspring[tendon])  # (low, high) from MuJoCo 3, one length before
    spring = stiff and len(lengths) == 2 and lengths[0] == 0 and lengths[1] > 0
    limit = not stiff and model.tendon_limited[tendon] and model.tendon_range[tendon, 0] == 0
    damped = bool(model.tendon_damping[tendon]) or _any_polynomial(model, "tendon_dampingpoly", tendon)
    actuated = any(
        model.actuator_trntype[a] == 3 and model.actuator_trnid[a, 0] == tendon for a in range(model.nactuator)
    )  # mjTRN_TENDON
    return bool(
        np.linalg.norm(model.opt.gravity) > 0
        and model.tendon_num[tendon] == 2
        and spring != limit
        and not damped
        and model.tendon_frictionloss[tendon] == 0
        and not actuated
    )


def _any_polynomial(model: Any, name: str, tendon: int) -> bool:
    """Whether the tendon's polynomial ``name`` (MuJoCo >= 3.7; none before) has a term."""
    terms = getattr(model, name, None)
    return terms is not None and bool(np.any(terms[tendon]))


def _coloured_by_limit(model: Any, tendon: int) -> bool:
    """Whether MuJoCo colours ``tendon`` by how hard its limit pushes (a limited tendon of the default grey)."""
    grey = np.allclose(model.tendon_rgba[tendon], (0.5, 0.5, 0.5, 1.0))
    return bool(model.tendon_limited[tendon] and model.tendon_matid[tendon] < 0 and grey)


def _body_of(model: Any, geom: Any) -> int:
    """The body a scene geom (a model geom or a site) moves with."""
    return int((model.geom_bodyid if geom.objtype == OBJ_GEOM else model.site_bodyid)[geom.objid])


def _moving_bodies(model: Any, bodies: list[int]) -> list[int]:
    """Those of ``bodies`` that move: not welded to the world, or mocap bodies (in order, each once)."""
    return sorted({int(b) for b in bodies if model.body_weldid[b] != 0 or model.body_mocapid[b] >= 0})


def _pose_on_body(data: Any, body: int, index: dict[int, int], pos: np.ndarray, mat: np.ndarray) -> dict[str, Any]:
    """A world pose (pos, 3x3 mat) as the page places it: on a moving body, relative to it, else in the world."""
    import mujoco

    if body in index:
        rotation = data.xmat[body].reshape(3, 3)
        pos, mat = rotation.T @ (pos - data.xpos[body]), rotation.T @ mat
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(mat, np.float64).ravel())
    return {"body": index.get(body, -1), "pos": _floats(pos), "quat": _floats(quat)}


def _geom(
    model: Any, data: Any, geom: Any, index: dict[int, int], meshes: list[int], hfields: list[int]
) -> dict[str, Any]:
    objid = int(geom.objid)
    material = int(geom.matid)
    # a scene geom's own texture (MuJoCo >= 3.3), else its material's
    texture = int(getattr(geom, "texid", -1))
    repeat, uniform = getattr(geom, "texrepeat", (1.0, 1.0)), bool(getattr(geom, "texuniform", False))
    if texture < 0 and material >= 0:
        texture = int(model.mat_texid[material, ROLE_RGB])
        repeat, uniform = model.mat_texrepeat[material], bool(model.mat_texuniform[material])
    kind = GEOM_TYPES[int(geom.type)]
    xpos, xmat = (data.geom_xpos, data.geom_xmat) if geom.objtype == OBJ_GEOM else (data.site_xpos, data.site_xmat)
    pose = _pose_on_body(data, _body_of(model, geom), index, xpos[objid], xmat[objid].reshape(3, 3))
    return {
        "type": kind,
        "size": _floats(geom.size),
        **_look(geom, texture),
        **pose,
        "texrepeat": _floats(repeat),
        "texuniform": uniform,
        "mesh": meshes.index(int(model.geom_dataid[objid])) if kind == "mesh" else -1,
        "hfield": hfields.index(int(model.geom_dataid[objid])) if kind == "hfield" else -1,
    }


def _look(geom: Any, texture: int) -> dict[str, Any]:
    """A scene geom's colour, material and ``texture`` (-1 for none)."""
    return {
        "rgba": _floats(geom.rgba),
        "emission": float(geom.emission),
        "specular": float(geom.specular),
        "shininess": float(geom.shininess),
        "reflectance": float(geom.reflectance),
        "texture": texture,
    }


def _mesh(model: Any, mesh: int) -> dict[str, str]:
    """Vertices, normals and faces (vertex and normal indices, three a face) as base64 little-endian arrays, and the
    texture coordinates and their indices a face where the mesh has its own (an OBJ file's, as MuJoCo keeps them)."""
    vertices = slice(model.mesh_vertadr[mesh], model.mesh_vertadr[mesh] + model.mesh_vertnum[mesh])
    normals = slice(model.mesh_normaladr[mesh], model.mesh_normaladr[mesh] + model.mesh_normalnum[mesh])
    faces = slice(model.mesh_faceadr[mesh], model.mesh_faceadr[mesh] + model.mesh_facenum[mesh])
    described = {
        "vertices": _base64(model.mesh_vert[vertices], "<f4"),
        "normals": _base64(model.mesh_normal[normals], "<f4"),
        "faces": _base64(model.mesh_face[faces], "<i4"),
        "face_normals": _base64(model.mesh_facenormal[faces], "<i4"),
    }
    if model.mesh_texcoordnum[mesh] > 0:
        start = model.mesh_texcoordadr[mesh]
        described["texcoords"] = _base64(model.mesh_texcoord[start : start + model.mesh_texcoordnum[mesh]], "<f4")
        described["face_texcoords"] = _base64(model.mesh_facetexcoord[faces], "<i4")
    return described


def _hfield(model: Any, hfield: int) -> dict[str, Any]:
    """A heightfield's grid (``nrow`` rows of ``ncol`` elevations from 0 to 1, the first row at -y) and its
    ``size`` (x and y radius, the top's height, the base's depth), the elevations a base64 float32 array."""
    rows, columns = int(model.hfield_nrow[hfield]), int(model.hfield_ncol[hfield])
    start = int(model.hfield_adr[hfield])
    return {
        "nrow": rows,
        "ncol": columns,
        "size": _floats(model.hfield_size[hfield]),
        "data": _base64(model.hfield_data[start : start + rows * columns], "<f4"),
    }


def _texture(model: Any, texture: int) -> dict[str, Any]:
    """A texture as a PNG data URL; a cube or skybox texture holds its six faces one below the other
    (+x, -x, +y, -y, +z, -z), rows from the first texture row on, as MuJoCo uploads them."""
    width, height, channels = (
        int(x) for x in (model.tex_width[texture], model.tex_height[texture], model.tex_nchannel[texture])
    )
    start = int(model.tex_adr[texture])
    pixels = model.tex_data[start : start + width * height * channels].reshape(height, width, channels)
    rgb = np.repeat(pixels, 3, axis=2) if channels == 1 else pixels[..., :3]
    png = encode_frame(np.ascontiguousarray(rgb, np.uint8), "png")
    return {
        "type": TEXTURE_TYPES[int(model.tex_type[texture])],
        "width": width,
        "height": height,
        "url": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
    }


def _headlight(model: Any) -> dict[str, Any]:
    """MuJoCo's headlight: directional, along the camera's line of sight."""
    light = model.vis.headlight
    return {
        "type": "directional",
        "headlight": True,
        "ambient": _floats(light.ambient),
        "diffuse": _floats(light.diffuse),
        "specular": _floats(light.specular),
        "castshadow": False,
    }


def _light(model: Any, data: Any, light: int, index: dict[int, int], own_pose: int | None) -> dict[str, Any]:
    """A light on its body, or, for one that follows a body without turning (``own_pose``: its pose's index), at
    its own pose with its world direction."""
    body = int(model.light_bodyid[light])
    pose = _pose_on_body(data, body, index, data.light_xpos[light], np.eye(3))
    direction = data.light_xdir[light]
    if own_pose is not None:
        pose = {"body": own_pose, "pos": [0.0, 0.0, 0.0]}
    elif body in index:
        direction = data.xmat[body].reshape(3, 3).T @ direction
    return {
        "type": LIGHT_TYPES[_light_type(model, light)],
        "headlight": False,
        "body": pose["body"],
        "pos": pose["pos"],
        "dir": _floats(direction),
        "ambient": _floats(model.light_ambient[light]),
        "diffuse": _floats(model.light_diffuse[light]),
        "specular": _floats(model.light_specular[light]),
        "attenuation": _floats(model.light_attenuation[light]),
        "cutoff": float(model.light_cutoff[light]),
        "exponent": float(model.light_exponent[light]),
        "castshadow": bool(model.light_castshadow[light]),
    }


def _light_type(model: Any, light: int) -> int:
    """The light's mjtLightType (MuJoCo before 3.3 had only ``light_directional``: spot or directional)."""
    types = getattr(model, "light_type", None)
    return int(types[light]) if types is not None else int(bool(model.light_directional[light]))


def _floats(values: Any) -> list[float]:
    return [round(float(x), 6) for x in np.ravel(values)]


def _base64(values: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(values, dtype).tobytes()).decode("ascii")
