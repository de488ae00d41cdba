"""MuJoCo scenes drawn by the page with three.js (js/scene3d.js, bundled with js/scene.js by esbuild) in
Chromium's WebGL (SwiftShader here), compared by SSIM with gymnasium's env.render() at the same states, at the
size the live view shows them."""


import gymnasium as gym
import numpy as np
import pytest
from lab import drawn_by_page, scene_page
from mujoco_models import (
    ant_beside_a_crate,
    ant_beside_a_painted_box,
    ant_on_rough_ground,
    ant_under_a_following_light,
    ant_with_a_mesh_body,
    ant_with_tendons,
)
from PIL import Image

from gymview.image.frames import downsample
from gymview.renderers.mujoco import MujocoGridPainter, MujocoPainter

pytestmark = [pytest.mark.browser]

MAX_SIZE = 512


@pytest.fixture(autouse=True, scope="module")
def _software_opengl(software_opengl):
    """env.render() through OSMesa (tests/conftest.py)."""


@pytest.fixture(scope="module")
def page():
    with scene_page() as page:
        yield page


def ssim(a: np.ndarray, b: np.ndarray, window: int = 7) -> float:
    """The mean structural similarity of two RGB pictures' luma (Wang et al. 2004, a uniform 7x7 window, as
    scikit-image computes it by default)."""
    weights = np.array([0.299, 0.587, 0.114])
    x, y = (picture.astype(np.float64) @ weights for picture in (a, b))

    def local_mean(image):
        total = np.cumsum(np.cumsum(np.pad(image, ((1, 0), (1, 0))), 0), 1)
        sums = total[window:, window:] - total[:-window, window:] - total[window:, :-window] + total[:-window, :-window]
        return sums / window**2

    count = window**2
    mx, my = local_mean(x), local_mean(y)
    vx = (local_mean(x * x) - mx * mx) * count / (count - 1)
    vy = (local_mean(y * y) - my * my) * count / (count - 1)
    cxy = (local_mean(x * y) - mx * my) * count / (count - 1)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    score = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return float(score.mean())


def test_ssim_tells_alike_pictures_from_unlike_ones():
    rng = np.random.default_rng(0)
    picture = rng.integers(0, 256, (40, 50, 3)).astype(np.uint8)
    assert ssim(picture, picture) == pytest.approx(1.0)
    assert ssim(picture, 255 - picture) < 0
    assert 0.5 < ssim(picture, np.clip(picture.astype(int) + 10, 0, 255).astype(np.uint8)) < 1.0


def states_along(env_id, count=4, steps=15, seed=0, **kwargs):
    """``count`` (page state, env.render()) pairs along a random episode, ``steps`` apart, and the painter
    (``kwargs`` for gym.make)."""
    env = gym.make(env_id, render_mode="rgb_array", **kwargs)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    painter = MujocoPainter.for_env(env)
    env.render()  # gymnasium makes its camera at the first render
    pairs = []
    while len(pairs) < count:
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()
        pairs.append((painter.page_state(painter.frame_of(env).state), env.render()))
    env.close()
    return painter, pairs


def assert_drawn_as_rendered(page, painter, pairs, name, artifacts, same=lambda drawn, expected: None):
    """Each of ``pairs`` drawn by the page scores an SSIM of at least 0.85 against env.render(), and passes
    ``same(drawn, expected)``."""
    scene = {**painter.page_scene(), "id": 1}
    scores = []
    for n, (state, rendered) in enumerate(pairs):
        expected = downsample(rendered, MAX_SIZE)
        height, width = expected.shape[:2]
        drawn = drawn_by_page(page, scene, state.astype(np.float32), width, height)
        scores.append(ssim(drawn, expected))
        same(drawn, expected)
        if n == 0:
            Image.fromarray(np.concatenate([drawn, expected], axis=1)).save(artifacts / f"{name}-page-vs-render.png")
    print(name, "SSIM", [round(score, 3) for score in scores])
    assert min(scores) >= 0.85, (name, [round(score, 3) for score in scores])
    assert not page.errors, page.errors


@pytest.mark.parametrize("env_id", ["HalfCheetah-v5", "Hopper-v5", "Ant-v5", "Humanoid-v5", "InvertedDoublePendulum-v5"])
def test_the_page_draws_each_mujoco_env_as_env_render_does(page, env_id, artifacts):
    painter, pairs = states_along(env_id)
    assert_drawn_as_rendered(page, painter, pairs, env_id, artifacts)


def test_the_page_draws_a_heightfield_as_env_render_does(page, tmp_path, artifacts):
    painter, pairs = states_along("Ant-v5", xml_file=str(ant_on_rough_ground(tmp_path)))
    assert painter.page_scene()["hfields"], "the page draws the heightfield itself"
    assert_drawn_as_rendered(page, painter, pairs, "Ant-rough-ground", artifacts)


def test_the_page_draws_a_mesh_as_env_render_does(page, tmp_path, artifacts):
    painter, pairs = states_along("Ant-v5", xml_file=str(ant_with_a_mesh_body(tmp_path)))
    assert len(painter.page_scene()["meshes"]) == 1
    assert_drawn_as_rendered(page, painter, pairs, "Ant-mesh-body", artifacts)


def test_the_page_draws_spatial_tendons_as_env_render_does(page, tmp_path, artifacts):
    painter, pairs = states_along("Ant-v5", xml_file=str(ant_with_tendons(tmp_path)))
    # the strap: 3 straight segments and an arc of up to 29 round the body (MuJoCo 4 draws one); the string: 1
    assert [tendon["segments"] for tendon in painter.page_scene()["tendons"]] == [32, 1]

    def same_strap(drawn, expected):  # the red strap, too thin for SSIM to miss: where each picture shows it
        red = [(p[..., 0] > 150) & (p[..., 1] < 110) & (p[..., 2] < 110) for p in (drawn.astype(int), expected)]
        overlap = (red[0] & red[1]).sum() / max(1, (red[0] | red[1]).sum())
        assert red[1].sum() > 100 and overlap > 0.5, (red[0].sum(), red[1].sum(), overlap)

    assert_drawn_as_rendered(page, painter, pairs, "Ant-tendons", artifacts, same_strap)


def test_the_page_draws_a_light_that_follows_a_body_as_env_render_does(page, tmp_path, artifacts):
    painter, pairs = states_along("Ant-v5", xml_file=str(ant_under_a_following_light(tmp_path)))

    def same_spot(drawn, expected):  # the warm spotlight's pool round the Ant: where each picture shows it
        warm = [(p[..., 0] - p[..., 2] > 60) for p in (drawn.astype(int), expected.astype(int))]
        overlap = (warm[0] & warm[1]).sum() / max(1, (warm[0] | warm[1]).sum())
        assert warm[1].sum() > 500 and overlap > 0.6, (warm[0].sum(), warm[1].sum(), overlap)

    assert_drawn_as_rendered(page, painter, pairs, "Ant-following-light", artifacts, same_spot)


def test_the_page_puts_a_cube_texture_of_one_picture_on_every_face_as_mujoco_does(page, tmp_path, artifacts):
    painter, pairs = states_along("Ant-v5", xml_file=str(ant_beside_a_crate(tmp_path)))
    crate = next(t for t in painter.page_scene()["textures"] if t["type"] == "cube" and t["width"] == t["height"])
    assert crate["width"] == 32

    def same_crate(drawn, expected):  # the orange crate: its faces in view are orange in both pictures, none black
        orange = [(p[..., 0] - p[..., 2] > 60) & (p[..., 1] > 40) for p in (drawn.astype(int), expected.astype(int))]
        overlap = (orange[0] & orange[1]).sum() / max(1, (orange[0] | orange[1]).sum())
        assert orange[1].sum() > 2000 and overlap > 0.8, (orange[0].sum(), orange[1].sum(), overlap)

    assert_drawn_as_rendered(page, painter, pairs, "Ant-crate", artifacts, same_crate)


def test_the_page_paints_a_mesh_by_its_own_texture_coordinates_as_mujoco_does(page, tmp_path, artifacts):
    painter, pairs = states_along("Ant-v5", xml_file=str(ant_beside_a_painted_box(tmp_path)))
    assert "texcoords" in painter.page_scene()["meshes"][0]
    quarters = {  # the picture's four colours, however lit: which channels stand out
        "red": lambda r, g, b: (r > g + 60) & (r > b + 60),
        "green": lambda r, g, b: (g > r + 60) & (g > b + 40),
        "blue": lambda r, g, b: (b > r + 40) & (b > g + 20),
        "yellow": lambda r, g, b: (r > b + 80) & (g > b + 80),
    }

    def same_quarters(drawn, expected):  # each quarter's colour where env.render() shows it, and there in the page
        for name, shows in quarters.items():
            near = [shows(*np.moveaxis(p.astype(int), 2, 0)) for p in (drawn, expected)]
            overlap = (near[0] & near[1]).sum() / max(1, (near[0] | near[1]).sum())
            assert near[1].sum() > 100 and overlap > 0.5, (name, near[0].sum(), near[1].sum(), overlap)

    assert_drawn_as_rendered(page, painter, pairs, "Ant-painted-box", artifacts, same_quarters)


def test_the_page_draws_a_robot_hand_of_meshes_and_pictures_as_env_render_does(page, artifacts):
    robotics = pytest.importorskip("gymnasium_robotics")
    gym.register_envs(robotics)
    painter, pairs = states_along("AdroitHandDoor-v1", count=2)  # a hand of meshes, a door and table of pictures
    scene = painter.page_scene()
    assert len(scene["meshes"]) >= 10 and sum(texture["type"] == "cube" for texture in scene["textures"]) >= 5
    assert_drawn_as_rendered(page, painter, pairs, "AdroitHandDoor", artifacts)


def test_a_vector_env_s_grid_draws_each_mujoco_sub_env_in_its_cell(page):
    envs = [gym.make("Hopper-v5", render_mode="rgb_array") for _ in range(2)]
    for seed, env in enumerate(envs):
        env.reset(seed=seed)
        env.render()
    grid = MujocoGridPainter.for_envs(envs)
    frame = grid.frame_of(envs, [3.0, 14.0])
    scene = {**grid.page_scene(), "id": 1}
    expected = downsample(grid.paint(frame.state), MAX_SIZE)
    height, width = expected.shape[:2]
    drawn = drawn_by_page(page, scene, grid.page_state(frame.state).astype(np.float32), width, height)
    below_labels = slice(height // 8, height)
    for columns in (slice(0, width // 2), slice(width // 2, width)):
        assert ssim(drawn[below_labels, columns], expected[below_labels, columns]) >= 0.80
    assert drawn[2:12, 4:40].min() < 50 and drawn[2:12, 4:40].max() > 200  # a label: white text on black
    assert not page.errors, page.errors
    for env in envs:
        env.close()
