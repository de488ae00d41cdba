"""Where is gymview running: which front-end, is there an X display, a GPU, a kernel that breaks threads.

Everything here is cheap (no subprocess, no heavy import) and read fresh on every call.

>>> from gymview.headless.environment import detect
>>> where = detect()
>>> where.frontend in {"colab", "jupyter", "vscode", "marimo", "ipython", "python"}
True
"""

from __future__ import annotations

import glob
import importlib.metadata
import importlib.util
import os
import socket
import sys
from dataclasses import dataclass

from gymview._internal.kernel import in_marimo, ipython_shell

__all__ = ["Environment", "detect", "display_reachable", "ipykernel_breaks_thread_sends"]

NOTEBOOK_FRONTENDS = frozenset({"colab", "jupyter", "vscode", "marimo"})


@dataclass(frozen=True)
class Environment:
    """What :func:`detect` found.

    ``frontend`` is one of ``"colab"``, ``"jupyter"`` (JupyterLab, Notebook or any other client of an
    IPython kernel), ``"vscode"`` (a kernel started by VS Code), ``"marimo"`` (a cell of ``marimo
    edit`` or ``marimo run``), ``"ipython"`` (terminal IPython) or ``"python"``. ``has_display`` says
    whether a window can open: always true on macOS and Windows, elsewhere true when ``$DISPLAY``
    names an X server that accepts connections.
    """

    frontend: str
    display: str | None
    has_display: bool
    gpu: bool
    ipykernel_version: str | None
    ipykernel_breaks_thread_sends: bool

    @property
    def in_notebook(self) -> bool:
        """True when code runs in a kernel that shows widgets (Colab, Jupyter, VS Code, marimo)."""
        return self.frontend in NOTEBOOK_FRONTENDS


def detect() -> Environment:
    """Look at the running process and return an :class:`Environment`.

    >>> detect().frontend  # doctest: +SKIP
    'jupyter'
    """
    display = os.environ.get("DISPLAY") or None
    version = _ipykernel_version()
    return Environment(
        frontend=_frontend(),
        display=display,
        has_display=sys.platform in ("darwin", "win32") or display_reachable(display),
        gpu=_gpu_present(),
        ipykernel_version=version,
        ipykernel_breaks_thread_sends=ipykernel_breaks_thread_sends(version),
    )


def display_reachable(display: str | None, timeout: float = 0.5) -> bool:
    """True when an X server accepts a connection on ``display`` (e.g. ``":0"``, ``"localhost:10.0"``).

    >>> display_reachable(None)
    False
    """
    if not display or ":" not in display:
        return False
    host, _, rest = display.rpartition(":")
    number = rest.split(".")[0]
    if not number.isdigit():
        return False
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        return _connects(socket.AF_UNIX, path, timeout) or _connects(socket.AF_UNIX, "\0" + path, timeout)
    return _connects(socket.AF_INET, (host, 6000 + int(number)), timeout)


def ipykernel_breaks_thread_sends(version: str | None) -> bool:
    """True for ipykernel 7.0.0 and 7.0.1, whose comm messages sent from a thread got lost (fixed in 7.1).

    >>> ipykernel_breaks_thread_sends("7.0.1"), ipykernel_breaks_thread_sends("7.1.0")
    (True, False)
    """
    if version is None:
        return False
    parts = version.split(".")
    return len(parts) >= 3 and parts[0] == "7" and parts[1] == "0" and parts[2][:1] in ("0", "1")


def _frontend() -> str:
    if os.environ.get("COLAB_RELEASE_TAG") or "google.colab" in sys.modules or _importable("google.colab"):
        return "colab"
    if in_marimo():
        return "marimo"
    shell = ipython_shell()
    if shell is None:
        return "python"
    if getattr(shell, "kernel", None) is None:
        return "ipython"
    if "VSCODE_PID" in os.environ or "VSCODE_CWD" in os.environ:
        return "vscode"
    return "jupyter"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _gpu_present() -> bool:
    return bool(glob.glob("/dev/nvidia[0-9]*") or glob.glob("/proc/driver/nvidia/gpus/*"))


def _ipykernel_version() -> str | None:
    module = sys.modules.get("ipykernel")
    if module is not None and hasattr(module, "__version__"):
        return str(module.__version__)
    try:
        return importlib.metadata.version("ipykernel")
    except importlib.metadata.PackageNotFoundError:
        return None


def _connects(family: int, address: str | tuple[str, int], timeout: float) -> bool:
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.settimeout(timeout)
        try:
            probe.connect(address)
        except OSError:
            return False
    return True
