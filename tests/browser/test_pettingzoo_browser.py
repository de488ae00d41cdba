"""A person plays connect four against a policy in JupyterLab, through Debian's Chromium: the status
line names the agent to move and each agent's return, and each move waits for the person's key."""

import json

import pytest
from lab import chromium_page, notebook_of, open_notebook, running_server, start_cell, wait_for_output, widget_counters

pytest.importorskip("pettingzoo")

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PLAY = """
import warnings; warnings.simplefilter("ignore", DeprecationWarning)
import gymview
from pettingzoo.classic import connect_four_v3
env = gymview.watch(connect_four_v3.env(render_mode="rgb_array"))
run = gymview.play(env, {"player_1": lambda observation: 1}, keys={str(n + 1): n for n in range(7)},
                   agent="player_0", episodes=1)
print("PLAYING")
"""
RESULT = "print('RESULT', run.wait(timeout=120))"

STATUS = "() => document.querySelector('.gymview .gymview-status')?.textContent ?? ''"


def wait_for_status(page, *words):
    page.wait_for_function(f"(words) => words.every((word) => ({STATUS})().includes(word))", arg=list(words),
                           timeout=60_000)


def test_a_person_plays_one_agent_of_a_turn_based_game_with_keys(tmp_path):
    root = tmp_path / "nb"
    root.mkdir()
    (root / "pz.ipynb").write_text(json.dumps(notebook_of([PLAY, RESULT])))
    with running_server(root) as server, chromium_page() as page:
        open_notebook(page, server, "pz.ipynb")
        start_cell(page, 0)
        wait_for_output(page, 0, "PLAYING", 120_000)
        page.wait_for_function("() => document.querySelectorAll('.gymview.gymview-keyboard').length === 1",
                               timeout=60_000)
        wait_for_status(page, "step 0 ", "player_0 to move", "returns player_0 0.0, player_1 0.0")
        page.locator(".gymview.gymview-keyboard canvas.gymview-canvas").click()
        for turn in range(3):  # the policy answers each of the person's moves in column 0 with one in column 1
            page.keyboard.press("1")
            wait_for_status(page, f"step {2 * turn + 2} ", "player_0 to move")
        page.keyboard.press("1")  # the fourth in column 0 wins
        wait_for_status(page, "step 7 ", "returns player_0 1.0, player_1 -1.0")
        # the run's final frame: nobody moves once the game is over
        page.wait_for_function(f"() => !({STATUS})().includes('to move')", timeout=60_000)
        assert "returns player_0 1.0, player_1 -1.0" in widget_counters(page)["status"]
        start_cell(page, 1)
        text = wait_for_output(page, 1, "RESULT", 120_000)
        assert "'steps': 7, 'returns': {'player_0': 1.0, 'player_1': -1.0}" in text, text
        errors = [error for error in page.errors if "gymview" in error]
        assert not errors, errors
