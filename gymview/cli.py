"""``python -m gymview`` (also the ``gymview`` command): one subcommand per job.

>>> main(["doctor"])  # doctest: +SKIP
0
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line), run the subcommand, return the exit status."""
    parser = argparse.ArgumentParser(prog="gymview", description="See Gymnasium agents live in notebooks.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "doctor", help="check display, Xvfb, ffmpeg, torch/CUDA, widgets and Jupyter versions; print fixes"
    ).set_defaults(run=_doctor)
    arguments = parser.parse_args(argv)
    return arguments.run(arguments)


def _doctor(arguments: argparse.Namespace) -> int:
    from gymview.doctor import FAIL, format_report, run_checks

    checks = run_checks()
    print(format_report(checks))
    return 1 if any(check.status == FAIL for check in checks) else 0
