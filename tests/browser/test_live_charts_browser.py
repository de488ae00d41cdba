"""The live view's replay charts in JupyterLab, from Debian's Chromium: paused, the replay slider scrubs
the kept frames and the charts' cursor together, and the values at the cursor are the step table's row
of the frame shown."""

import json
import re

import pytest
from lab import chromium_page, notebook_of, open_notebook, running_server, start_cell, wait_for_output

import gymview

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOOP = """
import time, gymnasium as gym, gymview
env = gymview.watch(gym.make("MountainCar-v0", render_mode="rgb_array"), record="videos")
obs, _ = env.reset(seed=0)
try:
    while True:
        obs, reward, terminated, truncated, _ = env.step(2 if obs[1] >= 0 else 0)
        env.log(speed=round(float(obs[1]) * 1000, 4))
        time.sleep(0.002)  # episodes longer than a frame's interval: frames from their middle too
        if terminated or truncated:
            obs, _ = env.reset()
except gymview.Stopped:
    print("Stopped")
finally:
    env.close()
"""
LIVE = "document.querySelector('.gymview')"


def live(page):
    return page.evaluate(f"""() => {{
        const el = {LIVE};
        return {{state: el.dataset.state, cursor: el.dataset.chartCursor, replay: el.dataset.replayIndex,
                 readout: el.querySelector(".gymview-readout").textContent,
                 status: el.querySelector(".gymview-status").textContent,
                 charts: !el.querySelector(".gymview-charts").hidden,
                 history: Number(el.querySelector(".gymview-replay").max) + 1}};
    }}""")


def parsed(readout):
    """'step 57 · reward -1 · speed –' -> {'step': 57.0, 'reward': -1.0, 'speed': nan}"""
    parts = (part.rpartition(" ") for part in readout.split(" · "))
    return {name: float("nan") if value == "–" else float(value) for name, _, value in parts if name}


def paused_replays(page):
    """Pause the running view once it drew 30 frames, then move the replay slider over every kept frame:
    yields (index, the view's state) for each, its charts shown."""
    page.wait_for_function(f"() => Number({LIVE}?.dataset.framesDrawn || 0) > 30", timeout=60_000)
    page.locator(".gymview").get_by_role("button", name="Pause").click()
    page.wait_for_function(f"() => {LIVE}.dataset.state === 'paused' && {LIVE}.dataset.chartCursor",
                           timeout=60_000)
    history = live(page)["history"]
    slider = page.locator(".gymview").get_by_role("slider", name="Replay")
    for index in range(history):
        slider.fill(str(index))
        page.wait_for_function(f"(i) => {LIVE}.dataset.replayIndex === String(i)", arg=index, timeout=30_000)
        state = live(page)
        assert state["charts"]
        yield index, state


def test_paused_the_slider_scrubs_the_kept_frames_and_the_charts_together(tmp_path, artifacts):
    root = tmp_path / "root"
    root.mkdir()
    (root / "charts.ipynb").write_text(json.dumps(notebook_of([LOOP])))
    with running_server(root) as server, chromium_page() as page:
        open_notebook(page, server, "charts.ipynb")
        start_cell(page, 0)
        seen = []
        for index, state in paused_replays(page):
            history = state["history"]
            # the status line counts episodes from 1 (as the view does), the video files from 0
            episode = int(re.search(r"episode ([\d,]+)", state["status"]).group(1).replace(",", "")) - 1
            seen.append((float(state["cursor"]), {**parsed(state["readout"]), "episode": episode}))
            if index == history // 2:
                page.locator(".gymview").screenshot(path=str(artifacts / "live-replay-charts.png"))
        cursors = [cursor for cursor, _ in seen]
        assert cursors == sorted(cursors) and len(set(cursors)) == history  # older frames sit further left
        page.locator(".gymview").get_by_role("button", name="Stop").click()
        wait_for_output(page, 0, "Stopped")
        page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
                               ".status === 'idle'", timeout=60_000)
    for _, shown in seen:  # each frame's values are the table's row of its step
        rows = gymview.read_steps(root / "videos" / f"MountainCar-v0-episode-{int(shown['episode'])}.mp4")
        row = next(row for row in rows if row["step"] == shown["step"])
        for name in ("reward", "return", "action", "speed"):
            assert shown[name] == pytest.approx(row[name], rel=1e-3, abs=1e-3, nan_ok=True), name


VECTOR_LOOP = """
import time, numpy as np, gymnasium as gym, gymview
envs = gymview.watch(gym.make_vec("CartPole-v1", 2, render_mode="rgb_array"))
obs, _ = envs.reset(seed=0)
try:
    while True:
        envs.log(tilt=np.round(obs[:, 2] * 1000, 3))  # one per sub-env: tilt[0], tilt[1]
        obs, rewards, terminated, truncated, _ = envs.step((obs[:, 2] > 0).astype(int))
        time.sleep(0.002)
except gymview.Stopped:
    print("Stopped")
finally:
    envs.close()
"""


def test_paused_a_vector_env_s_replay_charts_each_sub_env_s_columns(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "vector.ipynb").write_text(json.dumps(notebook_of([VECTOR_LOOP])))
    with running_server(root) as server, chromium_page() as page:
        open_notebook(page, server, "vector.ipynb")
        start_cell(page, 0)
        steps = []
        for _, state in paused_replays(page):
            history = state["history"]
            shown = parsed(state["readout"])
            # six columns of the sub-envs', never their ends: each one's reward and return first
            names = set(shown) - {"step"}
            assert len(names) == 6 and {"reward[0]", "return[0]", "reward[1]", "return[1]"} <= names
            assert not any(name.startswith(("terminated", "truncated")) for name in names)
            assert shown["reward[0]"] in (0.0, 1.0) and shown["return[1]"] >= 0
            steps.append(shown["step"])
        assert steps == sorted(steps) and len(set(steps)) == history  # one row a vector step, each frame its own
        page.locator(".gymview").get_by_role("button", name="Stop").click()
        wait_for_output(page, 0, "Stopped")
        errors = [error for error in page.errors if "gymview" in error]
        assert errors == []
