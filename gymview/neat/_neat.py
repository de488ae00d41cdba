"""neat-python, imported when first used, with the install line when it is missing."""

from __future__ import annotations

import importlib
from typing import Any

INSTALL_NEAT = 'pip install "gymview[neat]"  (neat-python >= 2.0)'


def neat_module() -> Any:
    try:
        return importlib.import_module("neat")
    except ImportError as error:
        raise ModuleNotFoundError(f"gymview.neat needs neat-python; install it with: {INSTALL_NEAT}") from error
