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


def test_paused_the_slider_scrubs_the_kept_frames_and_the_charts_together(tmp_path, artifacts):
    root = tmp_path / "root"
    root.mkdir()
    (root / "charts.ipynb").write_text(json.dumps(notebook_of([LOOP])))
    with running_server(root) as server, chromium_page() as page:
        open_notebook(page, server, "charts.ipynb")
        start_cell(page, 0)
        page.wait_for_function(f"() => Number({LIVE}?.dataset.framesDrawn || 0) > 30", timeout=60_000)
        page.locator(".gymview").get_by_role("button", name="Pause").click()
        page.wait_for_function(f"() => {LIVE}.dataset.state === 'paused' && {LIVE}.dataset.chartCursor",
                               timeout=60_000)
        history = live(page)["history"]
        slider = page.locator(".gymview").get_by_role("slider", name="Replay")
        seen = []
        for index in range(history):
            slider.fill(str(index))
            page.wait_for_function(f"(i) => {LIVE}.dataset.replayIndex === String(i)", arg=index, timeout=30_000)
            state = live(page)
            assert state["charts"]
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
