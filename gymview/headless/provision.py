"""``prepare()``: make a Colab runtime or a headless server ready to render envs; harmless to repeat.

``gymview.setup`` calls it and adds what needs the rest of gymview (inline ``human`` mode).

>>> report = prepare(display=False)      # doctest: +SKIP
>>> print(report)                        # doctest: +SKIP
gymview setup (jupyter, no GPU)
  display    none: rgb_array rendering works, programs that open X windows do not
  ...
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from gymview.headless import opengl
from gymview.headless import virtual_display as virtual
from gymview.headless.environment import Environment, detect

__all__ = ["SetupReport", "prepare"]

_set_by_setup: dict[str, str] = {}  # environment variables an earlier call set, so later calls can tell


@dataclass(frozen=True)
class SetupReport:
    """What ``gymview.setup`` found and did; ``str(report)`` is the short text it prints.

    Args:
        environment: Where this runs: the front-end (``"colab"``, ``"jupyter"``, ``"vscode"``,
            ``"ipython"`` or ``"python"``), the display, a GPU, the ipykernel version.
        display: The X display in use (``$DISPLAY``), or None.
        virtual_display: The display is gymview's virtual one (Xvfb).
        started_display: This call started that virtual display.
        installed: The Debian packages this call installed with apt-get.
        variables_set: The environment variables this call set (``MUJOCO_GL``,
            ``PYOPENGL_PLATFORM``, ``SDL_VIDEODRIVER``, ``XDG_RUNTIME_DIR``).
        variables_kept: Those you had set yourself, kept with your values.
        widget_manager: Colab's custom widget manager was turned on.
        human_inline: ``render_mode="human"`` envs show inline.
        opengl_backend: The OpenGL backend MuJoCo renders with (``"egl"``, ``"osmesa"``,
            ``"glfw"``), or None.
        opengl_probes: Each backend tried in a child process, and whether it rendered.
        problems: What could not be done, each with its fix.

    Examples:
        >>> import os, gymview
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ):  # the variables setup sets last only for this example
        ...     report = gymview.setup(display=False, human=False, quiet=True)
        >>> str(report).startswith("gymview setup (")
        True
        >>> report.installed, report.started_display
        ((), False)
    """

    environment: Environment
    display: str | None
    virtual_display: bool
    started_display: bool
    installed: tuple[str, ...]
    variables_set: Mapping[str, str]
    variables_kept: Mapping[str, str]
    widget_manager: bool
    human_inline: bool
    opengl_backend: str | None = None
    opengl_probes: tuple[opengl.GLProbe, ...] = field(default=())
    problems: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        where = self.environment
        lines = [f"gymview setup ({where.frontend}, {'GPU' if where.gpu else 'no GPU'})"]
        if self.installed:
            lines.append(f"  installed  {' '.join(self.installed)} (apt-get)")
        if self.virtual_display:
            state = "started" if self.started_display else "running"
            lines.append(f"  display    {state}: virtual display {self.display} (Xvfb, stopped at exit)")
        elif self.display:
            lines.append(f"  display    {self.display}")
        else:
            lines.append("  display    none: rgb_array rendering works, programs that open X windows do not")
        if self.variables_set:
            lines.append("  renderers  set " + ", ".join(f"{k}={v}" for k, v in self.variables_set.items()))
        if self.variables_kept:
            lines.append("  renderers  kept yours: " + ", ".join(f"{k}={v}" for k, v in self.variables_kept.items()))
        tried = {probe.backend: probe for probe in self.opengl_probes}
        chosen = tried.get(self.opengl_backend) if self.opengl_backend is not None else None
        if chosen is not None and chosen.works:
            lines.append(f"  opengl     MuJoCo renders with {chosen.backend} ({chosen.detail})")
        elif self.opengl_backend and not tried:
            lines.append(f"  opengl     {self.opengl_backend} (mujoco is not installed, so not tried)")
        if self.widget_manager:
            lines.append("  widgets    Colab custom widget manager enabled")
        if self.human_inline:
            lines.append('  human      render_mode="human" shows inline (gymview.setup(human=False) turns it off)')
        lines.extend(f"  problem    {problem}" for problem in self.problems)
        return "\n".join(lines)


def prepare(display: bool = True, install: bool | None = None) -> SetupReport:
    """Get this machine ready to render envs and return what was done.

    ``gymview.setup`` calls it and handles inline ``human`` mode itself, so the report's
    ``human_inline`` is False here. See ``gymview.setup`` for what each step does.

    Args:
        display: With no X display, start a virtual one (Xvfb).
        install: Install a missing Xvfb with apt-get (as root on Debian); None: only on Colab.

    Returns:
        A ``SetupReport``.

    Examples:
        >>> import os
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ):  # the variables it sets last only for this example
        ...     report = prepare(display=False)
        >>> report.started_display, report.human_inline
        (False, False)
    """
    where = detect()
    problems: list[str] = []
    widget_manager = where.frontend == "colab" and _enable_colab_widget_manager(problems)

    installed: tuple[str, ...] = ()
    started = False
    headless = not where.has_display
    if display and headless:
        wanted = _debian_packages_needed(
            xvfb_found=virtual.find_xvfb() is not None,
            allowed=where.frontend == "colab" if install is None else install,
            is_root=hasattr(os, "geteuid") and os.geteuid() == 0,
            apt_get=shutil.which("apt-get") is not None,
        )
        if wanted:
            installed = _apt_get_install(wanted, problems)
        started = _start_display(problems)

    variables: dict[str, str] = {}
    backend: str | None = None
    probes: tuple[opengl.GLProbe, ...] = ()
    if headless:
        backend, probes = _choose_opengl(where.gpu, started, problems)
        if backend is not None:
            variables.update(opengl.variables_for(backend))
    variables.update(virtual.runtime_dir_variable())
    if headless and not started:
        variables["SDL_VIDEODRIVER"] = "dummy"
    elif "SDL_VIDEODRIVER" in _set_by_setup and os.environ.get("SDL_VIDEODRIVER") == _set_by_setup["SDL_VIDEODRIVER"]:
        del os.environ["SDL_VIDEODRIVER"]  # ours from an earlier call without a display; SDL can use X now
        del _set_by_setup["SDL_VIDEODRIVER"]
    variables_set, variables_kept = virtual.set_renderer_variables(variables)
    _set_by_setup.update(variables_set)
    variables_kept = {k: v for k, v in variables_kept.items() if _set_by_setup.get(k) != v}

    if where.ipykernel_breaks_thread_sends:
        problems.append(
            f'ipykernel {where.ipykernel_version} loses messages sent from threads; pip install -U "ipykernel>=7.1"'
        )
    ours = virtual.virtual_display()
    report = SetupReport(
        environment=where,
        display=os.environ.get("DISPLAY") or None,
        virtual_display=ours is not None and ours.name == os.environ.get("DISPLAY"),
        started_display=started,
        installed=installed,
        variables_set=variables_set,
        variables_kept=variables_kept,
        widget_manager=widget_manager,
        human_inline=False,
        opengl_backend=backend,
        opengl_probes=probes,
        problems=tuple(problems),
    )
    return report


def _choose_opengl(gpu: bool, display: bool, problems: list[str]) -> tuple[str | None, tuple[opengl.GLProbe, ...]]:
    """The OpenGL backend for MuJoCo: the user's own ``MUJOCO_GL`` (checked), else the first that renders."""
    theirs = os.environ.get("MUJOCO_GL")
    if theirs and _set_by_setup.get("MUJOCO_GL") != theirs:
        backend = theirs if theirs in opengl.BACKENDS else None
        if not opengl.mujoco_installed():
            return backend, ()
        tried: tuple[opengl.GLProbe, ...] = (opengl.probe(None),)
        if not tried[0].works:
            problems.append(f"your MUJOCO_GL={theirs} does not render: {tried[0].detail}; unset it and run setup again")
        return backend, tried
    for name in ("MUJOCO_GL", "PYOPENGL_PLATFORM"):  # ours from an earlier call: choose again
        if name in _set_by_setup and os.environ.get(name) == _set_by_setup[name]:
            del os.environ[name], _set_by_setup[name]
    backend, tried = opengl.choose_backend(gpu, display)
    if tried and backend is None:
        failures = "; ".join(str(probe) for probe in tried)
        problems.append(f"no OpenGL backend renders MuJoCo ({failures}): {opengl.what_to_install(tried)}")
    return backend, tried


def _debian_packages_needed(xvfb_found: bool, allowed: bool, is_root: bool, apt_get: bool) -> tuple[str, ...]:
    """The Debian packages setup may install: Xvfb, only when missing, allowed, as root, with apt-get."""
    return ("xvfb",) if not xvfb_found and allowed and is_root and apt_get else ()


def _apt_get_install(packages: tuple[str, ...], problems: list[str]) -> tuple[str, ...]:
    command = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages]
    quiet_env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for attempt in ("install", "update then install"):
        if attempt != "install":  # stale package lists are the usual reason an install fails on Colab
            subprocess.run(["apt-get", "update", "-qq"], env=quiet_env, capture_output=True, timeout=300, check=False)
        done = subprocess.run(command, env=quiet_env, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode == 0:
            return packages
    problems.append(f"apt-get could not install {' '.join(packages)}: {done.stderr.strip()[-300:]}")
    return ()


def _start_display(problems: list[str]) -> bool:
    try:
        virtual.start_virtual_display()
    except (ModuleNotFoundError, FileNotFoundError, RuntimeError) as error:
        problems.append(f"no virtual display: {error}")
        return False
    return True


def _enable_colab_widget_manager(problems: list[str]) -> bool:
    try:
        from google.colab import output
    except ImportError as error:
        problems.append(f"Colab detected but google.colab.output is missing ({error}); widgets may not show")
        return False
    output.enable_custom_widget_manager()
    return True
