"""``gymview.compare``: policies played on the same seeds in lockstep, recorded with their step tables
and shown side by side in one player with shared charts.

>>> import tempfile
>>> result = compare({"left": lambda obs: 0, "right": lambda obs: 1}, "CartPole-v1", seed=3, max_steps=5)
>>> [(row["policy"], row["seed"], row["steps"], row["return"]) for row in result.table]
[('left', 3, 5, 5.0), ('right', 3, 5, 5.0)]
"""

from __future__ import annotations

import contextlib
import dataclasses
import html
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from gymview._internal.checks import check_int, check_optional_int
from gymview.episodes.current import logging_to
from gymview.episodes.rows import StepTracker, row_of
from gymview.episodes.table import StepTable
from gymview.image.tiling import tile
from gymview.renderers import BatchRenderer, renderer_for
from gymview.video.recorder import VideoRecorder

if TYPE_CHECKING:
    from gymview.episodes.player import EpisodePlayer

__all__ = ["Comparison", "compare", "policy_function"]

TABLE_COLUMNS = ("policy", "seed", "steps", "return", "terminated", "truncated", "file")


def policy_function(policy: Any, deterministic: bool = True) -> Callable[[Any], Any]:
    """``policy`` as a function observation -> action: a callable as it is, a stable-baselines3
    model (anything with ``predict``) through ``predict(observation, deterministic=...)``.

    Args:
        policy: A function ``observation -> action`` or a model with ``predict``.
        deterministic: Passed to a model's ``predict``.

    Returns:
        The function.

    Raises:
        TypeError: When ``policy`` is neither.

    Examples:
        >>> class Model:
        ...     def predict(self, observation, deterministic=False):
        ...         return int(deterministic), None
        >>> policy_function(Model())(None), policy_function(lambda obs: 7)(None)
        (1, 7)
    """
    predict = getattr(policy, "predict", None)
    if callable(predict):
        return lambda observation: predict(observation, deterministic=deterministic)[0]
    if callable(policy):
        return policy
    raise TypeError(
        f"a policy is a function observation -> action or a stable-baselines3 model (with .predict); "
        f"got {type(policy).__name__}"
    )


def _env_maker(env: str | Callable[[], gym.Env] | gym.Env) -> Callable[[], gym.Env]:
    if isinstance(env, str):
        return lambda: gym.make(env, render_mode="rgb_array")
    if isinstance(env, gym.Env):
        spec = env.spec
        if spec is None:
            raise ValueError(
                "compare() makes one env per policy: this env has no spec to make more from; "
                "pass its id or a function that makes it"
            )
        return lambda: gym.make(spec)
    if callable(env):
        return env
    raise TypeError(
        f"env must be an env id, a function that makes the env, or a gymnasium env; got {type(env).__name__}"
    )


@dataclasses.dataclass
class _Player:
    """One policy's side of the lockstep: its env, what it does and what it records."""

    name: str
    act: Callable[[Any], Any]
    env: gym.Env
    renderer: BatchRenderer | None
    tracker: StepTracker = dataclasses.field(default_factory=StepTracker)
    observation: Any = None
    done: bool = False
    recorder: VideoRecorder | None = None
    table: StepTable | None = None

    def start(self, seed: int, video: Path, fps: float) -> None:
        self.observation, _ = self.env.reset(seed=seed)
        self.env.action_space.seed(seed)
        self.tracker.reset()
        self.done = False
        self.recorder = VideoRecorder(video, fps=fps, crash_safe=False)
        self.table = StepTable(video)
        self.record()

    def step(self, max_steps: int | None) -> None:
        with logging_to(self.tracker):  # gymview.log() in the policy: to the row of the frame it sees
            action = self.act(self.observation)
        self.observation, reward, terminated, truncated, info = self.env.step(action)
        self.tracker.step(action, reward, terminated, truncated, info)
        self.done = bool(terminated or truncated)
        if not self.done and max_steps is not None and self.tracker.steps >= max_steps:
            self.tracker.mark_truncated()
            self.done = True
        self.record()

    def _outputs(self) -> tuple[VideoRecorder, StepTable]:
        if self.recorder is None or self.table is None:
            raise RuntimeError("start() an episode first")
        return self.recorder, self.table

    def record(self) -> None:
        """The frame of the latest step, with its row (the row goes first: see StepTable)."""
        recorder, table = self._outputs()
        if self.renderer is not None:
            state = self.renderer.state_of(self.env)
            table.add(self.tracker.latest)  # type: ignore[arg-type]  # set by start()
            recorder.write_state(self.renderer, state)
            return
        frame = self.env.render()
        if not isinstance(frame, np.ndarray):
            raise ValueError(
                f"env.render() returned {type(frame).__name__}: compare() needs envs made with render_mode='rgb_array'"
            )
        table.add(self.tracker.latest)  # type: ignore[arg-type]
        recorder.write(frame)

    def close(self) -> None:
        """Finish what an episode cut short by an error recorded (that error is the one raised)."""
        for end in (self.table, self.recorder):
            if end is not None:
                with contextlib.suppress(Exception):
                    end.close()

    def finish(self) -> dict[str, Any]:
        recorder, table = self._outputs()
        table.close()
        recorder.close()
        row = row_of(self.tracker.latest)  # type: ignore[arg-type]  # set by start()
        return {"policy": self.name, "steps": row["step"], "return": row["return"],
                "terminated": bool(row["terminated"]), "truncated": bool(row["truncated"]),
                "file": str(recorder.path)}  # fmt: skip


class Comparison:
    """What ``gymview.compare`` returns: one row per policy and episode, their videos, and the player.

    In a notebook it shows its table and the first episode's player: the policies' videos side by
    side, charts of their step values with one line per policy, one slider for all.

    Args:
        table: The rows: ``policy``, ``seed``, ``steps``, ``return``, ``terminated``, ``truncated``, ``file``.
        seeds: The seeds played, one per episode.
        folder: Where the videos are (a temporary folder unless ``record=`` named one).
        values: The step values the player charts (``None``: its default).
        side_by_side: The side-by-side videos written (``record=``), one per seed.

    Attributes:
        table: The rows, by episode then in the policies' order.
        seeds: The seeds played.
        side_by_side: The side-by-side videos written, one per seed (none without ``record=``).

    Examples:
        >>> result = compare({"a": lambda obs: 0}, "CartPole-v1", seed=0, max_steps=3)
        >>> result.table[0]["steps"], result.player().count
        (3, 4)
    """

    def __init__(
        self,
        table: list[dict[str, Any]],
        seeds: list[int],
        folder: Path,
        values: Sequence[str] | None = None,
        side_by_side: list[Path] | None = None,
    ) -> None:
        self.table = table
        self.seeds = seeds
        self.folder = folder
        self.values = values
        self.side_by_side = side_by_side or []
        self._temporary: Any = None  # a TemporaryDirectory that holds the videos while this result lives

    def player(self, episode: int = 0) -> EpisodePlayer:
        """The player of one episode: each policy's video side by side, shared charts, one slider.

        Args:
            episode: Which episode (0 for the first seed).

        Returns:
            The player.
        """
        from gymview.episodes.clips import clips_in
        from gymview.episodes.player import EpisodePlayer

        seed = self.seeds[episode]
        rows = [row for row in self.table if row["seed"] == seed]
        clips = [dataclasses.replace(clips_in(row["file"])[0], label=row["policy"]) for row in rows]
        return EpisodePlayer(clips, self.values, title=f"seed {seed}")

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{column}</th>" for column in TABLE_COLUMNS[:-1])
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(row[column]))}</td>" for column in TABLE_COLUMNS[:-1]) + "</tr>"
            for row in self.table
        )
        return f"<table><tr>{head}</tr>{body}</table>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        import ipywidgets

        player = self.player(0)
        data, _ = player._repr_mimebundle_(**kwargs)
        box = ipywidgets.VBox([ipywidgets.HTML(self._repr_html_()), player])
        bundle = box._repr_mimebundle_(**kwargs)
        return {**data, **(bundle if isinstance(bundle, dict) else bundle[0]), "text/html": self._repr_html_()}

    def __repr__(self) -> str:
        policies = list(dict.fromkeys(row["policy"] for row in self.table))
        return f"<Comparison of {', '.join(policies)} on {len(self.seeds)} seed(s)>"


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def compare(
    policies: Mapping[str, Any],
    env: str | Callable[[], gym.Env] | gym.Env,
    seed: int = 0,
    episodes: int = 1,
    record: str | os.PathLike[str] | None = None,
    max_steps: int | None = None,
    values: Sequence[str] | None = None,
    fps: float | None = None,
    deterministic: bool = True,
) -> Comparison:
    """Play policies on the same seeds in lockstep and show them side by side, charts shared.

    Each policy gets its own env, reset with the same seed; they step together, one step each per
    frame, so frame ``i`` of every video is step ``i``. Each episode is recorded with its step table
    (``gymview.read_steps``); inside a policy, ``gymview.log(name=value)`` adds values to it. In a
    notebook the result shows its table and the first episode's player (``result.player(k)`` for
    the others): the videos side by side, one line per policy in each chart, one slider for all.

    Args:
        policies: Names and policies: each a function ``observation -> action`` or a
            stable-baselines3 model (played through ``predict``).
        env: An env id (made with ``render_mode="rgb_array"``), a function that makes the env, or
            a gymnasium env (remade from its spec for each policy).
        seed: The first episode's seed; episode ``k`` uses ``seed + k``.
        episodes: How many episodes each policy plays.
        record: A folder: the per-policy videos and their step tables go there
            (``{policy}-seed-{seed}.mp4``), and each episode's side-by-side video, labelled
            (``compare-seed-{seed}.mp4``). ``None``: a temporary folder, removed with the result.
        max_steps: End episodes after this many steps (marked truncated).
        values: The step values the player charts (``None``: reward, return, the action's and the
            logged ones).
        fps: Frames per second of the videos (the env's ``render_fps`` by default).
        deterministic: Passed to a model's ``predict``.

    Returns:
        A ``Comparison``: ``.table`` has one row per policy and episode (``policy``, ``seed``,
            ``steps``, ``return``, ``terminated``, ``truncated``, ``file``).

    Raises:
        TypeError: When a policy is neither a function nor a model, or ``env`` is none of the kinds above.
        ValueError: When ``policies`` is empty, a name holds a path separator, ``seed``,
            ``episodes`` or ``max_steps`` is out of range, or the env does not render pictures.

    Examples:
        >>> result = compare({"push left": lambda obs: 0, "balance": lambda obs: int(obs[2] > 0)}, "CartPole-v1",
        ...                  seed=0, episodes=2)
        >>> [(row["policy"], row["seed"], row["return"]) for row in result.table]
        [('push left', 0, 11.0), ('balance', 0, 41.0), ('push left', 1, 10.0), ('balance', 1, 51.0)]
    """
    if not policies:
        raise ValueError("compare() needs at least one policy: {'name': policy, ...}")
    for name in policies:
        if not isinstance(name, str) or not name or os.sep in name or (os.altsep and os.altsep in name):
            raise ValueError(f"policy names name files: give a non-empty name without {os.sep!r}; got {name!r}")
    check_int("seed", seed, minimum=0, hint=" (episode k uses seed + k)")
    check_int("episodes", episodes)
    check_optional_int("max_steps", max_steps, meaning_of_none="episodes end by themselves")
    make = _env_maker(env)
    acts = {name: policy_function(policy, deterministic) for name, policy in policies.items()}
    temporary = None if record is not None else tempfile.TemporaryDirectory(prefix="gymview-compare-")
    folder = Path(os.fspath(record) if record is not None else temporary.name).absolute()  # type: ignore[union-attr]
    folder.mkdir(parents=True, exist_ok=True)
    envs = {name: make() for name in policies}
    players = [_Player(name, acts[name], envs[name], renderer_for(envs[name])) for name in policies]
    try:
        rate = fps or players[0].env.metadata.get("render_fps") or 30
        table, side_by_side = [], []
        for seed_k in range(seed, seed + episodes):
            table += _play_episode(players, seed_k, folder, rate, max_steps)
            if record is not None:
                side_by_side.append(_side_by_side(table[-len(players) :], folder / f"compare-seed-{seed_k}.mp4", rate))
    except BaseException:
        for player in players:
            player.close()
        raise
    finally:
        for made in envs.values():
            made.close()
    result = Comparison(table, list(range(seed, seed + episodes)), folder, values, side_by_side)
    result._temporary = temporary
    return result


def _play_episode(players: list[_Player], seed: int, folder: Path, fps: float, max_steps: int | None) -> list[dict]:
    """Every policy's episode from ``seed``, a step each in turn until all have ended."""
    for player in players:
        player.start(seed, folder / f"{player.name}-seed-{seed}.mp4", fps)
    while not all(player.done for player in players):
        for player in players:
            if not player.done:
                player.step(max_steps)
    return [{**player.finish(), "seed": seed} for player in players]


def _side_by_side(rows: list[dict[str, Any]], path: Path, fps: float) -> Path:
    """The policies' videos of one seed tiled in a row, labelled, each held on its last frame once
    its episode ended."""
    from gymview.episodes.clips import read_frames

    readers = [read_frames(row["file"], 0, row["steps"] + 1) for row in rows]
    labels = [f"{row['policy']}  R {row['return']:.4g}" for row in rows]
    frames: list[Any] = [None] * len(rows)
    with VideoRecorder(path, fps=fps, crash_safe=False) as recorder:
        for _ in range(max(row["steps"] for row in rows) + 1):
            frames = [next(reader, held) for reader, held in zip(readers, frames)]  # an ended one holds its last
            recorder.write(tile(frames, labels, columns=len(rows)))
    return path
