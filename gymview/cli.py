"""``python -m gymview`` (also the ``gymview`` command): one subcommand per job.

>>> main(["record", "CartPole-v1", "--episodes", "1", "--max-steps", "5", "--workers", "1",
...       "--out", __import__("tempfile").mkdtemp(), "--no-progress"])  # doctest: +ELLIPSIS
<BatchResult 1 episodes ...>
0
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

__all__ = ["main"]

KEEP_RULES = {
    "all": None,
    "terminated": lambda episode: episode.terminated,
    "truncated": lambda episode: episode.truncated,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line), run the subcommand, return the exit status."""
    parser = argparse.ArgumentParser(prog="gymview", description="See Gymnasium agents live in notebooks.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "doctor", help="check display, Xvfb, ffmpeg, torch/CUDA, widgets and Jupyter versions; print fixes"
    ).set_defaults(run=_doctor)
    record = commands.add_parser("record", help="run many episodes in parallel and write them as videos")
    _add_record_arguments(record)
    record.set_defaults(run=_record)
    arguments = parser.parse_args(argv)
    return arguments.run(arguments)


def _doctor(arguments: argparse.Namespace) -> int:
    from gymview.doctor import FAIL, format_report, run_checks

    checks = run_checks()
    print(format_report(checks))
    return 1 if any(check.status == FAIL for check in checks) else 0


def _add_record_arguments(parser: argparse.ArgumentParser) -> None:
    from gymview.video.batch import LAYOUTS, QUALITIES

    parser.add_argument("env", help="registered env id, e.g. MountainCar-v0, ALE/Breakout-v5 or module:MyEnv-v0")
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first (in every worker too), for envs it registers; repeatable",
    )
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--out", default="videos/", help="folder for the videos (default: videos/)")
    parser.add_argument(
        "--policy", default="random", help="module:function taking an observation and returning an action, or 'random'"
    )
    parser.add_argument(
        "--keep", default="all", help="all, terminated, truncated, or module:function taking an Episode"
    )
    parser.add_argument("--layout", choices=LAYOUTS, default="per-episode")
    parser.add_argument("--tiles", type=int, default=16, help="episodes per mosaic video")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    parser.add_argument("--seed", type=int, default=0, help="episode i uses seed SEED + i")
    parser.add_argument("--fps", type=float, default=30)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--quality", choices=list(QUALITIES), default="fast")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _load_function(spec: str, what: str) -> Callable:
    """``module:function`` (the module may sit in the current folder) -> the function."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise SystemExit(f"gymview: --{what} must look like module:function (e.g. my_policies:greedy); got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        function = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as error:
        raise SystemExit(f"gymview: cannot load --{what} {spec!r}: {error}") from error
    if not callable(function):
        raise SystemExit(f"gymview: --{what} {spec!r} is not a function")
    return function


def _record(arguments: argparse.Namespace) -> int:
    from gymnasium.error import Error as GymnasiumError

    from gymview.headless.provision import prepare
    from gymview.video.batch import record_batch
    from gymview.video.env_ids import registered_env

    # An OpenGL backend that renders here (MuJoCo on a server without a display), chosen before any module
    # imports PyOpenGL and inherited by the workers; an episode that still cannot render says what to do.
    prepare(display=False)
    policy = None if arguments.policy == "random" else _load_function(arguments.policy, "policy")
    keep = KEEP_RULES[arguments.keep] if arguments.keep in KEEP_RULES else _load_function(arguments.keep, "keep")
    if os.getcwd() not in sys.path:  # --import and module: ids may name modules in the current folder
        sys.path.insert(0, os.getcwd())
    try:
        make_env = registered_env(arguments.env, arguments.imports)
    except (ImportError, GymnasiumError) as error:
        raise SystemExit(f"gymview: {error}") from error
    result = record_batch(
        make_env, policy, episodes=arguments.episodes, out=arguments.out, keep=keep,
        workers=arguments.workers, layout=arguments.layout, tiles=arguments.tiles, seed=arguments.seed,
        fps=arguments.fps, max_steps=arguments.max_steps, quality=arguments.quality,
        progress=not arguments.no_progress,
    )  # fmt: skip
    print(repr(result))
    for row in result.failed:
        print(f"episode {row['episode']} (seed {row['seed']}) failed: {row['error']}", file=sys.stderr)
    return 1 if result.failed else 0
