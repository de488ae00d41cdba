"""The widgets' front-ends as anywidget takes them: one ES module of text per widget, and the CSS.

The browser side is written as ES modules in ``js/``; esbuild bundles each widget's entry into one
module (anywidget loads ``_esm`` from a Blob URL, where ``import "./x.js"`` cannot resolve). A wheel
ships the bundles and the CSS in ``gymview/static/``; a source checkout reads them from ``js/dist/``
and ``js/``, after ``./dev.sh build``.

>>> "FrameStream" in ESM and "jobLine" in JOB_STATUS_ESM and ".gymview-job" in CSS and "drawMujoco" in SCENE3D_ESM
True
>>> "renderPlayer" in EPISODES_ESM and "renderRollout" in EPISODES_ESM and "drawMujoco" in ROLLOUT_FILE_ESM
True
"""

from __future__ import annotations

import pathlib

__all__ = [
    "CSS",
    "EPISODES_ESM",
    "ESM",
    "FILES",
    "JOB_STATUS_ESM",
    "ROLLOUT_FILE_ESM",
    "SCENE3D_ESM",
    "FrontendNotBuilt",
    "locate",
]

BUNDLES = ("widget.js", "job_status.js", "episodes.js", "scene3d.js", "rollout_file.js")

BUILD = "./dev.sh build (or: npm --prefix js ci && npm --prefix js run build)"


class FrontendNotBuilt(RuntimeError):
    """A source checkout whose front-end bundles were not built: the widgets have no front-end."""


def locate(package: pathlib.Path) -> dict[str, pathlib.Path]:
    """The front-end's files for the ``gymview`` package folder ``package``, by their name in a
    wheel: ``static/`` in a wheel, else the checkout's ``js/dist/`` (bundles) and ``js/`` (CSS).

    Raises:
        FrontendNotBuilt: a checkout without the bundles.

    >>> import tempfile
    >>> checkout = pathlib.Path(tempfile.mkdtemp())
    >>> locate(checkout / "gymview")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gymview._internal.frontend.FrontendNotBuilt: gymview's front-end is not built (.../widget.js is missing): ...
    """
    static = package / "static"
    if (static / "widget.js").is_file():
        return {name: static / name for name in (*BUNDLES, "widget.css")}
    js = package.parent / "js"
    files = {
        "widget.js": js / "dist" / "widget.js",
        "job_status.js": js / "dist" / "job_status.js",
        "episodes.js": js / "dist" / "episodes.js",  # the episode player and the table of episodes
        "scene3d.js": js / "dist" / "scene3d.js",  # three.js: sent only to views of MuJoCo scenes
        "rollout_file.js": js / "dist" / "rollout_file.js",  # the player of an HTML file, three.js in it
        "widget.css": js / "widget.css",
    }
    missing = [path for path in files.values() if not path.is_file()]
    if missing:
        raise FrontendNotBuilt(
            f"gymview's front-end is not built ({missing[0]} is missing): run {BUILD} in {package.parent}"
        )
    return files


FILES = locate(pathlib.Path(__file__).parents[1])
ESM, JOB_STATUS_ESM, EPISODES_ESM, SCENE3D_ESM, ROLLOUT_FILE_ESM, CSS = (
    FILES[name].read_text(encoding="utf-8") for name in (*BUNDLES, "widget.css")
)
