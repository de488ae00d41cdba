"""A live view in a marimo cell: shown in the cell's output, and stopped when the cell runs again.

marimo re-runs a cell whenever what it reads changes (a slider moved, an upstream cell edited),
and closes the widgets the old run made. A loop still feeding the old view (``gymview.play`` in
the background) would play on unseen, with no button left to stop it: when the cell that showed
the view runs again or is deleted, the view's Stop is pressed for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymview._internal.private_apis import warn_missing

__all__ = ["show_in_cell"]


def show_in_cell(widget: Any, on_cell_end: Callable[[], None]) -> None:
    """Append ``widget`` to the running marimo cell's output; ``on_cell_end()`` is called when that
    cell runs again or is deleted (not when the notebook's process ends)."""
    import marimo

    marimo.output.append(widget)
    try:
        from marimo._runtime.cell_lifecycle_item import CellLifecycleItem
        from marimo._runtime.context import get_context

        cells = get_context().cell_lifecycle_registry
    except Exception:  # a marimo laid out otherwise: the view is shown, only not stopped with its cell
        warn_missing("marimo._runtime.cell_lifecycle_item and marimo._runtime.context")
        return

    class CellEnd(CellLifecycleItem):
        def create(self, context: Any) -> None:
            del context

        def dispose(self, context: Any, deletion: bool) -> bool:
            del context, deletion
            on_cell_end()
            return True

    cells.add(CellEnd())
