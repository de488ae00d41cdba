"""DeferredFrame: a frame that the encoder process draws itself, so the loop only reads state.

A pushed frame is either an (H, W, 3) uint8 array or any object with these members. The
``painter`` travels to the encoder process pickled, once per process (the same object is not
sent again); each frame then costs the pipe only its ``state``, a few float64 numbers. The live
view knows nothing else about what draws: :class:`gymview.renderers.Drawing` is one such frame.

>>> import numpy as np
>>> class Gray:
...     def paint(self, state, canvas):
...         return np.full((4, 6, 3), int(state[0]), np.uint8)
>>> class GrayFrame:
...     painter = Gray()
...     def __init__(self, level): self.state = np.array([level], np.float64)
...     def draw(self): return self.painter.paint(self.state, None)
...     def checked(self): return self
>>> isinstance(GrayFrame(7), DeferredFrame), GrayFrame(7).draw()[0, 0].tolist()
(True, [7, 7, 7])
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["DeferredFrame", "is_deferred"]


@runtime_checkable
class DeferredFrame(Protocol):
    """What :meth:`gymview.LiveView.push` accepts besides pixels.

    * ``painter``: picklable, with ``paint(state, canvas) -> (H, W, 3) uint8``; ``canvas`` is the
      array that call returned last time (or None), so a painter may repaint only what changed; a
      painter whose ``draws_to_max_size`` is true is called ``paint(state, canvas, max_size=...)``
      with the view's ``max_size`` and may draw the frame that small (the MuJoCo preview);
    * ``state``: a float64 array, what ``paint`` draws from;
    * ``draw()``: the frame drawn here and now (used when no encoder process can be had);
    * ``checked()``: the same frame with its state validated and copied, or a clear error, so a
      bad state fails at ``push`` and not later in another process.
    """

    @property
    def painter(self) -> Any: ...

    @property
    def state(self) -> np.ndarray: ...

    def draw(self) -> np.ndarray: ...

    def checked(self) -> DeferredFrame: ...


_DEFERRED_TYPES: dict[type, bool] = {}


def is_deferred(frame: Any) -> bool:
    """Whether ``frame`` is a :class:`DeferredFrame`: the protocol's check, remembered per type (it reads
    every member each time, and a loop asks for every frame).

    >>> is_deferred(np.zeros((2, 2, 3), np.uint8))
    False
    """
    kind = type(frame)
    known = _DEFERRED_TYPES.get(kind)
    if known is None:
        known = _DEFERRED_TYPES[kind] = isinstance(frame, DeferredFrame)
    return known
