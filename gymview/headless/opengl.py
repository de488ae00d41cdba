"""Which OpenGL backend can MuJoCo render with here? Found by really rendering, in a child process.

MuJoCo envs render through EGL (a GPU), OSMesa (software) or GLFW (GLX on an X display, real or
Xvfb), chosen by ``MUJOCO_GL``. A wrong choice fails only at the first render, and a second try
in the same process can abort it (MuJoCo's "recursive initialization", which kills a kernel), so
every check runs in a short-lived child: it builds a one-geom model, renders it with gymnasium's
own off-screen viewer and reports the GL renderer's name, or the error.

>>> probe("osmesa").backend                 # doctest: +SKIP
'osmesa'
>>> print(probe("osmesa"))                  # doctest: +SKIP
osmesa works (llvmpipe (LLVM 15.0.6, 256 bits))
"""

from __future__ import annotations

import ctypes.util
import importlib.util
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["GLProbe", "backends_to_try", "check_mujoco_rendering", "choose_backend", "probe", "what_to_install"]

# MUJOCO_GL's names, and the Debian package each needs
BACKENDS = ("egl", "osmesa", "glfw")
PACKAGES = {
    "egl": "libegl1",
    "osmesa": "libosmesa6",
    "glfw": "libgl1 libglfw3 (and an X display: gymview.setup() starts Xvfb)",
}
# PyOpenGL's platform to go with each (GLFW uses PyOpenGL's default, GLX)
PYOPENGL_PLATFORMS = {"egl": "egl", "osmesa": "osmesa", "glfw": None}

_PROBE = """
import os, sys, threading
threading.Thread(target=lambda: (sys.stdin.buffer.read(), os._exit(3)), daemon=True).start()  # dies with its parent
try:
    import warnings; warnings.simplefilter("ignore")
    import mujoco
    from gymnasium.envs.mujoco.mujoco_rendering import OffScreenViewer
    model = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><light pos="0 0 3"/><geom size=".2" rgba="1 0 0 1"/></worldbody></mujoco>')
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    viewer = OffScreenViewer(model, data, 32, 32)
    frame = viewer.render("rgb_array")
    from OpenGL import GL
    name = GL.glGetString(GL.GL_RENDERER)
    viewer.free()
    print(("works " + (name.decode() if name else "unknown renderer")) if frame.any() else "fails an all-black frame")
except BaseException as error:
    print("fails", f"{type(error).__name__}: {error}".splitlines()[0])
sys.stdout.flush()
os._exit(0)  # not through interpreter shutdown, which the thread reading stdin would break
"""


@dataclass(frozen=True)
class GLProbe:
    """The result of :func:`probe`: ``works``, and the GL renderer's name or the error in ``detail``."""

    backend: str
    works: bool
    detail: str

    def __str__(self) -> str:
        return f"{self.backend} {'works' if self.works else 'fails'} ({self.detail})"


def mujoco_installed() -> bool:
    """True when the ``mujoco`` package can be imported (without importing it)."""
    return importlib.util.find_spec("mujoco") is not None


def probe(backend: str | None, timeout: float = 120.0) -> GLProbe:
    """Render one MuJoCo frame with ``MUJOCO_GL=backend`` in a child process (``None``: the
    current environment as it is, gymnasium's choice included). Needs mujoco."""
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS} or None; got {backend!r}")
    env = dict(os.environ)
    if backend is not None:
        env["MUJOCO_GL"] = backend
        env.pop("PYOPENGL_PLATFORM", None)
        platform = PYOPENGL_PLATFORMS[backend]
        if platform:
            env["PYOPENGL_PLATFORM"] = platform
    name = backend or env.get("MUJOCO_GL") or "unset"
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen([sys.executable, "-c", _PROBE], stdin=subprocess.PIPE, stdout=out, stderr=err, env=env)
        try:
            code = child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            return GLProbe(name, False, f"no answer in {timeout:.0f} s")
        finally:
            assert child.stdin is not None  # stdin=PIPE
            child.stdin.close()
        out.seek(0)
        err.seek(0)
        printed, errors = out.read().decode(errors="replace").strip(), err.read().decode(errors="replace").strip()
    verdict, _, detail = (printed.splitlines() or [""])[-1].partition(" ")
    if code == 0 and verdict in ("works", "fails"):
        return GLProbe(name, verdict == "works", detail[:300])
    lines = [line for line in errors.splitlines() if line.strip() and not line.startswith((" ", "Traceback"))]
    return GLProbe(name, False, lines[-1][:300] if lines else f"exit status {code}")


def backends_to_try(gpu: bool, display: bool) -> tuple[str, ...]:
    """The backends worth trying, best first: EGL on a GPU, else OSMesa; GLFW (GLX on a display) last.

    Without a GPU all three draw with the same software renderer (Mesa's llvmpipe), and GLFW makes its
    windows only on a process's main thread, where gymview's own drawing does not run."""
    if gpu:
        return ("egl", "glfw", "osmesa") if display else ("egl", "osmesa")
    return ("osmesa", "egl", "glfw") if display else ("osmesa", "egl")


def library_present(backend: str) -> bool:
    """Whether the system library a backend loads is installed (a cheap check without mujoco)."""
    return ctypes.util.find_library({"egl": "EGL", "osmesa": "OSMesa", "glfw": "GL"}[backend]) is not None


def what_to_install(tried: Iterable[GLProbe]) -> str:
    """The advice for when no backend works."""
    names = [p.backend for p in tried]
    packages = " or ".join(PACKAGES[name] for name in ("osmesa", "egl") if name in names) or PACKAGES["osmesa"]
    return f"apt-get install {packages} (osmesa renders in software anywhere; egl needs a GPU)"


def variables_for(backend: str) -> dict[str, str]:
    """The environment variables that make MuJoCo (and PyOpenGL) use ``backend``.

    >>> variables_for("osmesa")
    {'MUJOCO_GL': 'osmesa', 'PYOPENGL_PLATFORM': 'osmesa'}
    """
    platform = PYOPENGL_PLATFORMS[backend]
    return {"MUJOCO_GL": backend, **({"PYOPENGL_PLATFORM": platform} if platform else {})}


def choose_backend(gpu: bool, display: bool) -> tuple[str | None, tuple[GLProbe, ...]]:
    """The backend to use and the probes that chose it. With mujoco installed, each candidate of
    :func:`backends_to_try` is rendered with until one works (None if none does); without it,
    nothing can be rendered yet, so the first whose system library is installed is picked."""
    candidates = backends_to_try(gpu, display)
    if not mujoco_installed():
        return next((b for b in candidates if library_present(b)), None), ()
    probes: list[GLProbe] = []
    for backend in candidates:
        probes.append(_probe_once(backend))
        if probes[-1].works:
            return backend, tuple(probes)
    return None, tuple(probes)


_probed: dict[tuple[str, str | None], GLProbe] = {}


def _probe_once(backend: str) -> GLProbe:
    """:func:`probe`, remembered per display: ``setup()`` may run in every notebook's first cell."""
    key = (backend, os.environ.get("DISPLAY"))
    if key not in _probed:
        _probed[key] = probe(backend)
    return _probed[key]


_checked: dict[tuple[str | None, str | None, str | None], GLProbe] = {}


def check_mujoco_rendering() -> GLProbe:
    """Probe the current settings once per process (and per ``MUJOCO_GL``, ``PYOPENGL_PLATFORM``,
    ``DISPLAY``); raise RuntimeError naming the fix when MuJoCo cannot render with them."""
    key = (os.environ.get("MUJOCO_GL"), os.environ.get("PYOPENGL_PLATFORM"), os.environ.get("DISPLAY"))
    if key not in _checked:
        _checked[key] = probe(None)
    result = _checked[key]
    if not result.works:
        raise RuntimeError(
            f"MuJoCo cannot render here: MUJOCO_GL={key[0] or '(unset: gymnasium tries glfw first)'} failed with "
            f"{result.detail!r}. Run gymview.setup() (or %load_ext gymview) before the first env is "
            f"made: it finds a backend that works and says what to install when none does; "
            f"python -m gymview doctor reports each backend"
        )
    return result
