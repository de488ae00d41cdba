"""Warnings that point at the user's line, however deep in gymview they are raised."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

__all__ = ["warn_user"]

_PACKAGE = str(Path(__file__).resolve().parents[1])  # gymview/


def warn_user(message: str, category: type[Warning] = RuntimeWarning) -> None:
    """``warnings.warn`` attributed to the first caller outside gymview (the user's loop, or a library's
    that steps the env), so that the warning names the line that stepped, as Python's own do.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_user("a frame was lost")
    >>> caught[0].filename.startswith("<doctest")  # this example's line, not warn.py's
    True
    """
    level, frame = 1, sys._getframe(1)
    while frame.f_code.co_filename.startswith(_PACKAGE) and frame.f_back is not None:
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level + 1)
