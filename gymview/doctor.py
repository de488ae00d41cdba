"""``python -m gymview doctor``: check what gymview needs on this machine and say how to fix what is missing.

>>> from gymview.doctor import run_checks
>>> {check.name for check in run_checks()} >= {"display", "ffmpeg", "ipykernel"}
True
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
from collections.abc import Collection
from dataclasses import dataclass

from gymview.headless import opengl
from gymview.headless import virtual_display as virtual
from gymview.headless.environment import detect, ipykernel_breaks_thread_sends

__all__ = ["Check", "format_report", "run_checks"]

OK, WARN, FAIL = "ok", "warn", "FAIL"


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report.

    Args:
        name: What was checked (``"ffmpeg"``, ``"display"``, ...).
        status: ``"ok"``, ``"warn"`` or ``"FAIL"`` (essential and broken).
        detail: What was found.
        fix: How to fix it; shown when the status is not ok.

    Examples:
        >>> check = Check("ffmpeg", "FAIL", "not found", "pip install -U imageio-ffmpeg")
        >>> check.status, check.fix
        ('FAIL', 'pip install -U imageio-ffmpeg')
    """

    name: str
    status: str
    detail: str
    fix: str = ""


def run_checks(names: Collection[str] | None = None) -> list[Check]:
    """Run every check, or those named; none raises (a check that crashes reports FAIL with the error).

    Args:
        names: The checks to run, of ``display``, ``xvfb``, ``ffmpeg``, ``h264``, ``gymnasium``, ``pygame``,
            ``widgets``, ``ipykernel``, ``jupyterlab``, ``gpu``, ``opengl`` and ``torch``; None: all.

    Returns:
        One ``Check`` per check run, in that order.

    Examples:
        >>> [check.name for check in run_checks(["ffmpeg", "gymnasium"])]
        ['ffmpeg', 'gymnasium']
        >>> all(check.status in ("ok", "warn", "FAIL") for check in run_checks())
        True
    """
    checks = []
    for check in (
        _display,
        _xvfb,
        _ffmpeg,
        _h264,
        _gymnasium,
        _pygame,
        _widgets,
        _ipykernel,
        _jupyterlab,
        _gpu,
        _opengl,
        _torch,
    ):
        name = check.__name__.lstrip("_")
        if names is not None and name not in names:
            continue
        try:
            checks.append(check())
        except Exception as error:  # the doctor reports, it does not crash
            checks.append(Check(name, FAIL, f"the check itself failed: {error!r}"))
    return checks


def format_report(checks: list[Check]) -> str:
    """Format checks as the report ``python -m gymview doctor`` prints.

    Args:
        checks: The checks, as ``run_checks`` returns them.

    Returns:
        The report: a header line, one line per check (and its fix when not ok), then what is broken.

    Examples:
        >>> print(format_report([Check("ffmpeg", "ok", "/usr/bin/ffmpeg")]).splitlines()[1])
          ok    ffmpeg       /usr/bin/ffmpeg
    """
    from gymview import __version__

    lines = [f"gymview {__version__} doctor · Python {platform.python_version()} · {platform.platform(terse=True)}"]
    for check in checks:
        lines.append(f"  {check.status:<5} {check.name:<12} {check.detail}")
        if check.fix and check.status != OK:
            lines.append(f"  {'':<5} {'':<12} fix: {check.fix}")
    failed = [check.name for check in checks if check.status == FAIL]
    lines.append(f"broken: {', '.join(failed)}" if failed else "everything essential works")
    return "\n".join(lines)


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _release(version: str) -> tuple[int, ...]:
    numbers = []
    for part in version.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers)


def _display() -> Check:
    where = detect()
    if where.has_display:
        return Check("display", OK, f"windows can open ({where.display or platform.system()})")
    if where.display:
        return Check(
            "display",
            WARN,
            f"DISPLAY={where.display} but no X server answers there",
            "unset DISPLAY, or start the X server it names; gymview.setup() starts a virtual one",
        )
    return Check("display", OK, "none (headless): rgb_array rendering works; gymview.setup() starts Xvfb for X windows")


def _xvfb() -> Check:
    path = virtual.find_xvfb()
    pyvirtualdisplay = _version("PyVirtualDisplay")
    if path is None:
        return Check(
            "xvfb", WARN, "Xvfb not found: no virtual display for programs that open X windows", virtual.INSTALL_XVFB
        )
    if pyvirtualdisplay is None:
        return Check("xvfb", WARN, f"{path}, but pyvirtualdisplay is not installed", virtual.INSTALL_PYVIRTUALDISPLAY)
    return Check("xvfb", OK, f"{path}, pyvirtualdisplay {pyvirtualdisplay}")


def _ffmpeg() -> Check:
    """The binary recording will use (find_ffmpeg's choice), and whether it runs."""
    from gymview.errors import FFmpegNotFoundError
    from gymview.video.ffmpeg import ENV_VAR, find_ffmpeg

    fix = f"pip install -U imageio-ffmpeg, or set {ENV_VAR} to the path of an ffmpeg binary"
    try:
        path = find_ffmpeg()
    except FFmpegNotFoundError as error:
        return Check("ffmpeg", FAIL, f"no video recording: {error}", fix)
    done = _run([path, "-hide_banner", "-version"])
    if done is None or done.returncode != 0:
        return Check(
            "ffmpeg", FAIL, f"{path} does not run: {(done.stderr if done else 'timed out').strip()[-200:]}", fix
        )
    version = done.stdout.splitlines()[0] if done.stdout else "version unknown"
    return Check("ffmpeg", OK, f"{path} ({version})")


def _h264() -> Check:
    """Whether live views can stream H.264 to pages that decode it (PyAV with libx264)."""
    from gymview.live.encoding.h264 import h264_unavailable

    why = h264_unavailable()
    if why is not None:
        return Check("h264", WARN, f"live views send JPEG frames only: {why}", "pip install -U av")
    return Check("h264", OK, f"libx264 through PyAV {_version('av')}: live views stream H.264 to pages that decode it")


def _gymnasium() -> Check:
    version = _version("gymnasium")
    if version is None:
        return Check("gymnasium", FAIL, "not installed", 'pip install "gymnasium[classic-control]>=1.1"')
    if _release(version) < (1, 1):
        return Check("gymnasium", FAIL, f"{version} is older than 1.1", 'pip install -U "gymnasium>=1.1"')
    return Check("gymnasium", OK, version)


def _pygame() -> Check:
    version = _version("pygame-ce") or _version("pygame")
    if version is None:
        return Check(
            "pygame",
            WARN,
            "not installed: classic-control envs cannot render",
            'pip install "gymnasium[classic-control]"',
        )
    return Check("pygame", OK, version)


def _widgets() -> Check:
    versions = {name: _version(name) for name in ("anywidget", "ipywidgets", "jupyterlab_widgets")}
    detail = ", ".join(f"{name} {version or 'missing'}" for name, version in versions.items())
    if versions["anywidget"] is None or versions["ipywidgets"] is None:
        return Check("widgets", FAIL, detail, "pip install anywidget ipywidgets")
    if _release(versions["ipywidgets"]) < (8,):
        return Check("widgets", FAIL, detail, 'pip install -U "ipywidgets>=8"')
    if versions["jupyterlab_widgets"] is None:
        return Check("widgets", WARN, detail + " (JupyterLab will not show widgets)", "pip install jupyterlab_widgets")
    return Check("widgets", OK, detail)


def _ipykernel() -> Check:
    version = _version("ipykernel")
    if version is None:
        return Check("ipykernel", WARN, "not installed: no Jupyter kernel in this environment", "pip install ipykernel")
    if ipykernel_breaks_thread_sends(version):
        return Check(
            "ipykernel",
            FAIL,
            f"{version} loses messages sent from threads: the live view stalls",
            'pip install -U "ipykernel>=7.1"',
        )
    return Check("ipykernel", OK, version)


def _jupyterlab() -> Check:
    version = _version("jupyterlab")
    if version is None:
        return Check("jupyterlab", OK, "not installed here (Colab, VS Code or a remote server may serve the notebook)")
    if _release(version) < (4,):
        return Check(
            "jupyterlab",
            WARN,
            f"{version}: anywidget needs JupyterLab 4 for the best support",
            'pip install -U "jupyterlab>=4.4"',
        )
    if _release(version) < (4, 4):
        return Check(
            "jupyterlab", OK, f"{version} (browser messages reach a busy kernel only with comms over subshells, 4.4+)"
        )
    return Check("jupyterlab", OK, version)


def _torch() -> Check:
    where = detect()
    if _version("torch") is None:
        return Check("torch", OK, 'not installed (only GPU preprocessing needs it: pip install "gymview[torch]")')
    probe = "import torch; print(torch.__version__, torch.cuda.is_available(), torch.version.cuda)"
    done = _run([sys.executable, "-c", probe])  # in a child: a broken CUDA setup must not take the doctor down
    if done is None or done.returncode != 0:
        error = "timed out" if done is None else (done.stderr.strip().splitlines() or ["?"])[-1]
        return Check("torch", WARN, f"installed but does not import: {error}", 'pip install -U "gymview[torch]"')
    version, cuda, cuda_version = done.stdout.strip().splitlines()[-1].split()
    if cuda == "True":
        return Check("torch", OK, f"{version}, CUDA {cuda_version} available")
    if where.gpu:
        return Check(
            "torch",
            WARN,
            f"{version} cannot use the GPU this machine has",
            "install a CUDA build of torch: https://pytorch.org/get-started/locally/",
        )
    return Check("torch", OK, f"{version}, CPU only (no GPU here)")


def _gpu() -> Check:
    if detect().gpu:
        return Check("gpu", OK, "NVIDIA GPU present")
    return Check("gpu", OK, "none (OpenGL renders in software)")


def _opengl() -> Check:
    """Each OpenGL backend really tried with MuJoCo, and the one the current settings pick."""
    if not opengl.mujoco_installed():
        found = [backend for backend in ("osmesa", "egl") if opengl.library_present(backend)]
        return Check(
            "opengl",
            OK,
            f'not checked: mujoco is not installed (MuJoCo envs: pip install "gymnasium[mujoco]"); '
            f"OpenGL libraries found: {', '.join(found) or 'none'}",
        )
    where = detect()
    probes = [opengl.probe(backend) for backend in opengl.backends_to_try(where.gpu, where.has_display)]
    summary = "; ".join(map(str, probes)) + ("" if where.has_display else "; glfw not tried: no X display")
    current = opengl.probe(None)
    settings = (
        f"MUJOCO_GL={current.backend}" if "MUJOCO_GL" in os.environ else "MUJOCO_GL unset (gymnasium tries glfw first)"
    )
    working = [probe.backend for probe in probes if probe.works]
    if current.works:
        return Check("opengl", OK, f"MuJoCo renders with {settings} ({current.detail}); {summary}")
    if working:
        return Check(
            "opengl",
            WARN,
            f"MuJoCo cannot render with {settings}: {current.detail}; {summary}",
            f"run gymview.setup() first (it picks {working[0]}), or set MUJOCO_GL={working[0]}",
        )
    return Check("opengl", WARN, f"no OpenGL backend renders MuJoCo: {summary}", opengl.what_to_install(probes))


def _run(command: list[str]) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return None
