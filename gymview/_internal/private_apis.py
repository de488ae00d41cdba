"""Where gymview leans on another project's private API, what it does without it, and the one warning
that says so.

Every such use is named in :data:`PRIVATE_APIS` (docs/architecture.md lists them with the versions tested);
the live view's are all in ``gymview/live/kernels/``. Each is looked up with ``getattr`` where it is used;
when a release lacks it, gymview keeps working in the documented, lesser way, and :func:`warn_missing` says
so once per process.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     warn_missing("ipywidgets.Widget._handle_control_comm_msg")
...     warn_missing("ipywidgets.Widget._handle_control_comm_msg")  # once only
>>> len(caught), "loads once the cell ends" in str(caught[0].message)
(1, True)
"""

from __future__ import annotations

import threading
import warnings

__all__ = ["PRIVATE_APIS", "warn_missing"]

# private API -> (versions tested, what gymview does without it)
PRIVATE_APIS: dict[str, tuple[str, str]] = {
    "ipykernel.shellchannel.ShellChannelThread.manager.get_shell_channel_to_subshell_socket": (
        "ipykernel 7.1-7.4",
        "clicks during a blocking cell reach the loop only after the cell (JupyterLab's comms over subshells "
        "still deliver them), and a page loaded during a cell waits for it",
    ),
    "ipykernel.kernelbase.Kernel._main_asyncio_lock": (
        "ipykernel 7.1-7.4",
        "as for get_shell_channel_to_subshell_socket",
    ),
    "ipykernel.kernelbase.Kernel._topic": (
        "ipykernel 6.29-7.4",
        "gymview builds the status topic itself, as ipykernel does (no warning)",
    ),
    "ipykernel.kernelbase.Kernel.msg_queue and shell_stream": (
        "ipykernel 6.29-6.30",
        "on ipykernel 6 the buttons act between cells only",
    ),
    "ipywidgets.Widget._handle_msg": (
        "ipywidgets 8.1",
        "a view's messages answered during a cell go through the comm's handler, which runs "
        "IPython's pre/post-execute events (matplotlib may show the cell's open figures early)",
    ),
    "ipywidgets.Widget._handle_control_comm_msg": (
        "ipywidgets 8.1",
        "a page loaded during a running cell loads once the cell ends",
    ),
    "marimo._runtime.kernel_lifecycle.listen_messages (ui_request_mgr)": (
        "marimo 0.24-0.25",
        "in marimo the buttons act between cells only (a loop in gymview.play is not affected)",
    ),
    "marimo._runtime.cell_lifecycle_item and marimo._runtime.context": (
        "marimo 0.24-0.25",
        "in marimo a view is not stopped when its cell runs again",
    ),
    "gymnasium.envs.registration._find_spec": (
        "gymnasium 1.1-1.4",
        'render_mode="human" envs made by an exact id ("CartPole-v1", "module:Env-v0") show '
        "inline; an id without its version is made as asked, in its own window",
    ),
    "pyvirtualdisplay.abstractdisplay.AbstractDisplay._popen (and _command, _pipe_wfd, _subproc)": (
        "pyvirtualdisplay 3.0",
        "Xvfb starts as pyvirtualdisplay starts it: not in a session of its own, and with "
        "no watchdog, so it may outlive a kernel that is killed",
    ),
}

_warned: set[str] = set()
_lock = threading.Lock()


def warn_missing(api: str) -> None:
    """Warn, once per process, that ``api`` (a key of :data:`PRIVATE_APIS`) is missing here, and what
    gymview does without it."""
    tested, without = PRIVATE_APIS[api]
    with _lock:
        if api in _warned:
            return
        _warned.add(api)
    warnings.warn(f"gymview: {api} is missing here (tested with {tested}): {without}", RuntimeWarning, stacklevel=3)
