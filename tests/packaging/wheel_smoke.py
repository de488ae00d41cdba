"""The wheel is the product: build it, install it into a new virtual environment outside the checkout
and use it there as a user would. ``./dev.sh test`` runs this after pytest; by hand:

    python tests/packaging/wheel_smoke.py

The wheel carries the front-end's bundles, so build them first (``./dev.sh test`` does: ``./dev.sh build``).

Checks: the wheel carries the widgets' front-end and ``import gymview`` uses that copy; ``gymview
record CartPole-v1 --episodes 2 --out v`` writes two videos that ffmpeg decodes end to end; ``watch()``
in a real IPython kernel sends frames over its comm. Exits non-zero naming the first check that fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ("gymview/static/widget.js", "gymview/static/job_status.js", "gymview/static/episodes.js",
            "gymview/static/scene3d.js", "gymview/static/rollout_file.js", "gymview/static/widget.css")

IMPORTED = """
import json, sys
from pathlib import Path
import gymview
from gymview._internal import frontend
package = Path(gymview.__file__).parent
print(json.dumps({"package": str(package), "prefix": sys.prefix,
                  "esm_is_the_packaged_file": frontend.FILES["widget.js"] == package / "static" / "widget.js"
                  and gymview.LiveView._esm == (package / "static" / "widget.js").read_text(encoding="utf-8")}))
"""

# Runs in the new environment: a kernel of that environment's Python, a watched loop, its frames counted.
KERNEL = """
import json, queue, sys
from jupyter_client import KernelManager

CELL = '''
import gymnasium as gym, gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
env.reset(seed=0)
steps = 0
while env.view.stats["frames_sent"] < 3 and steps < 2_000_000:
    _, _, terminated, truncated, _ = env.step(env.action_space.sample())
    steps += 1
    if terminated or truncated:
        env.reset()
env.close()
print("sent", env.view.stats["frames_sent"])
'''

manager = KernelManager(kernel_name="python3")  # jupyter_client runs the kernelspec's `python` as sys.executable
manager.start_kernel()
client = manager.client()
client.start_channels()
try:
    client.wait_for_ready(timeout=120)
    msg_id = client.execute(CELL)
    frames, stdout, error = [], "", None
    while True:
        msg = client.get_iopub_msg(timeout=300)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["header"]["msg_type"], msg["content"]
        if kind == "comm_msg" and content["data"].get("content", {}).get("type") == "frame":
            # a message of scene frames holds several, listed in "frames"
            count = len(content["data"]["content"].get("frames", [None]))
            frames.append([count, sum(len(buffer) for buffer in msg["buffers"])])
        elif kind == "stream":
            stdout += content["text"]
        elif kind == "error":
            error = "\\n".join(content["traceback"])
        elif kind == "status" and content["execution_state"] == "idle":
            break
    print(json.dumps({"frame_bytes": frames, "stdout": stdout, "error": error}))
finally:
    client.stop_channels()
    manager.shutdown_kernel(now=True)
"""


class SmokeFailure(Exception):
    pass


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise SmokeFailure(f"{' '.join(map(str, command))} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def build_wheel(out: Path) -> Path:
    if not (ROOT / "js" / "dist" / "widget.js").is_file():
        raise SmokeFailure("js/dist/ holds no bundles for the wheel to carry: run ./dev.sh build first")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check", "-w", str(out), str(ROOT)])
    (wheel,) = out.glob("gymview-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [name for name in FRONTEND if name not in names]
    if missing:
        raise SmokeFailure(f"{wheel.name} lacks the front-end: {missing}")
    return wheel


def make_environment(folder: Path, wheel: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    python = folder / "bin" / "python"
    run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel), "ipykernel", "jupyter_client"])
    return python


def check_import(python: Path, environment: dict, cwd: Path) -> None:
    found = json.loads(run([str(python), "-c", IMPORTED], env=environment, cwd=cwd).stdout)
    if not Path(found["package"]).is_relative_to(found["prefix"]):
        raise SmokeFailure(f"import gymview found {found['package']}, not the installed wheel in {found['prefix']}")
    if not found["esm_is_the_packaged_file"]:
        raise SmokeFailure("LiveView's front-end is not the one the wheel ships in gymview/static/")


def check_record(python: Path, environment: dict, cwd: Path) -> None:
    run([str(python.parent / "gymview"), "record", "CartPole-v1", "--episodes", "2", "--out", "v"],
        env=environment, cwd=cwd, timeout=300)
    videos = sorted((cwd / "v").glob("*.mp4"))
    if len(videos) != 2:
        raise SmokeFailure(f"gymview record wrote {[video.name for video in videos]}, not two videos")
    decode = "import imageio_ffmpeg, sys; print(imageio_ffmpeg.count_frames_and_secs(sys.argv[1])[0])"
    ffmpeg = run([str(python), "-c", "import imageio_ffmpeg; print(imageio_ffmpeg.get_ffmpeg_exe())"], env=environment).stdout.strip()
    for video in videos:
        errors = run([ffmpeg, "-v", "error", "-i", str(video), "-f", "null", "-"]).stderr.strip()
        frames = int(run([str(python), "-c", decode, str(video)], env=environment).stdout)
        if errors or frames < 2:
            raise SmokeFailure(f"{video.name} does not play: {frames} frames, ffmpeg said {errors!r}")


def check_kernel(python: Path, environment: dict, cwd: Path) -> None:
    found = json.loads(run([str(python), "-c", KERNEL], env=environment, cwd=cwd, timeout=600).stdout.strip().splitlines()[-1])
    messages = found["frame_bytes"]  # [frames in the message, its bytes] for each frame message
    counted = sum(count for count, _ in messages)
    if found["error"] or counted < 3 or not all(size for _, size in messages):
        raise SmokeFailure(f"watch() in a kernel sent {messages} ([frames, bytes] per message); "
                           f"{found['stdout']!r} {found['error']}")


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="gymview-wheel-"))  # outside the checkout: nothing of it is importable
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environment["PATH"] = f"{folder / 'venv' / 'bin'}{os.pathsep}{environment.get('PATH', '')}"
    started = time.monotonic()
    try:
        wheel = build_wheel(folder / "dist")
        python = make_environment(folder / "venv", wheel)
        print(f"wheel smoke test: {wheel.name} installed in {folder / 'venv'} ({time.monotonic() - started:.0f} s)", flush=True)
        for check in (check_import, check_record, check_kernel):
            check(python, environment, folder)
            print(f"wheel smoke test: {check.__name__} passed ({time.monotonic() - started:.0f} s)", flush=True)
    except SmokeFailure as failure:
        print(f"wheel smoke test FAILED: {failure}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
