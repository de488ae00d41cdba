"""Hatch's build hook: the widgets' front-end bundles (js/dist/, made by esbuild from js/) go into every wheel.

A clone has no js/dist/ (it is built, not committed): ``pip install .`` or ``pip install git+<url>`` then bundles
js/ with npm first, as anywidget projects' installs do, or stops with one line saying what to install. An sdist
carries the bundles, so a wheel built from it needs no npm.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BUNDLES = ("widget.js", "job_status.js", "episodes.js", "scene3d.js", "rollout_file.js")


class FrontEndBundles(BuildHookInterface):
    """Make js/dist/ if a bundle is missing; put the bundles and the CSS into the wheel as gymview/static/."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        js = Path(self.root) / "js"
        if any(not (js / "dist" / name).is_file() for name in BUNDLES):
            bundle(js)
        if self.target_name == "wheel":
            build_data["force_include"].update({str(js / "dist" / name): f"gymview/static/{name}" for name in BUNDLES})
            build_data["force_include"][str(js / "widget.css")] = "gymview/static/widget.css"


def bundle(js: Path) -> None:
    """``npm ci`` (the tools js/package-lock.json pins), then ``npm run build``; exit with one line if npm is missing."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        sys.exit(
            "gymview: installing from source bundles its front-end (js/) with npm, which is not on PATH: install "
            "Node.js and npm (https://nodejs.org/, or `apt-get install nodejs npm`), then install gymview again"
        )
    for command in ([npm, "ci", "--no-audit", "--no-fund"], [npm, "run", "build"]):
        if subprocess.run(command, cwd=js, stdout=sys.stderr).returncode != 0:
            sys.exit(f"gymview: `{' '.join(command[1:])}` in {js} failed (its output is above)")
