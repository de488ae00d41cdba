"""gymview.setup() in fresh Python processes: each test gets its own environment variables and display."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from gymview.headless.provision import _debian_packages_needed

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "fakes"

# Setup, then what an env that needs an X display does: gymnasium's CartPole in human mode opens a
# pygame window (forced onto SDL's x11 driver) and draws; we read the window back.
HUMAN_WINDOW_AFTER_SETUP = textwrap.dedent("""
    import json, os, sys
    import gymview
    report = gymview.setup(human=False, quiet=True)
    os.environ["SDL_VIDEODRIVER"] = "x11"
    import gymnasium as gym, pygame
    env = gym.make("CartPole-v1", render_mode="human")
    env.reset(seed=0)
    env.step(0)
    pixels = pygame.surfarray.array3d(pygame.display.get_surface())
    driver = pygame.display.get_driver()
    env.close()
    print(json.dumps({"driver": driver, "spread": int(pixels.max()) - int(pixels.min()),
                      "display": report.display, "started": report.started_display}))
""")


def run_env(**env: str) -> dict[str, str]:
    """This process's environment with gymview importable and no display or renderer settings but ``env``."""
    merged = {**os.environ, "PYTHONPATH": str(ROOT), "PYGAME_HIDE_SUPPORT_PROMPT": "1", **env}
    for name, value in env.items():
        if value is None:
            merged.pop(name)
    for name in ("DISPLAY", "MUJOCO_GL", "PYOPENGL_PLATFORM", "SDL_VIDEODRIVER", "COLAB_RELEASE_TAG"):
        if name not in env:
            merged.pop(name, None)
    return merged


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=run_env(**env), timeout=60)


def last_json(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_an_env_that_opens_an_x_window_renders_after_setup():
    seen = last_json(run_python(HUMAN_WINDOW_AFTER_SETUP))
    assert seen["driver"] == "x11" and seen["started"] and seen["display"].startswith(":")
    assert seen["spread"] > 100  # CartPole drawn: white background, black cart


def test_without_a_display_it_fails_and_setup_says_how_to_fix_it(tmp_path):
    no_xvfb = f"{tmp_path}{os.pathsep}{Path(sys.executable).parent}"  # python, but no Xvfb
    failed = run_python(HUMAN_WINDOW_AFTER_SETUP, PATH=no_xvfb)
    assert failed.returncode != 0 and "x11 not available" in failed.stderr
    report = run_python("import gymview; gymview.setup(human=False)", PATH=no_xvfb)
    assert report.returncode == 0, report.stderr
    assert "display    none" in report.stdout
    assert "problem    no virtual display" in report.stdout and "apt-get install -y xvfb" in report.stdout


def test_setup_twice_is_harmless_and_the_display_stops_at_exit():
    done = run_python(textwrap.dedent("""
        import json, os, gymview
        from gymview.headless.virtual_display import virtual_display
        first = gymview.setup(quiet=True)
        pid = virtual_display().pid
        second = gymview.setup()
        print(json.dumps({"pid": pid, "same": virtual_display().pid == pid, "display": os.environ["DISPLAY"],
                          "first": [first.started_display, first.virtual_display],
                          "second": [second.started_display, second.virtual_display],
                          "set_twice": second.variables_set}))
    """))
    seen = last_json(done)
    assert seen["same"] and seen["first"] == [True, True] and seen["second"] == [False, True]
    assert seen["set_twice"] == {}
    assert f"running: virtual display {seen['display']}" in done.stdout
    assert gone(seen["pid"])


def test_display_false_starts_nothing_and_keeps_sdl_off_x():
    seen = last_json(run_python(textwrap.dedent("""
        import json, os, gymview
        from gymview.headless.virtual_display import virtual_display
        report = gymview.setup(display=False, quiet=True)
        print(json.dumps({"display": os.environ.get("DISPLAY"), "virtual": virtual_display() is not None,
                          "sdl": os.environ.get("SDL_VIDEODRIVER"), "problems": report.problems}))
    """)))
    assert seen == {"display": None, "virtual": False, "sdl": "dummy", "problems": []}


def test_user_set_variables_are_kept_and_reported():
    done = run_python(
        textwrap.dedent("""
            import json, os, gymview
            report = gymview.setup(display=False)
            print(json.dumps({k: os.environ.get(k) for k in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "SDL_VIDEODRIVER")}))
        """),
        MUJOCO_GL="glfw",
        SDL_VIDEODRIVER="offscreen",
    )
    seen = last_json(done)
    assert seen == {"MUJOCO_GL": "glfw", "PYOPENGL_PLATFORM": None, "SDL_VIDEODRIVER": "offscreen"}
    assert "kept yours: MUJOCO_GL=glfw" in done.stdout
    # with no display GLFW cannot render: setup checked the user's choice and says so
    assert "problem    your MUJOCO_GL=glfw does not render" in done.stdout


def test_a_later_setup_with_a_display_drops_the_sdl_dummy_driver_it_set():
    seen = last_json(run_python(textwrap.dedent("""
        import json, os, gymview
        gymview.setup(display=False, quiet=True)
        before = os.environ.get("SDL_VIDEODRIVER")
        gymview.setup(quiet=True)
        print(json.dumps([before, os.environ.get("SDL_VIDEODRIVER")]))
    """)))
    assert seen == ["dummy", None]


def test_on_colab_setup_enables_the_custom_widget_manager():
    seen = last_json(run_python(
        textwrap.dedent("""
            import json, gymview
            from google.colab import output
            report = gymview.setup(display=False, install=False, quiet=True)
            gymview.setup(display=False, install=False, quiet=True)
            print(json.dumps({"frontend": report.environment.frontend, "enabled": report.widget_manager,
                              "calls": output.custom_widget_manager_calls}))
        """),
        PYTHONPATH=f"{FAKES}{os.pathsep}{ROOT}",
    ))
    assert seen == {"frontend": "colab", "enabled": True, "calls": 2}


def test_human_mode_is_left_alone_outside_a_notebook():
    seen = last_json(run_python(textwrap.dedent("""
        import json, sys, gymnasium, gymview
        original = gymnasium.make
        report = gymview.setup(display=False, quiet=True)
        print(json.dumps([report.human_inline, gymnasium.make is original]))
    """)))
    assert seen == [False, True]


def test_in_a_notebook_gymnasium_make_is_replaced_only_when_human_mode_is_asked_for():
    seen = last_json(run_python(textwrap.dedent("""
        import json, gymnasium, gymview
        original = gymnasium.make
        plain = gymview.setup(display=False, install=False, quiet=True)
        seen = [plain.environment.in_notebook, plain.human_inline, gymnasium.make is original]
        asked = gymview.setup(display=False, install=False, human=True, quiet=True)
        seen += [asked.human_inline, gymnasium.make is not original]
        gymview.setup(display=False, install=False, quiet=True)
        print(json.dumps(seen + [gymnasium.make is original]))
    """), PYTHONPATH=f"{FAKES}{os.pathsep}{ROOT}"))  # a stand-in Colab: a notebook
    assert seen == [True, False, True, True, True, True]


@pytest.mark.parametrize(
    ("xvfb_found", "allowed", "is_root", "apt_get", "wanted"),
    [
        (False, True, True, True, ("xvfb",)),
        (True, True, True, True, ()),
        (False, False, True, True, ()),
        (False, True, False, True, ()),
        (False, True, True, False, ()),
    ],
)
def test_xvfb_is_installed_only_when_missing_allowed_root_and_debian(xvfb_found, allowed, is_root, apt_get, wanted):
    assert _debian_packages_needed(xvfb_found, allowed, is_root, apt_get) == wanted


MUJOCO_AFTER_SETUP = textwrap.dedent("""
    import json, os, sys, gymview
    report = gymview.setup(display=sys.argv[1] == "display", quiet=True)
    import gymnasium as gym
    env = gym.make("InvertedPendulum-v5", render_mode="rgb_array", width=64, height=48)
    env.reset(seed=0)
    frame = env.render()
    env.close()
    print(json.dumps({"gpu": report.environment.gpu, "started": report.started_display, "report": str(report),
                      "gl": [os.environ.get(k) for k in ("MUJOCO_GL", "PYOPENGL_PLATFORM")],
                      "spread": int(frame.max()) - int(frame.min())}))
""")


@pytest.mark.parametrize(("display", "backend"), [("display", ["osmesa", "osmesa"]), ("none", ["osmesa", "osmesa"])])
def test_a_mujoco_env_renders_after_setup_through_the_backend_it_chose(display, backend):
    pytest.importorskip("mujoco")
    done = subprocess.run([sys.executable, "-c", MUJOCO_AFTER_SETUP, display], capture_output=True, text=True,
                          timeout=120, env=run_env())
    seen = last_json(done)
    if seen["gpu"] or (display == "display" and not seen["started"]):
        pytest.skip("needs a machine without a GPU where Xvfb can start")
    assert seen["gl"] == backend and seen["spread"] > 50
    assert f"opengl     MuJoCo renders with {backend[0]} (" in seen["report"]


def test_pygame_gets_a_private_runtime_dir_and_prints_no_error():
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    code = textwrap.dedent("""
        import json, os, stat, gymview
        gymview.setup(display=False, quiet=True)
        import gymnasium as gym
        env = gym.make("CartPole-v1", render_mode="rgb_array"); env.reset(seed=0); env.render(); env.close()
        folder = os.environ["XDG_RUNTIME_DIR"]
        print(json.dumps({"mode": oct(stat.S_IMODE(os.stat(folder).st_mode)), "folder": folder}))
    """)
    seen = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                              cwd=str(Path(__file__).resolve().parents[2]))
        assert done.returncode == 0, done.stderr
        assert "XDG_RUNTIME_DIR" not in done.stderr
        seen.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert seen[0]["mode"] == "0o700"
    assert seen[0]["folder"] == seen[1]["folder"], "one folder per user: killed kernels leave none behind"
