"""The front-end's ES modules, joined into the one module anywidget loads."""

import pathlib
import shutil
import subprocess
import tomllib

import pytest

from gymview.live.frontend import ESM, FrontendError, join_modules

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULES = sorted(path.name for path in (ROOT / "js").glob("*.js"))


def test_the_joined_module_holds_every_module_once_and_parses(tmp_path):
    headers = [line[3:] for line in ESM.splitlines() if line[3:] in MODULES and line.startswith("// ")]
    assert sorted(headers) == MODULES and headers[-1] == "widget.js"
    joined = tmp_path / "widget.mjs"
    joined.write_text(ESM)
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (./dev.sh test installs it)")
    done = subprocess.run([node, "--check", str(joined)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_wheel_ships_every_module():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert {f"js/{name}" for name in MODULES} <= set(shipped)
    assert all(shipped[f"js/{name}"] == f"gymview/static/{name}" for name in MODULES)


def write(folder, **modules):
    for name, text in modules.items():
        (folder / f"{name}.js").write_text(text)
    return folder


@pytest.mark.parametrize("modules, message", [
    ({"main": 'import { x } from "https://esm.sh/x";\n'}, "only imports of sibling modules"),
    ({"main": 'const x = await import("./a.js");\n'}, "only imports of sibling modules"),
    ({"main": 'import { a } from "./a.js";\n', "a": 'import { b } from "./main.js";\nexport const a = 1;\n'},
     "circle: main.js -> a.js -> main.js"),
    ({"main": 'import { a } from "./missing.js";\n'}, "imports ./missing.js, which does not exist"),
    ({"main": 'import { a } from "./a.js";\nconst MIME = 2;\n', "a": "export const MIME = 1;\n"},
     "js/a.js and js/main.js both declare MIME"),
])
def test_a_module_that_breaks_the_convention_is_named(tmp_path, modules, message):
    with pytest.raises(FrontendError, match=message.replace("(", r"\(").replace(")", r"\)")):
        join_modules(write(tmp_path, **modules), "main.js")


def test_modules_come_after_what_they_import_and_only_once(tmp_path):
    write(tmp_path, main='import { a } from "./a.js";\nimport { b } from "./b.js";\nexport default { a, b };\n',
          a='import { c } from "./c.js";\nexport const a = c;\n', b='import { c } from "./c.js";\nexport const b = c;\n',
          c="export const c = 1;\n")
    joined = join_modules(tmp_path, "main.js")
    assert [line for line in joined.splitlines() if line.startswith("// ")] == ["// c.js", "// a.js", "// b.js", "// main.js"]
    assert "import" not in joined
