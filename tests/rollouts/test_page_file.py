"""A run as one HTML file: states kept exactly, nothing in the data able to end its script, and small."""

import html.parser
import json

import gymnasium as gym
import numpy as np
import pytest

from gymview.episodes.page_file import STEP, Segment, page_data, unpacked_states, unpacked_values, write_page

CARTPOLE = {"kind": "cartpole", "width": 600, "height": 400, "scale": 120.0, "pole_length": 120.0}


class Scripts(html.parser.HTMLParser):
    """The script elements of a page, as a browser's parser splits it."""

    def __init__(self):
        super().__init__()
        self.scripts, self._open = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self._open = [dict(attrs), ""]

    def handle_data(self, data):
        if self._open is not None:
            self._open[1] += data

    def handle_endtag(self, tag):
        if tag == "script" and self._open is not None:
            self.scripts.append(tuple(self._open))
            self._open = None


def test_states_come_back_to_a_fraction_of_a_pixel_and_the_missing_ones_missing(tmp_path):
    states = np.random.default_rng(0).normal(size=(50, 7)).astype(np.float32)
    states[3, 2] = np.nan  # a sprite not drawn (Taxi's), kept as it was
    path = write_page(tmp_path / "run.html", [Segment(CARTPOLE, states), Segment(CARTPOLE, states[:5])], fps=30)
    data = json.loads(page_data(path.read_text()))
    assert data["scenes"] == [CARTPOLE] and [s["scene"] for s in data["segments"]] == [0, 0]
    np.testing.assert_allclose(unpacked_states(data["segments"][0]), states, rtol=0, atol=STEP / 2)
    np.testing.assert_allclose(unpacked_states(data["segments"][1]), states[:5], rtol=0, atol=STEP / 2)


ATTACK = "<!--<script></script><script>alert(1)</script>"


def test_nothing_a_user_names_can_end_the_page_s_script(tmp_path):
    values = {ATTACK: np.array([1.0, np.nan, np.inf])}
    path = write_page(tmp_path / "run.html", [Segment(CARTPOLE, np.zeros((3, 4), np.float32))], 30, values, ATTACK)
    parser = Scripts()
    parser.feed(path.read_text())
    assert [attrs.get("type") for attrs, _ in parser.scripts] == ["application/json", "module"]
    assert "<" not in parser.scripts[0][1]  # no "<!--" to keep a browser's parser from the script's end either
    attack = ATTACK
    data = json.loads(parser.scripts[0][1])
    assert data["title"] == attack and unpacked_values(data) == {attack: [[1.0, None, None]]}
    assert "<title>&lt;!--&lt;script&gt;" in path.read_text()


def test_a_file_must_be_html():
    with pytest.raises(ValueError, match="must end in .html"):
        write_page("run.mp4", [Segment(CARTPOLE, np.zeros((1, 4), np.float32))], 30)
    with pytest.raises(ValueError, match=r"must be \[frames, numbers\]"):
        write_page("run.html", [Segment(CARTPOLE, np.zeros(4, np.float32))], 30)


def test_a_halfcheetah_run_takes_kilobytes_a_thousand_frames(tmp_path):
    pytest.importorskip("mujoco")
    from gymview.rollouts.mujoco_states import RolloutScene

    env = gym.make("HalfCheetah-v5")
    env.reset(seed=0)
    env.action_space.seed(0)
    qpos, values = [], []  # random actions: the hardest to compress; charted as a live view's clip charts a step
    for _ in range(2800):
        action = env.action_space.sample()
        _, reward, _, _, info = env.step(action)
        qpos.append(env.unwrapped.data.qpos.copy())
        values.append([reward, *action, *(info[name] for name in ("x_position", "x_velocity", "reward_ctrl"))])
    scene, columns = RolloutScene(env), np.array(values)
    states = scene.states(np.array(qpos))

    def size(frames):
        charted = {f"value{n}": columns[:frames, n] for n in range(columns.shape[1])}
        path = write_page(tmp_path / f"{frames}.html", [Segment(scene.scene, states[:frames])], 20, charted)
        return path.stat().st_size

    sizes = {frames: size(frames) for frames in (1800, 2800)}
    assert sizes[1800] <= 3_000_000
    assert sizes[2800] - sizes[1800] <= 150_000, sizes
