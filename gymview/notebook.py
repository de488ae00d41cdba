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
    human: bool = True,
    quiet: bool = False,
) -> SetupReport:
    """Get the notebook ready to show envs; print and return what was done. Harmless to call again.

    * on Colab, turns on the custom widget manager the live view needs;
    * with ``display=True`` and no X display, starts a virtual one (Xvfb) so that code that opens an X
      window works; it is stopped when Python exits;
    * without a display, finds the OpenGL backend MuJoCo renders with by trying them in a child
      process (EGL first with a GPU, GLX on the virtual display, OSMesa) and sets ``MUJOCO_GL``/
      ``PYOPENGL_PLATFORM`` to it, or says what to install when none works; with no display at
      all, sets ``SDL_VIDEODRIVER=dummy``; variables you set are kept (and checked);
    * with ``install`` (default: only on Colab) and root on Debian, installs a missing Xvfb with apt-get;
    * in a notebook, ``human=True`` makes ``gym.make(..., render_mode="human")`` show inline;
      ``human=False`` turns that off again.

    >>> print(setup(display=False, human=False, quiet=True).started_display)  # doctest: +SKIP
    False
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
