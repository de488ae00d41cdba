"""``gymview.setup()``: make a notebook on Colab or a headless server ready to show envs. Run it as often as you like.

>>> import gymview
>>> report = gymview.setup(quiet=True)   # doctest: +SKIP
>>> print(report)                        # doctest: +SKIP
gymview setup (jupyter, no GPU)
  display    started virtual display :1000 (Xvfb 1400x900)
  ...
"""

from __future__ import annotations

import dataclasses
import sys

from gymview.headless.provision import SetupReport, prepare

__all__ = ["setup"]


def setup(
    display: bool = True,
    install: bool | None = None,
    human: bool = False,
    quiet: bool = False,
) -> SetupReport:
    """Get the notebook ready to show envs; print and return what was done. Harmless to call again.

    ``%load_ext gymview`` calls it in Jupyter with ``human=True``; marimo has no magics: call it in a
    cell there.

    * On Colab, it turns on the custom widget manager the live view needs.
    * Without a display, it finds the OpenGL backend MuJoCo renders with by trying them in a child
      process (EGL first with a GPU, else OSMesa; GLX on the virtual display last) and sets ``MUJOCO_GL`` and
      ``PYOPENGL_PLATFORM`` to it, or says what to install when none works. With no display at
      all, it sets ``SDL_VIDEODRIVER=dummy``. Variables you set are kept (and checked).

    Args:
        display: With no X display, start a virtual one (Xvfb) so that code that opens an X window
            works; it is stopped when Python exits.
        install: Install a missing Xvfb with apt-get (as root on Debian); None: only on Colab.
        human: In a notebook, make ``gym.make(..., render_mode="human")`` show inline (this replaces
            ``gymnasium.make``); False, the default, leaves ``gymnasium.make`` as gymnasium has it
            (turning off an earlier ``human=True``).
        quiet: Do not print the report.

    Returns:
        A ``SetupReport``: what was found and done; ``str(report)`` is the text printed.

    Examples:
        In a notebook's first cell, with ``render_mode="human"`` envs shown inline:

        >>> import gymview
        >>> gymview.setup(human=True)  # doctest: +SKIP
        gymview setup (colab, GPU)
          renderers  set MUJOCO_GL=egl, PYOPENGL_PLATFORM=egl
          ...

        Here, keeping this process's environment variables as they were:

        >>> import os
        >>> from unittest import mock
        >>> import gymnasium
        >>> make = gymnasium.make
        >>> with mock.patch.dict(os.environ):
        ...     report = gymview.setup(display=False, quiet=True)
        >>> report.started_display, report.human_inline, gymnasium.make is make
        (False, False, True)
    """
    report = prepare(display=display, install=install)
    report = dataclasses.replace(report, human_inline=_set_human(human and report.environment.in_notebook))
    if not quiet:
        print(report)
    return report


def _set_human(inline: bool) -> bool:
    if not inline:
        if "gymview.human" in sys.modules:  # enabled earlier: turn it off; otherwise nothing to import
            sys.modules["gymview.human"].disable_inline_human()
        return False
    from gymview import human

    human.enable_inline_human()
    return True
