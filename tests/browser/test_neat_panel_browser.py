"""gymview.neat's panel in real JupyterLab, seen from Debian's Chromium: the fitness chart and the
champion's network as SVG, updated each generation, and the champion playing in a live view, while
evolution runs in a background job whose Stop returns the best genome so far."""

import json

import pytest
from lab import (
    canvas_luminance_spread,
    chromium_page,
    notebook_of,
    open_notebook,
    running_server,
    start_cell,
    wait_for_output,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EVOLVE = """
import gymview, gymview.neat as gn
config = gn.config_for("CartPole-v1", pop_size=30, fitness_threshold=10**9)
job = gymview.background(gn.evolve, "CartPole-v1", config, generations=100_000, workers=2, seed=0)
"""
# The generation the panel's header shows (or -1 before the first); true once it is at least `n`.
GENERATION_AT_LEAST = """(n) => {
    const header = [...document.querySelectorAll('.widget-html-content')].find((el) => el.innerText.includes('NEAT on'));
    const found = header && header.innerText.match(/generation (\\d+) ·/);
    const generation = found ? Number(found[1]) : -1;
    return n < 0 ? generation : generation >= n;
}"""
# the line's end marks it whole: print's parts may reach the page in separate flushes
RESULT = ("result = job.wait(timeout=120)\n"
          "print('RESULT', result.stopped, result.generations > 1, result.winner.fitness > 0, 'END')")


def test_panel_shows_chart_network_and_the_champion_playing_and_stop_returns_the_best(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "neat.ipynb").write_text(json.dumps(notebook_of([EVOLVE, RESULT])))
    with running_server(root, "lab") as server, chromium_page() as page:
        open_notebook(page, server, "neat.ipynb")
        start_cell(page, 0)
        page.wait_for_function("() => document.querySelector('svg[aria-label=\"Fitness per generation\"] polyline')",
                               timeout=120_000)
        assert page.locator('svg[aria-label="Champion network"] circle').count() >= 6  # 4 inputs, 2 outputs
        page.wait_for_function(GENERATION_AT_LEAST, arg=0, timeout=120_000)
        seen = page.evaluate(GENERATION_AT_LEAST, -1)
        page.wait_for_function(GENERATION_AT_LEAST, arg=seen + 1, timeout=120_000)  # updated each generation
        page.wait_for_function("() => Number(document.querySelector('.gymview')?.dataset.framesDrawn || 0) > 5",
                               timeout=120_000)
        assert canvas_luminance_spread(page, 0) > 10, "the champion's view shows CartPole, not a blank canvas"
        page.locator(".gymview-job").get_by_role("button", name="Stop").click()
        start_cell(page, 1)
        assert "RESULT True True True END" in wait_for_output(page, 1, "END", timeout_ms=120_000)
        errors = [e for e in page.errors if "gymview" in e]
        assert not errors, errors
