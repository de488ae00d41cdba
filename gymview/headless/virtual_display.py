"""A virtual X display (Xvfb through pyvirtualdisplay) and the renderer variables for headless machines.

One display per process: :func:`start_virtual_display` starts it once and returns the same one after,
:func:`stop_virtual_display` (also run at exit) stops it and restores ``$DISPLAY``. Xvfb listens on no
TCP port and runs in its own session, so interrupting a notebook cell (which signals the kernel's whole
process group) does not kill it.

>>> shown = start_virtual_display()   # doctest: +SKIP
>>> shown.name                        # doctest: +SKIP
':1000'
>>> stop_virtual_display()            # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from gymview._internal.private_apis import warn_missing

__all__ = [
    "VirtualDisplay",
    "find_xvfb",
    "set_renderer_variables",
    "start_virtual_display",
    "stop_virtual_display",
    "virtual_display",
]

INSTALL_PYVIRTUALDISPLAY = 'pip install "gymview[colab]"'
INSTALL_XVFB = "apt-get install -y xvfb"

_lock = threading.Lock()
_running = None  # the pyvirtualdisplay object of the one display, or None

# Xvfb runs in its own session (Ctrl-C in the kernel must not reach it), so nothing would stop it
# if the kernel were killed. This watchdog holds the read end of a pipe only the kernel writes to:
# when the kernel dies, even by SIGKILL, the pipe reports end-of-file and the watchdog stops Xvfb.
_WATCHDOG = """\
import os, signal, sys
sys.stdin.buffer.read()
try:
    os.kill(int(sys.argv[1]), signal.SIGTERM)
except ProcessLookupError:
    pass
"""
_atexit_registered = False


@dataclass(frozen=True)
class VirtualDisplay:
    """The running virtual display: its ``$DISPLAY`` name, the Xvfb process id and the screen size."""

    name: str
    pid: int
    size: tuple[int, int]


def find_xvfb() -> str | None:
    """Path of the Xvfb program, or None.

    >>> find_xvfb()  # doctest: +SKIP
    '/usr/bin/Xvfb'
    """
    return shutil.which("Xvfb")


def virtual_display() -> VirtualDisplay | None:
    """The display :func:`start_virtual_display` started, if it still runs.

    >>> virtual_display() is None  # doctest: +SKIP
    True
    """
    with _lock:
        return _describe(_running) if _running is not None and _running.is_alive() else None


def start_virtual_display(size: tuple[int, int] = (1400, 900)) -> VirtualDisplay:
    """Start Xvfb and point ``$DISPLAY`` at it; return the running one if there is one already.

    Raises ``ModuleNotFoundError`` naming ``pip install "gymview[colab]"`` without pyvirtualdisplay and
    ``FileNotFoundError`` naming ``apt-get install -y xvfb`` without Xvfb.

    >>> start_virtual_display().name   # doctest: +SKIP
    ':1000'
    """
    global _running, _atexit_registered
    width, height = size
    if width < 1 or height < 1:
        raise ValueError(f"size must be two positive integers (width, height), got {size!r}")
    display_class = _xvfb_display_class()
    if find_xvfb() is None:
        raise FileNotFoundError(f"gymview needs Xvfb for a virtual display; install it with: {INSTALL_XVFB}")
    with _lock:
        if _running is not None:
            if _running.is_alive():
                return _describe(_running)
            _running.stop()  # died (killed from outside): restore $DISPLAY, then start afresh
            _running = None
        started = display_class(size=(int(width), int(height)), manage_global_env=True)
        started.size_asked = (int(width), int(height))
        try:
            started.start()
        except Exception as error:
            raise RuntimeError(f"Xvfb did not start: {started.log_tail() or error}") from error
        _running = started
        if not _atexit_registered:
            atexit.register(stop_virtual_display)
            _atexit_registered = True
        return _describe(started)


def stop_virtual_display() -> None:
    """Stop the virtual display (if any), wait for Xvfb to exit and restore ``$DISPLAY``.

    >>> stop_virtual_display()  # harmless when none runs
    """
    global _running
    with _lock:
        running, _running = _running, None
        if running is not None:
            running.stop()


def runtime_dir_variable() -> dict[str, str]:
    """``XDG_RUNTIME_DIR`` for SDL on Linux when the session has none (containers, servers, Colab).

    Without it pygame prints "error: XDG_RUNTIME_DIR is invalid or not set" into every notebook
    cell that renders. The folder is private (mode 0700), one per user, and shared by that user's
    processes, so kernels that are killed leave nothing new behind. Returns {} where nothing is
    needed.

    >>> isinstance(runtime_dir_variable(), dict)
    True
    """
    if not sys.platform.startswith("linux") or os.environ.get("XDG_RUNTIME_DIR"):
        return {}
    folder = os.path.join(tempfile.gettempdir(), f"gymview-runtime-{os.getuid()}")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return {}
    found = os.lstat(folder)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or stat.S_IMODE(found.st_mode) != 0o700:
        # Someone else's file, or a folder others can read: a private one of our own instead.
        folder = tempfile.mkdtemp(prefix="gymview-runtime-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return {"XDG_RUNTIME_DIR": folder}


def set_renderer_variables(wanted: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Set each variable the user has not set; return ``(set_now, kept)`` where kept holds the user's values.

    >>> set_now, kept = set_renderer_variables({"GYMVIEW_DOCTEST": "1"})
    >>> set_now
    {'GYMVIEW_DOCTEST': '1'}
    >>> del os.environ["GYMVIEW_DOCTEST"]
    """
    set_now: dict[str, str] = {}
    kept: dict[str, str] = {}
    for name, value in wanted.items():
        current = os.environ.get(name)
        if current:
            kept[name] = current
        else:
            os.environ[name] = value
            set_now[name] = value
    return set_now, kept


def _describe(running) -> VirtualDisplay:
    return VirtualDisplay(name=running.new_display_var, pid=running.pid, size=running.size_asked)


def _xvfb_display_class():
    try:
        from pyvirtualdisplay.xvfb import XvfbDisplay
    except ImportError as error:
        raise ModuleNotFoundError(
            f"gymview needs pyvirtualdisplay for a virtual display; install it with: {INSTALL_PYVIRTUALDISPLAY}"
        ) from error

    # the hook, and the attributes it reads and sets, named by pyvirtualdisplay's own code
    used = {
        name
        for cls in XvfbDisplay.__mro__
        for member in vars(cls).values()
        for name in getattr(getattr(member, "__code__", None), "co_names", ())
    }
    if not (hasattr(XvfbDisplay, "_popen") and {"_command", "_pipe_wfd", "_subproc"} <= used):
        warn_missing("pyvirtualdisplay.abstractdisplay.AbstractDisplay._popen (and _command, _pipe_wfd, _subproc)")

        class PlainXvfbDisplay(XvfbDisplay):
            """pyvirtualdisplay's Xvfb as it starts it."""

            def log_tail(self) -> str:
                return ""

        return PlainXvfbDisplay

    class SessionXvfbDisplay(XvfbDisplay):
        """pyvirtualdisplay's Xvfb, started in its own session and stopped with SIGTERM (it cleans up)."""

        def _popen(self, use_pass_fds: bool) -> None:  # pyvirtualdisplay 3.x hook that starts Xvfb
            # Xvfb's log goes to a file: a pipe nobody reads would fill up and block the server.
            self._log = tempfile.TemporaryFile()  # noqa: SIM115 -- open while Xvfb runs; closed when it stops
            self._subproc = subprocess.Popen(
                self._command,
                # pyvirtualdisplay declares _pipe_wfd Optional and opens it whenever use_pass_fds is true
                pass_fds=[self._pipe_wfd] if use_pass_fds else [],  # type: ignore[list-item]
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._log,
                start_new_session=True,
            )
            self._watchdog: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-c", _WATCHDOG, str(self._subproc.pid)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )

        def log_tail(self) -> str:
            log = getattr(self, "_log", None)
            if log is None:
                return ""
            log.seek(0)
            return log.read()[-2000:].decode("utf-8", "replace").strip()

        def stop(self) -> SessionXvfbDisplay:
            watchdog = getattr(self, "_watchdog", None)
            if watchdog is not None:  # first, so it never signals a pid that Xvfb no longer owns
                watchdog.kill()
                watchdog.wait()
                watchdog.stdin.close()
                self._watchdog = None
            if self.is_alive() and self._subproc is not None:  # is_alive() is false without a _subproc
                self._subproc.terminate()
                try:
                    self._subproc.wait(5)
                except subprocess.TimeoutExpired:
                    self._subproc.kill()
                    self._subproc.wait()
            super().stop()
            if getattr(self, "_log", None) is not None:
                self._log.close()
            return self

    return SessionXvfbDisplay
