"""MkDocs hook: the notebooks in notebooks/ become site pages, run first so a reader sees their outputs.

Each notebook runs top to bottom in a real kernel, in a temporary folder (the videos it writes stay
out of the checkout), and is kept under build/notebook-pages/ until its source changes. Live views
leave their last frame as a still image; the widget itself, which a static page cannot draw, is
dropped. notebooks/colab.ipynb is shown as written (its outputs come from Colab), and so is
notebooks/jax_rollouts.ipynb (from a run with JAX and MuJoCo Playground, which the docs build lacks).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

import mkdocs.plugins
import nbformat
from mkdocs.structure.files import File, Files
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
PAGES = ROOT / "build" / "notebook-pages"
SHOWN_AS_WRITTEN = {"colab.ipynb", "jax_rollouts.ipynb"}  # their outputs come from Colab, and JAX
WIDGET = "application/vnd.jupyter.widget-view+json"
log = logging.getLogger("mkdocs.hooks.notebook_pages")


@mkdocs.plugins.event_priority(100)  # before mkdocs-jupyter turns .ipynb files into pages
def on_files(files: Files, config) -> Files:
    for source in sorted(NOTEBOOKS.glob("*.ipynb")):
        page = source if source.name in SHOWN_AS_WRITTEN else executed(source)
        files.append(File(f"notebooks/{source.name}", src_dir=str(page.parent.parent), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    return files


def executed(source: Path) -> Path:
    """``source`` run in a kernel, its widget outputs replaced by what a static page can show."""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    page = PAGES / digest / "notebooks" / source.name
    if page.exists():
        return page
    log.info("running %s for its page", source.name)
    notebook = nbformat.read(source, as_version=4)
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), previous]))
    try:
        with tempfile.TemporaryDirectory() as folder:
            NotebookClient(notebook, timeout=600, kernel_name="python3", store_widget_state=False,
                           resources={"metadata": {"path": folder}}).execute()
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = [output for output in map(without_widget, cell.outputs) if output is not None]
    page.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, page)
    return page


def without_widget(output):
    """``output`` without its widget view; None when only the widget's text stand-in would be left."""
    data = output.get("data", {})
    if WIDGET not in data:
        return output
    del data[WIDGET]
    return output if set(data) - {"text/plain"} else None
