"""Public names imported on first use (PEP 562), so importing a package stays cheap; and import
paths that earlier releases documented, pointing at the module's new home.

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
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
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


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Keep import paths that earlier releases documented working after a module moved:
    importing ``old`` (a key of ``moved``) gives the module named by its value.

    >>> import sys
    >>> sys.meta_path.append(MovedModules({"demo_old_textwrap": "textwrap"}))
    >>> import demo_old_textwrap, textwrap
    >>> demo_old_textwrap is textwrap
    True
    >>> sys.meta_path.pop() and sys.modules.pop("demo_old_textwrap") is textwrap
    True
    """

    def __init__(self, moved: dict[str, str]) -> None:
        self.moved = moved

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in self.moved else None

    def exec_module(self, module: types.ModuleType) -> None:
        # The import system returns whatever sys.modules holds under the name once this returns.
        sys.modules[module.__name__] = importlib.import_module(self.moved[module.__name__])
