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
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from gymview._internal.background import ActiveSet, BackgroundTask
from gymview._internal.checks import check_optional_int
from gymview.errors import Stopped
from gymview.live.controls import check_speed
from gymview.watched import WatchedEnv, watch

__all__ = ["play", "Run", "key_policy", "running_plays"]

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


def _as_policy(policy: Any, env: gym.Env) -> Callable[[Any], Any]:
    """A function obs -> action from None (random), a callable, or an object with ``predict``
    (stable-baselines3 models: their ``(action, state)`` result is unpacked, deterministic)."""
    if policy is None:
        return lambda observation: env.action_space.sample()
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


def key_policy(keys: Mapping[Any, Any], noop: Any, pressed: Callable[[], frozenset[str]],
               space: gym.Space) -> Callable[[Any], Any]:
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
            ``truncated``.
        steps_taken: Steps taken so far, over all episodes.

    Args:
        env: The watched env to play.
        act: The policy, ``observation -> action``.
        episodes: Play this many episodes (None: no limit).
        steps: Play this many steps (None: no limit).
        seed: Seed of the first reset.
        restore_speed: The view's speed to set back when the loop ends.

    Examples:
        >>> import gymnasium as gym, gymview
        >>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), display=False)
        >>> run = gymview.play(env, speed="max")  # until stopped
        >>> run.pause(); run.resume()
        >>> run.stop(); run.stopped, run.done
        (True, True)
        >>> env.close()
    """

    def __init__(self, env: WatchedEnv, act: Callable[[Any], Any], episodes: int | None, steps: int | None,
                 seed: int | None, restore_speed: float | None) -> None:
        self.env = env
        self.view = env.view
        self._controls = env.feed.controls
        self.results: list[dict[str, Any]] = []
        self.steps_taken = 0
        self._act = act
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
        self.wait_for_end(timeout, on_interrupt=self.stop,
                          still_running=f"the play loop is still running after {timeout} s; run.stop() ends it")
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
        observation, _ = self.env.reset(seed=self._seed)
        steps, episode_return = 0, 0.0
        while self._steps is None or self.steps_taken < self._steps:
            observation, reward, terminated, truncated, _ = self.env.step(self._act(observation))
            steps += 1
            self.steps_taken += 1
            episode_return += float(reward)
            if terminated or truncated:
                self.results.append({"steps": steps, "return": episode_return,
                                     "terminated": bool(terminated), "truncated": bool(truncated)})
                if self._episodes is not None and len(self.results) >= self._episodes:
                    return
                observation, _ = self.env.reset()
                steps, episode_return = 0, 0.0


def play(
    env: gym.Env,
    policy: Any = None,
    episodes: int | None = None,
    steps: int | None = None,
    speed: float | str | None = 1.0,
    keys: Mapping[Any, Any] | None = None,
    noop: Any = None,
    seed: int | None = None,
) -> Run:
    """Play ``env`` in a background thread at ``speed`` times its real time; returns at once.

    The view's Pause / Step / Stop / Speed and ``run.pause()``, ``run.step()``, ``run.stop()``
    steer it; errors show in the view and ``run.wait()`` re-raises them.

    Args:
        env: A watched env (``gymview.watch(...)``), or one made with ``render_mode="rgb_array"``
            (then watched here).
        policy: A function ``obs -> action``, an object with ``predict(obs)`` such as a
            stable-baselines3 model (played deterministically), or None for random actions.
        episodes: Play this many episodes (None: until Stop, unless ``steps`` ends it).
        steps: Play this many steps (None: until Stop, unless ``episodes`` ends it).
        speed: 1.0 plays the env's ``metadata["render_fps"]`` steps a second; ``"max"`` (or None)
            does not pace.
        keys: For a person playing from the view (click it, then hold keys): key names, or tuples
            of names pressed together, to actions, e.g. ``{"a": 0, "d": 1}``. Not with ``policy``.
        noop: With ``keys``, the action while no mapped key is held.
        seed: Seed of the first reset.

    Returns:
        A ``Run``, already playing.

    Raises:
        TypeError: When ``env`` is not one gymnasium env, or ``policy``, ``keys`` or ``speed`` has
            the wrong type.
        ValueError: When ``episodes``, ``steps`` or ``speed`` is out of range; when both ``policy``
            and ``keys`` are given; when ``keys`` comes without ``noop`` or maps to actions the env
            does not have.
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
    if not isinstance(env, WatchedEnv):
        if isinstance(env, gym.Env):
            env = watch(env)
        else:
            raise TypeError(
                f"play() takes one gymnasium env (gym.make(id, render_mode='rgb_array')) or gymview.watch() "
                f"of one; got {type(env).__name__}. A vector env trains, it is not watched playing: play one of its envs"
            )
    if keys is not None:
        if policy is not None:
            raise ValueError("play() takes a policy or keys (a person playing), not both")
        act = key_policy(keys, noop, lambda: env.feed.controls.keys_down, env.action_space)
        env.feed.take_keys(True)
    else:
        act = _as_policy(policy, env)
    if any(run.env is env for run in running_plays()):
        raise RuntimeError("this env is already playing: run.stop() the other run first (two loops cannot step one env)")
    controls = env.feed.controls
    restore = controls.speed
    controls.set_keys(())
    controls.resume()
    controls.set_speed(speed)
    return Run(env, act, episodes, steps, seed, restore)
