"""gymview.show_episode in JupyterLab, driven from Debian's Chromium: the slider and the arrow keys move
the video and the charts' cursor together, and the text at the cursor is the step table's row."""

import base64
import json

import gymnasium as gym
import numpy as np
import pytest
from lab import chromium_page, notebook_of, open_notebook, run_all_cells, running_server
from video_checks import psnr

import gymview
from gymview.episodes.clips import read_frames

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VALUES = ["reward", "return", "action", "value"]
PLAYER = f"""
import gymview
player = gymview.show_episode("videos/rl-video-episode-0.mp4", values={VALUES!r})
player
"""
# every player's state, read the way a person sees it
STATE = """() => Array.from(document.querySelectorAll(".gymview-episode")).map((el) => {
    const videos = Array.from(el.querySelectorAll("video"));
    return {
        frame: Number(el.dataset.frame ?? -1),
        cursorX: Number(el.dataset.cursorX ?? -1),
        chartsWidth: el.querySelector(".gymview-charts").getBoundingClientRect().width,
        slider: Number(el.querySelector(".gymview-episode-slider").value),
        sliderMax: Number(el.querySelector(".gymview-episode-slider").max),
        times: videos.map((video) => video.currentTime),
        settled: videos.every((video) => video.readyState >= 2 && !video.seeking),
        readout: Array.from(el.querySelectorAll(".gymview-readout-line")).map((line) => line.textContent),
    };
})"""
VIDEO_PIXELS = """() => {
    const video = document.querySelector(".gymview-episode video");
    const canvas = document.createElement("canvas");
    canvas.width = video.videoWidth; canvas.height = video.videoHeight;
    const context = canvas.getContext("2d");
    context.drawImage(video, 0, 0);
    const bytes = context.getImageData(0, 0, canvas.width, canvas.height).data;
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return [canvas.width, canvas.height, btoa(text)];
}"""


def record_episode(folder):
    env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), folder)
    observation, _ = env.reset(seed=4)
    done = False
    while not done:
        action = int(observation[2] + 0.1 * observation[3] > 0)
        observation, _, terminated, truncated, _ = env.step(action)
        env.log(value=round(float(observation[0]) * 100, 3))
        done = terminated or truncated
    env.close()
    return gymview.read_steps(folder / "rl-video-episode-0.mp4")


def parsed(readout):
    """'step 12 · reward 1 · value 60' -> {'step': 12.0, 'reward': 1.0, 'value': 60.0}"""
    found = {}
    for part in readout.split(" · "):
        name, _, value = part.rpartition(" ")
        if name:
            found[name] = float("nan") if value == "–" else float(value)
    return found


def settled_state(page, frame):
    page.wait_for_function(f"() => {{ const s = ({STATE})()[0]; return s && s.frame === {frame} && s.settled; }}",
                           timeout=30_000)
    return page.evaluate(STATE)[0]


def check_at(page, rows, frame, fps, video):
    state = settled_state(page, frame)
    assert state["slider"] == frame
    assert state["times"][0] == pytest.approx((frame + 0.5) / fps, abs=1e-3)  # the video moved there
    assert state["cursorX"] == pytest.approx((frame + 0.5) / len(rows) * state["chartsWidth"], abs=0.5)
    shown = parsed(state["readout"][0])
    row = rows[frame]
    assert set(shown) == {"step", *VALUES}
    for name, value in shown.items():
        assert value == pytest.approx(row[name], rel=1e-3, abs=1e-3, nan_ok=True), (frame, name)
    width, height, data = page.evaluate(VIDEO_PIXELS)
    drawn = np.frombuffer(base64.b64decode(data), np.uint8).reshape(height, width, 4)[..., :3]
    assert psnr(drawn, next(read_frames(video, frame, 1))) > 30, f"the video does not show frame {frame}"


@pytest.mark.parametrize("app", ["lab", "notebook"])  # Notebook 7 swallows arrow keys unless taken first
def test_the_slider_and_the_arrow_keys_move_the_video_and_the_cursor_to_the_table_s_row(tmp_path, artifacts, app):
    root = tmp_path / "root"
    (root / "videos").mkdir(parents=True)
    rows = record_episode(root / "videos")
    video = root / "videos" / "rl-video-episode-0.mp4"
    fps = 50  # CartPole's render_fps
    (root / "player.ipynb").write_text(json.dumps(notebook_of([PLAYER])))
    with running_server(root, app) as server, chromium_page() as page:
        open_notebook(page, server, "player.ipynb")
        run_all_cells(page)
        page.wait_for_function("() => document.querySelector('.gymview-episode video')?.readyState >= 2",
                               timeout=60_000)
        check_at(page, rows, 0, fps, video)
        assert page.evaluate(STATE)[0]["sliderMax"] == len(rows) - 1
        for frame in (len(rows) // 2, 7, len(rows) - 1):
            page.evaluate("""(frame) => {
                const slider = document.querySelector(".gymview-episode-slider");
                slider.value = String(frame);
                slider.dispatchEvent(new Event("input", {bubbles: true}));
            }""", frame)
            check_at(page, rows, frame, fps, video)
        page.locator(".gymview-episode").focus()
        page.keyboard.press("Home")
        check_at(page, rows, 0, fps, video)
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        check_at(page, rows, 3, fps, video)
        page.keyboard.press("ArrowLeft")
        check_at(page, rows, 2, fps, video)
        page.locator(".gymview-episode").screenshot(path=str(artifacts / "episode-player.png"))
        errors = [error for error in page.errors if "gymview" in error or "episode" in error]
        assert errors == []


CHARTS = """() => {
    const el = document.querySelector(".gymview-episode");
    const charts = el.querySelector(".gymview-charts");
    return {
        chips: Object.fromEntries(Array.from(el.querySelectorAll(".gymview-chip"))
            .map((chip) => [chip.textContent, chip.getAttribute("aria-pressed") === "true"])),
        height: charts.hidden ? 0 : charts.getBoundingClientRect().height,
        picture: charts.hidden ? "" : charts.toDataURL(),
        readout: el.querySelector(".gymview-readout-line").textContent,
    };
}"""
CHART_ROW = 56  # ROW_HEIGHT in js/charts.js: one chart a row


# A busy machine: from halfway on, the video presents no frame a callback hears of (it drops them), as a
# loaded Chromium did when the player was left playing at the end.
FRAMES_DROPPED_FROM_HALFWAY = """
const ask = HTMLVideoElement.prototype.requestVideoFrameCallback;
HTMLVideoElement.prototype.requestVideoFrameCallback = function (callback) {
  return ask.call(this, (now, metadata) => {
    if (!(this.currentTime >= this.duration / 2)) callback(now, metadata);
  });
};
"""


def test_play_stops_at_the_last_frame_even_when_the_video_ends_on_frames_it_dropped(tmp_path):
    root = tmp_path / "root"
    (root / "videos").mkdir(parents=True)
    rows = record_episode(root / "videos")
    (root / "player.ipynb").write_text(json.dumps(notebook_of([PLAYER])))
    with running_server(root) as server, chromium_page() as page:
        page.add_init_script(FRAMES_DROPPED_FROM_HALFWAY)
        open_notebook(page, server, "player.ipynb")
        run_all_cells(page)
        page.wait_for_function("() => document.querySelector('.gymview-episode video')?.readyState >= 2",
                               timeout=60_000)
        page.locator(".gymview-episode").get_by_role("button", name="Play").click()
        page.wait_for_function("() => document.querySelector('.gymview-episode video').ended", timeout=60_000)
        page.wait_for_function(  # the end is heard at once, whatever the frame callbacks said last
            "(last) => { const el = document.querySelector('.gymview-episode');"
            " return Number(el.dataset.frame) === last"
            " && el.querySelector('.gymview-controls .gymview-button').textContent.includes('Play'); }",
            arg=len(rows) - 1, timeout=5_000)
        assert not page.errors


def charts_showing(page, names):
    """The charts once the chips say exactly ``names`` are charted."""
    page.wait_for_function(
        f"(names) => {{ const chips = ({CHARTS})().chips;"
        " return Object.keys(chips).filter((name) => chips[name]).sort().join() === names.sort().join(); }",
        arg=names, timeout=30_000)
    return page.evaluate(CHARTS)


def test_a_click_on_a_chip_charts_that_value_or_takes_it_away_and_the_text_at_the_cursor_follows(tmp_path):
    root = tmp_path / "root"
    (root / "videos").mkdir(parents=True)
    rows = record_episode(root / "videos")
    (root / "player.ipynb").write_text(json.dumps(notebook_of([PLAYER.replace(repr(VALUES), "['reward', 'return']")])))
    with running_server(root) as server, chromium_page() as page:
        open_notebook(page, server, "player.ipynb")
        run_all_cells(page)
        page.wait_for_function("() => document.querySelector('.gymview-episode video')?.readyState >= 2",
                               timeout=60_000)
        frame = 9
        page.evaluate("""(frame) => {
            const slider = document.querySelector(".gymview-episode-slider");
            slider.value = String(frame);
            slider.dispatchEvent(new Event("input", {bubbles: true}));
        }""", frame)
        settled_state(page, frame)
        before = charts_showing(page, ["reward", "return"])
        assert {"reward", "return", "action", "value", "terminated"} <= set(before["chips"])
        assert before["height"] == pytest.approx(2 * CHART_ROW, abs=1)
        assert set(parsed(before["readout"])) == {"step", "reward", "return"}

        chips = page.locator(".gymview-episode .gymview-chip")
        chips.filter(has_text="value").click()  # charted now: a third chart, its value in the text
        added = charts_showing(page, ["reward", "return", "value"])
        assert added["height"] == pytest.approx(3 * CHART_ROW, abs=1) and added["picture"] != before["picture"]
        shown = parsed(added["readout"])
        assert set(shown) == {"step", "reward", "return", "value"}
        assert shown["value"] == pytest.approx(rows[frame]["value"], rel=1e-3, abs=1e-3)

        chips.filter(has_text="reward").click()  # taken away: its chart and its text go
        removed = charts_showing(page, ["return", "value"])
        assert removed["height"] == pytest.approx(2 * CHART_ROW, abs=1) and removed["picture"] != added["picture"]
        assert set(parsed(removed["readout"])) == {"step", "return", "value"}

        page.locator(".gymview-episode").focus()
        page.keyboard.press("ArrowRight")  # the cursor moves on with the charts picked
        settled_state(page, frame + 1)
        shown = parsed(page.evaluate(CHARTS)["readout"])
        assert set(shown) == {"step", "return", "value"}
        for name in shown:
            assert shown[name] == pytest.approx(rows[frame + 1][name], rel=1e-3, abs=1e-3), name
        errors = [error for error in page.errors if "gymview" in error or "episode" in error]
        assert errors == []


LISTS = [
    "import gymview\ngymview.show_video('videos')",
    "result = gymview.record_batch('CartPole-v1', lambda obs: int(obs[2] > 0), episodes=5, out='batch', seed=3,\n"
    "                              keep=lambda episode: episode.index != 2, workers=1, progress=False)\nresult",
]
TABLE = """(index) => {
    const el = document.querySelectorAll(".gymview-episodes")[index];
    if (!el) return null;
    const columns = Array.from(el.querySelectorAll("th")).map((th) => th.dataset.column);
    const rows = Array.from(el.querySelectorAll("tr[data-index]")).map((tr) =>
        Object.fromEntries(Array.from(tr.children).map((td, i) => [columns[i], td.textContent])));
    return {order: el.dataset.order, sortedBy: el.dataset.sortedBy, columns, rows};
}"""


def click_heading(page, index, column):
    page.locator(".gymview-episodes").nth(index).locator(f'th[data-column="{column}"]').click()


def test_tables_of_episodes_sort_by_a_column_and_open_an_episode_in_the_player(tmp_path):
    root = tmp_path / "root"
    env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), root / "videos",
                              episode_trigger=lambda episode: True)
    returns = []
    for seed, lean in enumerate((0.0, 0.5, -0.3)):
        observation, _ = env.reset(seed=seed)
        done, total = False, 0.0
        while not done:
            observation, reward, terminated, truncated, _ = env.step(int(observation[2] + lean * observation[3] > 0))
            total += reward
            done = terminated or truncated
        returns.append(total)
    env.close()
    (root / "lists.ipynb").write_text(json.dumps(notebook_of(LISTS)))
    with running_server(root) as server, chromium_page() as page:
        open_notebook(page, server, "lists.ipynb")
        run_all_cells(page)
        page.wait_for_function("() => document.querySelectorAll('.gymview-episodes').length === 2", timeout=120_000)
        folder = page.evaluate(TABLE, 0)
        assert [float(row["return"]) for row in folder["rows"]] == returns
        click_heading(page, 0, "return")  # the best first
        folder = page.evaluate(TABLE, 0)
        assert folder["sortedBy"] == "return"
        assert [float(row["return"]) for row in folder["rows"]] == sorted(returns, reverse=True)
        click_heading(page, 0, "return")
        assert [float(row["return"]) for row in page.evaluate(TABLE, 0)["rows"]] == sorted(returns)
        worst = int(page.evaluate(TABLE, 0)["order"].split(",")[0])
        page.locator(".gymview-episodes").nth(0).locator(f'tr[data-index="{worst}"]').click()
        page.wait_for_function(
            "(name) => document.querySelector('.gymview-episode .gymview-title')?.textContent === name",
            arg=f"rl-video-episode-{worst}.mp4", timeout=30_000)
        player = page.evaluate(STATE)[0]
        assert player["sliderMax"] == returns[worst]  # one frame per step, and the reset's
        # Play runs the video to the episode's end, the cursor following it, and stops there.
        page.wait_for_function("() => document.querySelector('.gymview-episode video').readyState >= 2",
                               timeout=30_000)
        page.locator(".gymview-episode").get_by_role("button", name="Play").click()
        page.wait_for_function(
            "(last) => { const el = document.querySelector('.gymview-episode');"
            " return Number(el.dataset.frame) === last && el.querySelector('video').paused; }",
            arg=int(returns[worst]), timeout=60_000)
        ended = page.evaluate(STATE)[0]
        assert ended["slider"] == returns[worst] and ended["readout"][0].endswith("terminated")

        batch = page.evaluate(TABLE, 1)
        assert batch["columns"][:6] == ["episode", "seed", "steps", "return", "terminated", "truncated"]
        click_heading(page, 1, "steps")
        ordered = page.evaluate(TABLE, 1)["rows"]
        assert [int(row["steps"]) for row in ordered] == sorted((int(row["steps"]) for row in ordered), reverse=True)
        not_kept = page.locator(".gymview-episodes").nth(1).locator('tr[data-index="2"]')
        assert "gymview-openable" not in (not_kept.get_attribute("class") or "")  # not kept: nothing to open
        page.locator(".gymview-episodes").nth(1).locator('tr[data-index="4"]').click()
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.gymview-episode .gymview-title'))"
            ".some((title) => title.textContent === 'episode-0004.mp4')", timeout=30_000)
        steps = int(next(row["steps"] for row in ordered if row["episode"] == "4"))
        assert page.evaluate(STATE)[1]["sliderMax"] == steps
        errors = [error for error in page.errors if "gymview" in error or "episode" in error]
        assert errors == []


COMPARE = """
import gymview
def balance(obs):
    return int(obs[2] + 0.2 * obs[3] > 0)
def lean(obs):
    return int(obs[2] > 0.05)
result = gymview.compare({"balance": balance, "lean": lean}, "CartPole-v1", seed=2, record="compared",
                         values=["reward", "return", "action"])
result
"""


def test_compare_shows_the_policies_side_by_side_on_one_slider_with_their_rows(tmp_path, artifacts):
    root = tmp_path / "root"
    root.mkdir()
    (root / "compare.ipynb").write_text(json.dumps(notebook_of([COMPARE])))
    with running_server(root) as server, chromium_page() as page:
        open_notebook(page, server, "compare.ipynb")
        run_all_cells(page)
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.gymview-episode video')).filter((v) => v.readyState >= 2)"
            ".length === 2", timeout=120_000)
        tables = {name: gymview.read_steps(root / "compared" / f"{name}-seed-2.mp4") for name in ("balance", "lean")}
        longest = max(len(rows) for rows in tables.values())
        assert page.evaluate(STATE)[0]["sliderMax"] == longest - 1
        for frame in (5, longest - 1, 0):
            page.evaluate("""(frame) => {
                const slider = document.querySelector(".gymview-episode-slider");
                slider.value = String(frame);
                slider.dispatchEvent(new Event("input", {bubbles: true}));
            }""", frame)
            state = settled_state(page, frame)
            for index, (name, rows) in enumerate(tables.items()):
                shown_frame = min(frame, len(rows) - 1)  # an episode that ended holds its last frame
                assert state["times"][index] == pytest.approx((shown_frame + 0.5) / 50, abs=1e-3)
                label, _, text = state["readout"][index].partition(": ")
                assert label == name
                shown = parsed(text)
                for key in ("step", "reward", "return", "action"):
                    assert shown[key] == pytest.approx(rows[shown_frame][key], nan_ok=True), (name, frame, key)
            if frame == 5:
                page.locator(".gymview-episode").screenshot(path=str(artifacts / "compare-player.png"))
        errors = [error for error in page.errors if "gymview" in error or "episode" in error]
        assert errors == []
