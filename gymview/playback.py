"""``play(env, policy)``: an agent (or a person at the keyboard) plays in a background thread, at
the env's real speed, while the cell is free and the view's buttons steer it in every front-end.

>>> import gymnasium as gym, gymview
>>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), display=False)
>>> run = gymview.play(env, lambda obs: int(obs[2] > 0), episodes=2, speed="max", seed=0)
>>> [episode["steps"] for episode in run.wait()]
[41, 32]
>>> env.close()
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from gymview._internal.background import ActiveSet, BackgroundTask
from gymview._internal.checks import check_optional_int
from gymview.errors import Stopped
from gymview.live.controls import check_speed
from gymview.watched import WatchedEnv, pettingzoo_kind, watch

__all__ = ["Run", "key_policy", "play", "running_plays"]

_running: ActiveSet[Run] = ActiveSet()


def running_plays() -> list[Run]:
    """List the ``play`` runs of this process that have not ended.

    Returns:
        The runs still going, oldest first.

    Examples:
        >>> import gymnasium as gym
        >>> run = play(gym.make("CartPole-v1", render_mode="rgb_array"), speed="max")
        >>> run in running_plays()
        True
        >>> run.stop(); run in running_plays()
        False
        >>> run.env.close()
    """
    return _running.now()


# How long stop() and close waits for the loop to reach a step boundary.
STOP_TIMEOUT_SECONDS = 10.0


def _as_policy(policy: Any, random_action: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A function obs -> action from None (``random_action``), a callable, or an object with ``predict``
    (stable-baselines3 models: their ``(action, state)`` result is unpacked, deterministic)."""
    if policy is None:
        return random_action
    predict = getattr(policy, "predict", None)
    if callable(predict):
        try:
            deterministic = "deterministic" in inspect.signature(predict).parameters
        except (TypeError, ValueError):
            deterministic = False
        keywords = {"deterministic": True} if deterministic else {}

        def act(observation: Any) -> Any:
            result = predict(observation, **keywords)
            return result[0] if isinstance(result, tuple) and len(result) == 2 else result

        return act
    if callable(policy):
        return policy
    raise TypeError(
        f"policy must be a function obs -> action, an object with predict(obs) (a stable-baselines3 "
        f"model), or None for random actions; got {type(policy).__name__}"
    )


def key_policy(
    keys: Mapping[Any, Any], noop: Any, pressed: Callable[[], frozenset[str]], space: gym.Space
) -> Callable[[Any], Any]:
    """Make a policy that maps the keys held down now to an action, like ``gymnasium.utils.play``.

    Of the combinations held, the one with the most keys wins; ``noop`` is played when none is.

    Args:
        keys: Maps a key name (the browser's ``KeyboardEvent.key``: ``"a"``, ``"ArrowLeft"``,
            ``" "``), or a tuple of names pressed together, to an action.
        noop: The action while no mapped key is held.
        pressed: Returns the names of the keys held down now.
        space: The env's action space; every action is checked against it.

    Returns:
        A function ``observation -> action``.

    Raises:
        TypeError: When ``keys`` is not a non-empty dict of key names (or tuples of them) to actions.
        ValueError: When ``noop`` is None, or an action is not in ``space``.

    Examples:
        >>> policy = key_policy({"a": 0, "d": 1, ("a", "d"): 2}, 3, lambda: frozenset({"a", "d"}),
        ...                     gym.spaces.Discrete(4))
        >>> policy(None)
        2
    """
    if not isinstance(keys, Mapping) or not keys:
        raise TypeError('keys must be a dict of key names (or tuples of them) to actions, e.g. {"a": 0, "d": 1}')
    if noop is None:
        raise ValueError("play(keys=...) needs noop=: the action taken while no mapped key is held")
    combos: list[tuple[frozenset[str], Any]] = []
    for names, action in keys.items():
        combo = frozenset([names] if isinstance(names, str) else names if isinstance(names, tuple) else [None])
        if not combo or not all(isinstance(name, str) and name for name in combo):
            raise TypeError(f"each key of keys must be a key name or a tuple of key names; got {names!r}")
        if not space.contains(np.asarray(action, dtype=space.dtype) if isinstance(space, gym.spaces.Box) else action):
            raise ValueError(f"keys[{names!r}] = {action!r} is not an action of this env's action space {space}")
        combos.append((combo, action))
    if not space.contains(np.asarray(noop, dtype=space.dtype) if isinstance(space, gym.spaces.Box) else noop):
        raise ValueError(f"noop={noop!r} is not an action of this env's action space {space}")
    combos.sort(key=lambda item: -len(item[0]))

    def act(observation: Any) -> Any:
        held = pressed()
        for combo, action in combos:
            if combo <= held:
                return action
        return noop

    return act


class Run(BackgroundTask):
    """A loop that ``play`` runs in a background thread; steer it like the view's buttons.

    ``wait()`` (or ``await run``) returns the finished episodes and re-raises an error of the loop.

    Attributes:
        env: The watched env being played.
        view: Its ``LiveView``.
        results: The finished episodes, each a dict of ``steps``, ``return``, ``terminated`` and
            ``truncated`` (for a PettingZoo env ``returns``, each agent's return, in place of ``return``).
        steps_taken: Steps taken so far, over all episodes.

    Args:
        env: The watched env to play.
        act: The policy, ``observation -> action`` (None with ``play_steps``).
        episodes: Play this many episodes (None: no limit).
        steps: Play this many steps (None: no limit).
        seed: Seed of the first reset.
        restore_speed: The view's speed to set back when the loop ends.
        play_steps: Makes the iterator that plays the env, one item a step: None, or the
            episode's result after the step that ended it (a PettingZoo env's); None plays a
            gymnasium env with ``act``.

    Examples:
        >>> import gymnasium as gym, gymview
        >>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), display=False)
        >>> run = gymview.play(env, speed="max")  # until stopped
        >>> run.pause(); run.resume()
        >>> run.stop(); run.stopped, run.done
        (True, True)
        >>> env.close()
    """

    def __init__(
        self,
        env: WatchedEnv,
        act: Callable[[Any], Any] | None,
        episodes: int | None,
        steps: int | None,
        seed: int | None,
        restore_speed: float | None,
        play_steps: Callable[[], Iterator[dict[str, Any] | None]] | None = None,
    ) -> None:
        self.env = env
        self.view = env.view
        self._controls = env.feed.controls
        self.results: list[dict[str, Any]] = []
        self.steps_taken = 0
        self._act = act
        self._play_steps = play_steps or self._gym_steps
        self._episodes = episodes
        self._steps = steps
        self._seed = seed
        self._restore_speed = restore_speed
        self._error: BaseException | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._main, name="gymview-play", daemon=True)
        self.begin(_running)
        # Closing the env first ends this loop (unless the loop itself closes it).
        self._forget_close_hook = env.feed.on_close(lambda: None if self.in_loop_thread() else self.stop())
        self._thread.start()

    # -- the buttons, from Python ---------------------------------------------------------------
    def pause(self) -> None:
        """Hold the loop before its next step, as the view's Pause button does."""
        self._controls.pause()

    def resume(self) -> None:
        """Let a paused loop run on, as the view's Resume button does."""
        self._controls.resume()

    def step(self) -> None:
        """Let exactly one more step through (pausing a running loop first)."""
        self._controls.step()

    def stop(self, timeout: float = STOP_TIMEOUT_SECONDS) -> None:
        """End the loop at the next step boundary and wait for it; safe to call twice.

        Args:
            timeout: Seconds to wait for the step boundary at most.

        Raises:
            TimeoutError: When the loop does not reach a step boundary in time (a slow ``env.step``).
        """
        if not self._finished.is_set():
            self._controls.stop()
            if not self._finished.wait(timeout):
                raise TimeoutError(f"the play loop did not reach a step boundary within {timeout} s (a slow env.step?)")

    def in_loop_thread(self) -> bool:
        """Tell whether the caller runs in this run's loop thread.

        Returns:
            True in the loop thread (the policy, an env wrapper), False elsewhere.
        """
        return threading.current_thread() is self._thread

    @property
    def stopped(self) -> bool:
        """True when the loop ended because of Stop (the button, ``stop()``, an interrupt)."""
        return self._stopped

    def wait(self, timeout: float | None = None) -> list[dict[str, Any]]:
        """Wait until the loop ends.

        A kernel interrupt (or Ctrl-C) while waiting stops the loop at a step boundary first.

        Args:
            timeout: Seconds to wait at most (None: until the loop ends).

        Returns:
            ``results``: the finished episodes.

        Raises:
            TimeoutError: When the loop is still running after ``timeout``.
            Exception: The loop's own error (the policy's or the env's), re-raised.
        """
        self.wait_for_end(
            timeout,
            on_interrupt=self.stop,
            still_running=f"the play loop is still running after {timeout} s; run.stop() ends it",
        )
        if self._error is not None:
            raise self._error
        return self.results

    def __repr__(self) -> str:
        state = "running" if not self.done else "stopped" if self._stopped else "failed" if self._error else "finished"
        return f"<gymview.Run {state}: {len(self.results)} episodes, {self.steps_taken} steps>"

    # -- the loop thread ------------------------------------------------------------------------
    def _main(self) -> None:
        controls = self._controls
        try:
            self._loop()
        except Stopped:
            self._stopped = True
        except BaseException as error:  # kept for wait(); shown in the view now
            self._error = error
            self.env.feed.report(f"play stopped: {type(error).__name__}: {error}")
        finally:
            controls.set_speed(self._restore_speed)
            controls.set_keys(())
            self.env.feed.take_keys(False)
            try:
                self.env.feed.show_final_frame()
            except Exception as error:  # the loop's own error comes first
                if self._error is None:
                    self._error = error
            finally:
                self._forget_close_hook()
                self.end()

    def _loop(self) -> None:
        for finished in self._play_steps():  # one item a step: the episode's result if it ended there
            self.steps_taken += 1
            if finished is not None:
                self.results.append(finished)
                if self._episodes is not None and len(self.results) >= self._episodes:
                    return
            if self._steps is not None and self.steps_taken >= self._steps:
                return

    def _gym_steps(self) -> Iterator[dict[str, Any] | None]:
        act = self._act
        assert act is not None  # play() gives a gymnasium env a policy (or the keys')
        observation, _ = self.env.reset(seed=self._seed)
        steps, episode_return = 0, 0.0
        while True:
            observation, reward, terminated, truncated, _ = self.env.step(act(observation))
            steps += 1
            episode_return += float(reward)
            if not (terminated or truncated):
                yield None
                continue
            yield {
                "steps": steps,
                "return": episode_return,
                "terminated": bool(terminated),
                "truncated": bool(truncated),
            }
            observation, _ = self.env.reset()
            steps, episode_return = 0, 0.0


def play(
    env: Any,
    policy: Any = None,
    episodes: int | None = None,
    steps: int | None = None,
    speed: float | str | None = 1.0,
    keys: Mapping[Any, Any] | None = None,
    noop: Any = None,
    seed: int | None = None,
    agent: Any = None,
) -> Run:
    """Play ``env`` in a background thread at ``speed`` times its real time; returns at once.

    The view's Pause / Step / Stop / Speed and ``run.pause()``, ``run.step()``, ``run.stop()``
    steer it; errors show in the view and ``run.wait()`` re-raises them. A PettingZoo env plays
    every agent with ``policy``, or a person plays ``agent`` with ``keys`` against it (see the
    PettingZoo guide).

    Args:
        env: A watched env (``gymview.watch(...)``), or one made with ``render_mode="rgb_array"``
            (then watched here): a gymnasium env, or a PettingZoo AEC or Parallel env.
        policy: A function ``obs -> action``, an object with ``predict(obs)`` such as a
            stable-baselines3 model (played deterministically), or None for random actions. For
            a PettingZoo env also a function ``(obs, agent) -> action``, or a dict of agent name to
            any of these (agents it leaves out play random actions, within the observation's
            ``action_mask``).
        episodes: Play this many episodes (None: until Stop, unless ``steps`` ends it).
        steps: Play this many steps (None: until Stop, unless ``episodes`` ends it); in a
            PettingZoo AEC env a step is one agent's move.
        speed: 1.0 plays the env's ``metadata["render_fps"]`` steps a second; ``"max"`` (or None)
            does not pace.
        keys: For a person playing from the view (click it, then press keys): key names, or tuples
            of names pressed together, to actions, e.g. ``{"a": 0, "d": 1}``. Not with ``policy``,
            except in a PettingZoo env, where the person plays ``agent`` and ``policy`` the others.
        noop: With ``keys``, the action while no mapped key is held. In a PettingZoo AEC env,
            None makes each of the person's moves wait for a key press (turn-based games).
        seed: Seed of the first reset.
        agent: In a PettingZoo env, the agent the person plays with ``keys`` (the first of
            ``env.possible_agents`` when None).

    Returns:
        A ``Run``, already playing.

    Raises:
        TypeError: When ``env`` is not one gymnasium env or PettingZoo env, or ``policy``, ``keys``
            or ``speed`` has the wrong type.
        ValueError: When ``episodes``, ``steps`` or ``speed`` is out of range; when both ``policy``
            and ``keys`` are given for a gymnasium env; when ``keys`` comes without ``noop`` (but
            for a PettingZoo AEC env) or maps to actions the env does not have; when ``agent``
            is not one of the env's agents, or comes without ``keys``.
        RuntimeError: When the env is already playing in another run.

    Examples:
        >>> import gymnasium as gym
        >>> env = gym.make("CartPole-v1", render_mode="rgb_array")
        >>> run = play(env, steps=5, speed="max")
        >>> run.wait(), run.steps_taken
        ([], 5)
        >>> run.env.close()
    """
    check_optional_int("episodes", episodes, meaning_of_none="until stopped")
    check_optional_int("steps", steps, meaning_of_none="until stopped")
    speed = check_speed(speed)
    if pettingzoo_kind(env) is not None:
        env, act, play_steps = _agents_playing(env, policy, keys, noop, seed, agent)
    else:
        if agent is not None:
            raise ValueError("play(agent=...) names the agent a person plays in a PettingZoo env; leave it out here")
        if not isinstance(env, WatchedEnv):
            if not isinstance(env, gym.Env):
                raise TypeError(
                    f"play() takes one gymnasium env (gym.make(id, render_mode='rgb_array')), a PettingZoo env, or "
                    f"gymview.watch() of one; got {type(env).__name__}. A vector env trains, it is not watched "
                    f"playing: play one of its envs"
                )
            env = watch(env)
        play_steps = None
        if keys is not None:
            if policy is not None:
                raise ValueError("play() takes a policy or keys (a person playing), not both")
            act = key_policy(keys, noop, lambda: env.feed.controls.keys_down, env.action_space)
        else:
            act = _as_policy(policy, lambda observation: env.action_space.sample())
    if any(run.env is env for run in running_plays()):
        raise RuntimeError(
            "this env is already playing: run.stop() the other run first (two loops cannot step one env)"
        )
    if keys is not None:
        env.feed.take_keys(True)
    controls = env.feed.controls
    restore = controls.speed
    controls.set_keys(())
    controls.resume()
    controls.set_speed(speed)
    return Run(env, act, episodes, steps, seed, restore, play_steps)


def _agents_playing(
    env: Any, policy: Any, keys: Mapping[Any, Any] | None, noop: Any, seed: int | None, agent: Any
) -> tuple[Any, None, Callable[[], Iterator[dict[str, Any] | None]]]:
    """A PettingZoo env (watched here if it is not yet), a policy per agent (a person's keys for
    ``agent``) and its steps, for ``play``."""
    from gymview.integrations.pettingzoo import WatchedAECEnv, WatchedParallelEnv
    from gymview.integrations.pettingzoo_play import aec_steps, agent_policies, parallel_steps, turn_policy

    if not isinstance(env, (WatchedAECEnv, WatchedParallelEnv)):
        env = watch(env)
    parallel = isinstance(env, WatchedParallelEnv)
    policies = agent_policies(env, policy, _as_policy)
    if keys is None and agent is not None:
        raise ValueError("play(agent=...) names the agent a person plays with keys=...; give keys too")
    if keys is not None:
        agents = list(env.possible_agents)
        agent = agents[0] if agent is None else agent
        if agent not in agents:
            raise ValueError(f"play(agent={agent!r}): this env's agents are {agents}")
        if isinstance(policy, Mapping) and policy.get(agent) is not None:
            raise ValueError(
                f"policy gives {agent!r} a policy, but the person plays it with keys: leave it out of policy"
            )
        if noop is not None:
            policies[agent] = key_policy(keys, noop, lambda: env.feed.controls.keys_down, env.action_space(agent))
        elif parallel:
            raise ValueError(
                "play(keys=...) of a Parallel env needs noop=: every agent moves at each step, the "
                "person's agent plays noop while no mapped key is held"
            )
        else:
            policies[agent] = turn_policy(env, agent, keys, env.feed)
    steps_of = parallel_steps if parallel else aec_steps
    return env, None, lambda: steps_of(env, policies, seed)
