"""``gymview.log(name=value)`` from inside a policy: the values go to the episode this thread is
recording (``record_batch`` and ``compare`` set it around their policy calls), where the policy has
no env to call ``env.log`` on.

>>> from gymview.episodes.rows import StepTracker, check_logged, row_of
>>> tracker = StepTracker(); tracker.reset()
>>> with logging_to(tracker):
...     log(value=3.0)
True
>>> row_of(tracker.latest)["value"]
3.0
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gymview.episodes.rows import StepTracker, check_logged

__all__ = ["log", "logging_to"]

_recording = threading.local()


@contextmanager
def logging_to(tracker: StepTracker) -> Iterator[None]:
    """``log()`` in this thread adds to ``tracker``'s latest step while the block runs."""
    before = getattr(_recording, "tracker", None)
    _recording.tracker = tracker
    try:
        yield
    finally:
        _recording.tracker = before


def log(**values: Any) -> bool:
    """Add values to the step table of the episode being recorded, from inside a policy.

    ``record_batch`` and ``compare`` call policies with no env in reach: there, ``gymview.log``
    adds the values to the row of the latest step, the one whose observation the policy sees (its
    picture is the frame on screen). Anywhere else it does nothing, so the same policy runs in any
    loop; in your own loop, call ``env.log(...)`` on the gymview wrapper.

    Args:
        **values: Names and numbers: a float, an int, a one-element array or tensor each.

    Returns:
        True when the values went to an episode being recorded, False outside one.

    Raises:
        TypeError: When a value is not one number.
        ValueError: When a name is one of the table's own columns (``reward``, ``step``...).

    Examples:
        >>> import gymview, tempfile
        >>> def policy(observation):
        ...     _ = gymview.log(angle=float(observation[2]))
        ...     return int(observation[2] > 0)
        >>> result = gymview.record_batch("CartPole-v1", policy, episodes=1, out=tempfile.mkdtemp(),
        ...                               max_steps=5, workers=1, progress=False)
        >>> rows = gymview.read_steps(result.files[0])
        >>> len(rows), "angle" in rows[0]
        (6, True)
    """
    tracker = getattr(_recording, "tracker", None)
    if tracker is None:
        check_logged(values)  # a bad value fails here too, not only once the policy records
        return False
    tracker.log(values)
    return True
