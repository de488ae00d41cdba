"""MuJoCo scenes for the page: the description sent once (page_scene), the poses sent per frame (page_state),
and pictures drawn in the kernel from those poses alone (paint_page_state, for replay and clips)."""

import base64
import json

import gymnasium as gym
import numpy as np
import pytest
from waiting import wait_until

pytest.importorskip("mujoco")

import mujoco  # noqa: E402

from gymview.live.encoding.replay import FrameHistory  # noqa: E402
from gymview.live.encoding.scene_frames import SceneFrames  # noqa: E402
from gymview.renderers import MujocoGridPainter, MujocoPainter  # noqa: E402
from gymview.renderers.mujoco_scene import camera_pose, page_scene, scene_or_why_not  # noqa: E402
from mujoco_models import ant_beside_a_painted_box, ant_under_a_following_light, ant_with_tendons  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _software_opengl(software_opengl):
    """env.render() through OSMesa (tests/conftest.py)."""


def stepped(env_id, steps=10, **kwargs):
    """An env after its first render and ``steps`` random steps, with its painter."""
    env = gym.make(env_id, render_mode="rgb_array", width=96, height=72, **kwargs)
    env.reset(seed=0)
    env.action_space.seed(0)
    painter = MujocoPainter.for_env(env)
    env.render()
    for _ in range(steps):
        env.step(env.action_space.sample())
    return env, painter


def test_half_cheetah_s_scene_holds_its_geoms_lights_textures_and_lens():
    env, painter = stepped("HalfCheetah-v5")
    scene = painter.page_scene()
    model = env.unwrapped.model
    assert scene["kind"] == "mujoco" and (scene["width"], scene["height"]) == (96, 72)
    assert [geom["type"] for geom in scene["geoms"]] == ["plane"] + ["capsule"] * 8
    floor = scene["geoms"][0]
    assert floor["body"] == -1 and floor["size"] == [40.0, 40.0, 40.0] and floor["texrepeat"] == [60.0, 60.0]
    assert floor["reflectance"] == pytest.approx(0.5) and scene["reflection"]  # the page mirrors the cheetah in it
    assert scene["textures"][floor["texture"]]["type"] == "2d"
    assert {texture["type"] for texture in scene["textures"]} == {"2d", "cube", "skybox"}
    assert all(texture["url"].startswith("data:image/png;base64,") for texture in scene["textures"])
    assert scene["bodies"] == 7  # the world's geoms stay put; each of the 7 moving bodies carries a capsule
    assert sorted({geom["body"] for geom in scene["geoms"][1:]}) == list(range(7))
    assert scene["lights"][0]["headlight"] and scene["lights"][0]["diffuse"] == pytest.approx([0.4] * 3)
    assert scene["lights"][1]["type"] == "directional" and scene["lights"][1]["castshadow"]
    assert scene["camera"]["fovy"] == 45.0
    assert scene["camera"]["zfar"] == pytest.approx(model.vis.map.zfar * model.stat.extent)
    json.dumps(scene)  # JSON-able, to go as the view's _scene trait
    env.close()


def test_a_mesh_s_own_texture_coordinates_go_with_it_as_mujoco_keeps_them(tmp_path):
    env, painter = stepped("Ant-v5", steps=0, xml_file=str(ant_beside_a_painted_box(tmp_path)))
    model, (mesh,) = env.unwrapped.model, painter.page_scene()["meshes"]
    coordinates = np.frombuffer(base64.b64decode(mesh["texcoords"]), "<f4").reshape(-1, 2)
    corners = np.frombuffer(base64.b64decode(mesh["face_texcoords"]), "<i4")
    assert coordinates.tolist() == model.mesh_texcoord.tolist()  # (u, 1 - v) of the OBJ file's, as MuJoCo keeps them
    assert corners.tolist() == model.mesh_facetexcoord.ravel().tolist() and len(corners) == 3 * model.mesh_facenum[0]
    env.close()


def test_a_geom_s_pose_on_its_body_puts_it_where_mujoco_does():
    env, painter = stepped("Ant-v5")
    scene, data = painter.page_scene(), env.unwrapped.data
    poses = painter.page_state(painter.frame_of(env).state)[:-7].reshape(-1, 7)
    bodies = {geom["body"] for geom in scene["geoms"] if geom["body"] >= 0}
    assert bodies == set(range(scene["bodies"]))
    for geom_id, geom in enumerate(scene["geoms"]):
        if geom["body"] < 0:
            continue
        body_rotation, local = np.zeros(9), np.zeros(9)
        mujoco.mju_quat2Mat(body_rotation, poses[geom["body"], 3:])
        mujoco.mju_quat2Mat(local, np.array(geom["quat"]))
        position = poses[geom["body"], :3] + body_rotation.reshape(3, 3) @ geom["pos"]
        assert position == pytest.approx(data.geom_xpos[geom_id], abs=1e-5)
        rotation = body_rotation.reshape(3, 3) @ local.reshape(3, 3)
        assert rotation.ravel() == pytest.approx(data.geom_xmat[geom_id], abs=1e-5)
    env.close()


def test_a_frame_holds_the_moving_bodies_poses_and_the_camera_s_in_a_few_hundred_bytes():
    env, painter = stepped("HalfCheetah-v5")
    scenes = SceneFrames("auto", lambda scene: None)
    frame = painter.frame_of(env)
    assert scenes.take(frame)
    data, width, height = scenes.pack(frame, max_size=48)
    assert len(data) == 4 * 7 * (7 + 1) == 224 and (width, height) == (48, 36)
    state = np.frombuffer(data, "<f4")
    torso = 1  # body 0 is the world, welded to itself
    assert state[:3] == pytest.approx(env.unwrapped.data.xpos[torso], abs=1e-6)
    assert state[3:7] == pytest.approx(env.unwrapped.data.xquat[torso], abs=1e-6)
    camera = env.unwrapped.mujoco_renderer.viewer.cam
    assert state[-7:] == pytest.approx(camera_pose(camera.lookat, camera.distance, camera.azimuth, camera.elevation))
    env.close()


def test_the_free_camera_s_pose_is_the_headlight_s_position():
    env, painter = stepped("Hopper-v5")
    viewer = env.unwrapped.mujoco_renderer.viewer
    env.render()
    eye = painter.page_state(painter.frame_of(env).state)[-7:-4]
    assert eye == pytest.approx(viewer.scn.lights[0].pos, abs=1e-5)  # MuJoCo puts its headlight at the eye
    env.close()


@pytest.mark.parametrize("env_id", ["HalfCheetah-v5", "Humanoid-v5", "InvertedDoublePendulum-v5"])  # a site too
def test_a_page_state_painted_in_the_kernel_is_env_render_s_picture(env_id):
    env, painter = stepped(env_id)
    expected = env.render()
    page_state = painter.page_state(painter.frame_of(env).state).astype(np.float32).astype(np.float64)
    drawn = painter.paint_page_state(page_state)
    assert drawn.shape == expected.shape
    # float32 poses move an edge by a pixel here and there; shadow-map edges differ most
    assert np.mean(np.abs(drawn.astype(int) - expected)) < 2.0
    env.close()


def test_a_frame_seen_from_a_model_s_camera_is_painted_in_the_kernel_as_env_render_does():
    env, painter = stepped("Humanoid-v5", camera_name="track")  # a camera that follows the body's centre of mass
    assert painter.camera_id == 0 and painter.page_scene()["camera"]["fovy"] == env.unwrapped.model.cam_fovy[0]
    expected = env.render()
    drawn = painter.paint_page_state(painter.page_state(painter.frame_of(env).state).astype(np.float32).astype(float))
    assert np.mean(np.abs(drawn.astype(int) - expected)) < 2.0
    env.close()


def test_a_light_that_follows_a_body_goes_as_its_place_each_frame_and_is_painted_as_env_render_does(tmp_path):
    env, painter = stepped("Ant-v5", steps=15, xml_file=str(ant_under_a_following_light(tmp_path)))
    scene, data = painter.page_scene(), env.unwrapped.data
    (light,) = [light for light in scene["lights"] if light["diffuse"] == pytest.approx([0.6, 0.4, 0.2])]
    bodies = len(painter._poses().bodies)
    assert scene["bodies"] == bodies + 1 and light["body"] == bodies and light["pos"] == [0, 0, 0]
    assert light["dir"] == pytest.approx([0, 0, -1])  # the world's: it never turns
    page_state = painter.page_state(painter.frame_of(env).state)
    follower = env.unwrapped.model.light("follower").id
    assert page_state[7 * bodies : 7 * bodies + 7] == pytest.approx([*data.light_xpos[follower], 1, 0, 0, 0])
    assert data.light_xpos[follower] == pytest.approx(data.subtree_com[1] + [0, 0, 2], abs=1e-6)
    expected = env.render()
    drawn = painter.paint_page_state(page_state.astype(np.float32).astype(np.float64))
    assert np.mean(np.abs(drawn.astype(int) - expected)) < 2.0
    env.close()


def test_tendons_go_as_the_segments_mujoco_draws_and_are_painted_in_the_kernel_as_env_render_does(tmp_path):
    env, painter = stepped("Ant-v5", steps=15, xml_file=str(ant_with_tendons(tmp_path)))
    strap, string = painter.page_scene()["tendons"]
    assert strap["rgba"] == pytest.approx([0.9, 0.2, 0.2, 1]) and string["rgba"] == pytest.approx([0.2, 0.3, 0.9, 1])
    page_state = painter.page_state(painter.frame_of(env).state)
    bodies = len(painter._poses().bodies)
    segments = page_state[7 * bodies : -7].reshape(-1, 7)
    assert len(segments) == strap["segments"] + string["segments"]
    # what MuJoCo's own scene holds for each tendon at this state: a capsule a segment, between its ends
    viewer = env.unwrapped.mujoco_renderer._get_viewer("rgb_array")
    scene = viewer.scn
    mujoco.mjv_updateScene(env.unwrapped.model, env.unwrapped.data, viewer.vopt, viewer.pert, viewer.cam,
                           mujoco.mjtCatBit.mjCAT_ALL, scene)  # fmt: skip
    drawn = [scene.geoms[i] for i in range(scene.ngeom) if scene.geoms[i].objtype == mujoco.mjtObj.mjOBJ_TENDON]
    centres = np.array([geom.pos for geom in drawn if geom.objid == 0])
    used = segments[: strap["segments"]][segments[: strap["segments"], 6] > 0]
    assert len(used) == len(centres) > 3  # wrapped round the body: an arc of segments
    assert (used[:, :3] + used[:, 3:6]) / 2 == pytest.approx(centres, abs=1e-6)
    assert segments[strap["segments"] :, 6].tolist() == [pytest.approx(0.01)]
    expected = env.render()
    drawn_in_kernel = painter.paint_page_state(page_state.astype(np.float32).astype(np.float64))
    assert np.mean(np.abs(drawn_in_kernel.astype(int) - expected)) < 2.0
    red = [(p[..., 0] > 150) & (p[..., 1] < 110) & (p[..., 2] < 110) for p in (drawn_in_kernel.astype(int), expected)]
    overlap = (red[0] & red[1]).sum() / max(1, (red[0] | red[1]).sum())
    assert red[1].sum() > 8 and overlap > 0.8, (red[0].sum(), red[1].sum(), overlap)  # the strap, in place
    env.close()


def test_a_mujoco_without_tendon_polynomials_is_asked_only_what_it_has():
    from types import SimpleNamespace

    from gymview.renderers.mujoco_scene import _may_hang

    model = model_of(
        "<worldbody><site name='a'/><body pos='0 0 1'><freejoint/><geom size='.1'/><site name='b'/></body>"
        "</worldbody><tendon><spatial><site site='a'/><site site='b'/></spatial>"
        "<spatial range='0 2'><site site='a'/><site site='b'/></spatial></tendon>"
    )
    names = [n for n in dir(model) if n.startswith(("tendon_", "actuator_", "opt", "nactuator")) and "poly" not in n]
    before_3_7 = SimpleNamespace(**{name: getattr(model, name) for name in names})  # MuJoCo 3.6 has no *poly
    assert [_may_hang(before_3_7, tendon) for tendon in (0, 1)] == [_may_hang(model, tendon) for tendon in (0, 1)]
    assert _may_hang(model, 1)  # two sites, a length limit from 0: a string hanging under gravity


def test_replay_draws_an_older_mujoco_scene_from_the_poses_it_kept():
    env, painter = stepped("Hopper-v5")
    history = FrameHistory()
    history.keep_painter(1, painter)
    state = painter.page_state(painter.frame_of(env).state)
    header = {"seq": 0, "format": "scene", "scene": 1, "width": 96, "height": 72}
    history.add(header, np.asarray(state, "<f4").tobytes(), at=0.0)
    assert history.total_bytes == 4 * 35 + 512  # 4 moving bodies and the camera, 7 float32 each
    sent, jpeg = history.get(0, scene=2)  # the page has another scene now: a picture
    assert sent["format"] == "jpeg" and jpeg[:2] == b"\xff\xd8"
    env.close()


def test_a_vector_env_s_grid_has_a_mujoco_scene_in_each_cell():
    envs = [stepped("Hopper-v5", steps=3 + i)[0] for i in range(2)]
    grid = MujocoGridPainter.for_envs(envs)
    frame = grid.frame_of(envs, [1.0, 2.0])
    scene = grid.page_scene()
    assert scene["kind"] == "grid" and scene["cell"]["kind"] == "mujoco" and scene["state_dim"] == 35
    assert (scene["count"], scene["columns"], scene["width"]) == (2, 2, 2 * 96)
    page_state = grid.page_state(frame.state)
    assert page_state.size == 2 * 35 + 2 and page_state[-2:].tolist() == [1.0, 2.0]
    assert grid.paint_page_state(page_state).shape == grid.paint(frame.state).shape
    for env in envs:
        env.close()


def model_of(xml):
    return mujoco.MjModel.from_xml_string(f"<mujoco>{xml}</mujoco>")


def test_scenes_the_page_cannot_draw_faithfully_stay_pictures():
    limited_tendon = model_of(  # MuJoCo colours a grey tendon by how hard its limit pulls
        "<worldbody><site name='a'/><body pos='0 0 1'><freejoint/><geom size='.1'/><site name='b'/></body>"
        "</worldbody><tendon><spatial limited='true' range='.5 2'><site site='a'/><site site='b'/></spatial></tendon>"
    )
    aimed_light = model_of(  # turns to keep a body in its beam
        "<worldbody><body name='b'><freejoint/><geom size='.1'/></body><light mode='targetbody' target='b' pos='0 0 2'/>"
        "</worldbody>"
    )
    plain = model_of("<worldbody><body><freejoint/><geom size='.1'/></body></worldbody>")
    cameras = model_of("<worldbody><camera name='flat' projection='orthographic'/><camera name='lens'/>"
                       "<body><freejoint/><geom size='.1'/></body></worldbody>")  # fmt: skip
    assert page_scene(cameras, 64, 48, 0) is None and page_scene(cameras, 64, 48, 1) is not None
    assert page_scene(limited_tendon, 64, 48, -1) is None
    assert page_scene(aimed_light, 64, 48, -1) is None
    assert page_scene(plain, 64, 48, -1, flags={mujoco.mjtVisFlag.mjVIS_CONTACTPOINT: True}) is None
    assert page_scene(plain, 64, 48, -1) is not None


def test_a_mujoco_env_the_page_cannot_draw_says_why():
    from gymview.renderers.not_drawn import why_not_drawn_by_page

    options = gym.make("HalfCheetah-v5", render_mode="rgb_array", visual_options={mujoco.mjtVisFlag.mjVIS_CONTACTPOINT: True})
    assert why_not_drawn_by_page(options) == "the page cannot draw visual options changed from MuJoCo's defaults (visual_options)"
    assert why_not_drawn_by_page(gym.make("HalfCheetah-v5", render_mode="rgb_array")) is None
    flat = model_of("<worldbody><camera name='flat' projection='orthographic'/><body><freejoint/><geom size='.1'/></body></worldbody>")
    assert scene_or_why_not(flat, 64, 48, 0) == "an orthographic camera"


def test_a_site_is_drawn_as_the_shape_it_is_on_its_body():
    # sites of groups 0-2 are drawn (InvertedDoublePendulum's tip); those of other groups are hidden
    site = model_of("<worldbody><body pos='0 0 1'><freejoint/><geom size='.1'/>"
                    "<site type='box' size='.1 .2 .3' pos='0 0 .5' rgba='1 0 0 1'/><site group='4' size='.3'/>"
                    "</body></worldbody>")  # fmt: skip
    scene, poses = page_scene(site, 64, 48, -1)
    geom, box = scene["geoms"]
    assert poses.bodies.tolist() == [1] and geom["type"] == "sphere"
    assert box["type"] == "box" and box["size"] == pytest.approx([0.1, 0.2, 0.3]) and box["rgba"] == [1, 0, 0, 1]
    assert box["body"] == 0 and box["pos"] == pytest.approx([0, 0, 0.5]) and box["mesh"] == -1


def test_a_mesh_goes_as_base64_arrays():
    mesh = model_of(
        "<asset><mesh name='m' vertex='0 0 0  1 0 0  0 1 0  0 0 1'/></asset>"
        "<worldbody><body><freejoint/><geom type='mesh' mesh='m'/></body></worldbody>"
    )
    scene, poses = page_scene(mesh, 64, 48, -1)
    (shape,) = scene["meshes"]
    faces = np.frombuffer(base64.b64decode(shape["faces"]), "<i4").reshape(-1, 3)
    vertices = np.frombuffer(base64.b64decode(shape["vertices"]), "<f4").reshape(-1, 3)
    assert faces.shape == (4, 3) and vertices.shape == (4, 3) and faces.max() == 3
    assert scene["geoms"][0]["mesh"] == 0 and poses.bodies.tolist() == [1]


def test_a_heightfield_goes_as_its_grid_of_elevations_and_its_size():
    terrain = model_of(
        "<asset><hfield name='h' nrow='2' ncol='3' size='2 1 .5 .25' elevation='0 0 0  0 3 0'/></asset>"
        "<worldbody><geom type='hfield' hfield='h' pos='1 0 0'/><body><freejoint/><geom size='.1'/></body></worldbody>"
    )
    scene, _ = page_scene(terrain, 64, 48, -1)
    ground, ball = scene["geoms"]
    (grid,) = scene["hfields"]
    elevations = np.frombuffer(base64.b64decode(grid["data"]), "<f4")
    assert (grid["nrow"], grid["ncol"], grid["size"]) == (2, 3, [2, 1, 0.5, 0.25])
    assert elevations.tolist() == terrain.hfield_data.tolist() and elevations.max() == 1  # MuJoCo's, scaled to 0-1
    assert ground["type"] == "hfield" and ground["hfield"] == 0 and ground["pos"] == [1, 0, 0]
    assert ball["hfield"] == -1


def test_a_painter_of_a_scene_the_page_cannot_draw_has_no_page_states():
    env, painter = stepped("HalfCheetah-v5", visual_options={mujoco.mjtVisFlag.mjVIS_CONTACTPOINT: True})
    assert painter.page_scene() is None
    with pytest.raises(ValueError, match="cannot draw this MuJoCo scene"):
        painter.page_state(painter.frame_of(env).state)
    env.close()


def test_watch_sends_a_mujoco_env_s_frames_as_poses_from_the_first(shown):
    import gymview
    from live_helpers import sent_frames

    view = shown(max_size=96, draw="page")
    env = gym.make("HalfCheetah-v5", render_mode="rgb_array", width=96, height=72)
    watched = gymview.watch(env, view=view)
    watched.reset(seed=0)
    for _ in range(20):
        watched.step(watched.action_space.sample())
    watched.close()
    # the first frame made gymnasium's viewer (and its camera) with env.render(), and went as poses too
    assert {header["format"] for header in sent_frames(view.sent)} == {"scene"} and len(sent_frames(view.sent)) >= 2
    assert view._scene["kind"] == "mujoco" and view._scene["bodies"] == 7
    assert all(len(buffers[0]) == 224 * len(header.get("frames", [0])) for header, buffers in view.sent)
    assert view.sent[-1][0]["scene"] == view._scene["id"] and (view.sent[-1][0]["width"], view.sent[-1][0]["height"]) == (96, 72)


def test_a_page_without_webgl_gets_a_mujoco_env_s_frames_as_pictures(shown):
    import gymview
    from live_helpers import browser_says, sent_frames

    view = shown(max_size=96, fps=120)
    env = gym.make("HalfCheetah-v5", render_mode="rgb_array", width=96, height=72)
    watched = gymview.watch(env, view=view)
    watched.reset(seed=0)
    view.flush()
    browser_says(view, {"type": "ready", "v": 2, "client": "webview", "codecs": ["h264"]})  # no "webgl"
    for _ in range(3):
        watched.step(watched.action_space.sample())
        watched.feed.show(force=True)
    view.flush()
    resent = len(sent_frames(view.sent))
    browser_says(view, {"type": "ready", "v": 2, "client": "webview", "codecs": ["h264", "webgl"]})
    # the page that just said ready gets the latest frame again, as a picture, from the view's own thread: it
    # comes before the next frame only if the loop waits for it (on a loaded machine it may come after)
    wait_until(lambda: len(sent_frames(view.sent)) > resent, "the latest frame again, as a picture")
    watched.step(watched.action_space.sample())
    watched.feed.show(force=True)
    watched.close()
    formats = [header["format"] for header in sent_frames(view.sent) if header.get("replay") is None]
    assert formats[0] == "scene" and "scene" not in formats[1:4] and formats[-1] == "scene", formats
