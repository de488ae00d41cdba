"""``python -m gymview``: the command line. One subcommand per entry of :data:`COMMANDS`.

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
from collections.abc import Callable

__all__ = ["COMMANDS", "main"]

KEEP_RULES = {"all": None, "terminated": lambda episode: episode.terminated, "truncated": lambda episode: episode.truncated}


def _load_function(spec: str, what: str) -> Callable:
    """``module:function`` (the module found from the current folder too) -> the function."""
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


def _add_record_arguments(parser: argparse.ArgumentParser) -> None:
    from gymview.batch import LAYOUTS, QUALITIES

    parser.add_argument("env", help="registered env id, e.g. MountainCar-v0")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--out", default="videos/", help="folder for the videos (default: videos/)")
    parser.add_argument("--policy", default="random", help="module:function taking an observation and returning an action, or 'random'")
    parser.add_argument("--keep", default="all", help="all, terminated, truncated, or module:function taking an Episode")
    parser.add_argument("--layout", choices=LAYOUTS, default="per-episode")
    parser.add_argument("--tiles", type=int, default=16, help="episodes per mosaic video")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    parser.add_argument("--seed", type=int, default=0, help="episode i uses seed SEED + i")
    parser.add_argument("--fps", type=float, default=30)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--quality", choices=list(QUALITIES), default="fast")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _record(args: argparse.Namespace) -> int:
    from gymview.batch import record_batch

    policy = None if args.policy == "random" else _load_function(args.policy, "policy")
    keep = KEEP_RULES[args.keep] if args.keep in KEEP_RULES else _load_function(args.keep, "keep")
    result = record_batch(
        args.env, policy, episodes=args.episodes, out=args.out, keep=keep, workers=args.workers,
        layout=args.layout, tiles=args.tiles, seed=args.seed, fps=args.fps, max_steps=args.max_steps,
        quality=args.quality, progress=not args.no_progress,
    )  # fmt: skip
    print(repr(result))
    for row in result.failed:
        print(f"episode {row['episode']} (seed {row['seed']}) failed: {row['error']}", file=sys.stderr)
    return 1 if result.failed else 0


#: subcommand -> (help, add its arguments to a parser, run it and return the exit code)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "record": ("run many episodes in parallel and write them as videos", _add_record_arguments, _record),
}


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line), run the subcommand, return its exit code."""
    parser = argparse.ArgumentParser(prog="gymview", description="gymview: see Gymnasium agents, record them fast.")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, add_arguments, _) in COMMANDS.items():
        add_arguments(subcommands.add_parser(name, help=help_text, description=help_text))
    args = parser.parse_args(argv)
    return COMMANDS[args.command][2](args)
