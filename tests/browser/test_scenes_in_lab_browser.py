"""Scenes drawn by the page in a real JupyterLab: a watched CartPole and a watched HalfCheetah (whose
three.js module the page loads when its first MuJoCo scene arrives) show moving frames drawn from states."""

import pytest
from lab import canvas_luminance_spread, chromium_page, notebook_of, open_notebook, running_server, start_cell, wait_for_output

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = """
import time, gymnasium as gym, gymview
gymview.setup(quiet=True, human=False)
env = gymview.watch(gym.make(ENV, render_mode="rgb_array"), fps=30)
env.reset(seed=0)
started = time.monotonic()
# at least 5 s, and until the page has drawn up to frame 30 (it acks), however loaded the machine
while time.monotonic() - started < 5 or (env.view.stats["last_acked_seq"] < 30 and time.monotonic() - started < 150):
    _, _, terminated, truncated, _ = env.step(env.action_space.sample())
    if terminated or truncated:
        env.reset()
print("SENT", env.view.stats["frames_sent"], "AS", env.view.stats["sent_as"], "WEBGL",
      env.view.stats["modules_sent"], flush=True)
"""


@pytest.mark.parametrize("env_id, three_js", [("CartPole-v1", False), ("HalfCheetah-v5", True)])
def test_a_watched_env_is_drawn_by_the_page_from_its_states(tmp_path, env_id, three_js):
    root = tmp_path / "root"
    root.mkdir()
    (root / "scenes.ipynb").write_text(__import__("json").dumps(notebook_of([CELL.replace("ENV", repr(env_id))])))
    with running_server(root, "lab") as server, chromium_page() as page:
        open_notebook(page, server, "scenes.ipynb")
        start_cell(page, 0)
        words = wait_for_output(page, 0, "SENT", timeout_ms=180_000).split()
        assert words[words.index("AS") + 1] == "scene"
        assert words[words.index("WEBGL") + 1] == str(int(three_js))  # three.js goes only to a MuJoCo view, once
        page.wait_for_function(
            "() => Number(document.querySelector('.gymview')?.dataset.framesDrawn || 0) >= 10"
            " && document.querySelector('.gymview').dataset.format === 'scene'", timeout=60_000)
        assert canvas_luminance_spread(page) > 10
        # Chromium draws WebGL in software here: a MuJoCo picture is drawn at 3/4 of its size, on a canvas of
        # that size that the browser shows at the frame's size (the page does not scale each frame itself)
        backing, shown = page.evaluate("() => { const c = document.querySelector('.gymview canvas');"
                                       " return [[c.width, c.height], [c.clientWidth, c.clientHeight]]; }")
        assert shown == ([480, 480] if three_js else [512, 341])
        assert backing == ([360, 360] if three_js else shown)
        assert not [error for error in page.errors if "gymview" in error or "three" in error.lower()], page.errors


def test_a_page_is_sent_three_js_once_however_many_mujoco_views_it_shows(tmp_path):
    second = CELL.replace("ENV", "'Hopper-v5'").replace("env", "other")
    cells = [CELL.replace("ENV", "'HalfCheetah-v5'"), second]
    (tmp_path / "scenes.ipynb").write_text(__import__("json").dumps(notebook_of(cells)))
    with running_server(tmp_path, "lab") as server, chromium_page() as page:
        open_notebook(page, server, "scenes.ipynb")
        for cell, asked in ((0, "1"), (1, "0")):  # the second view's page already has it
            start_cell(page, cell)
            words = wait_for_output(page, cell, "SENT", timeout_ms=180_000).split()
            assert words[words.index("AS") + 1] == "scene" and words[words.index("WEBGL") + 1] == asked
        page.wait_for_function(
            "() => [...document.querySelectorAll('.gymview')].every("
            "(view) => Number(view.dataset.framesDrawn || 0) >= 10 && view.dataset.format === 'scene')",
            timeout=60_000)
        assert not [error for error in page.errors if "gymview" in error or "three" in error.lower()], page.errors


NO_WEBGL = """
for (const kind of [HTMLCanvasElement, globalThis.OffscreenCanvas].filter(Boolean)) {
  const getContext = kind.prototype.getContext;
  kind.prototype.getContext = function (type, ...rest) {
    return type.startsWith("webgl") ? null : getContext.call(this, type, ...rest);
  };
}
"""


def test_a_page_without_webgl_is_sent_a_mujoco_env_as_pictures(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "scenes.ipynb").write_text(__import__("json").dumps(notebook_of([CELL.replace("ENV", "'HalfCheetah-v5'")])))
    with running_server(root, "lab") as server, chromium_page() as page:
        page.add_init_script(NO_WEBGL)  # a VS Code webview or an old browser
        open_notebook(page, server, "scenes.ipynb")
        start_cell(page, 0)
        words = wait_for_output(page, 0, "SENT", timeout_ms=180_000).split()
        assert words[words.index("AS") + 1] in ("h264", "jpeg")
        page.wait_for_function(  # a loaded page drops some of the frames: the latest wins
            "() => Number(document.querySelector('.gymview')?.dataset.framesDrawn || 0) >= 5"
            " && document.querySelector('.gymview').dataset.format !== 'scene'", timeout=60_000)
        assert canvas_luminance_spread(page) > 10
