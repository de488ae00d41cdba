"""The IPython face: ``%load_ext gymview`` and the ``%gymview`` line magic.

>>> from IPython.testing.globalipapp import get_ipython  # doctest: +SKIP
>>> get_ipython().run_line_magic("load_ext", "gymview")  # doctest: +SKIP
>>> get_ipython().run_line_magic("gymview", "status")     # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from gymview.live.registry import live_views

__all__ = ["load_ipython_extension", "unload_ipython_extension", "gymview_magic", "status_table"]

_USAGE = """usage: %gymview status | %gymview stop | %gymview setup | %gymview doctor
  status  print the counters of every live view in this kernel
  stop    end every gymview.play run and ask every gymview.background job to stop, then stop
          the stream threads of all live views (their last frames stay on the page)
  setup   run gymview.setup() again and print its report
  doctor  check display, Xvfb, ffmpeg, torch/CUDA and widget versions, and print fixes"""


def status_table() -> str:
    """One line per live view: title, frames sent and dropped, message rate, bytes, encode time."""
    views = live_views()
    if not views:
        return "no live views (create one with gymview.watch(env) or gymview.LiveView())"
    lines = [f"{'#':>2}  {'title':<20} {'sent':>7} {'dropped':>8} {'msg/s':>6} {'MB sent':>8} {'enc ms':>6}  shown  streaming"]
    for index, view in enumerate(views):
        s = view.stats
        lines.append(
            f"{index:>2}  {(view.title or '-')[:20]:<20} {s['frames_sent']:>7} {s['frames_dropped']:>8} "
            f"{s['messages_per_second']:>6.1f} {s['bytes_sent'] / 1e6:>8.2f} {s['last_encode_ms']:>6.2f}  "
            f"{'yes' if s['displayed'] else 'no':<5}  {'yes' if s['streaming'] else 'no'}"
        )
    return "\n".join(lines)


def gymview_magic(line: str) -> None:
    """``%gymview status`` prints the live views' counters; ``%gymview stop`` stops their threads."""
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

        setup()
    elif command == "doctor":
        from gymview.doctor import format_report, run_checks

        print(format_report(run_checks()))
    else:
        print(f"unknown %gymview command {command!r}\n{_USAGE}")


def unload_ipython_extension(ipython: Any) -> None:
    """Called by ``%unload_ext gymview``: gymnasium's ``make`` gets its own behaviour back."""
    from gymview.human import disable_inline_human

    disable_inline_human()


def load_ipython_extension(ipython: Any) -> None:
    """Called by ``%load_ext gymview``: registers ``%gymview`` and runs :func:`gymview.setup`.

    So one line prepares any notebook: a virtual display where none exists, renderer variables,
    Colab's widget manager, and ``render_mode="human"`` envs shown inline.
    """
    from gymview.notebook import setup

    ipython.register_magic_function(gymview_magic, magic_kind="line", magic_name="gymview")
    setup()
