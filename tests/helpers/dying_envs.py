"""An env factory whose env ends the worker process that resets it with one chosen seed, as a native
crash would: importable, so worker processes unpickle it by reference."""

import os
import signal
from pathlib import Path

import gymnasium as gym


class DiesOnSeed:
    """Makes CartPole (``rgb_array``) that ends its process when reset with ``seed``: ``os._exit(exit_code)``,
    or SIGKILL when ``exit_code`` is None. With ``once``, a file, only the first time (the file is made then).
    Never in the process that made the factory: there it raises instead."""

    def __init__(self, seed: int, exit_code: int | None = None, once: Path | None = None):
        self.seed, self.exit_code, self.once = seed, exit_code, once
        self.owner = os.getpid()

    def __call__(self) -> gym.Env:
        return _Dying(gym.make("CartPole-v1", render_mode="rgb_array"), self)


class _Dying(gym.Wrapper):
    def __init__(self, env: gym.Env, how: DiesOnSeed):
        super().__init__(env)
        self.how = how

    def reset(self, *, seed=None, options=None):
        how = self.how
        if seed == how.seed and not (how.once is not None and how.once.exists()):
            if os.getpid() == how.owner:
                raise RuntimeError("DiesOnSeed would end the test's own process")
            if how.once is not None:
                how.once.touch()
            if how.exit_code is None:
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(how.exit_code)
        return self.env.reset(seed=seed, options=options)
