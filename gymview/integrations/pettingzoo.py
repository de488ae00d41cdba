"""PettingZoo: watch multi-agent envs, AEC (turn by turn) or Parallel (all agents at once).

``gymview.watch(env)`` of a PettingZoo env made with ``render_mode="rgb_array"`` returns a
``WatchedAECEnv`` or a ``WatchedParallelEnv``: still a PettingZoo env of the same API (an
``AECEnv`` or a ``ParallelEnv``, so ``agent_iter``/``last``/``step`` or the parallel dict API work
unchanged), whose frames go to a live view. The view's status line names the agent to move (AEC)
and each agent's running return; its Pause, Step, Stop and Speed hold the loop before a step
(Stop raises ``gymview.Stopped``); ``record=`` writes every episode to an MP4 file.

>>> import gymview
>>> from pettingzoo.classic import tictactoe_v3
>>> env = gymview.watch(tictactoe_v3.env(render_mode="rgb_array"), display=False)
>>> env.reset(seed=0)
>>> for agent in env.agent_iter():
...     observation, reward, termination, truncation, info = env.last()
...     mask = observation["action_mask"]
...     env.step(None if termination or truncation else int(mask.argmax()))
>>> env.returns
{'player_1': 1.0, 'player_2': -1.0}
>>> env.close()
"""

from __future__ import annotations

import os
from pathlib import Path
from time import perf_counter
from typing import Any

import numpy as np

try:
    from pettingzoo import AECEnv, ParallelEnv
    from pettingzoo.utils import BaseParallelWrapper, BaseWrapper
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError(
        f'gymview.integrations.pettingzoo needs pettingzoo: pip install "gymview[pettingzoo]" ({error})'
    ) from error

from gymview.episodes.keyed_rows import KeyedStepTracker, keyed_row_of
from gymview.episodes.recent import RecentSteps
from gymview.episodes.rows import RawStep
from gymview.episodes.table import StepTable
from gymview.live.feed import ViewFeed, render_fps
from gymview.live.widget import LiveView
from gymview.video.encoder import check_encoder
from gymview.video.recorder import FinishingVideos, VideoRecorder, check_writable_folder
from gymview.video.shared_folder import NameSlot

__all__ = ["WatchedAECEnv", "WatchedParallelEnv", "adapter_for", "check_render_mode", "env_name"]


def adapter_for(env: AECEnv | ParallelEnv) -> type[WatchedAECEnv] | type[WatchedParallelEnv]:
    """The wrapper ``gymview.watch`` puts around a PettingZoo env: one of the same API.

    Args:
        env: A PettingZoo AEC or Parallel env.

    Returns:
        ``WatchedParallelEnv`` for a Parallel env, else ``WatchedAECEnv``.

    Examples:
        >>> from pettingzoo.classic import tictactoe_v3
        >>> adapter_for(tictactoe_v3.env()).__name__
        'WatchedAECEnv'
    """
    return WatchedParallelEnv if isinstance(env, ParallelEnv) else WatchedAECEnv


def env_name(env: AECEnv | ParallelEnv) -> str:
    """A PettingZoo env's name (``metadata["name"]``, such as ``"connect_four_v3"``), or its class name.

    Args:
        env: A PettingZoo env.

    Returns:
        The name, used as the view's title and the videos' file names.

    Examples:
        >>> from pettingzoo.classic import connect_four_v3
        >>> env_name(connect_four_v3.env())
        'connect_four_v3'
    """
    name = (getattr(env, "metadata", None) or {}).get("name")
    return name if isinstance(name, str) and name else type(getattr(env, "unwrapped", env)).__name__


def check_render_mode(env: AECEnv | ParallelEnv) -> None:
    """Raise a ValueError that says how to make the env, unless it renders ``rgb_array`` frames.

    Args:
        env: A PettingZoo env.

    Raises:
        ValueError: When its ``render_mode`` is not ``"rgb_array"``.

    Examples:
        >>> from pettingzoo.classic import connect_four_v3
        >>> check_render_mode(connect_four_v3.env())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: watch() needs ... render_mode=None: create it with connect_four_v3.env(render_mode='rgb_array')
    """
    mode = getattr(env, "render_mode", None)
    if mode == "rgb_array":
        return
    maker = "parallel_env" if isinstance(env, ParallelEnv) else "env"
    hint = f"create it with {env_name(env)}.{maker}(render_mode='rgb_array')"
    if mode is None:
        raise ValueError(
            f"watch() needs a PettingZoo env that renders frames, but this one has render_mode=None: {hint}"
        )
    raise ValueError(f"watch() needs render_mode='rgb_array'; got {mode!r}: {hint}")


class _EpisodeVideos:
    """Every episode of one env to ``{folder}/{prefix}-episode-{n}.mp4``, one frame per step (as
    PettingZoo's own RecordVideo), each with its step table; the view shows the frame recorded last."""

    def __init__(self, folder: str | os.PathLike[str], prefix: str, fps: float | None) -> None:
        self.folder = os.path.abspath(os.fspath(folder))
        check_writable_folder(Path(self.folder))
        check_encoder("libx264")  # fail now, not at the first episode
        self._names = NameSlot.claim(self.folder, prefix)
        self._fps = fps or 30
        self._recorder: VideoRecorder | None = None
        self._table: StepTable | None = None
        self._finishing = FinishingVideos()
        self.episode_id = -1
        self.last_frame: np.ndarray | None = None
        self.paths: list[Path] = []

    def start(self) -> None:
        self.stop()
        self.episode_id += 1
        path = os.path.join(self.folder, f"{self._names.prefix}-episode-{self.episode_id}.mp4")
        self._table = StepTable(path, row_of=keyed_row_of)
        self._recorder = VideoRecorder(path, fps=self._fps, before_fragment=self._table.write_before)
        self.paths.append(self._recorder.path)

    def capture(self, env: Any, raw: RawStep) -> None:
        """The env's frame now, with ``raw``, the step it shows, as its row."""
        if self._recorder is None or self._table is None:
            return
        frame = env.render()
        if not isinstance(frame, np.ndarray):
            raise TypeError(
                f"watch(record=...) needs env.render() to return an image (an array); got {type(frame).__name__}"
            )
        self._table.add(raw)  # before the frame goes to the encoder (see StepTable)
        self._recorder.write(frame)
        self.last_frame = frame

    def stop(self) -> None:
        recorder, table = self._recorder, self._table
        self._recorder, self._table, self.last_frame = None, None, None
        if recorder is None:
            return
        try:
            if table is not None:
                table.close()  # before the video is finished: a row for every frame, whatever happens there
        finally:
            self._finishing.add(recorder)  # finished in the background while the next episode runs

    def close(self) -> None:
        """Finish every video, waiting for each; the first failure is raised once all are done."""
        self.stop()
        self._names.release()
        self._finishing.close()


def _copied(infos: Any) -> dict[Any, Any]:
    """Each agent's info as it is now: an AEC env may change its dicts in place at the next step."""
    if not isinstance(infos, dict):
        return {}
    return {agent: dict(info) if isinstance(info, dict) else info for agent, info in infos.items()}


class _Watch:
    """What both watched kinds share: the feed, the running returns, the recording, the frame."""

    env: AECEnv | ParallelEnv  # set by the PettingZoo wrapper class each watched kind also derives from
    view: LiveView
    feed: ViewFeed

    def _watch(
        self, env: AECEnv | ParallelEnv, view: LiveView, owns_view: bool, record: str | os.PathLike[str] | None
    ) -> None:
        self.view = view
        self.total_steps = 0
        self.episode = 0
        self.returns: dict[Any, float] = {}
        self._episode_steps = 0
        self._tracker = KeyedStepTracker()  # the latest step, for env.log() and the rows of the frames recorded
        self._recent = RecentSteps(self._tracker, row_of=keyed_row_of)  # charted under the view's replay
        self._videos = _EpisodeVideos(record, env_name(env), render_fps(env.metadata)) if record is not None else None
        self.feed = ViewFeed(
            view, self._frame, self._info, owns_view=owns_view, render_fps=render_fps(env.metadata), steps=self._recent
        )
        self._controls = self.feed.controls

    @property
    def videos(self) -> list[Path]:
        """The video files ``record=`` has started, one per episode, oldest first."""
        return [] if self._videos is None else list(self._videos.paths)

    def _started_episode(self, agents: list[Any], infos: Any) -> None:
        self.episode += 1
        self.returns = {agent: 0.0 for agent in agents}
        self._episode_steps = 0
        ended = dict.fromkeys(agents, False)
        self._tracker.record(RawStep(self.episode - 1, 0, dict(self.returns), dict(self.returns), ended, ended, None,
                                     _copied(infos)))  # fmt: skip
        if self._videos is not None:
            self._videos.start()
            self._videos.capture(self.env, self._tracker.latest)  # type: ignore[arg-type]  # recorded above

    def _add_rewards(self, rewards: dict[Any, Any]) -> None:
        returns = self.returns
        for agent, reward in rewards.items():
            returns[agent] = returns.get(agent, 0.0) + float(reward)

    def _after_step(self, rewards: Any, terminations: Any, truncations: Any, actions: Any, infos: Any) -> None:
        """Count the step and keep its row (each per-agent field a dict by agent), then record and show it."""
        self.total_steps += 1
        self._episode_steps += 1
        self._tracker.record(RawStep(self.episode - 1, self._episode_steps, dict(rewards), dict(self.returns),
                                     dict(terminations), dict(truncations), actions, _copied(infos)))  # fmt: skip
        if self._videos is not None:
            self._videos.capture(self.env, self._tracker.latest)  # type: ignore[arg-type]  # recorded above
        if perf_counter() >= self.feed.next_check:
            self.feed.show()

    def log(self, **values: Any) -> None:
        """Add values to the latest step's row (the step whose frame is on screen): one number
        (column ``name``) or one per agent (``name[agent]``). They go to the step tables of the
        videos ``record=`` writes and to the charts under the view's replay.

        Args:
            **values: Names and, for each, one number (a float, an int, a one-element array or
                tensor) or a dict of numbers by agent (``{"player_0": 0.8, "player_1": -0.8}``).

        Raises:
            TypeError: When a value is not one number nor a dict of them.
            ValueError: When a name is one of the table's own columns (``reward``, ``step``...), or a
                dict names an agent the env does not have.
            RuntimeError: Before the first ``reset()``.

        Examples:
            >>> import gymview
            >>> from pettingzoo.classic import connect_four_v3
            >>> env = gymview.watch(connect_four_v3.env(render_mode="rgb_array"), display=False)
            >>> env.reset(seed=0); env.step(3)
            >>> env.log(value={"player_0": 0.1, "player_1": -0.1}, temperature=1.0)
            >>> env.close()
        """
        self._tracker.log(values, list(self.env.possible_agents))

    def _frame(self) -> Any:
        if self._videos is not None and self._videos.last_frame is not None:
            return self._videos.last_frame  # rendered once, for the video and the view
        return self.env.render()

    def _mover(self) -> Any:
        return None

    def _info(self) -> dict[str, Any]:
        mover = self._mover()
        return {
            "step": self.total_steps,
            "episode": self.episode,
            "episode_return": None,
            "row": self._recent.last if self._recent.last >= 0 else None,
            "agent": None if mover is None else str(mover),
            "returns": {str(agent): value for agent, value in self.returns.items()},
        }

    def show_final_frame(self) -> None:
        """Show the env's state now and keep it in the notebook's output as a still image."""
        self.feed.show_final_frame()

    def close(self) -> None:
        """Close the env, finish its videos (waiting for each) and close the view ``watch`` made.

        The view's last frame stays on the page as a still image; a view passed with ``view=`` is
        only stopped.

        Raises:
            gymview.errors.FFmpegError: When a video could not be finished.
        """

        def close_env() -> None:
            try:
                self.env.close()
            finally:
                if self._videos is not None:
                    self._videos.close()

        self.feed.close(self.episode > 0, close_env)


class WatchedAECEnv(_Watch, BaseWrapper):
    """A PettingZoo AEC env whose frames go to ``self.view``; made by ``gymview.watch``.

    It is an ``AECEnv`` like the env it wraps: ``reset``, ``agent_iter``, ``last``, ``step``,
    ``agents``, ``rewards``, ``observation_space(agent)`` ... behave as the env's own. One ``step``
    is one agent's move: the view's Pause holds the loop before it, Step lets one move through,
    Stop raises ``gymview.Stopped`` there. The steps that only remove a finished agent
    (``step(None)`` after its termination) are not held and not counted.

    Attributes:
        view: The ``LiveView`` the frames go to.
        total_steps: Moves taken since the wrapper was made.
        episode: Episodes started (resets).
        returns: Each agent's return in the current episode (the sum of ``env.rewards`` after each step).
        videos: The video files ``record=`` has started.

    Args:
        env: The AEC env, made with ``render_mode="rgb_array"``.
        view: The view to show its frames in.
        owns_view: Close the view with the env (``watch`` made it).
        record: A folder to record every episode to, as ``{name}-episode-{n}.mp4``; None records nothing.

    Examples:
        >>> import gymview
        >>> from pettingzoo.classic import connect_four_v3
        >>> env = gymview.watch(connect_four_v3.env(render_mode="rgb_array"), display=False)
        >>> type(env).__name__, env.reset(seed=0), env.agent_selection
        ('WatchedAECEnv', None, 'player_0')
        >>> env.step(3); env.agent_selection, env.total_steps
        ('player_1', 1)
        >>> env.close()
    """

    def __init__(
        self, env: AECEnv, view: LiveView, owns_view: bool = False, record: str | os.PathLike[str] | None = None
    ) -> None:
        BaseWrapper.__init__(self, env)
        self._watch(env, view, owns_view, record)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset the env and start a new episode (and video) in the view.

        Args:
            seed: Passed to the env's ``reset``.
            options: Passed to the env's ``reset``.

        Raises:
            gymview.Stopped: When Stop was clicked in the view (or ``run.stop()``, a job's stop).
        """
        self.feed.before_reset()
        self.env.reset(seed=seed, options=options)
        self._started_episode(list(self.env.agents), self.env.infos)
        if perf_counter() >= self.feed.next_check:  # gated like step(): short games reset often
            self.feed.show()

    def step(self, action: Any) -> None:
        """Play ``action`` for the agent to move, obeying the view's Pause, Step, Stop and Speed first.

        Args:
            action: The action of ``agent_selection``; None for an agent that is done.

        Raises:
            gymview.Stopped: When Stop was clicked in the view (or ``run.stop()``, a job's stop).
        """
        env = self.env
        if action is None and self._finished(env.agent_selection):  # bookkeeping: the agent leaves; nothing moves
            env.step(action)
            self._add_rewards(env.rewards)
            return
        if self._controls.engaged:
            self.feed.obey_controls()
        mover = env.agent_selection
        env.step(action)
        self._add_rewards(env.rewards)
        kept = action.copy() if isinstance(action, np.ndarray) else action  # a loop may refill its array
        self._after_step(env.rewards, env.terminations, env.truncations, {mover: kept}, env.infos)

    def _finished(self, agent: Any) -> bool:
        return bool(self.env.terminations.get(agent) or self.env.truncations.get(agent))

    def _mover(self) -> Any:
        return self.env.agent_selection if self.env.agents else None


class WatchedParallelEnv(_Watch, BaseParallelWrapper):
    """A PettingZoo Parallel env whose frames go to ``self.view``; made by ``gymview.watch``.

    It is a ``ParallelEnv`` like the env it wraps: ``reset`` and ``step`` take and return the same
    dicts keyed by agent. Stepping obeys the view's Pause, Step, Stop and Speed first; Stop raises
    ``gymview.Stopped``.

    Attributes:
        view: The ``LiveView`` the frames go to.
        total_steps: Steps (of all agents at once) taken since the wrapper was made.
        episode: Episodes started (resets).
        returns: Each agent's return in the current episode.
        videos: The video files ``record=`` has started.

    Args:
        env: The Parallel env, made with ``render_mode="rgb_array"``.
        view: The view to show its frames in.
        owns_view: Close the view with the env (``watch`` made it).
        record: A folder to record every episode to, as ``{name}-episode-{n}.mp4``; None records nothing.

    Examples:
        >>> import gymview
        >>> from pettingzoo.butterfly import pistonball_v6
        >>> env = gymview.watch(pistonball_v6.parallel_env(render_mode="rgb_array", n_pistons=3), display=False)
        >>> observations, infos = env.reset(seed=0)
        >>> type(env).__name__, sorted(observations)
        ('WatchedParallelEnv', ['piston_0', 'piston_1', 'piston_2'])
        >>> _ = env.step({agent: env.action_space(agent).sample() for agent in env.agents})
        >>> env.total_steps, sorted(env.returns)
        (1, ['piston_0', 'piston_1', 'piston_2'])
        >>> env.close()
    """

    def __init__(
        self, env: ParallelEnv, view: LiveView, owns_view: bool = False, record: str | os.PathLike[str] | None = None
    ) -> None:
        BaseParallelWrapper.__init__(self, env)
        self._watch(env, view, owns_view, record)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """Reset the env and start a new episode (and video) in the view.

        Args:
            seed: Passed to the env's ``reset``.
            options: Passed to the env's ``reset``.

        Returns:
            The env's ``(observations, infos)``.

        Raises:
            gymview.Stopped: When Stop was clicked in the view (or ``run.stop()``, a job's stop).
        """
        self.feed.before_reset()
        observations, infos = self.env.reset(seed=seed, options=options)
        self._started_episode(list(self.env.agents), infos)
        if perf_counter() >= self.feed.next_check:
            self.feed.show()
        return observations, infos

    def step(self, actions: dict[Any, Any]) -> tuple[dict[Any, Any], ...]:
        """Step every agent, obeying the view's Pause, Step, Stop and Speed first.

        Args:
            actions: One action per agent, keyed by agent.

        Returns:
            The env's ``(observations, rewards, terminations, truncations, infos)``.

        Raises:
            gymview.Stopped: When Stop was clicked in the view (or ``run.stop()``, a job's stop).
        """
        if self._controls.engaged:
            self.feed.obey_controls()
        result = self.env.step(actions)
        self._add_rewards(result[1])
        kept = {agent: action.copy() if isinstance(action, np.ndarray) else action for agent, action in actions.items()}
        self._after_step(result[1], result[2], result[3], kept, result[4])  # arrays copied: a loop may refill its own
        return result
