"""FarPages: pages that show a view from another process, and what a LiveView needs of them.

A run published with ``gymview.watch(env, publish=...)`` hands its frames to notebooks elsewhere
(:mod:`gymview.remote`); to its view, those notebooks' pages are pages like the ones in this kernel:
their ``ready``, acks and clicks come in through ``listen``, the same messages go out through ``send``,
and while no page is attached the view makes no frame at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["FarPages"]


class FarPages(Protocol):
    """The pages of other processes that show one view (``gymview.remote.publisher.PublishedRun``)."""

    def attached(self) -> bool:
        """Whether a page elsewhere shows the view now (read once per frame check: one attribute)."""
        ...

    def send(self, header: dict[str, Any], buffers: list[bytes]) -> None:
        """A message for the pages (a frame, a state); never waits."""
        ...

    def show_scene(self, scene: dict[str, Any]) -> None:
        """The scene the pages draw scene frames with (``LiveView``'s ``_scene``), also for pages that come later."""
        ...

    def give_turn(self) -> None:
        """Called by the view's loop at its checks: let the thread that sends to the pages run, if the loop has
        kept it from the interpreter (never waits long)."""
        ...

    def listen(self, receive: Callable[[Any], None]) -> None:
        """Where the pages' messages go (``receive(content)``, from another thread)."""
        ...

    def close(self) -> None:
        """The view is closed: the pages are told the run ended."""
        ...

    def go_inert(self) -> None:
        """In a child forked from this process: send nothing, touch none of the parent's sockets."""
        ...
