"""The package layout: imports flow one way between rooms, and ``import gymview`` stays light."""

import ast
import re
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "gymview"

LEAVES = {"image", "renderers", "private", "errors"}
ROOMS = LEAVES | {"episodes", "live", "video", "headless", "atari", "remote", "rollouts"}
# Which rooms a room's modules may import from (their own room always). The faces (gymview/*.py) are
# rooms of one module each, named by module, above the subpackages and in an order of their own.
ALLOWED = {
    "errors": set(),
    "private": {"private", "errors"},
    "image": {"private", "errors"},
    "renderers": {"image", "private", "errors"},  # image is the lower leaf: pure array functions
    # episodes: step rows, their tables and the widgets that show them; below the rooms that record and stream
    "episodes": {"image", "private", "errors"},
    "live": LEAVES | {"video", "episodes"},  # a view saves its kept frames as a clip with video's recorder
    # rollouts: states of a model played by the page; the page asks for three.js in the live view's protocol
    "rollouts": LEAVES | {"episodes", "live"},
    "video": LEAVES | {"episodes"},  # recordings write step tables; show_video lists episodes
    "headless": {"private", "errors"},
    "atari": {"image", "private", "errors"},
    "remote": LEAVES | {"live"},  # a published run's view, and attach()'s, are LiveViews
    "integrations": ROOMS,  # other libraries' adapters over the live view (SB3's VecEnv and callback)
    "gymview.watched": ROOMS | {"integrations"},  # watch() hands an SB3 VecEnv to its adapter
    "gymview.jobs": ROOMS,
    "gymview.doctor": ROOMS,
    "gymview.playback": ROOMS | {"gymview.watched", "integrations"},  # play() runs a PettingZoo env's agents
    "gymview.human": ROOMS | {"gymview.watched"},
    "gymview.notebook": ROOMS | {"gymview.human"},
    "neat": ROOMS | {"gymview.watched", "gymview.playback", "gymview.jobs"},
    "gymview.magic": ROOMS | {"gymview.doctor", "gymview.human", "gymview.jobs", "gymview.notebook",
                              "gymview.playback", "gymview.watched"},
    "gymview.cli": ROOMS | {"gymview.doctor"},
    "gymview.__main__": {"gymview.cli"},
}


def room_of_module(name: str, root: pathlib.Path) -> str:
    """The room of a dotted module name inside gymview: a subpackage, 'private', 'errors', or the
    module's own name for a face (``gymview.watched``; ``gymview`` for the package root)."""
    parts = name.split(".")
    if len(parts) > 1 and parts[1] == "_internal":
        return "private"
    if len(parts) == 2 and parts[1] == "errors":
        return "errors"
    if len(parts) > 2 or (len(parts) == 2 and (root / parts[1]).is_dir()):
        return parts[1]
    if len(parts) == 2 and parts[1].startswith("_") and parts[1] not in ("__init__", "__main__"):
        return "private"
    return name


def module_name(path: pathlib.Path, root: pathlib.Path) -> str:
    relative = path.relative_to(root.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def gymview_imports(path: pathlib.Path, root: pathlib.Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a gymview module in ``path``, at any depth (functions,
    TYPE_CHECKING blocks) and including relative imports and lazy-export tables."""
    tree = ast.parse(path.read_text(), str(path))
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None or target == "gymview":  # `from gymview import x`: x may be a module
                found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
            else:  # `from gymview.live import protocol` imports the module protocol, not the package's names
                named = {f"{target}.{alias.name}" for alias in node.names}
                modules = {name for name in named if module_path(name, root) is not None}
                found += [(node.lineno, name) for name in sorted(modules)]
                if modules != named:
                    found.append((node.lineno, target))
        elif isinstance(node, ast.Dict):  # lazy_exports tables name modules as strings
            for value in node.values:
                if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                    continue
                if value.value.startswith(".") and value.value[1:].isidentifier():
                    found.append((value.lineno, f"{package}{value.value}"))
                elif value.value.startswith("gymview.") and all(part.isidentifier() for part in value.value.split(".")):
                    found.append((value.lineno, value.value))
    return [(line, name) for line, name in found if name == "gymview" or name.startswith("gymview.")]


def violations(root: pathlib.Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted(root.rglob("*.py")):
        room = room_of_module(module_name(path, root), root)
        if room == "gymview":  # the package root holds only the lazy table of public names
            continue
        for line, target in gymview_imports(path, root):
            if target == "gymview" or target.startswith("gymview._internal.lazy"):
                continue  # the package root holds only lazy names; _lazy is the helper for them
            target_room = room_of_module(target, root)
            if target_room != room and target_room not in ALLOWED[room]:
                source = path.read_text().splitlines()[line - 1].strip()
                problems.append(f"{path.relative_to(root.parent)}:{line}: {room} imports {target_room}: {source}")
    return problems


def module_path(name: str, root: pathlib.Path) -> pathlib.Path | None:
    """The file of dotted module ``name`` (a package's ``__init__.py``), or None if it names no module."""
    relative = pathlib.Path(*name.split(".")[1:])
    for candidate in (root / relative / "__init__.py", (root / relative).with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def import_graph(root: pathlib.Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the gymview modules it imports anywhere in its code (a package's lazy-export table
    included). The root package only holds lazy names: imports of it are not followed."""
    graph = {}
    for path in sorted(root.rglob("*.py")):
        targets = set()
        for _, target in gymview_imports(path, root):
            while target != "gymview" and module_path(target, root) is None:
                target = target.rpartition(".")[0]  # `from gymview.x import name`: the module x
            if target != "gymview":
                targets.add(target)
        graph[module_name(path, root)] = targets - {module_name(path, root)}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One path around each circle of imports (each found from its smallest module name)."""
    circles = []
    for start in sorted(graph):
        stack, seen = [(start, [start])], {start}
        while stack:
            module, path = stack.pop()
            for target in sorted(graph.get(module, ())):
                if target == start:
                    circles.append([*path, start])
                elif target > start and target not in seen:
                    seen.add(target)
                    stack.append((target, [*path, target]))
    return circles


def test_no_module_imports_itself_through_others():
    circles = import_circles(import_graph())
    assert circles == [], "import circles:\n" + "\n".join(" -> ".join(circle) for circle in circles)


def test_circles_are_found_through_function_level_imports(tmp_path):
    fake = tmp_path / "gymview"
    (fake / "integrations").mkdir(parents=True)
    (fake / "watched.py").write_text("def watch():\n    from gymview.integrations.sb3 import WatchedVecEnv\n")
    (fake / "integrations" / "sb3.py").write_text("from gymview.watched import watch\n")
    (fake / "playback.py").write_text("from gymview import watched\n")
    assert import_circles(import_graph(fake)) == [["gymview.integrations.sb3", "gymview.watched", "gymview.integrations.sb3"]]


def test_imports_flow_one_way_between_rooms():
    assert violations() == [], "\n".join(["imports that break the rule in docs/architecture.md:", *violations()])


# Inside live/: the view's own modules (the widget, the protocol, the feed, the streamer) sit on three
# layers that import nothing else of live's: kernels (every private API of ipykernel and marimo), encoding
# and pacing.
LIVE_LAYERS = ("kernels", "encoding", "pacing")


def live_layer_violations(root: pathlib.Path = PACKAGE) -> list[str]:
    problems = []
    for layer in LIVE_LAYERS:
        for path in sorted((root / "live" / layer).rglob("*.py")):
            for line, target in gymview_imports(path, root):
                if target.startswith("gymview.live") and not target.startswith(f"gymview.live.{layer}"):
                    source = path.read_text().splitlines()[line - 1].strip()
                    problems.append(f"{path.relative_to(root.parent)}:{line}: live.{layer} imports {target}: {source}")
    return problems


def test_the_layers_of_live_import_nothing_of_live_above_or_beside_them():
    assert live_layer_violations() == [], "\n".join(live_layer_violations())


def test_the_live_rule_catches_pacing_importing_encoding(tmp_path):
    fake = tmp_path / "gymview"
    (fake / "live" / "pacing").mkdir(parents=True)
    (fake / "live" / "pacing" / "throttle.py").write_text("from gymview.live.encoding.h264 import H264\n")
    assert live_layer_violations(fake) == [
        "gymview/live/pacing/throttle.py:1: live.pacing imports gymview.live.encoding.h264: "
        "from gymview.live.encoding.h264 import H264"]


def test_every_room_and_face_has_a_rule():
    rooms = {room_of_module(module_name(path, PACKAGE), PACKAGE) for path in PACKAGE.rglob("*.py")}
    assert rooms - {"gymview"} == set(ALLOWED)


def test_the_rule_catches_a_face_importing_one_above_it(tmp_path):
    fake = tmp_path / "gymview"
    fake.mkdir()
    (fake / "watched.py").write_text("def close():\n    from gymview.playback import running_plays\n")
    (fake / "playback.py").write_text("from gymview.watched import close\n")
    assert violations(fake) == [
        "gymview/watched.py:2: gymview.watched imports gymview.playback: from gymview.playback import running_plays"]


def test_the_rule_catches_a_leaf_importing_a_room_above_it(tmp_path):
    fake = tmp_path / "gymview"
    (fake / "image").mkdir(parents=True)
    (fake / "live").mkdir()
    (fake / "image" / "codec.py").write_text(
        "def f():\n    from gymview.live.widget import LiveView\n\ndef g(name):\n    return name.endswith('.py')\n")
    (fake / "live" / "widget.py").write_text("from gymview.image.codec import f\nfrom ..headless import setup\n")
    (fake / "headless").mkdir()
    (fake / "image" / "__init__.py").write_text('_EXPORTS = {"f": ".codec", "LiveView": "gymview.live.widget"}\n')
    assert violations(fake) == [
        """gymview/image/__init__.py:1: image imports live: _EXPORTS = {"f": ".codec", "LiveView": "gymview.live.widget"}""",
        "gymview/image/codec.py:2: image imports live: from gymview.live.widget import LiveView",
        "gymview/live/widget.py:2: live imports headless: from ..headless import setup",
    ]


def imported_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(result.stdout.split())


@pytest.mark.parametrize("heavy", ["IPython", "ipywidgets", "anywidget", "torch", "gymnasium", "PIL", "cloudpickle"])
def test_import_gymview_loads_no_heavy_library(heavy):
    assert heavy not in imported_after("import gymview")


def test_public_names_load_on_first_use():
    import gymview

    for name in gymview.__all__:
        assert getattr(gymview, name) is not None
    assert "watch" in dir(gymview)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        gymview.nothing_here  # noqa: B018


def test_the_encoder_process_imports_no_widget_or_env_library():
    modules = imported_after("import gymview.live.encoding.encoder_child")
    assert not {"IPython", "ipywidgets", "anywidget", "gymnasium", "torch", "traitlets"} & modules


def test_import_gymview_installs_no_import_hook():
    assert run_python(
        "import sys; hooks = list(sys.meta_path); import gymview; print(sys.meta_path == hooks)") == "True"


def run_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_no_module_shadows_a_lazy_name_of_its_package():
    # `import gymview.renderers.tiled` would replace the function gymview.renderers.tiled by the module.
    import importlib

    for init in PACKAGE.rglob("__init__.py"):
        package = importlib.import_module(module_name(init, PACKAGE))
        modules = {path.stem for path in init.parent.glob("*.py")} | {path.name for path in init.parent.iterdir() if path.is_dir()}
        assert not set(getattr(package, "__all__", ())) & modules, f"{init}: a public name is also a module"


def test_the_architecture_map_names_every_module():
    """docs/architecture.md is the living map: a module it does not name is a room nobody can find."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    missing = [str(path.relative_to(PACKAGE.parent)) for path in sorted(PACKAGE.rglob("*.py"))
               if path.name != "__init__.py" and not re.search(rf"(?<![\w.]){re.escape(path.name)}\b", text)]
    assert missing == []


@pytest.mark.parametrize("init", sorted(PACKAGE.rglob("__init__.py")), ids=lambda path: path.parent.name)
def test_editors_see_the_same_lazy_names_the_package_serves(init):
    """A lazy package's ``if TYPE_CHECKING:`` imports (what editors and the API reference read) name
    exactly its lazy-export table, each from the module that serves it."""
    tree = ast.parse(init.read_text())
    table = next((node.value for node in tree.body if isinstance(node, ast.Assign)
                  and [getattr(target, "id", None) for target in node.targets] == ["_EXPORTS"]), None)
    if table is None:
        return
    package = module_name(init, PACKAGE)
    served = {key.value: (package + value.value if value.value.startswith(".") else value.value)
              for key, value in zip(table.keys, table.values)}
    seen = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                seen.update({alias.name: statement.module for alias in statement.names})
    assert seen == served
