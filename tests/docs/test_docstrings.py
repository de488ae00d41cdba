"""Every public name the API reference documents has a Google-style docstring: ``Args:`` naming each
parameter, ``Returns:`` for what it returns, and for functions and classes an ``Examples:`` section
(the section the reference renders as code) with a runnable example: the doctests run with the suite."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"
DIRECTIVE = re.compile(r"^::: (\S+)\n((?:    .*\n)*)", re.M)


def documented() -> list[str]:
    """The dotted names of the API reference's pages (a module's listed ``members``, else the name)."""
    names = []
    for page in sorted(REFERENCE.glob("*.md")):
        for name, options in DIRECTIVE.findall(page.read_text()):
            members = re.search(r"members: \[(.*)\]", options)
            if members:
                names += [f"{name}.{member.strip()}" for member in members.group(1).split(",")]
            elif "members: false" not in options:
                names.append(name)
    return names


def resolve(name: str):
    parts = name.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            value = getattr(value, part)
        return value
    raise ImportError(name)


def public_callables(name: str):
    """(name, object) for the documented object and, for a class, each public method it defines."""
    value = resolve(name)
    yield name, value
    if inspect.isclass(value):
        for attribute, member in vars(value).items():
            if attribute.startswith("_"):
                continue
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if inspect.isfunction(member):
                yield f"{name}.{attribute}", member


def parameters(function) -> list[str]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return []
    names = []
    for parameter in signature.parameters.values():
        if parameter.name in ("self", "cls"):
            continue
        prefix = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(parameter.kind, "")
        names.append(prefix + parameter.name)
    return names


def section(docstring: str, title: str) -> str | None:
    match = re.search(rf"^{title}:\n((?:(?:[ \t]+.*)?\n)*)", docstring + "\n", re.M)
    return match.group(1) if match else None


def problems_of(name: str, value) -> list[str]:
    if not (inspect.isclass(value) or inspect.isfunction(value)):
        return []  # a constant: documented by the comment or docstring beside it
    docstring = inspect.cleandoc(value.__doc__ or "")
    if not docstring:
        return [f"{name}: no docstring"]
    found = []
    function = value.__init__ if inspect.isclass(value) else value
    if inspect.isclass(value) and value.__init__ is object.__init__:
        function = None
    wanted = parameters(function) if function is not None and inspect.isfunction(function) else []
    if wanted:
        args = section(docstring, "Args")
        if args is None:
            found.append(f"{name}: no Args: section for {', '.join(wanted)}")
        else:
            listed = re.findall(r"^ {4}(\*{0,2}\w+)(?: \([^)]*\))?:", args, re.M)
            if listed != wanted:
                found.append(f"{name}: Args: lists {listed}, the signature has {wanted}")
    if inspect.isfunction(value) and not value.__name__.startswith("_"):
        returns = inspect.signature(value).return_annotation
        gives = returns not in (inspect.Signature.empty, None, "None")
        if gives and section(docstring, "Returns") is None and section(docstring, "Yields") is None:
            found.append(f"{name}: returns {returns} but has no Returns: section")
    is_method = "." in value.__qualname__
    if inspect.isclass(value) or not is_method:
        examples = section(docstring, "Examples")
        if examples is None or ">>>" not in examples:
            found.append(f"{name}: no Examples: section with a runnable example (>>>)")
    return found


NAMES = documented()


def test_the_reference_documents_the_public_api():
    import gymview

    top = {name.removeprefix("gymview.") for name in NAMES if name.count(".") == 1}
    errors = {name.removeprefix("gymview.errors.") for name in NAMES if name.startswith("gymview.errors.")}
    assert set(gymview.__all__) - {"__version__"} <= top | errors  # the errors page documents gymview's errors
    for package in ("gymview.atari", "gymview.neat"):
        listed = {name.removeprefix(package + ".") for name in NAMES if name.startswith(package + ".")}
        assert set(importlib.import_module(package).__all__) - {"FitnessError"} <= listed, package


@pytest.mark.parametrize("name", NAMES)
def test_public_docstrings_follow_the_google_style(name):
    problems = [problem for member, value in public_callables(name) for problem in problems_of(member, value)]
    assert problems == [], "\n".join(problems)
