"""RecordVideo: a drop-in replacement for gymnasium's RecordVideo wrapper that encodes as it goes."""

from __future__ import annotations

import gc
import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import logger

from gymview._internal.checks import check_int
from gymview._internal.warn import warn_user
from gymview.episodes.kept_states import KeptStates, states_path, write_states
from gymview.episodes.rows import StepTracker
from gymview.episodes.table import StepTable
from gymview.renderers import renderer_for
from gymview.video.encoder import check_encoder
from gymview.video.log_sinks import LogTarget, video_log
from gymview.video.recorder import FinishingVideos, VideoRecorder, check_writable_folder
from gymview.video.shared_folder import NameSlot


class RecordVideo(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Record episodes of an env to MP4 files, encoding each frame as it comes.

    A drop-in replacement for ``gymnasium.wrappers.RecordVideo``: the same arguments, triggers, file
    names (``{name_prefix}-episode-{n}.mp4``, ``{name_prefix}-step-{n}.mp4``) and ``video_length``
    rule. Frames are encoded as they come instead of being kept until the episode ends, so memory
    stays flat however long the episode. A finished video is finalized in
    the background while the next episode runs; ``close()`` waits for all of them.

    With ``fast_render`` (the default), the classic-control envs (CartPole, MountainCar, Acrobot,
    Pendulum) in ``rgb_array`` mode are recorded through ``gymview.renderers``, which draw the same
    picture from the env's state, faster than pygame (see the performance page); ``env.render()``
    itself is unchanged. A wrapper in between that overrides ``render`` (it may draw on the frames)
    turns this off. Their states are drawn 32 at a time, so a recording killed with its process
    loses at most the last second or so (the MP4 on disk plays to its last whole fragment).

    Beside each video goes its step table, ``{video name}.steps.csv``: one row per frame with the
    step, reward, running return, terminated/truncated, the action, ``info``'s numbers and what
    ``env.log(name=value)`` added (``gymview.read_steps(video)`` reads it). Its rows reach the disk
    with the video's fragments: after a kill, every frame that plays has its row.

    Recorders that share a folder and ``name_prefix`` at the same time (every sub-env of
    ``make_vec_env(..., wrapper_class=RecordVideo)``, in threads or worker processes) never
    overwrite each other: the first keeps the names above, the k-th adds ``-k`` to the prefix
    (``rl-video-1-episode-0.mp4``). A number is free again once its recorder is closed.

    Args:
        env: The env to record; its ``render_mode`` must return images, such as ``"rgb_array"``.
        video_folder: The folder the videos go to; created if missing. Existing videos of the
            same names are overwritten (with a warning that the folder exists).
        episode_trigger: ``episode_trigger(episode_id) -> bool``: record the episodes it returns
            True for. When neither trigger is given, gymnasium's ``capped_cubic_video_schedule``
            (episodes 0, 1, 8, 27, ... 729, then every 1000th).
        step_trigger: ``step_trigger(step_id) -> bool``: start a recording at the steps it returns
            True for (steps are counted across episodes).
        video_length: Frames per video; ``0`` records whole episodes.
        name_prefix: The start of every file name.
        fps: Frames per second of the videos; ``None`` takes the env's ``metadata["render_fps"]``
            (30 when it has none).
        disable_logger: Accepted for gymnasium compatibility: there is no progress bar to silence.
            ``False`` warns when the wrapper is dropped mid-recording without ``close()``.
        gc_trigger: ``gc_trigger(episode_id) -> bool``: run ``gc.collect()`` after a recording
            stops. ``None`` (the default) never does, as no frames are kept to free.
        crf: x264 quality, 0 (lossless) to 51 (worst); see ``VideoRecorder``.
        preset: x264 speed/size trade-off, ``"ultrafast"`` to ``"veryslow"``; see ``VideoRecorder``.
        threads: Encoder threads; ``None`` uses one per core but one. See ``VideoRecorder``.
        fast_render: Draw classic-control frames with gymview's numpy renderers (see above).
        tune: x264 tuning; ``None`` gives smaller files for more encoder CPU. See ``VideoRecorder``.
        log_to: Where each finished video goes too: a TensorBoard ``SummaryWriter`` (torch's or
            tensorboardX's; frames shrunk to 256 pixels, as TensorBoard keeps GIFs), a ``wandb``
            run (or the ``wandb`` module after ``wandb.init()``; the MP4 as it is), or a function
            ``log_to(path, info)``. The tag is ``videos/{name_prefix}``; the step is the env steps
            taken when the recording stopped; ``info`` holds ``step``, ``episode``, ``frames``,
            ``fps`` and ``name``. It runs in the background once the file is finished, so the loop
            never waits for it; its error is raised as ``gymview.errors.VideoLogError`` where a
            video's errors are (the next recording's end, or ``close()``), and the file is kept.
            See the logging guide.
        steps: Write each video's step table beside it, and where the page draws the env from its state
            (classic control, Box2D, toy text) the states too (``.states.npz``: ``export_episode`` to ``.html``);
            ``False`` writes neither.

    Raises:
        ValueError: When the env's ``render_mode`` is ``None``, ``"human"`` or ``"ansi"``, or
            ``video_length`` is not an integer of at least 0.
        PermissionError: When no file can be written in ``video_folder``.
        TypeError: When ``log_to`` is not a writer, a W&B run or a function.
        ValueError: When PyAV's FFmpeg has no libx264 encoder (checked here rather than at the
            first recorded episode).

    Examples:
        >>> import gymnasium as gym, os, tempfile
        >>> folder = os.path.join(tempfile.mkdtemp(), "videos")
        >>> env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), folder)
        >>> _ = env.reset(seed=0)
        >>> for _ in range(5):
        ...     _ = env.step(0)
        >>> env.close()
        >>> sorted(os.listdir(folder))
        ['rl-video-episode-0.mp4', 'rl-video-episode-0.states.npz', 'rl-video-episode-0.steps.csv']
    """

    def __init__(
        self,
        env: gym.Env,
        video_folder: str,
        episode_trigger: Callable[[int], bool] | None = None,
        step_trigger: Callable[[int], bool] | None = None,
        video_length: int = 0,
        name_prefix: str = "rl-video",
        fps: int | None = None,
        disable_logger: bool = True,
        gc_trigger: Callable[[int], bool] | None = None,
        *,
        crf: int | None = 23,
        preset: str | None = "ultrafast",
        threads: int | None = None,
        fast_render: bool = True,
        tune: str | None = "zerolatency",
        log_to: LogTarget | None = None,
        steps: bool = True,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            video_folder=video_folder,
            episode_trigger=episode_trigger,
            step_trigger=step_trigger,
            video_length=video_length,
            name_prefix=name_prefix,
            fps=fps,
            disable_logger=disable_logger,
            gc_trigger=gc_trigger,
            crf=crf,
            preset=preset,
            threads=threads,
            fast_render=fast_render,
            tune=tune,
        )  # not log_to: gymnasium deep-copies these, and a writer or run holds locks and sockets
        gym.Wrapper.__init__(self, env)
        if env.render_mode in {None, "human", "ansi"}:
            raise ValueError(
                f"Render mode is {env.render_mode}, which is incompatible with RecordVideo. "
                "Initialize your environment with a render_mode that returns an image, such as rgb_array."
            )
        check_int("video_length", video_length, minimum=0, hint=" (frames; 0 records whole episodes)")
        if episode_trigger is None and step_trigger is None:
            from gymnasium.utils.save_video import capped_cubic_video_schedule

            episode_trigger = capped_cubic_video_schedule
        self.episode_trigger = episode_trigger
        self.step_trigger = step_trigger
        self.disable_logger = disable_logger
        self.gc_trigger = gc_trigger

        self.video_folder = os.path.abspath(video_folder)
        if os.path.isdir(self.video_folder):
            logger.warn(
                f"Overwriting existing videos at {self.video_folder} folder "
                f"(try specifying a different `video_folder` for the `RecordVideo` wrapper if this is not desired)"
            )
        check_writable_folder(Path(self.video_folder))
        check_encoder("libx264")  # fail now, not at the first recorded episode

        self.frames_per_sec: int = fps if fps is not None else self.metadata.get("render_fps", 30)
        self.name_prefix = name_prefix
        self._names = NameSlot.claim(self.video_folder, name_prefix)
        weakref.finalize(self, self._names.release)  # a wrapper dropped without close() frees its names too
        self._log = video_log(log_to, tag=f"videos/{self._names.prefix}", step_key="env_step")
        self.video_length: float = video_length if video_length != 0 else float("inf")
        self.recording = False
        self.render_history: list[Any] = []
        self.step_id = -1
        self.episode_id = -1
        self._video_name: str | None = None
        self._encoder_options: dict[str, Any] = dict(crf=crf, preset=preset, threads=threads, tune=tune)
        self._renderer = renderer_for(env) if fast_render and env.render_mode == "rgb_array" else None
        self._recorder: VideoRecorder | None = None
        self._finishing = FinishingVideos()
        self._last_frame: np.ndarray | None = None
        self._last_state: np.ndarray | None = None  # with a renderer: the state captured last
        self._preview: Any = None  # a second renderer for last_frame: the first repaints only what moved
        self._tracker = StepTracker()  # the episode's latest step, for the rows of the frames recorded
        # the page's scene of the renderer's frames, and the states of the video being recorded (kept beside it)
        self._scene = None if self._renderer is None else self._renderer.page_scene()
        self._kept_states: KeptStates | None = None
        self._write_steps = steps
        self._table: StepTable | None = None

    @property
    def frames_recorded(self) -> int:
        """Frames in the video being recorded now; 0 when no recording runs."""
        return 0 if self._recorder is None else self._recorder.frames_written

    @property
    def last_frame(self) -> np.ndarray | None:
        """The frame recorded last (a live view shows it rather than render the env again); None
        when no recording runs or it has no frame yet."""
        if not self.recording:
            return None
        if self._last_state is not None:
            if self._preview is None:
                self._preview = renderer_for(self.env)
            return self._preview.render(self._last_state[None])[0]
        return self._last_frame

    def _capture_frame(self) -> None:
        if not self.recording:
            raise RuntimeError("Cannot capture a frame, recording wasn't started.")
        if self._renderer is not None:  # drawn many at a time (gymview.video.drawn)
            self._last_state = self._renderer.state_of(self.env)
            if self._kept_states is not None:
                self._kept_states.add(self._last_state)
            self._add_row()
            self._recorder.write_state(self._renderer, self._last_state)  # type: ignore[union-attr]
            return
        frame = self.env.render()
        if isinstance(frame, list):
            if len(frame) == 0:
                logger.warn(
                    "Trying to capture render frame but 'env.render()' has just been called. "
                    "The frame cannot be captured."
                )
                return
            self.render_history += frame
            frame = frame[-1]
        if isinstance(frame, np.ndarray):
            self._add_row()
            self._recorder.write(frame)  # type: ignore[union-attr]
            self._last_frame = frame
        else:
            self.stop_recording()
            logger.warn(
                "Recording stopped: expected type of frame returned by render to be a numpy array, "
                f"got instead {type(frame)}."
            )

    def _add_row(self) -> None:
        """The latest step's row, for the frame about to be written (before it goes to the encoder)."""
        if self._table is not None:
            self._table.add(self._tracker.latest)  # type: ignore[arg-type]  # set by reset() or step()

    def log(self, **values: Any) -> None:
        """Add values to the step table: to the row of the latest step, whose frame is on screen.

        Call it between steps: a value estimate of the observation the policy acts on next belongs
        to the step that produced that observation. Values logged while no recording runs go nowhere.

        Args:
            **values: Names and numbers: a float, an int, a one-element array or tensor each.

        Raises:
            TypeError: When a value is not one number.
            ValueError: When a name is one of the table's own columns (``reward``, ``step``...).
            RuntimeError: Before the first ``reset()``.

        Examples:
            >>> import gymnasium as gym, tempfile
            >>> env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), tempfile.mkdtemp())
            >>> _ = env.reset(seed=0)
            >>> env.log(value=12.5)
            >>> env.close()
        """
        self._tracker.log(values)

    def _capture_while_recording(self) -> None:
        """Record the current frame if a recording runs; end it past ``video_length`` frames."""
        if self.recording:
            self._capture_frame()
            if self.frames_recorded > self.video_length:
                self.stop_recording()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the env, starting a recording when the episode trigger says so.

        A whole-episode recording (``video_length=0``) still running ends here.

        Args:
            seed: Passed to the env's ``reset``.
            options: Passed to the env's ``reset``.

        Returns:
            The env's ``(observation, info)``.
        """
        obs, info = super().reset(seed=seed, options=options)
        self._tracker.reset()
        self.episode_id += 1
        if self.recording and self.video_length == float("inf"):
            self.stop_recording()
        if self.episode_trigger and self.episode_trigger(self.episode_id):
            self.start_recording(f"{self._names.prefix}-episode-{self.episode_id}")
        self._capture_while_recording()
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env, recording the frame while a recording runs.

        A recording starts here when the step trigger says so, and ends once it holds
        ``video_length`` frames.

        Args:
            action: The action for the env.

        Returns:
            The env's ``(observation, reward, terminated, truncated, info)``.
        """
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._tracker.step(action, reward, terminated, truncated, info)
        self.step_id += 1
        if self.step_trigger and self.step_trigger(self.step_id):
            self.start_recording(f"{self._names.prefix}-step-{self.step_id}")
        self._capture_while_recording()
        return obs, reward, terminated, truncated, info

    def render(self) -> Any:
        """Render the env; while recording, the frames of a list render mode are recorded too.

        Returns:
            What the env's ``render()`` returns; for a list render mode, the frames captured
                since the last call come first.
        """
        render_out = super().render()
        if self.recording and isinstance(render_out, list):
            for frame in render_out:
                self._add_row()  # frames drawn between steps: each with the latest step's row
                self._recorder.write(frame)  # type: ignore[union-attr]
        if self.render_history:
            history, self.render_history = self.render_history, []
            return history + render_out  # type: ignore[operator]  # a history is kept in list render modes only
        return render_out

    def start_recording(self, video_name: str) -> None:
        """Start recording ``{video_folder}/{video_name}.mp4``, ending a recording in progress.

        Args:
            video_name: The file name, without ``.mp4``.
        """
        if self.recording:
            self.stop_recording()
        self._log_info = {"episode": self.episode_id, "name": video_name, "fps": self.frames_per_sec}
        path = os.path.join(self.video_folder, f"{video_name}.mp4")
        table = StepTable(path) if self._write_steps else None
        try:
            states_path(path).unlink(missing_ok=True)  # an earlier run's, of another video of this name
        except OSError:
            pass
        self._recorder = VideoRecorder(
            path,
            fps=self.frames_per_sec,
            **self._encoder_options,
            on_finished=None
            if self._log is None
            else self._log.on_finished(self._log_info, getattr(self._finishing.newest, "finished", None)),
            before_fragment=None if table is None else table.write_before,
        )
        self._table = table
        # kept only beside a step table: an HTML export plays the states of the episode the table marks out
        self._kept_states = None if self._scene is None or table is None else KeptStates()
        self.recording = True
        self._video_name = video_name

    def stop_recording(self) -> None:
        """Stop the current recording; its file is finished in the background.

        Raises:
            RuntimeError: When no recording runs.
            gymview.errors.VideoLogError: When logging an earlier video (``log_to=``) failed.
        """
        self._end_recording()
        if self._log is not None:
            self._log.raise_failure()

    def _end_recording(self) -> None:
        if not self.recording or self._recorder is None:
            raise RuntimeError("stop_recording was called, but no recording was started")
        # One statement with no call inside, so a Ctrl-C cannot land between them.
        recorder, table, states = self._recorder, self._table, self._kept_states
        self._recorder, self._table, self._kept_states, self.recording, self._video_name = None, None, None, False, None
        try:
            if table is not None:
                table.close()  # before the video is finished: a row for every frame, whatever happens there
            if states is not None and states.whole and len(states) and self._scene is not None:
                self._keep_states(recorder.path, self._scene, states)
        finally:  # a table that could not be written still lets its video finish
            self._last_frame = self._last_state = None
            self._log_info.update(step=self.step_id + 1, frames=recorder.frames_written)  # read by the logger, later
            if recorder.frames_written == 0:
                logger.warn("Ignored saving a video as there were zero frames to save.")
            self._finishing.add(recorder)
        if self.gc_trigger and self.gc_trigger(self.episode_id):
            gc.collect()

    @staticmethod
    def _keep_states(video: Path, scene: dict[str, Any], states: KeptStates) -> None:
        """The video's states beside it, for an HTML export; a failure to write them says so and stops nothing."""
        try:
            write_states(video, scene, states.array())
        except (OSError, ValueError) as error:
            warn_user(f"gymview: the states of {video.name} were not kept ({error}); export it as .mp4 or .gif")

    def __del__(self) -> None:
        # The recorders' own finalizers finish every video; only say that close() was missed.
        # getattr: __init__ may have raised before these existed (a bad render_mode, say).
        if getattr(self, "recording", False) and not getattr(self, "disable_logger", True):
            logger.warn(
                f"RecordVideo was not closed while recording {self._video_name}: finishing it; call env.close()"
            )

    def close(self) -> None:
        """Close the env, then finish every video, waiting for each.

        Raises:
            gymview.errors.FFmpegError: When a video could not be finished (the first failure, raised
                once the other videos are finished); ``OSError`` when writing its file failed.
            gymview.errors.VideoLogError: When logging a video (``log_to=``) failed, once every
                video is finished and logged (with a video's ``FFmpegError``, if one failed too,
                as its ``__context__``).
        """
        try:
            super().close()
        finally:
            try:
                if self.recording:
                    self._end_recording()  # its log failure, with the others, comes from finish()
            finally:
                self._names.release()
                try:
                    self._finishing.close()
                finally:
                    if self._log is not None:
                        self._log.finish()
