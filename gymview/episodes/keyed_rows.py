"""Step rows of envs that step several at once: a vector env's sub-envs (keys ``0`` .. ``N-1``) or a
PettingZoo env's agents (keys: their names). One row per step, so one row per frame of the live view
or of a recording; each sub-env's or agent's columns are a single env's with ``[key]`` after the
name: ``reward[0]``, ``return[piston_3]``, ``action_1[2]``, ``value[player_0]``.

A raw step is a :class:`gymview.episodes.rows.RawStep` whose per-key fields (``reward`` to ``info``) are
kept as the loop gave them: an array or list in the keys' order (a vector env), or a dict keyed by agent
(PettingZoo).

>>> tracker = KeyedStepTracker()
>>> tracker.record(RawStep(0, 1, [1.0, 0.5], [1.0, 0.5], [False, True], [False, False], [1, 0], [{}, {}]))
>>> tracker.log({"value": [2.0, 3.0], "lr": 0.1}, keys=[0, 1])
>>> row = keyed_row_of(tracker.latest)
>>> row["reward[1]"], row["terminated[1]"], row["action[0]"], row["value[1]"], row["lr"]
(0.5, 1, 1.0, 3.0, 0.1)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from gymview.episodes.rows import (
    LatestStep,
    RawStep,
    action_values,
    add_logged,
    check_logged,
    check_name,
    info_values,
    number,
)

__all__ = ["KeyedStepTracker", "keyed_row_of"]


class KeyedStepTracker(LatestStep):
    """The latest step of an env of several sub-envs or agents, for ``env.log()`` and the replay's
    charts: a :class:`gymview.episodes.rows.LatestStep` whose ``log`` takes one value per key.

    Examples:
        >>> tracker = KeyedStepTracker()
        >>> tracker.record(RawStep(0, 0, {"a": 0.0}, {"a": 0.0}, {}, {}, None, None))
        >>> tracker.count, keyed_row_of(tracker.latest)["return[a]"]
        (1, 0.0)
    """

    __slots__ = ()

    def log(self, values: Mapping[str, Any], keys: Sequence[Any]) -> None:
        """Add ``values`` to the latest step's row: one number each (column ``name``), or one number
        per key (``name[key]``): a sequence of ``len(keys)`` numbers in the keys' order, or a dict by key.

        Raises:
            TypeError: When a value is neither.
            ValueError: When a name is one of the table's own columns, or a sequence's length or a
                dict's keys do not match the keys.
            RuntimeError: Before the first reset: there is no step to add them to.
        """
        checked: dict[str, float] = {}
        for name, value in values.items():
            check_name(name)
            checked.update(_per_key(name, value, keys))
        add_logged(self.latest, checked)


def _per_key(name: str, value: Any, keys: Sequence[Any]) -> dict[str, float]:
    """``{name: number}`` for one number, ``{name[key]: number}`` for one number per key."""
    if isinstance(value, Mapping):
        unknown = [key for key in value if key not in keys]
        if unknown:
            raise ValueError(f"env.log({name}=...): {unknown!r} are not among this env's {list(keys)!r}")
        return {f"{name}[{key}]": _one(name, item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) or getattr(value, "ndim", 0) >= 1:
        items = list(value)
        if len(items) != len(keys):
            raise ValueError(
                f"env.log({name}=...) got {len(items)} numbers for {len(keys)} sub-envs or agents: log one "
                "number (for all of them) or one for each"
            )
        return {f"{name}[{key}]": _one(name, item) for key, item in zip(keys, items)}
    return check_logged({name: value})


def _one(name: str, value: Any) -> float:
    found = number(value)
    if found is None:
        raise TypeError(
            f"env.log({name}=...) takes one number, or one number per sub-env or agent; "
            f"got {type(value).__name__} among them: log scalars, such as value.item()"
        )
    return found


def _items(values: Any, keys: Sequence[Any]) -> Iterable[tuple[Any, Any]]:
    if values is None:
        return ()
    if isinstance(values, Mapping):
        return values.items()
    return zip(keys, values)


def _infos_by_key(infos: Any, keyed: bool, count: int) -> dict[Any, Any]:
    """Each key's info: a PettingZoo dict by agent, an SB3 list of dicts, or gymnasium's dict of
    arrays (an entry whose mask ``_name`` is False left out for that sub-env)."""
    if infos is None:
        return {}
    if keyed:
        return dict(infos)
    if not isinstance(infos, Mapping):  # SB3's: its time limit's flag is the truncated column already
        return {index: {name: value for name, value in info.items() if name != "TimeLimit.truncated"}
                for index, info in enumerate(infos)}  # fmt: skip
    by_index: dict[Any, dict[str, Any]] = {index: {} for index in range(count)}
    for name, values in infos.items():
        if not isinstance(name, str) or name.startswith("_"):
            continue
        if not isinstance(values, np.ndarray) or values.ndim != 1 or len(values) != count:
            continue
        mask = infos.get(f"_{name}")
        for index in range(count):
            if mask is None or mask[index]:
                by_index[index][name] = values[index]
    return by_index


def keyed_row_of(raw: RawStep) -> dict[str, float | int]:
    """A raw step of several sub-envs or agents as a row: ``episode``, ``step``, then each key's
    ``reward``, ``return``, ``terminated``, ``truncated``, action and ``info``'s numbers with
    ``[key]`` after the name, then the logged values.

    >>> keyed_row_of(RawStep(2, 7, {"a": 1.0}, {"a": 3.0}, {"a": True}, {"a": False}, {"a": [0.5, 1.0]},
    ...                      {"a": {"lives": 2}}))  # doctest: +NORMALIZE_WHITESPACE
    {'episode': 2, 'step': 7, 'reward[a]': 1.0, 'return[a]': 3.0, 'terminated[a]': 1, 'truncated[a]': 0,
     'action_0[a]': 0.5, 'action_1[a]': 1.0, 'lives[a]': 2.0}
    """
    episode, step, rewards, returns = raw.episode, raw.step, raw.reward, raw.episode_return
    terminated, truncated, actions, infos, logged = raw.terminated, raw.truncated, raw.action, raw.info, raw.logged
    keyed = isinstance(rewards, Mapping)
    keys = list(rewards) if keyed else list(range(len(rewards)))
    columns: dict[Any, dict[str, float | int]] = {key: {} for key in keys}
    for key, value in _items(rewards, keys):
        columns[key]["reward"] = float(value)
    for name, values, kind in (("return", returns, float), ("terminated", terminated, bool),
                               ("truncated", truncated, bool)):  # fmt: skip
        for key, value in _items(values, keys):
            if key in columns:
                columns[key][name] = float(value) if kind is float else int(bool(value))
    for key, action in _items(actions, keys):
        found = action_values(action)
        if key not in columns or found is None:
            continue
        if isinstance(found, list):
            columns[key].update((f"action_{index}", value) for index, value in enumerate(found))
        else:
            columns[key]["action"] = found
    for key, info in _infos_by_key(infos, keyed, len(keys)).items():
        if key in columns:
            columns[key].update(info_values(info))
    row: dict[str, float | int] = {"episode": int(episode), "step": int(step)}
    for key, values in columns.items():
        row.update((f"{name}[{key}]", value) for name, value in values.items())
    if logged:
        row.update(logged)
    return row
