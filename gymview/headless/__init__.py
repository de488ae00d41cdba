"""Where are we (Colab, JupyterLab, VS Code, a plain shell), and what a machine without a screen
needs to render: a virtual X display, GL backend variables, and :func:`prepare` tying them up."""

from gymview.headless.environment import Environment, detect
from gymview.headless.provision import SetupReport, prepare
from gymview.headless.virtual_display import start_virtual_display, stop_virtual_display

__all__ = ["Environment", "SetupReport", "detect", "prepare", "start_virtual_display", "stop_virtual_display"]
