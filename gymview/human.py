"""Show ``render_mode="human"`` envs in the notebook's live view instead of a window.

:func:`enable_inline_human` replaces ``gymnasium.make`` (the public name users call; gymnasium's own
``make_vec`` and ``EnvSpec.make`` are left alone) with a version that, for ``render_mode="human"``:

* creates an env that can render ``rgb_array`` with ``rgb_array`` and shows it with ``gymview.watch``,
  pacing steps to the env's ``render_fps`` as a human window would;
* for an env that only draws itself with pygame, initialises pygame's display on SDL's ``dummy``
  driver (no window) and shows the pygame screen surface after each step;
* leaves every other env as gymnasium makes it.

Code that did ``from gymnasium import make`` before this was enabled keeps gymnasium's own ``make``.

The returned env keeps the human-mode contract: ``env.render_mode == "human"``, ``env.render()``
returns None, and ``env.view`` is the live view. :func:`disable_inline_human` restores gymnasium.

>>> import gymnasium as gym
>>> enable_inline_human()                                       # doctest: +SKIP
>>> env = gym.make("CartPole-v1", render_mode="human")          # doctest: +SKIP
>>> env.render_mode, env.unwrapped.render_mode                  # doctest: +SKIP
('human', 'rgb_array')
>>> disable_inline_human()
"""

from __future__ import annotations

import functools
import importlib
import os
import time
from collections.abc import Callable
from typing import Any, SupportsFloat

import gymnasium
import gymnasium.envs
import numpy as np
from gymnasium.envs import registration
from gymnasium.envs.registration import EnvSpec, load_env_creator

from gymview._internal.private_apis import warn_missing
from gymview.watched import watch as gymview_watch

__all__ = ["InlineHuman", "PygameScreen", "disable_inline_human", "enable_inline_human", "inline_human_enabled"]

_original_make: Callable[..., Any] | None = None


def enable_inline_human(watch: Callable[[Any], Any] | None = None) -> None:
    """Make ``gymnasium.make(..., render_mode="human")`` show the env inline; calling it again is harmless.

    ``watch`` wraps an ``rgb_array`` env and shows it (default: :func:`gymview.watch`); pass e.g.
    ``functools.partial(gymview.watch, max_size=320)`` to change how it is shown.

    >>> enable_inline_human(); inline_human_enabled()   # doctest: +SKIP
    True
    """
    global _original_make
    if _original_make is None:
        _original_make = gymnasium.make
    inline_make = functools.wraps(_original_make)(functools.partial(_make_inline, _original_make, watch))
    inline_make.__gymview_inline__ = True  # type: ignore[attr-defined]  # marks the patched make
    gymnasium.make = inline_make
    gymnasium.envs.make = inline_make


def disable_inline_human() -> None:
    """Give ``gymnasium.make`` back its own behaviour (harmless when not enabled).

    >>> disable_inline_human(); inline_human_enabled()
    False
    """
    global _original_make
    if _original_make is None:
        return
    gymnasium.make = _original_make
    gymnasium.envs.make = _original_make
    _original_make = None


def inline_human_enabled() -> bool:
    """True while :func:`enable_inline_human` is in effect.

    >>> inline_human_enabled()
    False
    """
    return _original_make is not None


def _make_inline(
    make: Callable[..., Any], watch: Callable[[Any], Any] | None, id: str | EnvSpec, *args: Any, **kwargs: Any
) -> gymnasium.Env:
    if isinstance(id, str):  # resolved once here ("module:Env-v0", a missing version), then passed on
        id = _spec_of(id)
    if not isinstance(id, EnvSpec) or kwargs.get("render_mode", id.kwargs.get("render_mode")) != "human":
        return make(id, *args, **kwargs)
    modes = _render_modes(id)
    watch = watch or _watch_at_render_fps
    if "rgb_array" in modes:
        env = make(id, *args, **{**kwargs, "render_mode": "rgb_array"})
        return InlineHuman(watch(env), fps=env.metadata.get("render_fps"))
    if "human" in modes:
        _init_pygame_display_without_window()
        env = make(id, *args, **{**kwargs, "render_mode": "human"})
        return InlineHuman(watch(PygameScreen(env)), fps=None)  # the env paces itself
    return make(id, *args, **kwargs)


def _watch_at_render_fps(env: gymnasium.Env) -> Any:
    """gymview.watch for a human-mode env: a frame every step, up to the env's render_fps. The loop
    sleeps to keep real time, so the overhead budget (made for loops that run flat out) would
    only drop frames that cost the loop nothing."""
    fps = env.metadata.get("render_fps")
    return gymview_watch(env, max_overhead=1.0, fps=min(float(fps), 120.0) if fps else None)


def _spec_of(env_id: str) -> EnvSpec | str:
    """The spec ``gymnasium.make`` would make ``env_id`` from: gymnasium's own lookup, which imports the
    module of "module:Env-v0" and fills in a missing version; without it, the public ``gymnasium.spec`` of
    an exact id (else the id itself, made as the user asked and not shown inline)."""
    find_spec = getattr(registration, "_find_spec", None)
    if find_spec is not None:
        return find_spec(env_id)
    warn_missing("gymnasium.envs.registration._find_spec")
    module, _, name = env_id.rpartition(":")
    try:
        if module:
            importlib.import_module(module)
        return gymnasium.spec(name)
    except Exception:  # gymnasium.make says what is wrong with the id
        return env_id


def _render_modes(spec: EnvSpec) -> list[str]:
    entry_point = spec.entry_point
    if entry_point is None:  # gymnasium.make says what is wrong with the spec
        return []
    creator = entry_point if callable(entry_point) else load_env_creator(entry_point)
    metadata = getattr(creator, "metadata", None)
    return list(metadata.get("render_modes") or []) if isinstance(metadata, dict) else []


def _init_pygame_display_without_window() -> None:
    """Initialise pygame's display on SDL's dummy driver, unless it runs already or the user chose a driver."""
    import pygame

    if pygame.display.get_init() or os.environ.get("SDL_VIDEODRIVER"):
        return
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    try:
        pygame.display.init()
    finally:
        del os.environ["SDL_VIDEODRIVER"]


class InlineHuman(gymnasium.Wrapper):
    """A watched env that keeps the human-mode contract; see the module docstring."""

    def __init__(self, env: gymnasium.Env, fps: float | None) -> None:
        super().__init__(env)
        self._step_period = 1.0 / fps if fps else 0.0
        self._next_step_at = 0.0

    @property
    def render_mode(self) -> str:  # type: ignore[override]  # a property in gymnasium.Wrapper too
        return "human"

    @property
    def view(self) -> Any:
        """The live view that shows this env."""
        return self.env.get_wrapper_attr("view")

    def render(self) -> None:
        """Nothing to return: in human mode the frames are shown, here in the live view."""
        return None

    def log(self, **values: Any) -> None:
        """Add values to the latest step's row, charted under the view's replay (see ``WatchedEnv.log``).

        Args:
            **values: Names and numbers: a float, an int, a one-element array or tensor each.

        Raises:
            TypeError: When a value is not one number.
            ValueError: When a name is one of the table's own columns (``reward``, ``step``...).
            RuntimeError: Before the first ``reset()``.
        """
        self.env.get_wrapper_attr("log")(**values)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._next_step_at = time.perf_counter() + self._step_period
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._step_period:  # like a human window: at most render_fps steps a second
            delay = self._next_step_at - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self._next_step_at = max(self._next_step_at, time.perf_counter()) + self._step_period
        return self.env.step(action)


class PygameScreen(gymnasium.Wrapper):
    """A human-mode env that draws with pygame, seen as an ``rgb_array`` env whose frame is the screen."""

    @property
    def render_mode(self) -> str:  # type: ignore[override]  # a property in gymnasium.Wrapper too
        return "rgb_array"

    def render(self) -> np.ndarray:
        """A copy of pygame's screen surface as an (H, W, 3) uint8 array; one black pixel before the env drew."""
        import pygame

        screen = pygame.display.get_surface() if pygame.display.get_init() else None
        if screen is None:
            return np.zeros((1, 1, 3), np.uint8)
        return np.ascontiguousarray(pygame.surfarray.array3d(screen).transpose(1, 0, 2))
