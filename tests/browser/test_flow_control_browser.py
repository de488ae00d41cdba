"""Acknowledgements and visibility travel back from Chromium to the kernel and steer the stream."""

import json

import pytest
from lab import chromium_page, notebook_of, open_notebook, running_server, start_cell, wait_for_output, widget_counters

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The loop runs in a background thread so the kernel stays free to take the browser's messages.
CELLS = [
    """
import threading, time, numpy as np, gymview
view = gymview.LiveView(fps=30, max_lag=0.5)
display(view)
stop = threading.Event()
def loop():
    i = 0
    while not stop.is_set():
        view.push(np.full((120, 160, 3), i % 256, np.uint8), step=i)
        i += 1
        time.sleep(0.002)
threading.Thread(target=loop, daemon=True).start()
""",
    "print('ACKED', view.stats['last_acked_seq'], 'SENT', view.stats['frames_sent'], 'VISIBLE', view.stats['visible'])",
    "print('VISIBLE', view.stats['visible'], 'FPS', view.stats['fps_limit'])",
    "stop.set(); view.stop(); print('DONE')",
]


def run_cell(page, index, marker):
    start_cell(page, index)
    return wait_for_output(page, index, marker)


def test_acks_and_visibility_reach_the_kernel(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "flow.ipynb").write_text(json.dumps(notebook_of(CELLS)))
    with running_server(root, "lab") as server, chromium_page() as page:
        open_notebook(page, server, "flow.ipynb")
        start_cell(page, 0)
        page.wait_for_function("() => Number(document.querySelector('.gymview')?.dataset.framesDrawn || 0) > 5",
                               timeout=60_000)
        page.wait_for_timeout(2000)  # the kernel is idle: it handles acks as they come
        words = run_cell(page, 1, "ACKED").split()
        acked, sent = int(words[words.index("ACKED") + 1]), int(words[words.index("SENT") + 1])
        # acks arrive and keep up: the browser acks every 250 ms, and the kernel sends nothing once the
        # oldest unacknowledged frame is max_lag (0.5 s) old, so at 30 fps at most 16 are unacknowledged
        assert sent > 20 and acked >= sent - 16, (acked, sent)
        assert words[words.index("VISIBLE") + 1] == "True"
        counters = widget_counters(page)
        assert counters["gaps"] == 0 and counters["received"] >= acked
        # codec="auto": Chromium decodes H.264 through WebCodecs, so the frames drawn are the video stream's
        assert counters["format"] == "h264" and counters["decodeErrors"] == 0, counters

        # Scroll the view out of sight: the kernel hears it and drops to the hidden rate.
        page.evaluate("() => { document.querySelector('.gymview').style.display = 'none'; }")
        page.wait_for_timeout(500)
        words = run_cell(page, 2, "FPS").split()
        assert words[words.index("VISIBLE") + 1] == "False"
        assert float(words[words.index("FPS") + 1]) == 1.0
        run_cell(page, 3, "DONE")
