"""RunningReturns: the running episode return of each sub-env of a vector env, kept step by step.

A watched vector env (gymnasium's, or stable-baselines3's ``VecEnv``) adds every step's rewards here. On arrays
of a few numbers each numpy call costs far more than its arithmetic (about a microsecond on a 2-core VM, more in a
kernel while torch trains), so a step that ends no episode makes three: the rewards added in place, the returns
copied for the step's row, the ended episodes counted.

>>> import numpy as np
>>> returns = RunningReturns(2)
>>> returns.add(np.array([1.0, 2.0], np.float32), np.array([False, True]))
(array([1., 2.]), 1)
>>> returns.running.tolist(), returns.episodes_done, returns.last_return
([1.0, 0.0], 1, 2.0)
>>> returns.add([[1.0], [2.0]], [False, False])  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
ValueError: the vector env's step gave rewards of shape (2, 1), not one number for each of its 2 sub-envs; ...
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["RunningReturns"]


class RunningReturns:
    """The running returns of ``num_envs`` sub-envs (``running``), the vector steps added (``total_steps``), the
    episodes they ended (``episodes_done``) and the return of the episode that ended last (``last_return``, None
    before the first). ``no_ends`` is one read-only all-false bool a sub-env: the ends of every row that has none."""

    def __init__(self, num_envs: int) -> None:
        self.no_ends = np.zeros(num_envs, dtype=bool)
        self.no_ends.flags.writeable = False
        self.running = np.zeros(num_envs)
        self.total_steps = 0
        self.episodes_done = 0
        self.last_return: float | None = None

    def add(self, rewards: Any, ends: Any) -> tuple[np.ndarray, int]:
        """Add a step's ``rewards`` (one a sub-env: an array, a list, a tensor on the CPU); ``ends`` says which
        sub-envs' episodes it ended. Returns the running returns after the rewards, before the ended episodes' are
        set back to 0 (a copy, the step's own), and how many episodes the step ended.

        Raises:
            ValueError: When ``rewards`` do not hold one number a sub-env.
        """
        running = self.running
        try:
            running += np.asarray(rewards, dtype=float)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"the vector env's step gave rewards of shape {np.shape(rewards)}, not one number for each of its "
                f"{len(running)} sub-envs; check what its step() returns as rewards"
            ) from error
        self.total_steps += 1
        returns = running.copy()
        ended = int(np.count_nonzero(ends))
        if ended:
            finished = np.asarray(ends, dtype=bool)
            self.episodes_done += ended
            self.last_return = float(running[finished][-1])
            running[finished] = 0.0
        return returns, ended

    def restart(self, mask: Any = None) -> None:
        """The sub-envs in ``mask`` (a bool per sub-env; all without one) start episodes: their returns are 0.

        >>> returns = RunningReturns(2)
        >>> _ = returns.add([1.0, 1.0], [False, False]); returns.restart([True, False]); returns.running.tolist()
        [0.0, 1.0]
        """
        self.running[slice(None) if mask is None else np.asarray(mask, dtype=bool)] = 0.0

    def info(self) -> dict[str, Any]:
        """The status line's ``step``, ``episode`` and ``episode_return``."""
        return {"step": self.total_steps, "episode": self.episodes_done, "episode_return": self.last_return}
