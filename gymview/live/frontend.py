"""The live view's front-end as anywidget takes it: one ES module of text.

The front-end is written as small ES modules (``js/*.js``; a wheel ships them in
``gymview/static/``). anywidget loads its ``_esm`` from a Blob URL, where ``import "./x.js"``
cannot resolve, so :func:`join_modules` joins them into one module, with no build step: each
module's imports of its siblings (``import { a, b } from "./x.js";`` lines at its top) are
dropped and the modules follow one another, each after those it imports. A module may import
nothing else, and no two modules may declare the same top-level name.

>>> "export default" in ESM and "class FrameStream" in ESM
True
"""

from __future__ import annotations

import pathlib
import re

__all__ = ["CSS", "ESM", "FRONTEND", "FrontendError", "join_modules"]

_PACKAGE = pathlib.Path(__file__).parents[1]
# A wheel ships the front-end in gymview/static/; a source checkout (editable install) has it in js/.
FRONTEND = _PACKAGE / "static" if (_PACKAGE / "static" / "widget.js").exists() else _PACKAGE.parent / "js"

_SIBLING_IMPORT = re.compile(r'^import \{[^}]*\} from "\./([\w-]+\.js)";\s*$')
_ANY_IMPORT = re.compile(r"^\s*import\b|\bimport\s*\(")
_DECLARATION = re.compile(r"^(?:export\s+)?(?:async\s+)?(?:const|let|var|function\*?|class)\s+([A-Za-z_$][\w$]*)")


class FrontendError(ValueError):
    """A front-end module breaks the convention :func:`join_modules` relies on."""


def join_modules(folder: pathlib.Path, entry: str = "widget.js") -> str:
    """The modules that ``entry`` in ``folder`` imports, itself and its imports' imports, joined
    into one ES module (see the module docstring).

    >>> import tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.js").write_text('export const a = 1;\\n')
    >>> _ = (folder / "main.js").write_text('import { a } from "./a.js";\\nexport default { a };\\n')
    >>> print(join_modules(folder, "main.js"))
    // a.js
    export const a = 1;
    <BLANKLINE>
    // main.js
    export default { a };
    <BLANKLINE>
    """
    ordered: list[str] = []
    bodies: dict[str, str] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise FrontendError(f"js/{name}: modules import each other in a circle: {' -> '.join((*path, name))}")
        if name in bodies:
            return
        file = folder / name
        if not file.is_file():
            raise FrontendError(f"js/{path[-1] if path else name}: imports ./{name}, which does not exist")
        imports, body = _split(name, file.read_text(encoding="utf-8"))
        for imported in imports:
            visit(imported, (*path, name))
        bodies[name] = body
        ordered.append(name)

    visit(entry, ())
    _check_unique_names(bodies)
    return "\n".join(f"// {name}\n{bodies[name].strip()}\n" for name in ordered)


def _split(name: str, text: str) -> tuple[list[str], str]:
    """(sibling modules imported, the text without those import lines)."""
    imports, kept = [], []
    for line in text.splitlines():
        sibling = _SIBLING_IMPORT.match(line)
        if sibling:
            imports.append(sibling.group(1))
        elif _ANY_IMPORT.search(line) and not line.lstrip().startswith(("//", "*", "/*")):
            raise FrontendError(f"js/{name}: only imports of sibling modules on one line each are allowed "
                                f"(import {{ a, b }} from \"./x.js\";); got: {line.strip()}")
        else:
            kept.append(line)
    return imports, "\n".join(kept)


def _check_unique_names(bodies: dict[str, str]) -> None:
    declared: dict[str, str] = {}
    for name, body in bodies.items():
        for line in body.splitlines():
            found = _DECLARATION.match(line)
            if found is None:
                continue
            other = declared.setdefault(found.group(1), name)
            if other != name:
                raise FrontendError(f"js/{other} and js/{name} both declare {found.group(1)}: "
                                    f"joined into one module, names must differ")


ESM = join_modules(FRONTEND)
CSS = (FRONTEND / "widget.css").read_text(encoding="utf-8")
