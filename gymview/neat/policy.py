"""GenomePolicy: a genome as ``policy(observation) -> action``, picklable, for play and record_batch."""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np

from gymview.neat._neat import neat_module
from gymview.neat.config import SpaceMapping, spaces_of


class GenomePolicy:
    """A genome as ``policy(observation) -> action``, picklable, for ``gymview.play`` and ``gymview.record_batch``.

    Calling it acts with the network of ``genome``: the argmax of the outputs for Discrete actions,
    tanh outputs scaled to the bounds for Box actions. Recurrent networks keep their state between
    calls; ``reset`` clears it (call it at each episode start). The network is built on first use,
    and again after unpickling.

    Args:
        genome: A neat genome.
        config: The ``neat.Config`` the genome was evolved with (feed-forward or recurrent).
        env: The env to act in (only its spaces are read), or a ``SpaceMapping`` from ``spaces_of``.
        action_space: The env's action space; needed with a ``SpaceMapping``, unused with an env.

    Raises:
        TypeError: When ``env`` is a ``SpaceMapping`` and ``action_space`` is None.

    Examples:
        >>> import gymview.neat as gn
        >>> env = gym.make("CartPole-v1")
        >>> config = gn.config_for(env, pop_size=10)
        >>> import neat
        >>> genome = next(iter(neat.Population(config, seed=0).population.values()))
        >>> policy = GenomePolicy(genome, config, env)
        >>> policy(env.reset(seed=0)[0]) in (0, 1)
        True
    """

    def __init__(
        self, genome: Any, config: Any, env: gym.Env | SpaceMapping, action_space: gym.Space | None = None
    ) -> None:
        self.observation_start = 0  # Discrete observations are one-hot from their space's start
        if isinstance(env, gym.Env):
            self.mapping, self.action_space = spaces_of(env), env.action_space
            if isinstance(env.observation_space, gym.spaces.Discrete):
                self.observation_start = int(env.observation_space.start)
        else:
            if action_space is None:
                raise TypeError("GenomePolicy(genome, config, mapping) needs action_space= too")
            self.mapping, self.action_space = env, action_space
        self._action_start = int(self.action_space.start) if isinstance(self.action_space, gym.spaces.Discrete) else 0
        self.genome = genome
        self.config = config
        self._network: Any = None

    @property
    def network(self) -> Any:
        """The genome's ``neat.nn`` network (feed-forward or recurrent, as the config says), built on first use."""
        if self._network is None:
            neat = neat_module()
            kind = neat.nn.FeedForwardNetwork if self.config.genome_config.feed_forward else neat.nn.RecurrentNetwork
            self._network = kind.create(self.genome, self.config)
        return self._network

    def reset(self) -> None:
        """Forget a recurrent network's state, for a new episode; a feed-forward network has none.

        Examples:
            >>> import gymview.neat as gn, neat
            >>> config = gn.config_for("CartPole-v1", pop_size=10, recurrent=True)
            >>> genome = next(iter(neat.Population(config, seed=0).population.values()))
            >>> policy = GenomePolicy(genome, config, gym.make("CartPole-v1"))
            >>> policy([0.0, 0.1, 0.0, -0.1]) in (0, 1)
            True
            >>> policy.reset()
        """
        if self._network is not None and hasattr(self._network, "reset"):
            self._network.reset()

    def inputs(self, observation: Any) -> list[float]:
        """Turn an observation into the network's inputs.

        Args:
            observation: An observation of the env: Box ones are flattened, Discrete ones one-hot.

        Returns:
            The inputs, one float each.

        Examples:
            >>> import gymview.neat as gn, neat
            >>> env = gym.make("FrozenLake-v1")
            >>> config = gn.config_for(env, pop_size=10)
            >>> genome = next(iter(neat.Population(config, seed=0).population.values()))
            >>> GenomePolicy(genome, config, env).inputs(2)[:4]
            [0.0, 0.0, 1.0, 0.0]
        """
        if self.mapping.observation == "discrete":
            one_hot = [0.0] * self.mapping.inputs
            one_hot[int(observation) - self.observation_start] = 1.0
            return one_hot
        if isinstance(observation, np.ndarray) and observation.ndim == 1:
            return observation.tolist()  # the common case, kept cheap: it runs every step
        return np.asarray(observation, dtype=np.float64).ravel().tolist()

    def __call__(self, observation: Any) -> Any:
        outputs = self.network.activate(self.inputs(observation))
        if self.mapping.action == "discrete":
            return self._action_start + max(range(len(outputs)), key=outputs.__getitem__)  # argmax, first on ties
        space = cast(gym.spaces.Box, self.action_space)  # the mapping's other kind of action
        scaled = space.low + (np.clip(np.asarray(outputs, dtype=np.float64), -1.0, 1.0) + 1.0) / 2.0 * (
            space.high - space.low
        )
        return scaled.reshape(space.shape).astype(space.dtype)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_network": None}  # rebuilt where it is used

    def __repr__(self) -> str:
        fitness = getattr(self.genome, "fitness", None)
        return f"<GenomePolicy genome {self.genome.key}, fitness {fitness}>"
