"""What the benchmarks that measure a watched loop share: the loop itself, counted in slices of time, and
``gymview.watch``'s wrapper with parts of its step taken out (what it was before they existed).

    from watched_loops import steps_in, without_bookkeeping   # benchmarks/ on sys.path
"""

from __future__ import annotations

import time
from typing import Any


def steps_in(env: Any, seconds: float) -> int:
    """How many steps ``env`` takes in ``seconds`` of wall time (``env.step(0)``, resetting at episode ends),
    counted in batches of 100: one slice of a paired comparison."""
    count, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(100):
            _, _, terminated, truncated, _ = env.step(0)
            if terminated or truncated:
                env.reset()
        count += 100
    return count


def without_bookkeeping(env: Any, controls: bool) -> Any:
    """``env`` (made by ``gymview.watch``) stepping without its step data (the replay's charts), and without
    ``controls`` also without the check of the view's buttons; returns ``env``."""
    from gymview.watched import WatchedEnv

    class Bare(WatchedEnv):
        steps_taken = 0  # the count and return the wrapper kept before it kept each step
        return_so_far = 0.0

        def step(self, action):
            if controls and self._controls.engaged:
                self.feed.obey_controls()
            result = self.env.step(action)
            self.steps_taken += 1
            self.return_so_far += result[1]
            if time.perf_counter() >= self._next_check:
                self._next_check = self.feed.show()
            return result

        def reset(self, **kwargs):  # no step data: nothing recorded at a reset either
            self.feed.before_reset()
            result = self.env.reset(**kwargs)
            self.episode += 1
            self.return_so_far = 0.0
            return result

    env.__class__ = Bare
    return env
