"""`%load_ext gymview` then render_mode="human": the env shows in the inline view, no window, no hang."""

import json

import pytest
from lab import (
    canvas_luminance_spread,
    chromium_page,
    open_notebook,
    run_all_cells,
    running_server,
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
        page.wait_for_function("() => document.body.innerText.includes('HUMAN human LiveView')", timeout=120_000)
        page.wait_for_timeout(500)
        counters = widget_counters(page)
        assert counters is not None and counters["drawn"] >= 5 and counters["gaps"] == 0, counters
        assert canvas_luminance_spread(page) > 50
