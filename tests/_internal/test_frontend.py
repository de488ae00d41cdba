"""The front-end: js/ bundled by esbuild (js/package.json's `build`), read by gymview._internal.frontend, shipped in the wheel."""

import ast
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib

import pytest

from gymview._internal import frontend

ROOT = pathlib.Path(__file__).resolve().parents[2]
JS = ROOT / "js"
MODULES = sorted(path.name for path in JS.glob("*.js") if path.name != "eslint.config.js")
BUILD = json.loads((JS / "package.json").read_text())["scripts"]["build"]
# the entries each esbuild command names before its first option
ENTRIES = [name for command in BUILD.split("&&") for name in re.findall(r"\b([\w-]+\.js)\b", command.split("--")[0])]
EXPORT = re.compile(r"^export (?:async )?(?:const|let|function\*?|class) ([A-Za-z_$][\w$]*)", re.M)


def declared(bundle: str) -> set[str]:
    """Top-level names the bundle declares (esbuild writes `var X = class`, `function f(`...)."""
    return set(re.findall(r"^(?:var|let|const|async function|function\*?|class) ([A-Za-z_$][\w$]*)", bundle, re.M))


def test_the_build_bundles_each_widget_entry_and_three_js_apart():
    assert ENTRIES == ["widget.js", "job_status.js", "episodes.js", "scene3d.js", "rollout_file.js"]
    for command in BUILD.split("&&"):
        assert "--bundle" in command and "--format=esm" in command and "--outdir=dist" in command
    assert "WebGLRenderer" not in frontend.ESM  # three.js goes only to views of MuJoCo scenes
    assert re.search(r"export\{[^}]*\bas drawMujoco\b", frontend.SCENE3D_ESM)  # what widget.js adds
    assert "WebGLRenderer" not in frontend.EPISODES_ESM  # the rollout player asks for it as the live view does
    assert "WebGLRenderer" in frontend.ROLLOUT_FILE_ESM and "DecompressionStream" in frontend.ROLLOUT_FILE_ESM


def test_every_module_is_in_its_widgets_bundle():
    bundles = {"widget.js": frontend.ESM, "job_status.js": frontend.JOB_STATUS_ESM, "episodes.js": frontend.EPISODES_ESM}
    others = {
        "job_status.js": {"job_status.js", "protocol.js"},  # the job's status line needs nothing else
        # the players (an episode's, a rollout's) and the table of episodes
        "episodes.js": {"episodes.js", "episode.js", "episode_list.js", "charts.js", "rollout.js", "scene.js",
                        "shapes.js", "scene_box2d.js", "scene_car.js", "scene3d_loader.js", "protocol.js",
                        "player_parts.js"},
    }
    minified = {"scene3d.js", "scene3d_look.js", "scene3d_mirror.js", "rollout_file.js"}  # bundles of their own, minified
    for module in [module for module in MODULES if module not in minified]:
        text = (JS / module).read_text()
        exported = set(EXPORT.findall(text)) | ({f"{module[:-3]}_default"} if "export default" in text else set())
        for entry, bundle in bundles.items():
            own = {"job_status.js", "episodes.js", "episode.js", "episode_list.js", "rollout.js"}  # charts.js: in both
            wanted = module not in own if entry == "widget.js" else module in others[entry]
            if wanted:
                assert exported & declared(bundle), f"the bundle of js/{entry} lacks js/{module} ({sorted(exported)})"
    assert "jobLine" not in declared(frontend.ESM)  # each widget loads only its own code
    assert "renderPlayer" not in declared(frontend.ESM) and "FrameStream" not in declared(frontend.EPISODES_ESM)
    for bundle in bundles.values():
        assert re.search(r"^export \{\n  \w+ as default", bundle, re.M)  # what anywidget imports
        assert not re.search(r"^\s*import\s*[\w{*\"']", bundle, re.M)  # a Blob URL resolves no static import


def test_the_bundles_parse(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (./dev.sh test installs it)")
    for name in ENTRIES:
        module = tmp_path / f"{name}.mjs"
        module.write_text(frontend.FILES[name].read_text())
        done = subprocess.run([node, "--check", str(module)], capture_output=True, text=True)
        assert done.returncode == 0, f"{name}: {done.stderr}"


def test_the_bundles_are_built_from_the_sources_as_they_are(tmp_path):
    """A bundle older than an edit of js/ would put the old front-end in the widget (and the wheel)."""
    esbuild = JS / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists() or frontend.FILES["widget.js"].parent != JS / "dist":
        pytest.skip("not a built checkout (./dev.sh build)")
    command = BUILD.replace("esbuild", str(esbuild)).replace("--outdir=dist", f"--outdir={tmp_path}")
    subprocess.run(command, shell=True, cwd=JS, check=True)
    for name in ENTRIES:
        assert (tmp_path / name).read_text() == frontend.FILES[name].read_text(), f"js/dist/{name} is stale: ./dev.sh build"


def test_the_wheel_ships_the_bundles_and_the_css():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "custom" in pyproject["tool"]["hatch"]["build"]["hooks"]  # hatch_build.py
    hook = ast.parse((ROOT / "hatch_build.py").read_text())
    bundles = next(ast.literal_eval(node.value) for node in hook.body
                   if isinstance(node, ast.Assign) and node.targets[0].id == "BUNDLES")
    assert set(bundles) == set(ENTRIES)
    assert pyproject["tool"]["hatch"]["build"]["targets"]["sdist"]["artifacts"] == ["js/dist/*.js"]
    assert set(frontend.FILES) == {*bundles, "widget.css"}


def test_a_wheels_package_reads_its_static_folder(tmp_path):
    static = tmp_path / "gymview" / "static"
    static.mkdir(parents=True)
    names = (*frontend.BUNDLES, "widget.css")
    for name in names:
        (static / name).write_text(name)
    assert frontend.locate(tmp_path / "gymview") == {name: static / name for name in names}


def test_a_checkout_without_the_bundles_says_how_to_build_them_and_import_gymview_still_works(tmp_path):
    shutil.copytree(ROOT / "gymview", tmp_path / "gymview", ignore=shutil.ignore_patterns("__pycache__", "static"))
    (tmp_path / "js").mkdir()
    shutil.copy(JS / "widget.css", tmp_path / "js")
    environment = {**os.environ, "PYTHONPATH": str(tmp_path)}
    light = subprocess.run([sys.executable, "-c", "import sys, gymview; print(gymview.__file__, 'gymview._internal.frontend' in sys.modules)"],
                           capture_output=True, text=True, env=environment, cwd=tmp_path)
    assert light.returncode == 0, light.stderr
    assert light.stdout.split() == [str(tmp_path / "gymview" / "__init__.py"), "False"]
    widget = subprocess.run([sys.executable, "-c", "import gymview.live.widget"],
                            capture_output=True, text=True, env=environment, cwd=tmp_path)
    assert widget.returncode != 0
    last = widget.stderr.strip().splitlines()[-1]
    assert last.startswith("gymview._internal.frontend.FrontendNotBuilt: gymview's front-end is not built"), last
    assert f"{tmp_path / 'js' / 'dist' / 'widget.js'} is missing" in last and "./dev.sh build" in last
