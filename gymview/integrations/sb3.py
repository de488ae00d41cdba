"""stable-baselines3: watch a ``VecEnv`` while it trains, as a wrapper or as a callback.

``gymview.watch(venv)`` returns ``WatchedVecEnv``, still the ``VecEnv`` SB3 expects; a
frame is made only when one is due. Sub-envs in this process (``DummyVecEnv``) that
``gymview.renderers`` can draw are drawn from their states in the view's helper process, so the
loop only copies a few floats; others come from ``venv.get_images()`` (``env.render()`` in each
sub-env, across processes for a ``SubprocVecEnv``). ``WatchCallback`` does the same from
``model.learn(callback=...)`` without touching the env.

>>> import gymview
>>> from stable_baselines3 import PPO
>>> from stable_baselines3.common.env_util import make_vec_env
>>> venv = gymview.watch(make_vec_env("CartPole-v1", 4, env_kwargs={"render_mode": "rgb_array"}))
>>> PPO("MlpPolicy", venv).learn(20_000)                          # doctest: +SKIP
>>> venv.close()
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from time import perf_counter
from typing import Any

import numpy as np

try:
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecEnvWrapper
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError(
        f'gymview.integrations.sb3 needs stable-baselines3: pip install "gymview[sb3]" ({error})'
    ) from error

from gymview._internal.checks import check_int
from gymview.episodes.keyed_rows import KeyedStepTracker, keyed_row_of
from gymview.episodes.recent import RecentSteps
from gymview.episodes.returns import RunningReturns
from gymview.episodes.rows import RawStep
from gymview.errors import Stopped
from gymview.live.feed import ViewFeed, render_fps
from gymview.live.pacing.cpus import torch_fills_cpus
from gymview.live.widget import LiveView
from gymview.remote.publisher import publication
from gymview.renderers import MujocoGridPainter
from gymview.renderers.car_racing import CarRacingGridPainter
from gymview.renderers.grid import MAX_TILED_ENVS, drawing_of, first_tiled, state_painter, tiled
from gymview.video.log_sinks import LogTarget, VideoLog, video_log
from gymview.video.recorder import FinishingVideos, VideoRecorder, check_writable_folder

__all__ = ["WatchCallback", "WatchedVecEnv"]


def _grid_source(venv: VecEnv, fast_render: bool) -> Callable[[np.ndarray], Any]:
    """What makes the tiled frame of ``venv``'s sub-envs, given their running returns: a drawing
    from their states (a ``DummyVecEnv``'s sub-envs that gymview's renderers or MuJoCo painters draw, under
    VecEnvWrappers that leave its frames alone) or their renders."""

    def renders(returns: np.ndarray) -> np.ndarray:
        return tiled(first_tiled(venv.get_images()), returns)

    inner = venv
    while isinstance(inner, VecEnvWrapper):
        if type(inner).get_images is not VecEnvWrapper.get_images or type(inner).render is not VecEnvWrapper.render:
            return renders  # this wrapper makes its own frames
        inner = inner.venv
    if not (fast_render and isinstance(inner, DummyVecEnv)):
        return renders
    sub_envs = inner.envs
    painter = state_painter(sub_envs)
    if painter is not None:
        return lambda returns: drawing_of(painter, sub_envs, returns)
    mujoco = MujocoGridPainter.for_envs(sub_envs, preview=True) if len(sub_envs) <= MAX_TILED_ENVS else None
    grid: MujocoGridPainter | CarRacingGridPainter | None = mujoco or CarRacingGridPainter.for_envs(sub_envs)
    if grid is None:
        return renders

    def painted(returns: np.ndarray) -> Any:
        frame = grid.frame_of(sub_envs, returns)
        if frame is None:  # a sub-env that has not rendered yet: its render makes its viewer and camera
            rendered = renders(returns)
            frame = grid.frame_of(sub_envs, returns)
            return rendered if frame is None else frame
        return frame

    return painted


def _render_fps(venv: VecEnv) -> float | None:
    try:
        return render_fps(venv.get_attr("metadata")[0])
    except Exception:  # workers that cannot answer: play unpaced
        return None


class WatchedVecEnv(VecEnvWrapper):
    """An SB3 ``VecEnv`` whose sub-env frames are tiled into ``self.view``; made by ``gymview.watch``.

    Stepping obeys the view's Pause, Step, Stop and Speed before the sub-envs step; Stop raises
    ``gymview.Stopped`` from ``step_async``.

    Attributes:
        view: The ``LiveView`` the frames go to.

    Args:
        venv: The SB3 ``VecEnv``, its sub-envs rendering ``rgb_array`` frames.
        view: The view to show its frames in.
        fast_render: Draw a ``DummyVecEnv``'s sub-envs from their states in the encoder process
            where gymview can (see ``gymview.watch``); False always renders them.
        owns_view: Close the view with the env (``gymview.watch`` made it).

    Examples:
        >>> import gymnasium as gym, gymview
        >>> from stable_baselines3.common.vec_env import DummyVecEnv
        >>> venv = DummyVecEnv([lambda: gym.make("CartPole-v1", render_mode="rgb_array")] * 2)
        >>> venv = gymview.watch(venv, display=False)
        >>> type(venv).__name__, venv.reset().shape
        ('WatchedVecEnv', (2, 4))
        >>> observations, rewards, dones, infos = venv.step([0, 1])
        >>> rewards.tolist()
        [1.0, 1.0]
        >>> venv.close()
    """

    def __init__(self, venv: VecEnv, view: LiveView, fast_render: bool = True, owns_view: bool = False) -> None:
        VecEnvWrapper.__init__(self, venv)
        self.view = view
        self.returns = RunningReturns(venv.num_envs)
        self._started = False
        self._grid = _grid_source(venv, fast_render)
        self._tracker = KeyedStepTracker()  # the latest step, for venv.log()
        self._recent = RecentSteps(self._tracker, row_of=keyed_row_of)  # charted under the view's replay
        self._actions: Any = None
        self.feed = ViewFeed(
            view,
            lambda: self._grid(self.returns.running),
            self._info,
            helper_competes=torch_fills_cpus,
            owns_view=owns_view,  # training fills every core
            render_fps=_render_fps(venv),
            steps=self._recent,
        )

    def reset(self) -> Any:
        """Reset the sub-envs and their running returns.

        Returns:
            The ``VecEnv``'s observations.

        Raises:
            gymview.Stopped: When Stop was clicked in the view.
        """
        self.feed.before_reset()
        observations = self.venv.reset()
        returns = self.returns
        returns.restart()
        self._tracker.record(RawStep(returns.episodes_done, returns.total_steps, np.zeros(self.num_envs),
                                     returns.running.copy(), returns.no_ends, returns.no_ends, None, None))  # fmt: skip
        self._started = True
        self.feed.show()
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        """Obey the view's Pause, Step, Stop and Speed, then start the sub-envs' step.

        Args:
            actions: One action per sub-env.

        Raises:
            gymview.Stopped: When Stop was clicked in the view.
        """
        if self.feed.controls.engaged:  # before the sub-envs step: a paused run holds its state
            self.feed.obey_controls()
        self._actions = actions.copy() if isinstance(actions, np.ndarray) else actions  # for the step's row
        self.venv.step_async(actions)

    def step_wait(self) -> Any:
        """Wait for the sub-envs' step, add the rewards to the running returns and show a frame if one is due.

        Returns:
            The ``VecEnv``'s ``(observations, rewards, dones, infos)``.
        """
        observations, rewards, dones, infos = self.venv.step_wait()
        episodes_done = self.returns.episodes_done  # before this step's: the row's episode count
        # the row's own copy: PPO adds a bootstrap value to a time limit's reward, in this array, after the step
        kept_rewards = np.array(rewards, dtype=float)
        returns, ended = self.returns.add(kept_rewards, dones)
        if ended:  # SB3 says done for both ends of an episode; a time limit's says so in its info
            truncated = np.array([bool(info.get("TimeLimit.truncated", False)) for info in infos])
            terminated = np.logical_and(dones, ~truncated)
        else:
            truncated = terminated = self.returns.no_ends
        self._tracker.record(RawStep(episodes_done, self.returns.total_steps, kept_rewards, returns, terminated,
                                     truncated, self._actions, list(infos)))  # fmt: skip
        if perf_counter() >= self.feed.next_check:
            self.feed.show()
        return observations, rewards, dones, infos

    def log(self, **values: Any) -> None:
        """Add values to the latest step's row, charted under the view's replay, as
        ``gymview.WatchedVectorEnv.log`` does (the same arguments and errors): one number, or one per
        sub-env (``name[0]``, ``name[1]``...).

        Args:
            **values: Names and, for each, one number or a sequence of ``num_envs`` numbers.

        Examples:
            >>> import gymnasium as gym, gymview
            >>> from stable_baselines3.common.vec_env import DummyVecEnv
            >>> venv = gymview.watch(DummyVecEnv([lambda: gym.make("CartPole-v1", render_mode="rgb_array")] * 2),
            ...                      display=False)
            >>> _ = venv.reset(); _ = venv.step([0, 1])
            >>> venv.log(value=[0.5, 0.25])
            >>> venv.close()
        """
        self._tracker.log(values, range(self.num_envs))

    def _info(self) -> dict[str, Any]:
        return {**self.returns.info(), "row": self._recent.last if self._recent.last >= 0 else None}

    def show_final_frame(self) -> None:
        """Show the envs' state now and keep it in the notebook's output as a still image."""
        self.feed.show_final_frame()

    def close(self) -> None:
        """Close the envs and the view ``gymview.watch`` made (its last frame stays on the page as a still image)."""
        self.feed.close(self._started, self.venv.close)


class WatchCallback(BaseCallback):
    """Show the training env's sub-envs live while ``model.learn(callback=WatchCallback())`` runs.

    The envs must render ``rgb_array`` frames (``make_vec_env(..., env_kwargs={"render_mode":
    "rgb_array"})``). The view's Pause, Step and Speed hold training; Stop ends ``learn()``
    cleanly. When training ends the view stays open with its last frame.

    With ``log_to``, the first sub-env's episodes are recorded now and then (its first episode,
    then the first one to start after every ``log_every`` steps) into ``video_folder`` and each
    video goes to TensorBoard, W&B or your function, tagged ``videos/training``, at the step
    (``model.num_timesteps``) its episode ended. Encoding and logging happen on the recorder's
    thread: training does not wait for them.

    Args:
        view: An existing ``LiveView``; None makes one with ``view_options`` when training starts.
        display: Show the view made when training starts.
        verbose: SB3's verbosity level for callbacks.
        fast_render: As in ``gymview.watch``: draw a ``DummyVecEnv``'s sub-envs from their states
            where gymview can.
        log_to: A TensorBoard ``SummaryWriter``, a ``wandb`` run (or the ``wandb`` module after
            ``wandb.init()``), or a function ``log_to(path, info)``; see ``gymview.RecordVideo``.
            A failed log raises ``gymview.errors.VideoLogError`` at the next video's end or when
            training ends; the file is kept.
        log_every: Env steps (``num_timesteps``) between the videos' starts.
        log_max_frames: Frames at most per video (an episode that lasts longer is cut there).
        video_folder: Where the videos are written (``training-step-{num_timesteps}.mp4``; ``-2``, ``-3``...
            added where a video of that name is there already, from an earlier ``learn()``).
        publish: ``"HOST:PORT"``: also publish the view made there, for notebooks elsewhere to attach to
            (``gymview.attach``); None: ``GYMVIEW_PUBLISH``, if set; False: never (see ``gymview.watch``).
        run: The name notebooks find the run by; the title by default.
        **view_options: Settings of the view made (``fps``, ``max_size``, ``title``, ...); the
            title defaults to the model's class name.

    Raises:
        ValueError: When ``view`` is given with ``view_options``, or ``log_every`` or
            ``log_max_frames`` is below 1; at the start of training, when the envs do not render
            ``rgb_array`` frames.
        TypeError: When ``log_to`` is not a writer, a W&B run or a function.

    Examples:
        >>> from stable_baselines3 import PPO
        >>> from stable_baselines3.common.env_util import make_vec_env
        >>> venv = make_vec_env("CartPole-v1", 2, env_kwargs={"render_mode": "rgb_array"})
        >>> model = PPO("MlpPolicy", venv, n_steps=16, batch_size=16, n_epochs=1)
        >>> callback = WatchCallback(display=False, fps=10)
        >>> model.learn(32, callback=callback).num_timesteps
        32
        >>> callback.view.title
        'PPO'
        >>> callback.view.close()

        Videos of the first sub-env, handed to a function (or a ``SummaryWriter``, a W&B run):

        >>> import tempfile
        >>> logged = []
        >>> callback = WatchCallback(display=False, log_to=lambda path, info: logged.append(info["step"]),
        ...                          log_every=1000, video_folder=tempfile.mkdtemp())
        >>> model.learn(200, callback=callback).num_timesteps > 0 and len(logged) == 1
        True
        >>> callback.view.close()
    """

    def __init__(
        self,
        view: LiveView | None = None,
        display: bool = True,
        verbose: int = 0,
        fast_render: bool = True,
        *,
        log_to: LogTarget | None = None,
        log_every: int = 10_000,
        log_max_frames: int = 1000,
        video_folder: str | os.PathLike[str] = "videos",
        publish: str | bool | None = None,
        run: str | None = None,
        **view_options: Any,
    ) -> None:
        super().__init__(verbose)
        check_int("log_every", log_every, hint=" (env steps between videos)")
        check_int("log_max_frames", log_max_frames, hint=" (frames per video at most)")
        log = video_log(log_to, tag="videos/training", step_key="env_step")
        self._videos = None if log is None else _TrainingVideos(log, log_every, log_max_frames, Path(video_folder))
        if view is not None and view_options:
            raise ValueError("WatchCallback(view=...) uses that view's settings; set them on the LiveView instead")
        if view is not None and publish:
            raise ValueError("WatchCallback(view=..., publish=...): a view is published when made; leave view out")
        self._publish, self._run = publish, run
        self.view = view
        self._display = display
        self._view_options = view_options
        self._fast_render = fast_render
        self.feed: ViewFeed | None = None
        self._returns: RunningReturns | None = None

    def _on_training_start(self) -> None:
        env = self.training_env
        if env.render_mode != "rgb_array":
            raise ValueError(
                "WatchCallback needs envs that render frames: make_vec_env(env_id, n_envs, "
                f"env_kwargs={{'render_mode': 'rgb_array'}}); this one has render_mode={env.render_mode!r}"
            )
        if self.view is None:
            title = self._view_options.setdefault("title", type(self.model).__name__)
            far_pages = publication(self._publish, self._run or title)
            self.view = LiveView(**self._view_options, far_pages=far_pages)
            if self._display:
                self.view.show()
        returns, grid = RunningReturns(env.num_envs), _grid_source(env, self._fast_render)
        self._returns = returns
        self.feed = ViewFeed(
            self.view,
            lambda: grid(returns.running),
            returns.info,
            helper_competes=torch_fills_cpus,
            render_fps=_render_fps(env),
        )
        if self._videos is not None:
            self._videos.begin(env, self.num_timesteps)

    def _on_step(self) -> bool:
        feed, returns = self.feed, self._returns
        assert feed is not None and returns is not None  # made by _on_training_start
        returns.add(self.locals["rewards"], self.locals["dones"])
        if perf_counter() >= feed.next_check:
            feed.show()
        if self._videos is not None:
            self._videos.step(self.training_env, self.num_timesteps, bool(self.locals["dones"][0]))
        if feed.controls.engaged:  # Pause / Step / Speed hold training here; Stop ends learn() cleanly
            try:
                feed.obey_controls()
            except Stopped:
                return False
        return True

    def _on_training_end(self) -> None:
        assert self.feed is not None  # made by _on_training_start
        try:
            self.feed.close(started=True, close_env=lambda: None)  # the view stays open: stopped, not closed
        finally:
            if self._videos is not None:
                self._videos.end(self.num_timesteps)


class _TrainingVideos:
    """WatchCallback's videos of the first sub-env: recorded, finished and logged in the background."""

    def __init__(self, log: VideoLog, every: int, max_frames: int, folder: Path) -> None:
        self.log = log
        self.every = every
        self.max_frames = max_frames
        self.folder = folder.absolute()
        self.next_start = 0  # num_timesteps from which the next video may start
        self.recorder: VideoRecorder | None = None
        self.info: dict[str, Any] = {}
        self.finishing = FinishingVideos()
        self.fps = 30.0
        self.videos = 0

    def begin(self, env: VecEnv, steps: int) -> None:
        check_writable_folder(self.folder)
        self.fps = _render_fps(env) or 30.0
        self.next_start = steps
        self._start(env, steps)  # SB3 has reset the envs: an episode starts now

    def step(self, env: VecEnv, steps: int, first_done: bool) -> None:
        """After each step: the first sub-env's frame recorded; a video ended or started."""
        if self.recorder is not None:
            if not first_done:  # after a done, SB3 shows the next episode's first frame
                self.recorder.write(_first_frame(env))
            if first_done or self.recorder.frames_written >= self.max_frames:
                self._stop(steps)
        if self.recorder is None and first_done and steps >= self.next_start:
            self._start(env, steps)

    def _start(self, env: VecEnv, steps: int) -> None:
        name = f"training-step-{steps}"
        if (self.folder / f"{name}.mp4").exists():  # an earlier learn() counted from 0 too: keep its video
            name = next(f"{name}-{n}" for n in itertools.count(2) if not (self.folder / f"{name}-{n}.mp4").exists())
        self.info = {"episode": self.videos, "name": name, "fps": self.fps}
        self.recorder = VideoRecorder(
            self.folder / f"{name}.mp4",
            fps=self.fps,
            on_finished=self.log.on_finished(self.info, getattr(self.finishing.newest, "finished", None)),
        )
        self.recorder.write(_first_frame(env))
        self.next_start = steps + self.every
        self.videos += 1

    def _stop(self, steps: int) -> None:
        recorder, self.recorder = self.recorder, None
        assert recorder is not None  # step() stops the video in progress
        self.info.update(step=steps, frames=recorder.frames_written)
        self.finishing.add(recorder)  # encoded, then logged, on threads of their own
        self.log.raise_failure()

    def end(self, steps: int) -> None:
        """Training ended: the video in progress finished, every video waited for, the first failure raised."""
        try:
            if self.recorder is not None:
                recorder, self.recorder = self.recorder, None
                self.info.update(step=steps, frames=recorder.frames_written)
                self.finishing.add(recorder)
        finally:
            try:
                self.finishing.close()
            finally:
                self.log.finish()


def _first_frame(env: VecEnv) -> np.ndarray:
    frame = env.env_method("render", indices=[0])[0]
    if frame is None:
        raise ValueError(
            "WatchCallback(log_to=...) records the first sub-env's env.render(), which returned None: "
            "make the envs with render_mode='rgb_array'"
        )
    return frame
