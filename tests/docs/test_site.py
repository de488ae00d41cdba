"""The documentation site: built with ``mkdocs build --strict`` (no broken link, no missing reference, no
docstring the reference cannot read), every name of the API reference on its page, and the pages opened
in Chromium with no console error."""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from test_docstrings import documented

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    return folder


def test_the_site_builds_strictly_with_every_page(site):
    for page in ("index.html", "getting-started/index.html", "troubleshooting/index.html", "performance/index.html",
                 "architecture/index.html", "reference/index.html", "notebooks/quickstart/index.html"):
        assert (site / page).is_file(), page


def test_the_reference_documents_every_public_name(site):
    anchors = set()
    for page in (site / "reference").rglob("index.html"):
        anchors |= set(re.findall(r'id="(gymview[\w.]*)"', page.read_text()))
    missing = [name for name in documented() if name not in anchors]
    assert missing == []


def test_a_notebook_page_shows_what_its_run_showed(site):
    page = (site / "notebooks" / "quickstart" / "index.html").read_text()
    assert "frames_sent" in page  # the stats the loop cell printed
    assert re.search(r'<img[^>]+src="data:image/(jpeg|png);base64,', page), "the live view's last frame as an image"
    assert "application/vnd.jupyter.widget-view+json" not in page  # a static page cannot draw the widget


@pytest.fixture
def served(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def artifacts(tmp_path):
    folder = os.environ.get("GYMVIEW_TEST_ARTIFACTS")
    path = Path(folder) if folder else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.browser
def test_the_site_opens_in_chromium_without_errors(served, artifacts):
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from lab import chromium_page

    with chromium_page() as page:
        problems = []
        page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
        page.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
        page.goto(served + "/")
        page.wait_for_load_state("networkidle")
        assert page.locator("h1").first.inner_text().rstrip("¶") == "gymview"
        assert page.locator("img[src='images/live-view.png']").evaluate("img => img.naturalWidth") > 0
        page.screenshot(path=str(artifacts / "site-index.png"))
        page.goto(served + "/reference/live/")
        page.wait_for_load_state("networkidle")
        heading = page.locator("[id='gymview.watch']")
        assert "gymview.watch" in heading.inner_text()
        assert page.locator("text=max_overhead").count() > 0  # the signature and its parameters
        page.screenshot(path=str(artifacts / "site-reference-live.png"))
        page.goto(served + "/notebooks/quickstart/")
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(artifacts / "site-quickstart.png"), full_page=True)
        assert problems == [] and page.errors == []
