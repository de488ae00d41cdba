"""``watch(env)``: show any Gymnasium env, or vector env, live in the notebook while it steps.

The wrapper calls ``env.render()`` only when the view wants a frame (about ``fps`` times a
second, fewer if rendering is slow), never on the other steps, so the loop keeps nearly its full
speed; rendering every step is what makes naive notebook loops slow (see the performance page).

>>> import gymnasium as gym, gymview
>>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
>>> obs, info = env.reset(seed=0)
>>> obs, reward, terminated, truncated, info = env.step(0)
>>> env.view.stats["frames_sent"]   # outside a notebook (unless published) nothing is rendered or sent
0
>>> env.close()
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from time import perf_counter
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal, SupportsFloat, cast, overload

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv, VectorWrapper
from numpy import ndarray

from gymview.episodes.keyed_rows import KeyedStepTracker, keyed_row_of
from gymview.episodes.loop_steps import LoopSteps
from gymview.episodes.recent import RecentSteps
from gymview.episodes.returns import RunningReturns
from gymview.episodes.rows import RawStep
from gymview.headless.opengl import check_mujoco_rendering
from gymview.live.controls import RunControls
from gymview.live.encoding.deferred import DeferredFrame
from gymview.live.feed import ViewFeed, render_fps
from gymview.live.widget import LiveView
from gymview.remote.publisher import publication
from gymview.renderers import Drawing, MujocoGridPainter, MujocoPainter, renderer_for
from gymview.renderers.car_racing import CarRacingGridPainter, CarRacingPainter
from gymview.renderers.grid import MAX_TILED_ENVS, drawing_of, first_tiled, state_painter, tiled
from gymview.renderers.mujoco import first_render_makes_gl_context
from gymview.renderers.not_drawn import why_not_drawn_by_page
from gymview.video.record_video import RecordVideo

if TYPE_CHECKING:
    from typing import TypedDict

    from pettingzoo import AECEnv, ParallelEnv
    from stable_baselines3.common.vec_env import VecEnv
    from typing_extensions import Unpack

    from gymview.integrations.pettingzoo import WatchedAECEnv, WatchedParallelEnv
    from gymview.integrations.sb3 import WatchedVecEnv

    class WatchOptions(TypedDict, total=False):
        """watch()'s settings, by keyword: see :func:`watch`."""

        fps: float | None
        max_size: int | None
        quality: int | None
        image_format: str | None
        title: str | None
        display: bool
        view: LiveView | None
        record: str | os.PathLike[str] | None
        fast_render: bool
        max_overhead: float | None
        codec: str | None
        draw: str | None
        publish: str | Literal[False] | None
        run: str | None


__all__ = ["WatchedEnv", "WatchedVectorEnv", "watch"]


def _is_sb3_vec_env(env: object) -> bool:
    """A stable-baselines3 VecEnv, told without importing stable-baselines3."""
    vec_env = sys.modules.get("stable_baselines3.common.vec_env")
    return vec_env is not None and isinstance(env, vec_env.VecEnv)


def pettingzoo_kind(env: object) -> str | None:
    """'aec' or 'parallel' for a PettingZoo env, told without importing pettingzoo; else None."""
    envs = sys.modules.get("pettingzoo.utils.env")  # loaded by whoever made a PettingZoo env
    return (
        None
        if envs is None
        else "aec"
        if isinstance(env, envs.AECEnv)
        else ("parallel" if isinstance(env, envs.ParallelEnv) else None)
    )


def _kind_of(env: object) -> str:
    """'env', 'vector', 'sb3', 'aec' or 'parallel'; a TypeError naming what works for anything else."""
    if isinstance(env, gym.Env):
        return "env"
    if isinstance(env, VectorEnv):
        return "vector"
    if _is_sb3_vec_env(env):
        return "sb3"
    if (kind := pettingzoo_kind(env)) is not None:
        return kind
    raise TypeError(
        f"watch() takes a gymnasium env (gym.make(id, render_mode='rgb_array')), a gymnasium vector env "
        f"(gym.make_vec(id, n, render_mode='rgb_array')), a stable-baselines3 VecEnv (make_vec_env(id, n, "
        f"env_kwargs={{'render_mode': 'rgb_array'}})) or a PettingZoo env (connect_four_v3.env(render_mode="
        f"'rgb_array'), pistonball_v6.parallel_env(render_mode='rgb_array')); got {type(env).__name__}"
    )


def _check_render_mode(env: gym.Env | VectorEnv | VecEnv, kind: str) -> None:
    # An SB3 VecEnv reports "rgb_array" whatever its envs do: ask them.
    modes = set(cast("VecEnv", env).get_attr("render_mode")) if kind == "sb3" else {env.render_mode}
    mode = modes.pop() if len(modes) == 1 else modes
    if mode == "rgb_array":
        return
    env_id = getattr(getattr(env, "spec", None), "id", None) or "YourEnv-v0"
    hint = {
        "env": f"create it with gym.make({env_id!r}, render_mode='rgb_array')",
        "vector": f"create it with gym.make_vec({env_id!r}, num_envs, render_mode='rgb_array')",
        "sb3": "create it with make_vec_env(env_id, n_envs, env_kwargs={'render_mode': 'rgb_array'})",
    }[kind]
    if mode is None:
        raise ValueError(f"watch() needs an env that renders frames, but this one has render_mode=None: {hint}")
    raise ValueError(f"watch() needs render_mode='rgb_array'; got {mode!r}: {hint}")


@overload
def watch(env: gym.Env, **options: Unpack[WatchOptions]) -> WatchedEnv: ...
@overload
def watch(env: VectorEnv, **options: Unpack[WatchOptions]) -> WatchedVectorEnv: ...
@overload
def watch(env: VecEnv, **options: Unpack[WatchOptions]) -> WatchedVecEnv: ...
@overload
def watch(env: AECEnv | ParallelEnv, **options: Unpack[WatchOptions]) -> WatchedAECEnv | WatchedParallelEnv: ...
def watch(
    env: gym.Env | VectorEnv | VecEnv | AECEnv | ParallelEnv,
    fps: float | None = None,
    max_size: int | None = None,
    quality: int | None = None,
    image_format: str | None = None,
    title: str | None = None,
    display: bool = True,
    view: LiveView | None = None,
    record: str | os.PathLike[str] | None = None,
    fast_render: bool = True,
    max_overhead: float | None = None,
    codec: str | None = None,
    draw: str | None = None,
    publish: str | Literal[False] | None = None,
    run: str | None = None,
) -> WatchedEnv | WatchedVectorEnv | WatchedVecEnv | WatchedAECEnv | WatchedParallelEnv:
    """Wrap ``env`` so its frames stream into an inline ``LiveView`` while it steps.

    The view is shown in the notebook right away and ``env.close()`` closes it, leaving its last
    frame on the page as a still image. Vector envs show their sub-envs tiled in one grid, each
    labelled with its index and running return; a vector env wrapped with
    ``gymview.atari.wrap`` also shows what the agent sees (env 0's preprocessed stack).

    Args:
        env: A gymnasium env, a gymnasium vector env, a stable-baselines3 ``VecEnv``, or a
            PettingZoo AEC or Parallel env, made with ``render_mode="rgb_array"``. A ``VecEnv``
            stays a ``VecEnv`` (``PPO("MlpPolicy", watch(venv))`` trains on it), a PettingZoo env
            a PettingZoo env of the same API.
        fps: Frames a second the new view shows at most (30).
        max_size: Longest side of the frames shown, in pixels (512).
        quality: JPEG quality, 1..100 (80).
        image_format: ``"jpeg"`` (the default), or ``"png"`` for lossless frames.
        title: Shown above the picture (the env id).
        display: Show the view now; False to show ``env.view`` yourself.
        view: An existing ``LiveView`` to show the frames in, with its own settings (leave out the view's
            settings here: ``fps``, ``max_size``, ``quality``, ``image_format``, ``title``,
            ``max_overhead``, ``codec``, ``draw``).
        record: A folder: also record every episode at full resolution to
            ``{record}/{env id}-episode-{n}.mp4`` (see ``gymview.RecordVideo``). The view then
            shows the frames being recorded, so recording costs it no extra render. Single envs
            and PettingZoo envs (``{record}/{env name}-episode-{n}.mp4``, one frame per step) only.
        fast_render: Draw frames without ``env.render()`` where gymview can: classic-control envs
            (CartPole, MountainCar, Acrobot, Pendulum) by ``gymview.renderers`` from their state,
            close to pygame's pictures and cheaper (see the performance page), for the view and
            the recording; gymnasium's MuJoCo envs by MuJoCo from a copy of their simulation
            state, pixel-equal to ``env.render()``. Either way the frames are drawn in the view's
            encoder process, so the loop only copies the state. False always calls
            ``env.render()`` in the loop.
        max_overhead: The share of the loop's time frames may cost (0.1).
        codec: ``"auto"`` (H.264 to pages that decode it), ``"h264"``, ``"jpeg"`` or ``"png"`` (``LiveView``).
        draw: ``"auto"`` (the default): the page draws gymnasium's classic-control envs (canvas 2D) and
            MuJoCo envs (three.js) itself from their states, a few hundred bytes a frame at most; other envs
            go as pictures. ``"page"`` insists (an error for an env
            the page cannot draw), ``"kernel"`` sends pictures always (``LiveView``).
        publish: ``"HOST:PORT"``: also publish the view there, for notebooks elsewhere to attach to
            (``gymview.attach``); frames are made only while one is attached. None: the address in
            ``GYMVIEW_PUBLISH``, if set; False: never. Loopback (``"127.0.0.1:5555"``, or a port alone)
            unless another host is written out. The token is ``GYMVIEW_TOKEN``, else the address's token file
            (made, readable by you only, and printed once when there is none: docs/remote.md).
        run: The name notebooks find this run by (``gymview.attach(..., run=...)``); the title by default.

    Returns:
        The wrapped env, with the view as ``.view``: a ``WatchedEnv``, a ``WatchedVectorEnv``,
            for a stable-baselines3 ``VecEnv`` a ``gymview.integrations.sb3.WatchedVecEnv``, for a
            PettingZoo env a ``gymview.integrations.pettingzoo.WatchedAECEnv`` or ``WatchedParallelEnv``.

    Raises:
        TypeError: When ``env`` is none of the kinds above.
        ValueError: When ``env`` does not render ``rgb_array`` frames; when ``view`` is given
            with any of the view's settings or ``publish``; when ``record`` is given with a vector env;
            when ``publish`` is not an address this machine can listen at or reach.
        RuntimeError: When MuJoCo cannot render here (``gymview.setup()`` finds a backend that works).

    Examples:
        >>> import gymnasium as gym
        >>> envs = watch(gym.make_vec("CartPole-v1", num_envs=2, render_mode="rgb_array"), fps=10)
        >>> _ = envs.reset(seed=0)
        >>> envs.view.fps
        10.0
        >>> envs.close()
    """
    kind = _kind_of(env)
    settings: dict[str, Any] = {
        "fps": fps,
        "max_size": max_size,
        "quality": quality,
        "image_format": image_format,
        "title": title,
        "max_overhead": max_overhead,
        "codec": codec,
        "draw": draw,
    }
    settings = {name: value for name, value in settings.items() if value is not None}
    _check_view_arguments(view, settings, publish)
    spec, snapshot, not_drawn = getattr(env, "spec", None), None, None
    if kind in ("aec", "parallel"):
        from gymview.integrations import pettingzoo

        pettingzoo.check_render_mode(env)
        default_title = pettingzoo.env_name(env)
    else:
        _check_render_mode(env, kind)
        default_title = spec.id if spec is not None else ""
        if record is not None:
            if kind != "env":
                raise ValueError(
                    "watch(record=...) records single envs; wrap each sub-env in gymview.RecordVideo "
                    "(make_vec_env(..., wrapper_class=gymview.RecordVideo)), or use gymview.record_batch"
                )
            env = RecordVideo(
                cast(gym.Env, env),  # kind "env"
                os.fspath(record),
                episode_trigger=lambda episode: True,
                name_prefix=default_title or "episode",
                fast_render=fast_render,
            )
        if first_render_makes_gl_context(env):
            # Checked in a child process: a failed GL context can make MuJoCo abort the next try (the kernel).
            check_mujoco_rendering()
        if kind == "env" and fast_render:
            snapshot = snapshot_for(cast(gym.Env, env))  # may raise: before a view exists
        not_drawn = _check_page_draws(draw, env, kind, fast_render, default_title or type(env).__name__)
    made_view = view is None
    if view is None:
        view = _new_view({"title": default_title, **settings}, publish, run)
    try:  # the casts: the type that _kind_of(env) found
        if kind in ("aec", "parallel"):
            wrapped: Any = pettingzoo.adapter_for(env)(env, view, owns_view=made_view, record=record)
        elif kind == "env":
            wrapped = WatchedEnv(cast(gym.Env, env), view, snapshot=snapshot, owns_view=made_view)
        elif kind == "vector":
            wrapped = WatchedVectorEnv(cast(VectorEnv, env), view, fast_render=fast_render, owns_view=made_view)
        else:
            from gymview.integrations.sb3 import WatchedVecEnv

            wrapped = WatchedVecEnv(cast("VecEnv", env), view, fast_render=fast_render, owns_view=made_view)
        if not_drawn is not None and view.draw == "auto":
            wrapped.feed.report(f"drawn in the kernel: {not_drawn}")
    except BaseException:
        if made_view:
            view.close()
        raise
    if display:
        view.show()
    return wrapped


def _check_view_arguments(view: LiveView | None, settings: dict[str, Any], publish: str | bool | None) -> None:
    if view is not None and publish:
        raise ValueError("watch(view=..., publish=...): a view is published when it is made; leave view out")
    if view is not None and settings:
        raise ValueError(
            "watch(view=...) shows frames in that view with its own settings; set fps, max_size, quality, "
            "image_format, title, max_overhead, codec and draw on the LiveView instead (LiveView(fps=15, ...))"
        )


def _new_view(settings: dict[str, Any], publish: str | bool | None, run: str | None) -> LiveView:
    """A view with ``settings``, published at ``publish`` (None: ``GYMVIEW_PUBLISH``, if set) as ``run``
    (its title by default)."""
    far_pages = publication(publish, run or settings["title"] or "run")
    try:
        return LiveView(**settings, far_pages=far_pages)
    except BaseException:
        if far_pages is not None:
            far_pages.close()
        raise


def _check_page_draws(draw: str | None, env: Any, kind: str, fast_render: bool, name: str) -> str | None:
    """Why a single or vector env of a family the page draws goes as pictures (None: it does not, or the family
    is not one the page draws); with ``draw="page"``, raise ValueError unless the page can draw its frames itself
    (an SB3 VecEnv is refused at its first frame)."""
    if isinstance(env, RecordVideo):
        if draw == "page":
            raise ValueError(
                "watch(record=..., draw='page'): the view shows the frames being recorded, as pictures; leave draw out"
            )
        return None
    sub_envs = getattr(env, "envs", None) if kind == "vector" else [env]
    first = sub_envs[0] if isinstance(sub_envs, (list, tuple)) and sub_envs else None
    why = _why_pictures(first) if fast_render and draw != "kernel" else None
    if draw != "page":
        return why
    if kind == "env":
        if CarRacingPainter.for_env(env) is not None:
            return None  # a scene a track, described at its first frame
        painter: Any = renderer_for(env) or MujocoPainter.for_env(env)
    elif kind == "vector":
        if CarRacingGridPainter.for_envs(sub_envs) is not None:
            return None  # a scene for each set of tracks, described at its first frame
        painter = state_painter(sub_envs) or MujocoGridPainter.for_envs(sub_envs)
    else:
        return why
    if not fast_render or painter is None or painter.page_scene() is None:
        because = f" ({why})" if why else ""
        raise ValueError(
            f"watch(draw='page'): the page cannot draw {name}{because}; it draws gymnasium's classic-control envs "
            "(CartPole, MountainCar, Acrobot, Pendulum), LunarLander, BipedalWalker, CarRacing, its toy-text envs "
            "(FrozenLake, CliffWalking, Taxi, Blackjack), MuJoCo envs and dm_control envs made through shimmy "
            "from their states, with fast_render=True. Leave draw out to send its frames as pictures"
        )
    return None


def _why_pictures(env: Any) -> str | None:
    """:func:`~gymview.renderers.not_drawn.why_not_drawn_by_page` for a single env; None where it cannot say (a
    failure to say so never stops watch(): the frames go as they would anyway)."""
    if not isinstance(env, gym.Env):
        return None
    try:
        return why_not_drawn_by_page(env)
    except Exception:
        return None


def snapshot_for(env: gym.Env) -> Callable[[gym.Env], DeferredFrame | None] | None:
    """Say how the view's encoder process can draw this env's frames from a copy of its state.

    Args:
        env: A single gymnasium env.

    Returns:
        A function that copies what a frame needs from the env (returning None when this frame
            must be rendered in the loop), or None for envs drawn only by ``env.render()``.

    Examples:
        >>> import gymnasium as gym
        >>> copy_state = snapshot_for(gym.make("CartPole-v1", render_mode="rgb_array"))
        >>> copy_state is not None
        True
    """
    renderer = renderer_for(env)
    if renderer is not None:
        return lambda env: Drawing(renderer, renderer.state_of(env))
    car = CarRacingPainter.for_env(env)  # a painter a track: not a renderer of every episode's frames
    if car is not None:
        return car.frame_of
    painter = MujocoPainter.for_env(env, preview=True)  # the live view: drawn as small as it is shown
    return painter.frame_of if painter is not None else None


class _InstantEnv(gym.Env[Any, Any]):
    """An env whose steps cost next to nothing but a new observation array, as most envs make one each step (the
    allocation changes what the wrapper's own work costs: docs/performance-log.md)."""

    observation_space: gym.Space[Any] = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    action_space: gym.Space[Any] = gym.spaces.Discrete(2)

    def __init__(self) -> None:
        self.state = (0.1, 0.2, 0.3, 0.4)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        return np.array(self.state, dtype=np.float32), 1.0, False, False, {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        return np.array(self.state, dtype=np.float32), {}


@functools.cache
def own_seconds_per_step() -> float:
    """The seconds :class:`WatchedEnv`'s own work adds to each step or reset it keeps, the settling of its steps
    included: the least of five timings of 2,000 steps and 200 resets on an env that does nothing, against the
    same env unwatched, once per process. A watched loop's frames share their budget with it.

    >>> 0.0 <= own_seconds_per_step() < 1e-4
    True
    """
    inner = _InstantEnv()
    wrapper = object.__new__(WatchedEnv)  # its step and reset, without a view
    wrapper.env, wrapper._steps = inner, LoopSteps()
    wrapper._record, wrapper.episode = wrapper._steps.record, 0
    wrapper._controls = cast(RunControls, SimpleNamespace(engaged=False))
    wrapper.feed = cast(ViewFeed, SimpleNamespace(before_reset=lambda: None))
    wrapper._next_check = float("inf")
    settle = wrapper._steps.settle

    def timed(step: Callable[[int], Any], reset: Callable[[], Any], settles: bool) -> float:
        started = perf_counter()
        for index in range(2000):
            step(0)
            if index % 10 == 9:
                reset()
            if settles and index % 256 == 255:
                settle()
        return perf_counter() - started

    watched = min(timed(wrapper.step, wrapper.reset, True) for _ in range(5))
    plain = min(timed(inner.step, inner.reset, False) for _ in range(5))
    return max(0.0, watched - plain) / 2200


class _InstantVectorEnv(VectorEnv[Any, Any, Any]):
    """A vector env of ``num_envs`` sub-envs whose steps cost next to nothing but new arrays, as a vector env makes
    them each step: what :func:`own_seconds_per_vector_step` times the wrapper's work against."""

    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.single_observation_space = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
        self.single_action_space = gym.spaces.Discrete(2)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.state = np.full((num_envs, 4), 0.1, np.float32)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        nothing = np.zeros(self.num_envs, dtype=bool)
        return self.state.copy(), np.ones(self.num_envs), nothing, nothing.copy(), {}

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        return self.state.copy(), {}


@functools.cache
def own_seconds_per_vector_step(num_envs: int) -> float:
    """The seconds :class:`WatchedVectorEnv`'s own work adds to each vector step of ``num_envs`` sub-envs: the least
    of five timings of 400 steps of a vector env that does nothing, against the same env unwatched, once per
    process and size. A watched loop's frames share their budget with it.

    >>> 0.0 <= own_seconds_per_vector_step(4) < 1e-3
    True
    """
    inner = _InstantVectorEnv(num_envs)
    wrapper = object.__new__(WatchedVectorEnv)  # its step, without a view
    wrapper.env, wrapper._tracker = inner, KeyedStepTracker()
    RecentSteps(wrapper._tracker, row_of=keyed_row_of)  # keeps the steps, as a watched env's does
    wrapper._returns = RunningReturns(num_envs)
    wrapper.feed = cast(ViewFeed, SimpleNamespace(controls=SimpleNamespace(engaged=False), next_check=float("inf")))
    actions = np.zeros(num_envs, dtype=np.int64)

    def timed(step: Callable[[Any], Any]) -> float:
        started = perf_counter()
        for _ in range(400):
            step(actions)
        return perf_counter() - started

    watched = min(timed(wrapper.step) for _ in range(5))
    plain = min(timed(inner.step) for _ in range(5))
    inner.closed = True  # gymnasium 1.1 closes an open vector env when it is collected: this wrapper has no view
    return max(0.0, watched - plain) / 400


class WatchedEnv(gym.Wrapper):
    """A single env whose frames go to ``self.view``; made by ``watch``.

    Attributes:
        view: The ``LiveView`` the frames go to.
        episode: Episodes started (resets).

    Args:
        env: The env, rendering ``rgb_array`` frames.
        view: The view to show its frames in.
        snapshot: What ``snapshot_for`` returns for the env: frames drawn in the encoder process
            from a copy of its state; None calls ``env.render()``.
        owns_view: Close the view with the env (``watch`` made it).

    Examples:
        >>> import gymnasium as gym, gymview
        >>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), display=False)
        >>> type(env).__name__
        'WatchedEnv'
        >>> _ = env.reset(seed=0); _ = env.step(0)
        >>> env.total_steps, env.episode
        (1, 1)
        >>> env.close()
    """

    def __init__(
        self,
        env: gym.Env,
        view: LiveView,
        snapshot: Callable[[gym.Env], DeferredFrame | None] | None = None,
        owns_view: bool = False,
    ) -> None:
        super().__init__(env)
        self.view = view
        self._steps = LoopSteps()  # the count, the return, env.log()'s latest step, the replay's charts
        self.feed = ViewFeed(
            view,
            self._frame,
            self._info,
            owns_view=owns_view,
            render_fps=render_fps(env.metadata),
            steps=self._steps,
            own_cost=own_seconds_per_step,
        )
        self._controls = self.feed.controls
        self._next_check = 0.0  # the next settle or feed check, kept here: the hot path reads one attribute
        self._record = self._steps.record
        self.episode = 0
        self._snapshot = snapshot

    @property
    def total_steps(self) -> int:
        """Steps taken since the wrapper was made."""
        self._steps.settle()
        return self._steps.count - self._steps.resets

    @property
    def episode_return(self) -> float:
        """The running return of the current episode."""
        self._steps.settle()
        return float(self._steps.episode_return)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset the env and start a new episode in the view's status line.

        Args:
            **kwargs: Passed to the env's ``reset`` (``seed``, ``options``).

        Returns:
            The env's ``(observation, info)``.

        Raises:
            gymview.Stopped: When Stop was clicked in the view (or ``run.stop()``, a job's stop).
        """
        self.feed.before_reset()
        observation, info = self.env.reset(**kwargs)
        self._steps.reset()
        self.episode += 1
        # Gated like step(): short episodes reset thousands of times a second.
        if perf_counter() >= self._next_check:
            self._next_check = self._check()
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env, obeying the view's Pause, Step, Stop and Speed first.

        Args:
            action: The action to take.

        Returns:
            The env's ``(observation, reward, terminated, truncated, info)``.

        Raises:
            gymview.Stopped: When Stop was clicked in the view (or ``run.stop()``, a job's stop).
        """
        # The hot path of every watched loop: kept to a few operations (see ViewFeed and LoopSteps).
        if self._controls.engaged:
            self.feed.obey_controls()
        result = self.env.step(action)
        info = result[4]
        # A caller may fill the same action array again for its next step. An empty info is kept as None: a
        # tuple holding a dict stays tracked by the garbage collector, and steps kept across its collections
        # would make it run full collections that the unwatched loop never runs (docs/performance-log.md).
        self._record((action.copy() if isinstance(action, ndarray) else action, result[1], result[2], result[3],
                      None if info.__class__ is dict and not info else info))  # fmt: skip
        if perf_counter() >= self._next_check:
            self._next_check = self._check()
        return result

    def _check(self) -> float:
        """Settle the steps and show a frame if the feed's check is due; the clock time of the next check."""
        steps = self._steps
        steps.settle()
        now = perf_counter()
        due = self.feed.next_check
        if now >= due:
            due = self.feed.show()
        return min(due, now + steps.settle_after)

    def log(self, **values: Any) -> None:
        """Add values to the latest step's row (the step whose frame is on screen): for a value
        estimate, an entropy. They go to the step table of the video ``watch(record=...)`` records.

        Args:
            **values: Names and numbers: a float, an int, a one-element array or tensor each.

        Raises:
            TypeError: When a value is not one number.
            ValueError: When a name is one of the table's own columns (``reward``, ``step``...).
            RuntimeError: Before the first ``reset()``.

        Examples:
            >>> import gymnasium as gym, gymview
            >>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), display=False)
            >>> _ = env.reset(seed=0); _ = env.step(0)
            >>> env.log(value=0.5)
            >>> env.close()
        """
        self._steps.log(values)
        if isinstance(self.env, RecordVideo):
            self.env.log(**values)

    def _frame(self) -> Any:
        if isinstance(self.env, RecordVideo) and self.env.recording and self.env.last_frame is not None:
            return self.env.last_frame
        deferred = self._snapshot(self.env) if self._snapshot is not None else None
        if deferred is not None:
            return deferred  # drawn by the page, or in the encoder process
        rendered = self.env.render()
        if self._snapshot is not None and self.view.draw != "kernel":
            # gymnasium made its MuJoCo viewer and camera in that render: the page draws even this frame
            deferred = self._snapshot(self.env)
        return rendered if deferred is None else deferred

    def _info(self) -> dict[str, Any]:
        step = self.total_steps  # settles the steps: the row is the latest one's
        row = self._steps.last
        return {
            "step": step,
            "episode": self.episode,
            "episode_return": self.episode_return,
            "row": row if row >= 0 else None,
        }

    def show_final_frame(self) -> None:
        """Show the env's state now and keep it in the notebook's output as a still image."""
        self.feed.show_final_frame()

    def close(self) -> None:
        """Close the env (finishing its videos) and the view ``watch`` made.

        The view's last frame stays on the page as a still image; a view passed with ``view=`` is
        only stopped.
        """
        self.feed.close(self.episode > 0, super().close)


class WatchedVectorEnv(VectorWrapper):
    """A vector env whose sub-env frames are tiled into ``self.view``; made by ``watch``.

    Attributes:
        view: The ``LiveView`` the frames go to.

    Args:
        env: The vector env, rendering ``rgb_array`` frames.
        view: The view to show its frames in.
        fast_render: Draw the sub-envs of a ``SyncVectorEnv`` from their states in the encoder
            process where gymview can (see ``watch``); False always calls ``env.render()``.
        owns_view: Close the view with the env (``watch`` made it).

    Examples:
        >>> import gymnasium as gym, gymview
        >>> envs = gymview.watch(gym.make_vec("CartPole-v1", num_envs=2, render_mode="rgb_array"), display=False)
        >>> type(envs).__name__
        'WatchedVectorEnv'
        >>> _ = envs.reset(seed=0); _ = envs.step(envs.action_space.sample())
        >>> envs.total_steps, envs.returns.tolist()
        (1, [1.0, 1.0])
        >>> envs.close()
    """

    def __init__(self, env: VectorEnv, view: LiveView, fast_render: bool = True, owns_view: bool = False) -> None:
        super().__init__(env)
        self.view = view
        self._tracker = KeyedStepTracker()  # the latest step, for envs.log()
        self._recent = RecentSteps(self._tracker, row_of=keyed_row_of)  # charted under the view's replay
        self.feed = ViewFeed(
            view,
            self._frame,
            self._info,
            owns_view=owns_view,
            render_fps=render_fps(env.metadata),
            steps=self._recent,
            own_cost=functools.partial(own_seconds_per_vector_step, self.num_envs),
        )
        self._returns = RunningReturns(self.num_envs)
        self._started = False
        # gymview.atari.wrap(...) gives the env a pipeline whose preview shows what the agent sees.
        pipeline = getattr(env, "pipeline", None)
        self._pipeline = pipeline if hasattr(pipeline, "preview") else None
        # A SyncVectorEnv's sub-envs live here: their states can be drawn in the encoder process.
        self._sub_envs = getattr(env, "envs", None) if fast_render and self._pipeline is None else None
        self._painter = state_painter(self._sub_envs)
        # MuJoCo sub-envs: painted there from copies of their simulation state, once each has rendered once.
        many = self._sub_envs is not None and len(self._sub_envs) <= MAX_TILED_ENVS
        self._mujoco = (
            MujocoGridPainter.for_envs(self._sub_envs, preview=True) if self._painter is None and many else None
        )
        self._cars = CarRacingGridPainter.for_envs(self._sub_envs) if self._painter is None else None

    @property
    def total_steps(self) -> int:
        """Vector steps taken since the wrapper was made."""
        return self._returns.total_steps

    @property
    def episodes_done(self) -> int:
        """Episodes finished, over all sub-envs."""
        return self._returns.episodes_done

    @property
    def returns(self) -> np.ndarray:
        """The running return of each sub-env."""
        return self._returns.running

    @property
    def last_return(self) -> float | None:
        """The return of the episode that finished last (None before the first)."""
        return self._returns.last_return

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset the envs (only those in ``options["reset_mask"]``, when given) and their running returns.

        Args:
            **kwargs: Passed to the vector env's ``reset`` (``seed``, ``options``).

        Returns:
            The vector env's ``(observations, infos)``.

        Raises:
            gymview.Stopped: When Stop was clicked in the view (or ``run.stop()``, a job's stop).
        """
        self.feed.before_reset()
        mask = (kwargs.get("options") or {}).get("reset_mask")  # read first: gymnasium pops it
        observations, infos = self.env.reset(**kwargs)
        self._returns.restart(None if mask is None else np.asarray(mask, dtype=bool))
        self._tracker.record(RawStep(self.episodes_done, self.total_steps, np.zeros(self.num_envs), self.returns.copy(),
                                     self._returns.no_ends, self._returns.no_ends, None, infos))  # fmt: skip
        self._started = True
        self.feed.show()
        return observations, infos

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step the envs, obeying the view's Pause, Step, Stop and Speed first.

        Args:
            actions: One action per sub-env.

        Returns:
            The vector env's ``(observations, rewards, terminations, truncations, infos)``.

        Raises:
            gymview.Stopped: When Stop was clicked in the view (or ``run.stop()``, a job's stop).
        """
        feed = self.feed
        if feed.controls.engaged:
            feed.obey_controls()
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        episodes_done = self._returns.episodes_done  # before this step's: the row's episode count
        kept_rewards = np.array(rewards, dtype=float)  # the row's own: a caller may change the array it got
        returns, _ = self._returns.add(kept_rewards, np.logical_or(terminations, truncations))
        if isinstance(actions, np.ndarray):  # a caller may fill the same array again for the next step
            actions = actions.copy()
        self._tracker.record(RawStep(episodes_done, self.total_steps, kept_rewards, returns, terminations, truncations,
                                     actions, infos))  # fmt: skip
        if perf_counter() >= feed.next_check:
            feed.show()
        return observations, rewards, terminations, truncations, infos

    def log(self, **values: Any) -> None:
        """Add values to the latest step's row (the step whose frames are on screen), charted under the
        view's replay: one number (column ``name``) or one per sub-env (``name[0]``, ``name[1]``...).

        Args:
            **values: Names and, for each, one number (a float, an int, a one-element tensor) or a
                sequence of ``num_envs`` numbers (a list, an array, a tensor of shape ``(num_envs,)``).

        Raises:
            TypeError: When a value is not one number nor numbers.
            ValueError: When a name is one of the table's own columns (``reward``, ``step``...), or a
                sequence does not hold ``num_envs`` numbers.
            RuntimeError: Before the first ``reset()``.

        Examples:
            >>> import gymnasium as gym, gymview
            >>> envs = gymview.watch(gym.make_vec("CartPole-v1", num_envs=2, render_mode="rgb_array"), display=False)
            >>> _ = envs.reset(seed=0); _ = envs.step(envs.action_space.sample())
            >>> envs.log(value=[0.5, 0.25], lr=3e-4)
            >>> envs.close()
        """
        self._tracker.log(values, range(self.num_envs))

    def _frame(self) -> Any:
        if self._painter is not None and self._sub_envs is not None:  # a painter is made for sub-envs only
            return drawing_of(self._painter, self._sub_envs, self.returns)
        if self._mujoco is not None:
            painted = self._mujoco.frame_of(self._sub_envs, self.returns)
            if painted is not None:
                return painted
        if self._cars is not None:
            cars = self._cars.frame_of(self._sub_envs, self.returns)
            if cars is not None:
                return cars
        rendered = self.env.render()
        if self._mujoco is not None and self.view.draw != "kernel":  # the sub-envs' viewers exist now
            painted = self._mujoco.frame_of(self._sub_envs, self.returns)
            if painted is not None:
                return painted
        if isinstance(rendered, np.ndarray) and rendered.ndim == 3:  # a vector env that tiles itself
            return rendered
        extra = [(self._pipeline.preview(0), "agent sees (env 0)")] if self._pipeline is not None else []
        # gymnasium types render() Optional; a vector env in rgb_array mode returns its envs' frames
        return tiled(first_tiled(rendered), self.returns, extra)  # type: ignore[arg-type]

    def _info(self) -> dict[str, Any]:
        return {**self._returns.info(), "row": self._recent.last if self._recent.last >= 0 else None}

    def show_final_frame(self) -> None:
        """Show the envs' state now and keep it in the notebook's output as a still image."""
        self.feed.show_final_frame()

    def close(self, **kwargs: Any) -> None:
        """Close the envs and the view ``watch`` made (its last frame stays on the page as a still image).

        Args:
            **kwargs: Passed to the vector env's ``close``.
        """
        self.feed.close(self._started, lambda: super(WatchedVectorEnv, self).close(**kwargs))
