"""RunningReturns: the running episode return of each sub-env of a vector env, kept step by step.

A watched vector env (gymnasium's, or stable-baselines3's ``VecEnv``) adds every step's rewards here. On arrays
of a few numbers each numpy call costs far more than its arithmetic, so a step that ends no episode makes two
calls, and the running returns are replaced at each step rather than changed in place: the array a step returns
is that step's own, kept for its row without a copy.

>>> import numpy as np
>>> returns = RunningReturns(2)
>>> returns.add(np.array([1.0, 2.0], np.float32), np.array([False, True]))
(array([1., 2.]), 1)
>>> returns.running.tolist(), returns.episodes_done, returns.last_return
([1.0, 0.0], 1, 2.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["RunningReturns"]


class RunningReturns:
    """The running returns of ``num_envs`` sub-envs (``running``), the vector steps added (``total_steps``), the
    episodes they ended (``episodes_done``) and the return of the episode that ended last (``last_return``, None
    before the first)."""

    def __init__(self, num_envs: int) -> None:
        self.running = np.zeros(num_envs)
        self.total_steps = 0
        self.episodes_done = 0
        self.last_return: float | None = None

    def add(self, rewards: Any, ends: Any) -> tuple[np.ndarray, int]:
        """Add a step's ``rewards`` (one a sub-env); ``ends`` says which sub-envs' episodes it ended. Returns the
        running returns after the rewards, before the ended episodes' are set back to 0 (a new array), and how
        many episodes the step ended."""
        self.total_steps += 1
        returns = self.running = self.running + rewards
        ended = int(np.count_nonzero(ends))
        if ended:
            finished = np.asarray(ends, dtype=bool)
            self.episodes_done += ended
            self.last_return = float(returns[finished][-1])
            self.running = np.where(finished, 0.0, returns)
        return returns, ended

    def restart(self, mask: Any = None) -> None:
        """The sub-envs in ``mask`` (a bool per sub-env; all without one) start episodes: their returns are 0.

        >>> returns = RunningReturns(2)
        >>> _ = returns.add([1.0, 1.0], [False, False]); returns.restart([True, False]); returns.running.tolist()
        [0.0, 1.0]
        """
        self.running = np.zeros(len(self.running)) if mask is None else np.where(mask, 0.0, self.running)

    def info(self) -> dict[str, Any]:
        """The status line's ``step``, ``episode`` and ``episode_return``."""
        return {"step": self.total_steps, "episode": self.episodes_done, "episode_return": self.last_return}
