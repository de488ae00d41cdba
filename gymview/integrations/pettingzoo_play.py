"""What ``gymview.play`` runs for a watched PettingZoo env: a policy per agent, a person's keys for
one of them, and the episodes of AEC and Parallel envs as steps.

Each episode generator yields once per step (an AEC move, or a Parallel step of all agents): None,
or the finished episode's result when that step ended it (``steps``, ``returns`` per agent,
``terminated``, ``truncated``), so ``play`` can stop after any number of steps or episodes.

>>> import gymview
>>> from pettingzoo.classic import tictactoe_v3
>>> env = gymview.watch(tictactoe_v3.env(render_mode="rgb_array"), display=False)
>>> policies = agent_policies(env, None, lambda policy, random_action: policy or random_action)
>>> results = [event for _, event in zip(range(20), aec_steps(env, policies, seed=0)) if event]
>>> results[0]["steps"] >= 5 and set(results[0]["returns"]) == {"player_1", "player_2"}
True
>>> env.close()
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterator, Mapping
from time import perf_counter
from typing import Any

import numpy as np

from gymview.live.feed import ViewFeed

__all__ = ["aec_steps", "agent_policies", "parallel_steps", "turn_policy"]

# How often a loop waiting for a person's move looks at the keys pressed.
KEY_POLL_SECONDS = 0.02

Policy = Callable[[Any], Any]


def action_mask(observation: Any) -> np.ndarray | None:
    """The ``action_mask`` of a PettingZoo observation (classic games give one), or None.

    Args:
        observation: An agent's observation.

    Returns:
        The mask as int8 (1: the action is allowed), or None.

    Examples:
        >>> action_mask({"observation": 0, "action_mask": [0, 1]}).tolist(), action_mask([0.5])
        ([0, 1], None)
    """
    if isinstance(observation, Mapping) and "action_mask" in observation:
        return np.asarray(observation["action_mask"], dtype=np.int8)
    return None


def _random_action(env: Any, agent: Any) -> Policy:
    space = env.action_space(agent)
    return lambda observation: space.sample(action_mask(observation))


def _takes_agent(policy: Any) -> bool:
    """Whether a function is called as ``policy(observation, agent)`` (it takes two arguments)."""
    try:
        inspect.signature(policy).bind(None, None)
    except (TypeError, ValueError):
        return False
    return True


def agent_policies(env: Any, policy: Any, convert: Callable[[Any, Policy], Policy]) -> dict[Any, Policy]:
    """One ``observation -> action`` function per agent of ``env.possible_agents``.

    Args:
        env: A watched PettingZoo env.
        policy: None (random actions, within the observation's ``action_mask`` where there is
            one); a function ``obs -> action`` or ``(obs, agent) -> action``, or an object with
            ``predict`` (a stable-baselines3 model), for every agent; or a dict of agent name to
            any of these, the agents it leaves out playing random actions.
        convert: ``convert(policy, random_action)`` makes one agent's function (``play``'s own
            conversion: a model's ``predict``, None as ``random_action``).

    Returns:
        Agent name -> its function.

    Raises:
        ValueError: When the dict names an agent the env does not have.

    Examples:
        >>> from pettingzoo.classic import tictactoe_v3
        >>> env = tictactoe_v3.env()
        >>> policies = agent_policies(env, {"player_1": lambda obs, agent: 4}, lambda p, random: p or random)
        >>> policies["player_1"]({"action_mask": [1] * 9}), sorted(policies)
        (4, ['player_1', 'player_2'])
    """
    agents = list(env.possible_agents)
    chosen = policy if isinstance(policy, Mapping) else dict.fromkeys(agents, policy)
    unknown = [agent for agent in chosen if agent not in agents]
    if unknown:
        raise ValueError(f"policy names agents this env does not have: {unknown}; its agents are {agents}")

    def of(agent: Any) -> Policy:
        own = chosen.get(agent)
        if own is not None and not callable(getattr(own, "predict", None)) and callable(own) and _takes_agent(own):
            own = (lambda function: lambda observation: function(observation, agent))(own)
        return convert(own, _random_action(env, agent))

    return {agent: of(agent) for agent in agents}


def turn_policy(env: Any, agent: Any, keys: Mapping[Any, Any], feed: ViewFeed) -> Policy:
    """A person's moves in a turn-based game: each waits for a key press in the view.

    The view's Stop (or ``run.stop()``) ends the wait; a key whose action the observation's
    ``action_mask`` forbids (a full column) is ignored.

    Args:
        env: A watched PettingZoo AEC env.
        agent: The agent the person plays.
        keys: Key name (the browser's ``KeyboardEvent.key``) -> action, e.g. ``{"1": 0, "2": 1}``.
        feed: The env's view feed (its controls hear the keys).

    Returns:
        A function ``observation -> action`` that returns once a mapped key is pressed.

    Raises:
        TypeError: When ``keys`` is not a non-empty dict of key names to actions.
        ValueError: When an action is not in the agent's action space.

    Examples:
        >>> import gymview
        >>> from pettingzoo.classic import tictactoe_v3
        >>> env = gymview.watch(tictactoe_v3.env(render_mode="rgb_array"), display=False)
        >>> move = turn_policy(env, "player_1", {str(n + 1): n for n in range(9)}, env.feed)
        >>> env.feed.controls.press("5", True)
        >>> move({"action_mask": [1] * 9})
        4
        >>> env.close()
    """
    if not isinstance(keys, Mapping) or not keys:
        raise TypeError('keys must be a dict of key names to actions, e.g. {"1": 0, "2": 1}')
    space = env.action_space(agent)
    for name, action in keys.items():
        if not isinstance(name, str) or not name:
            raise TypeError(
                f"in a turn-based game each key of keys is one key name (a move is one key press); got {name!r}. "
                "Keys held together work with noop= (real-time play)"
            )
        if not space.contains(action):
            raise ValueError(f"keys[{name!r}] = {action!r} is not an action of {agent}'s action space {space}")
    controls = feed.controls

    def act(observation: Any) -> Any:
        mask = action_mask(observation)
        while True:
            controls.before_reset()  # raises gymview.Stopped after Stop: the wait is a step boundary
            for key in controls.take_presses():
                if key in keys and (mask is None or mask[keys[key]]):
                    return keys[key]
            if perf_counter() >= feed.next_check:
                feed.show()  # frames keep going out; on ipykernel 6 this also fetches the clicks
            time.sleep(KEY_POLL_SECONDS)

    return act


def _result(steps: int, env: Any, terminated: bool, truncated: bool) -> dict[str, Any]:
    return {"steps": steps, "returns": dict(env.returns), "terminated": terminated, "truncated": truncated}


def aec_steps(env: Any, policies: Mapping[Any, Policy], seed: int | None) -> Iterator[dict[str, Any] | None]:
    """Play a watched AEC env's episodes, one after another, yielding after each move.

    Args:
        env: A watched PettingZoo AEC env.
        policies: Agent name -> ``observation -> action``.
        seed: The seed of the first reset.

    Yields:
        None after a move, or the episode's result after the move that ended it (once the agents
            that finished have left).

    Examples:
        >>> import gymview
        >>> from pettingzoo.classic import connect_four_v3
        >>> env = gymview.watch(connect_four_v3.env(render_mode="rgb_array"), display=False)
        >>> first = {"player_0": lambda obs: 0, "player_1": lambda obs: 1}
        >>> next(event for event in aec_steps(env, first, seed=0) if event)
        {'steps': 7, 'returns': {'player_0': 1.0, 'player_1': -1.0}, 'terminated': True, 'truncated': False}
        >>> env.close()
    """
    env.reset(seed=seed)
    while True:
        steps, terminated, truncated, moved = 0, False, False, False
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                terminated, truncated = terminated or bool(termination), truncated or bool(truncation)
                env.step(None)  # the finished agent leaves
                continue
            if moved:
                yield None  # the move before this one did not end the episode
            env.step(policies[agent](observation))
            steps, moved = steps + 1, True
        yield _result(steps, env, terminated, truncated)
        env.reset()


def parallel_steps(env: Any, policies: Mapping[Any, Policy], seed: int | None) -> Iterator[dict[str, Any] | None]:
    """Play a watched Parallel env's episodes, one after another, yielding after each step.

    Args:
        env: A watched PettingZoo Parallel env.
        policies: Agent name -> ``observation -> action``.
        seed: The seed of the first reset.

    Yields:
        None after a step, or the episode's result after the step that ended it (no agents left).

    Examples:
        >>> import gymview
        >>> from pettingzoo.butterfly import pistonball_v6
        >>> env = gymview.watch(pistonball_v6.parallel_env(render_mode="rgb_array", max_cycles=4), display=False)
        >>> policies = {agent: (lambda obs: np.zeros(1, np.float32)) for agent in env.possible_agents}
        >>> result = next(event for event in parallel_steps(env, policies, seed=0) if event)
        >>> result["steps"], result["truncated"]
        (4, True)
        >>> env.close()
    """
    observations, _ = env.reset(seed=seed)
    while True:
        steps, terminated, truncated = 0, False, False
        while env.agents:
            actions = {agent: policies[agent](observations[agent]) for agent in env.agents}
            observations, _, terminations, truncations, _ = env.step(actions)
            steps += 1
            terminated = terminated or any(terminations.values())
            truncated = truncated or any(truncations.values())
            if env.agents:
                yield None
        yield _result(steps, env, terminated, truncated)
        observations, _ = env.reset()
