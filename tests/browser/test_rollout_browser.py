"""A rollout played by the page: saved as one HTML file and opened from disk in Chromium with every network
request blocked, and shown by show_rollout in JupyterLab; drawn as env.render() draws the same states."""

import base64
import json

import gymnasium as gym
import numpy as np
import pytest
from lab import chromium_page, notebook_of, open_notebook, run_all_cells, running_server
from PIL import Image
from random_rollouts import random_rollout
from test_scene3d_browser import ssim

import gymview

mujoco = pytest.importorskip("mujoco")

pytestmark = [pytest.mark.browser]

PLAYER = """() => {
    const el = document.querySelector(".gymview-rollout");
    const canvas = el.querySelector(".gymview-rollout-canvas");
    const bytes = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return {
        frame: Number(el.dataset.frame), drawn: Number(el.dataset.drawn ?? 0), focus: Number(el.dataset.focus),
        playing: el.dataset.playing === "true", readout: el.querySelector(".gymview-readout").textContent,
        slider: Number(el.querySelector(".gymview-episode-slider").value),
        charts: el.querySelector(".gymview-charts").hidden ? 0 : el.querySelector(".gymview-charts").height,
        width: canvas.width, height: canvas.height, pixels: btoa(text),
    };
}"""


@pytest.fixture(autouse=True, scope="module")
def _software_opengl(software_opengl):
    """env.render() through OSMesa (tests/conftest.py)."""


def rendered_at(env, qpos):
    data = env.unwrapped.data
    data.qpos[:] = qpos
    mujoco.mj_forward(env.unwrapped.model, data)
    return env.render()


def state(page):
    found = page.evaluate(PLAYER)
    found["pixels"] = np.frombuffer(base64.b64decode(found["pixels"]), np.uint8).reshape(
        found["height"], found["width"], 4)[..., :3]  # fmt: skip
    return found


def wait_drawn(page, frame, focus=-1):
    page.wait_for_function(
        f"""() => {{ const el = document.querySelector(".gymview-rollout");
            return el && Number(el.dataset.frame) === {frame} && Number(el.dataset.focus) === {focus}
                && Number(el.dataset.drawn ?? 0) > 0; }}""",
        timeout=60_000,
    )
    return state(page)


def assert_shows(found, env, qpos, name, artifacts, bar=0.85):
    expected = np.asarray(Image.fromarray(rendered_at(env, qpos)).resize(found["pixels"].shape[1::-1], Image.BOX))
    Image.fromarray(np.concatenate([found["pixels"], expected], axis=1)).save(artifacts / f"{name}.png")
    assert ssim(found["pixels"], expected) >= bar, name


def test_a_saved_rollout_plays_from_disk_with_no_network(tmp_path, artifacts):
    env, qpos, rewards = random_rollout("HalfCheetah-v5", 60, render_mode="rgb_array")
    path = gymview.show_rollout(env, qpos, values={"reward": rewards}).save(tmp_path / "cheetah.html")
    with chromium_page() as page:
        asked = []

        def offline(route):
            asked.append(route.request.url)
            route.continue_() if route.request.url == path.as_uri() else route.abort()

        page.route("**/*", offline)
        page.goto(path.as_uri())
        first = wait_drawn(page, 0)
        assert first["charts"] > 0 and first["readout"].startswith("frame 1/60 · reward ")
        assert_shows(first, env, qpos[0, 0], "rollout-file-frame-0", artifacts)
        page.locator(".gymview-rollout").focus()
        page.keyboard.press("End")
        last = wait_drawn(page, 59)
        assert last["slider"] == 59
        assert_shows(last, env, qpos[59, 0], "rollout-file-frame-59", artifacts)
        page.keyboard.press("ArrowLeft")
        assert wait_drawn(page, 58)["readout"] == f"frame 59/60 · reward {float(f'{rewards[58, 0]:.4g}'):g}"
        page.keyboard.press("Home")
        wait_drawn(page, 0)
        page.click("text=Play")  # plays to the end at the env's 20 frames a second, and stops there
        page.wait_for_function("() => document.querySelector('.gymview-rollout').dataset.playing === 'false'",
                               timeout=30_000)
        played = state(page)
        assert played["frame"] == 59 and played["drawn"] > 4
        assert asked == [path.as_uri()] and page.errors == []


def test_a_grid_shows_one_env_alone_on_a_click_and_all_again_on_the_next(tmp_path, artifacts):
    env, qpos, rewards = random_rollout("Hopper-v5", 30, envs=4, render_mode="rgb_array")
    title = "<!--<script></script><b>hoppers</b>"  # a title the page shows as text, whatever it holds
    path = gymview.show_rollout(env, qpos, values={"reward": rewards}, title=title).save(tmp_path / "hoppers.html")
    with chromium_page() as page:
        page.goto(path.as_uri())
        grid = wait_drawn(page, 0)
        assert page.locator(".gymview-title").text_content() == title
        assert grid["readout"].startswith("frame 1/30 · mean of 4 envs · reward")
        canvas = page.locator(".gymview-rollout-canvas").bounding_box()
        page.mouse.click(canvas["x"] + canvas["width"] * 0.75, canvas["y"] + canvas["height"] * 0.75)  # env 3
        page.locator(".gymview-rollout").focus()
        page.keyboard.press("End")
        alone = wait_drawn(page, 29, focus=3)
        assert alone["readout"] == f"frame 30/30 · env 3 · reward {float(f'{rewards[29, 3]:.4g}'):g}"
        assert_shows(alone, env, qpos[29, 3], "rollout-grid-env-3", artifacts)
        page.mouse.click(canvas["x"] + 5, canvas["y"] + 5)
        wait_drawn(page, 29, focus=-1)
        assert page.errors == []


NOTEBOOK = """
import gymnasium as gym, numpy as np, gymview
env = gym.make("InvertedDoublePendulum-v5")
env.reset(seed=0)
qpos = np.array([[0.02 * t, 0.05 * t, -0.05 * t] for t in range(40)])
player = gymview.show_rollout(env, qpos, values={"x": qpos[:, 0]})
player
"""


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_show_rollout_in_jupyterlab_and_notebook_7_draws_and_tells_the_kernel_the_frame(tmp_path, app):
    (tmp_path / "rollout.ipynb").write_text(json.dumps(notebook_of([NOTEBOOK, "print('frame', player.frame)"])))
    with running_server(tmp_path, app) as server, chromium_page() as page:
        open_notebook(page, server, "rollout.ipynb")
        run_all_cells(page)
        wait_drawn(page, 0)
        page.locator(".gymview-rollout").focus()
        for _ in range(5):
            page.keyboard.press("ArrowRight")
        found = wait_drawn(page, 5)
        assert found["readout"] == "frame 6/40 · x 0.1" and found["pixels"].std() > 5
        page.locator(".jp-Cell").nth(1).click()
        page.keyboard.press("Shift+Enter")
        page.wait_for_function("() => document.body.innerText.includes('frame 5')", timeout=60_000)
        assert [error for error in page.errors if "gymview" in error] == []


def test_an_exported_episode_s_page_draws_its_kept_states_as_env_render_does(tmp_path, artifacts):
    from video_checks import psnr

    from gymview.episodes.kept_states import read_states
    from gymview.renderers import renderer_for

    env = gymview.RecordVideo(gym.make("Acrobot-v1", render_mode="rgb_array", max_episode_steps=30), tmp_path / "v")
    env.reset(seed=0)
    for _ in range(30):
        env.step(env.action_space.sample())
    env.close()
    video = tmp_path / "v" / "rl-video-episode-0.mp4"
    path = gymview.export_episode(video, tmp_path / "acrobot.html", values=["reward", "return"])
    _, states = read_states(video)
    renderer = renderer_for("Acrobot-v1")
    with chromium_page() as page:
        page.goto(path.as_uri())
        page.locator(".gymview-rollout").focus()
        for frame in (0, 17):
            page.keyboard.press("ArrowRight" if frame else "Home")
            for _ in range(frame - 1):
                page.keyboard.press("ArrowRight")
            found = wait_drawn(page, frame)
            expected = renderer.render(states[frame][None].astype(np.float64))[0]
            Image.fromarray(np.concatenate([found["pixels"], expected], axis=1)).save(artifacts / f"acrobot-{frame}.png")
            assert found["pixels"].shape == expected.shape and psnr(found["pixels"], expected) >= 28
        assert found["readout"].startswith("frame 18/31 · reward -1 · return -17") and page.errors == []


def test_a_live_view_s_clip_plays_its_scenes_one_after_another_from_disk(tmp_path):
    from live_helpers import ShownView

    from gymview.renderers import Drawing, TiledDrawing, TiledPainter, renderer_for

    renderer = renderer_for("CartPole-v1")
    view = ShownView(fps=120)
    for n in range(3):  # a CartPole's frames, then a grid's: two scenes, played in turn
        view.push(Drawing(renderer, np.array([0.3 * n, 0.0, 0.1, 0.0])), force=True)
        view.flush()
    view.push(TiledDrawing.of(TiledPainter(renderer, 2), [np.zeros(4), np.ones(4)], [0.0, 1.0]), force=True)
    view.flush()
    path = view.save_clip(tmp_path / "clip.html")
    view.close()
    with chromium_page() as page:
        page.route("**/*", lambda route: route.continue_() if route.request.url == path.as_uri() else route.abort())
        page.goto(path.as_uri())
        first = wait_drawn(page, 0)
        page.locator(".gymview-rollout").focus()
        page.keyboard.press("End")
        last = wait_drawn(page, 3)
        assert (first["width"], first["height"]) != (last["width"], last["height"])  # a CartPole, then the grid
        assert last["readout"] == "frame 4/4" and page.errors == []
