"""Registered env ids, including plugin namespaces, made the same way in every worker process.

``gym.make("ALE/Breakout-v5")`` works only after ``import ale_py`` registered the namespace, and a
worker process has imported nothing. :func:`registered_env` takes the ids ``gym.make`` takes
(``"CartPole-v1"``, ``"ale_py:ALE/Breakout-v5"``), imports what registers them (a known plugin
for its namespace, or modules you name), and returns a picklable factory that imports the same
modules again wherever it runs.

>>> make = registered_env("CartPole-v1")
>>> make().spec.id, make.modules
('CartPole-v1', ())
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Sequence

import gymnasium as gym

__all__ = ["RegisteredEnv", "registered_env"]

# Namespaces whose package is not simply the namespace in lower case, and how to install it.
KNOWN_NAMESPACES = {"ALE": ("ale_py", "pip install ale-py")}


@dataclasses.dataclass(frozen=True)
class RegisteredEnv:
    """Makes ``env_id`` with ``render_mode="rgb_array"`` after importing ``modules``."""

    env_id: str
    modules: tuple[str, ...] = ()

    def __call__(self) -> gym.Env:
        for module in self.modules:
            importlib.import_module(module)
        return gym.make(self.env_id, render_mode="rgb_array")


def registered_env(env_id: str, imports: Sequence[str] = ()) -> RegisteredEnv:
    """A factory for ``env_id`` (``[module:]namespace/Name-vN``), importing ``imports`` first.

    An id whose namespace nobody registered imports the namespace's known plugin (``ALE`` ->
    ``ale_py``) or the namespace in lower case; failing that, the error says what to import.
    Unknown names and versions raise gymnasium's own errors.
    """
    module, colon, name = env_id.rpartition(":")
    modules = [*imports, *([module] if colon else [])]
    for required in modules:
        _import(required, f"{env_id!r} needs it")
    try:
        gym.spec(name)
    except gym.error.NamespaceNotFound:
        namespace = name.split("/")[0]
        plugin, install = KNOWN_NAMESPACES.get(
            namespace, (namespace.lower(), f"pip install the package for {namespace}")
        )
        try:
            importlib.import_module(plugin)
        except ImportError as error:
            raise gym.error.NamespaceNotFound(
                f"no package registered the env namespace {namespace!r} of {env_id!r}, and {plugin!r} "
                f"cannot be imported ({error}). {install}, or name the module that registers it: "
                f"'MODULE:{name}' (python -m gymview record --import MODULE)"
            ) from error
        modules.append(plugin)
        gym.spec(name)
    return RegisteredEnv(name, tuple(modules))


def _import(module: str, why: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"cannot import {module!r} ({why}): {error}") from error
