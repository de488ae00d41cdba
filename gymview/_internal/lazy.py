"""Public names imported on first use (PEP 562), so importing a package stays cheap.

>>> import sys, types
>>> demo = types.ModuleType("demo")
>>> sys.modules["demo"] = demo
>>> demo.__getattr__, demo.__dir__ = lazy_exports("demo", {"dedent": "textwrap"})
>>> demo.dedent("  x")
'x'
>>> del sys.modules["demo"]
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_exports(package: str, names: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` that import ``names[name]`` (a module) when
    ``name`` is first read, and keep the value in the package so later reads cost nothing."""

    def __getattr__(name: str) -> object:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
