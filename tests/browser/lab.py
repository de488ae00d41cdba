"""A real JupyterLab / Notebook 7 server on 127.0.0.1, driven by Debian's Chromium via Playwright.

Used by the browser tests and by benchmarks/live_view.py. Everything lives in temporary folders;
the server is stopped through its API and, as a fallback, by killing the process group it leads.
"""

from __future__ import annotations

import json
import os
import pathlib
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
REPO = pathlib.Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_json(path: pathlib.Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


class JupyterServer:
    """``python -m jupyterlab`` (app="lab") or ``python -m notebook`` (app="notebook") in ``root``."""

    def __init__(self, root: pathlib.Path, app: str = "lab") -> None:
        self.root = root
        self.app = app
        self.token = secrets.token_hex(16)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.log = root.parent / f"{app}-server.log"

    def start(self, timeout: float = 90) -> None:
        home = self.root.parent / "jupyter-home"
        config = home / "config"
        settings = config / "lab" / "user-settings" / "@jupyterlab"
        _write_json(settings / "apputils-extension" / "notification.jupyterlab-settings",
                    {"fetchNews": "false", "checkForUpdates": False})
        _write_json(settings / "notebook-extension" / "tracker.jupyterlab-settings", {"windowingMode": "none"})
        env = dict(
            os.environ,
            JUPYTER_CONFIG_DIR=str(config), JUPYTER_DATA_DIR=str(home / "data"),
            JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"),
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        )
        module = "jupyterlab" if self.app == "lab" else "notebook"
        command = [
            sys.executable, "-m", module, "--no-browser", f"--IdentityProvider.token={self.token}",
            "--ServerApp.ip=127.0.0.1", f"--port={self.port}", "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={self.root}", "--expose-app-in-browser",
        ]
        if os.geteuid() == 0:
            command.append("--allow-root")
        self.process = subprocess.Popen(
            command, env=env, stdout=self.log.open("w"), stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the {self.app} server exited early:\n{self.log.read_text()[-4000:]}")
            try:
                if self._request("GET", "/api/status").status == 200:
                    return
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise TimeoutError(f"the {self.app} server did not start in {timeout} s:\n{self.log.read_text()[-4000:]}")

    def _request(self, method: str, path: str):
        request = urllib.request.Request(
            self.url + path, method=method, headers={"Authorization": f"token {self.token}"}
        )
        return urllib.request.urlopen(request, timeout=5)

    def notebook_url(self, name: str) -> str:
        prefix = "lab/tree" if self.app == "lab" else "notebooks"
        return f"{self.url}/{prefix}/{name}?token={self.token}"

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            self._request("POST", "/api/shutdown")
            self.process.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        finally:
            self.process = None


@contextmanager
def running_server(root: pathlib.Path, app: str = "lab"):
    server = JupyterServer(root, app)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def bundled_scene_js() -> str:
    """js/scene.js with js/scene3d.js (three.js) added as the widget adds it, as one script that sets
    ``window.scenes`` to scene.js's exports (esbuild, from js/node_modules as ./dev.sh build installs it)."""
    esbuild = REPO / "js" / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        raise RuntimeError("js/node_modules is missing: run ./dev.sh build (npm ci) first")
    entry = 'import * as m from "./scene3d.js";\nimport { addSceneModule } from "./scene.js";\n' \
            'addSceneModule("mujoco", m);\nexport * from "./scene.js";\n'
    command = [str(esbuild), "--bundle", "--format=iife", "--global-name=scenes", "--log-level=warning"]
    return subprocess.run(command, cwd=REPO / "js", input=entry, capture_output=True, text=True, check=True).stdout


_DRAW_SCENE = """async ([scene, state, width, height]) => {
    await window.scenes.loadScene(scene);
    const canvas = document.createElement("canvas");
    canvas.width = width;
    canvas.height = height;
    const context = canvas.getContext("2d");
    window.scenes.drawScene(context, scene, Float32Array.from(state), width, height);
    const bytes = context.getImageData(0, 0, width, height).data;
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(text);
}"""


@contextmanager
def scene_page():
    """A blank Chromium page with js/scene.js (and scene3d.js) loaded as ``window.scenes``: see drawn_by_page."""
    with chromium_page() as page:
        page.set_content("<!doctype html><body></body>")
        page.add_script_tag(content=bundled_scene_js())
        page.wait_for_function("() => window.scenes !== undefined")
        yield page


def drawn_by_page(page, scene: dict, state, width: int, height: int):
    """``state`` of ``scene`` as the page draws it at width x height: an (height, width, 3) uint8 array."""
    import base64

    import numpy as np

    data = base64.b64decode(page.evaluate(_DRAW_SCENE, [scene, [float(x) for x in state], width, height]))
    return np.frombuffer(data, np.uint8).reshape(height, width, 4)[..., :3]


@contextmanager
def chromium_page():
    """A fresh headless Chromium page; JavaScript errors are collected in ``page.errors``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.errors = []
            page.on("pageerror", lambda error: page.errors.append(str(error)))
            yield page
        finally:
            browser.close()


def open_notebook(page, server: JupyterServer, name: str, timeout_ms: int = 90_000, port: int | None = None) -> None:
    """Open ``name`` and wait until its kernel is idle and ready to run cells; ``port``: through a
    proxy on that port (slow_link.SlowLink) rather than straight to the server."""
    url = server.notebook_url(name)
    page.goto(url if port is None else url.replace(server.url, f"http://127.0.0.1:{port}"))
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=timeout_ms)
    page.wait_for_function(
        """() => {
            const panel = window.jupyterapp.shell.currentWidget;
            const kernel = panel && panel.sessionContext && panel.sessionContext.session
                && panel.sessionContext.session.kernel;
            return panel && panel.context && panel.context.isReady && kernel && kernel.status === "idle";
        }""",
        timeout=timeout_ms,
    )


def run_all_cells(page) -> None:
    """Start running every cell; returns at once (awaiting the command would wait for all cells)."""
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def widget_counters(page, index: int = 0) -> dict:
    """The counters the LiveView front-end writes on its root element, plus the status line."""
    return page.evaluate(
        """(index) => {
            const el = document.querySelectorAll(".gymview")[index];
            if (!el) return null;
            const canvas = el.querySelector("canvas");
            return {
                received: Number(el.dataset.framesReceived || 0),
                drawn: Number(el.dataset.framesDrawn || 0),
                lastSeq: Number(el.dataset.lastSeq ?? -1),
                gaps: Number(el.dataset.gaps || 0),
                decodeErrors: Number(el.dataset.decodeErrors || 0),
                format: el.dataset.format || "",
                status: el.querySelector(".gymview-status").textContent,
                width: canvas.width, height: canvas.height,
            };
        }""",
        index,
    )


def record_widget_counters(page) -> None:
    """From now on the page keeps every LiveView's latest counters, even after the view is gone (a
    closed view is replaced by a still image): read them with :func:`recorded_widget_counters`.
    A MutationObserver sees each change, so nothing depends on when the test looks."""
    page.evaluate(
        """() => {
            const seen = new Map();
            window.__gymviewRecorded = [];
            new MutationObserver((changes) => {
                for (const change of changes) {
                    const el = change.target;
                    if (!el.classList || !el.classList.contains("gymview")) continue;
                    if (!seen.has(el)) { seen.set(el, window.__gymviewRecorded.length); window.__gymviewRecorded.push(null); }
                    window.__gymviewRecorded[seen.get(el)] = {
                        received: Number(el.dataset.framesReceived || 0),
                        gaps: Number(el.dataset.gaps || 0),
                        decodeErrors: Number(el.dataset.decodeErrors || 0),
                format: el.dataset.format || "",
                    };
                }
            }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ["data-frames-received"]});
        }"""
    )


def recorded_widget_counters(page) -> list[dict | None]:
    """The counters :func:`record_widget_counters` kept, one per view in the order they appeared."""
    return page.evaluate("() => window.__gymviewRecorded")


def still_images(page) -> list[dict]:
    """The still images closed views left in the outputs: size and luminance spread of each."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll(".jp-OutputArea-output img"))
            .filter((img) => img.src.startsWith("data:image/"))
            .map((img) => {
                const canvas = document.createElement("canvas");
                canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
                const context = canvas.getContext("2d");
                context.drawImage(img, 0, 0);
                const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
                let low = 255, high = 0;
                for (let i = 0; i < data.length; i += 4) {
                    const y = 0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2];
                    if (y < low) low = y;
                    if (y > high) high = y;
                }
                return {width: img.naturalWidth, height: img.naturalHeight, spread: high - low};
            })"""
    )


def canvas_luminance_spread(page, index: int = 0) -> float | None:
    """Max minus min luminance over the view's canvas: 0 for a blank picture; None when the view is gone."""
    return page.evaluate(
        """(index) => {
            const canvas = document.querySelectorAll(".gymview")[index]?.querySelector("canvas");
            if (!canvas) return null;
            const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
            let low = 255, high = 0;
            for (let i = 0; i < data.length; i += 4) {
                const y = 0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2];
                if (y < low) low = y;
                if (y > high) high = y;
            }
            return high - low;
        }""",
        index,
    )


def measure_fps(page, seconds: float = 2.0, index: int = 0) -> tuple[float, float]:
    """(frames received per second, frames drawn per second) over ``seconds`` of wall time."""
    first = widget_counters(page, index)
    started = time.monotonic()
    page.wait_for_timeout(seconds * 1000)
    last = widget_counters(page, index)
    elapsed = time.monotonic() - started
    return (last["received"] - first["received"]) / elapsed, (last["drawn"] - first["drawn"]) / elapsed


def notebook_of(cells: list[str]) -> dict:
    """An nbformat 4 notebook (as a dict) of code cells, for the python3 kernel."""
    return {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c}
                  for c in cells],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }


def start_cell(page, index: int) -> None:
    """Run cell ``index`` alone; returns at once (another cell's click can reach the kernel meanwhile)."""
    page.evaluate(
        """(index) => {
            const panel = window.jupyterapp.shell.currentWidget;
            panel.content.activeCellIndex = index;
            window.jupyterapp.commands.execute('notebook:run-cell');
        }""",
        index,
    )


def show_view(page, index: int, timeout_ms: int = 120_000) -> None:
    """Wait until cell ``index`` shows a view, and scroll it into sight: the page draws what it gets."""
    page.wait_for_function(
        """(i) => { const el = window.jupyterapp.shell.currentWidget.content.widgets[i].node.querySelector('.gymview');
                    if (!el) return false; el.scrollIntoView({block: 'center'}); return true; }""",
        arg=index, timeout=timeout_ms,
    )


def wait_for_reply(page, index: int, timeout_ms: int = 60_000) -> None:
    """Wait until the kernel answered cell ``index``'s run (its prompt shows a number). After a cell that
    raised, the kernel aborts the runs it was sent before that answer: start the next cell after it."""
    page.wait_for_function(
        "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.executionCount !== null",
        arg=index, timeout=timeout_ms,
    )


def wait_for_output(page, index: int, marker: str, timeout_ms: int = 60_000) -> str:
    """Wait until cell ``index``'s output contains ``marker``; return that output's text."""
    page.wait_for_function(
        "([i, marker]) => window.jupyterapp.shell.currentWidget.content.widgets[i]"
        ".outputArea.node.innerText.includes(marker)",
        arg=[index, marker], timeout=timeout_ms,
    )
    return page.evaluate("(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].outputArea.node.innerText", index)
