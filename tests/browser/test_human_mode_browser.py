"""`%load_ext gymview` then render_mode="human": the env shows in the inline view, no window, no hang."""

import json
import time

import pytest
from lab import (
    canvas_luminance_spread,
    chromium_page,
    open_notebook,
    run_all_cells,
    running_server,
    still_images,
    widget_counters,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SOURCE = """
%load_ext gymview
import gymnasium as gym
env = gym.make("CartPole-v1", render_mode="human")
obs, info = env.reset(seed=0)
for _ in range(150):
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    if terminated or truncated:
        obs, info = env.reset()
env.close()
print("HUMAN", env.render_mode, type(env.view).__name__)
"""


def test_human_mode_renders_inline(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": SOURCE}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    (root / "human.ipynb").write_text(json.dumps(notebook))
    with running_server(root, "lab") as server, chromium_page() as page:
        open_notebook(page, server, "human.ipynb")
        run_all_cells(page)
        # read the live view while it runs: env.close() replaces it by its last frame, a still image
        counters, spread = None, 0.0
        deadline = time.monotonic() + 120
        while not page.evaluate("() => document.body.innerText.includes('HUMAN human LiveView')"):
            assert time.monotonic() < deadline, "the human-mode cell did not finish in 120 s"
            now = widget_counters(page)
            shown = canvas_luminance_spread(page) if now is not None else None
            if shown is not None:  # None: the view closed between the two reads
                counters, spread = now, shown
            page.wait_for_timeout(100)
        page.wait_for_timeout(500)
        assert counters is not None and counters["drawn"] >= 5 and counters["gaps"] == 0, counters
        assert spread > 50
        (still,) = still_images(page)
        assert (still["width"], still["height"]) == (512, 341) and still["spread"] > 50
