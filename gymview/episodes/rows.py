"""Step rows: what a step gave (reward, the action, ``info``'s numbers, values the user logged) as a
row of numbers, and :class:`StepTracker`, which keeps the running episode's latest step.

A step is kept raw while the loop runs (a :class:`RawStep`: a few references, the loop's speed barely
moves) and made a row only when the row is read or written out.

>>> tracker = StepTracker()
>>> tracker.reset()
>>> tracker.step(1, 1.0, False, False, {"x": 0.5, "name": "cart"})
>>> tracker.log({"value": 60})
>>> row = row_of(tracker.latest)
>>> row["step"], row["reward"], row["action"], row["x"], row["value"], "name" in row
(1, 1.0, 1.0, 0.5, 60.0, False)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "FIXED_COLUMNS",
    "LOG_BEFORE_RESET",
    "MAX_ACTION_COLUMNS",
    "LatestStep",
    "RawStep",
    "StepTracker",
    "action_values",
    "add_logged",
    "check_logged",
    "check_name",
    "columns_of",
    "info_values",
    "jsonable",
    "number",
    "row_of",
]

#: the columns every row has, in this order; the action's, info's and the logged values follow
FIXED_COLUMNS = ("episode", "step", "reward", "return", "terminated", "truncated")
#: an action with more numbers than this (an image, a long vector) gets no columns
MAX_ACTION_COLUMNS = 16

#: what env.log() before the first step or reset says
LOG_BEFORE_RESET = "env.log() adds values to the latest step: call env.reset() first"


@dataclass(slots=True)
class RawStep:
    """One step as its loop gave it, made a row of numbers only when read (:func:`row_of`). For an env of
    several sub-envs or agents, ``reward`` to ``info`` hold one value per key (:mod:`.keyed_rows`).
    Mutable: ``env.log()`` fills ``logged`` after the step, a step limit of the caller's sets ``truncated``.

    >>> RawStep(0, 1, 1.0, 1.0, False, False, 0, {}).logged is None
    True
    """

    episode: int
    step: int
    reward: Any
    episode_return: Any
    terminated: Any
    truncated: Any
    action: Any
    info: Any
    logged: dict[str, float] | None = None


class LatestStep:
    """The latest step recorded, how many were, and who keeps each (``keep``, e.g. ``RecentSteps``): what
    every step tracker has.

    >>> tracker = LatestStep()
    >>> tracker.record(RawStep(0, 0, 0.0, 0.0, False, False, None, None))
    >>> tracker.count, tracker.latest.step
    (1, 0)
    """

    __slots__ = ("count", "keep", "latest")

    def __init__(self) -> None:
        self.latest: RawStep | None = None
        self.count = 0  # steps recorded (resets included)
        #: called with each step recorded (``RecentSteps`` keeps them); None: nobody keeps them
        self.keep: Callable[[RawStep], None] | None = None

    def record(self, raw: RawStep) -> None:
        """A step (or a reset's row) as the loop gave it: it becomes the latest."""
        self.latest = raw
        self.count += 1
        if self.keep is not None:
            self.keep(raw)


class StepTracker(LatestStep):
    """The step count, running return and latest step of the episode an env is in.

    ``reset()`` starts an episode (its row 0: reward 0, no action; episodes are numbered from
    ``first_episode``), ``step()`` records a step, and
    ``log(name=value)`` adds values to the latest step's row: the step whose picture is on screen,
    so a value estimate of the observation the policy acts on next belongs there.

    Examples:
        >>> tracker = StepTracker()
        >>> tracker.reset(); tracker.step(0, 1.0, False, False, {}); tracker.step(1, 1.0, True, False, {})
        >>> tracker.episode, tracker.steps, tracker.episode_return
        (0, 2, 2.0)
    """

    # a recording loop's every step updates these: slots make each update cheaper
    __slots__ = ("_next_episode", "episode", "episode_return", "resets", "steps")

    def __init__(self, first_episode: int = 0) -> None:
        super().__init__()
        self.episode = first_episode  # steps before any reset count in the first episode
        self._next_episode = first_episode
        self.steps = 0
        self.episode_return = 0.0
        self.resets = 0

    def reset(self) -> None:
        """A new episode: its row 0 (the first picture) becomes the latest step."""
        self.episode, self._next_episode = self._next_episode, self._next_episode + 1
        self.steps = 0
        self.episode_return = 0.0
        self.resets += 1
        self.record(RawStep(self.episode, 0, 0.0, 0.0, False, False, None, None))

    def step(self, action: Any, reward: Any, terminated: Any, truncated: Any, info: Any) -> None:
        """Record one step's results, kept as given: made numbers when a row is read (a watched
        loop's every step passes here: a few operations)."""
        self.steps += 1
        self.episode_return += reward
        if isinstance(action, np.ndarray):  # a caller may fill the same array again for the next step
            action = action.copy()
        self.record(RawStep(self.episode, self.steps, reward, self.episode_return, terminated, truncated, action, info))

    def mark_truncated(self) -> None:
        """The caller ended the episode at the latest step (a step limit of its own): its row says so."""
        if self.latest is not None:
            self.latest.truncated = True

    def log(self, values: Mapping[str, Any]) -> None:
        """Add ``values`` to the latest step's row (checked by :func:`check_logged`).

        Raises:
            RuntimeError: Before the first ``reset()``: there is no step to add them to.
        """
        add_logged(self.latest, check_logged(values))


def add_logged(latest: RawStep | None, checked: dict[str, float]) -> None:
    """Add checked logged values to the raw step ``latest``; a RuntimeError when there is none yet
    (``env.log()`` before the first reset)."""
    if latest is None:
        raise RuntimeError(LOG_BEFORE_RESET)
    if latest.logged is None:
        latest.logged = checked
    else:
        latest.logged.update(checked)


def check_logged(values: Mapping[str, Any]) -> dict[str, float]:
    """The values of ``env.log(name=value)`` as floats; a clear error for what is not one number.

    >>> check_logged({"value": np.float32(2.5), "entropy": 1})
    {'value': 2.5, 'entropy': 1.0}
    >>> check_logged({"reward": 1.0})
    Traceback (most recent call last):
    ...
    ValueError: env.log(reward=...): 'reward' is a column of every step already; log it under another name
    """
    checked = {}
    for name, value in values.items():
        check_name(name)
        found = number(value)
        if found is None:
            raise TypeError(
                f"env.log({name}=...) takes one number (a float, an int, a one-element array or tensor); "
                f"got {type(value).__name__}"
                + (f" of shape {tuple(np.shape(value))}" if hasattr(value, "shape") else "")
                + ": log a scalar, such as value.item() or value.mean()"
            )
        checked[name] = found
    return checked


def check_name(name: str) -> None:
    """A ValueError for a logged name that is one of the table's own columns (``reward``, ``action_0``,
    ``return[2]``...).

    >>> check_name("value")
    >>> check_name("return[2]")
    Traceback (most recent call last):
    ...
    ValueError: env.log(return[2]=...): 'return[2]' is a column of every step already; log it under another name
    """
    base = name.partition("[")[0]
    if base in FIXED_COLUMNS or base == "frame" or base == "action" or base.startswith("action_"):
        raise ValueError(f"env.log({name}=...): {name!r} is a column of every step already; log it under another name")


def number(value: Any) -> float | None:
    """``value`` as a float when it is one number (bools, numpy scalars, one-element arrays and
    tensors included), else None."""
    if isinstance(value, (bool, numbers.Real)):
        return float(value)
    size = getattr(value, "size", None)
    if callable(size):  # a torch tensor: size() is its shape
        size = getattr(value, "numel", lambda: None)()
    if size == 1 and hasattr(value, "item"):
        item = value.item()
        return float(item) if isinstance(item, (bool, numbers.Real)) else None
    return None


def action_values(action: Any) -> list[float] | float | None:
    """One number for a scalar action (or a vector of one), a list for a small vector, None for anything else."""
    if action is None:
        return None
    if isinstance(action, (bool, numbers.Real)):
        return float(action)
    try:
        array = np.asarray(action, dtype=np.float64)
    except (TypeError, ValueError):  # a dict or a text action: no columns
        return None
    if array.size == 1:  # a scalar, or a one-number vector (Pendulum's torque)
        return float(array.reshape(-1)[0])
    if 0 < array.size <= MAX_ACTION_COLUMNS:
        return array.reshape(-1).tolist()
    return None


def info_values(info: Any) -> Iterable[tuple[str, float]]:
    """``info``'s entries that are one number each ("episode" dicts, arrays, texts left out)."""
    if not isinstance(info, Mapping):
        return ()
    found = []
    for key, value in info.items():
        if not isinstance(key, str) or key.startswith("_"):  # gymnasium's vector masks: "_final_info"
            continue
        one = number(value) if not isinstance(value, np.ndarray) or value.ndim == 0 else None
        if one is not None:
            found.append((key if key not in FIXED_COLUMNS and key != "frame" else f"info_{key}", one))
    return found


def row_of(raw: RawStep) -> dict[str, float | int]:
    """A raw step as a row: the fixed columns, then ``action`` (or ``action_0``, ``action_1``... for a
    vector), ``info``'s numbers, the logged values (which win over an info entry of the same name).

    >>> raw = RawStep(2, 5, 0.5, 3.0, True, False, np.array([0.1, -0.2]), {"lives": 3}, {"value": 1.5})
    >>> row_of(raw)  # doctest: +NORMALIZE_WHITESPACE
    {'episode': 2, 'step': 5, 'reward': 0.5, 'return': 3.0, 'terminated': 1, 'truncated': 0,
     'action_0': 0.1, 'action_1': -0.2, 'lives': 3.0, 'value': 1.5}
    """
    row: dict[str, float | int] = {
        "episode": int(raw.episode),
        "step": int(raw.step),
        "reward": float(raw.reward),
        "return": float(raw.episode_return),
        "terminated": int(bool(raw.terminated)),
        "truncated": int(bool(raw.truncated)),
    }
    action = action_values(raw.action)
    if isinstance(action, list):
        row.update((f"action_{index}", value) for index, value in enumerate(action))
    elif action is not None:
        row["action"] = action
    row.update(info_values(raw.info))
    if raw.logged:
        row.update(raw.logged)
    return row


def columns_of(rows: Iterable[Mapping[str, Any]], known: Iterable[str] = ()) -> list[str]:
    """The columns of ``rows`` in order of first appearance, after ``known``.

    >>> columns_of([{"a": 1}, {"a": 2, "b": 3}], known=["frame"])
    ['frame', 'a', 'b']
    """
    columns = dict.fromkeys(known)
    for row in rows:
        for name in row:
            if name not in columns:
                columns[name] = None
    return list(columns)


def jsonable(value: Any) -> Any:
    """``value`` as the page can read it: JSON has no NaN, a missing number is None.

    >>> jsonable(float("nan")), jsonable(2.5)
    (None, 2.5)
    """
    return None if isinstance(value, float) and math.isnan(value) else value
