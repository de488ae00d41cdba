"""The IPython face: ``%load_ext gymview`` and the ``%gymview`` line magic.

marimo has no magics: there ``gymview.setup(human=True)`` stands for ``%load_ext gymview``, and
``gymview_magic("status")`` (or ``"stop"``) for the line magic.

>>> from IPython.testing.globalipapp import get_ipython  # doctest: +SKIP
>>> get_ipython().run_line_magic("load_ext", "gymview")  # doctest: +SKIP
>>> get_ipython().run_line_magic("gymview", "status")     # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from gymview.live.kernels.registry import live_views

__all__ = ["gymview_magic", "load_ipython_extension", "status_table", "unload_ipython_extension"]

_USAGE = """usage: %gymview status | %gymview stop | %gymview setup | %gymview doctor
  status  print the counters of every live view in this kernel
  stop    end every gymview.play run and ask every gymview.background job to stop, then stop
          the stream threads of all live views (their last frames stay on the page)
  setup   run gymview.setup(human=True) again, as %load_ext gymview did, and print its report
  doctor  check display, Xvfb, ffmpeg, torch/CUDA and widget versions, and print fixes"""


def status_table() -> str:
    """Describe the live views of this process, one line each, under a header.

    Returns:
        A table: each view's index, title, frames sent and dropped, messages a second, megabytes
            sent, last encode time, and whether it is shown and streaming.

    Examples:
        >>> import gymview
        >>> view = gymview.LiveView(title="cartpole")
        >>> status_table().splitlines()[-1].split()[1:4]   # the newest view comes last
        ['cartpole', '0', '0']
        >>> view.close()
    """
    views = live_views()
    if not views:
        return "no live views (create one with gymview.watch(env) or gymview.LiveView())"
    lines = [
        f"{'#':>2}  {'title':<20} {'sent':>7} {'dropped':>8} {'msg/s':>6} {'MB sent':>8} {'enc ms':>6}"
        "  shown  streaming"
    ]
    for index, view in enumerate(views):
        s = view.stats
        lines.append(
            f"{index:>2}  {(view.title or '-')[:20]:<20} {s['frames_sent']:>7} {s['frames_dropped']:>8} "
            f"{s['messages_per_second']:>6.1f} {s['bytes_sent'] / 1e6:>8.2f} {s['last_encode_ms']:>6.2f}  "
            f"{'yes' if s['displayed'] else 'no':<5}  {'yes' if s['streaming'] else 'no'}"
        )
    return "\n".join(lines)


def gymview_magic(line: str) -> None:
    """Run the ``%gymview`` line magic.

    ``%gymview status`` prints the live views' counters; ``%gymview stop`` ends every
    ``gymview.play`` run, asks every ``gymview.background`` job to stop, then stops the stream
    threads of all live views (their last frames stay on the page); ``%gymview setup`` runs
    ``gymview.setup(human=True)`` again, as ``%load_ext gymview`` did; ``%gymview doctor`` prints the
    doctor's report.

    Args:
        line: The text after ``%gymview``: ``status`` (the default), ``stop``, ``setup`` or ``doctor``.

    Examples:
        >>> gymview_magic("help")  # doctest: +ELLIPSIS
        unknown %gymview command 'help'
        usage: %gymview status | %gymview stop | %gymview setup | %gymview doctor
        ...
    """
    command = line.strip().split()[0] if line.strip() else "status"
    if command == "status":
        print(status_table())
    elif command == "stop":
        from gymview.jobs import running_jobs
        from gymview.playback import running_plays

        failures = []
        runs, jobs = running_plays(), running_jobs()
        for job in jobs:
            job.request_stop()
        for run in runs:
            try:
                run.stop()
            except Exception as error:
                failures.append(f"play: {error!r}")
        if runs or jobs:
            print(f"stopped {len(runs)} play run(s); asked {len(jobs)} background job(s) to stop")
        views = live_views()
        for view in views:
            try:
                view.stop()
            except Exception as error:  # stop the others, then report
                failures.append(f"{view.title or 'untitled'}: {error!r}")
        print(f"stopped {len(views) - len(failures)} live view(s)" + "".join(f"\n  failed: {f}" for f in failures))
    elif command == "setup":
        from gymview.notebook import setup

        setup(human=True)
    elif command == "doctor":
        from gymview.doctor import format_report, run_checks

        print(format_report(run_checks()))
    else:
        print(f"unknown %gymview command {command!r}\n{_USAGE}")


def unload_ipython_extension(ipython: Any) -> None:
    """Give gymnasium's ``make`` its own behaviour back; ``%unload_ext gymview`` calls it.

    Args:
        ipython: The IPython shell (not used).

    Examples:
        >>> from gymview.human import inline_human_enabled
        >>> unload_ipython_extension(None)
        >>> inline_human_enabled()
        False
    """
    from gymview.human import disable_inline_human

    disable_inline_human()


def load_ipython_extension(ipython: Any) -> None:
    """Register the ``%gymview`` magic and run ``gymview.setup(human=True)``; ``%load_ext gymview`` calls it.

    So one line prepares any notebook: a virtual display where none exists, renderer variables,
    Colab's widget manager, and ``render_mode="human"`` envs shown inline (``gymnasium.make`` is
    replaced until ``%unload_ext gymview``).

    Args:
        ipython: The running IPython shell, where ``%gymview`` is registered.

    Examples:
        In a notebook cell, ``%load_ext gymview`` does this:

        >>> get_ipython().run_line_magic("load_ext", "gymview")  # doctest: +SKIP
        gymview setup (jupyter, no GPU)
          display    started: virtual display :1000 (Xvfb, stopped at exit)
          ...
        >>> get_ipython().run_line_magic("gymview", "status")  # doctest: +SKIP
        no live views (create one with gymview.watch(env) or gymview.LiveView())
    """
    from gymview.notebook import setup

    ipython.register_magic_function(gymview_magic, magic_kind="line", magic_name="gymview")
    setup(human=True)
