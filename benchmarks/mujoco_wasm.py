"""Where the page gets a MuJoCo scene from: the kernel's description (the geoms once, the moving bodies' poses each
frame: what gymview does) against MuJoCo's official WebAssembly build running in the page on each frame's qpos.

    python benchmarks/mujoco_wasm.py [--env HalfCheetah-v5] [--version 3.14.0]

Fetches ``@mujoco/mujoco`` from the npm registry (``npm pack``, into a temporary folder), then in Chromium: the
seconds to load and instantiate its module, to compile the env's model, and the ms a frame its kinematics
(``mj_kinematics``) and MuJoCo's own scene (``mjv_updateScene``) take from a qpos, over 200 random steps. Printed
beside them: the bytes to send once (the module and its loader; three.js in gymview's bundle) and the bytes of a
frame either way (float32: qpos and the camera's pose, or gymview's poses). Both ways the page draws with three.js,
so the pictures, and their cost, are the same.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tarfile
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "browser")]

import gymnasium as gym  # noqa: E402
from lab import chromium_page  # noqa: E402

from gymview._internal import frontend  # noqa: E402
from gymview.renderers.mujoco import MujocoPainter  # noqa: E402

ORIGIN = "http://gymview.test"
PROBE = """async ([xml, rows]) => {
  const started = performance.now();
  const mujoco = await (await import("%s/mujoco.js")).default();
  const loaded = performance.now();
  const model = mujoco.MjModel.from_xml_string(xml);
  const data = new mujoco.MjData(model);
  const compiled = performance.now();
  const [scene, option, perturb, camera] = [new mujoco.MjvScene(model, 1000), new mujoco.MjvOption(), new mujoco.MjvPerturb(), new mujoco.MjvCamera()];
  const qpos = data.qpos;
  let before = performance.now();
  for (const row of rows) { qpos.set(row); mujoco.mj_kinematics(model, data); }
  const kinematics = (performance.now() - before) / rows.length;
  before = performance.now();
  for (const row of rows) {
    qpos.set(row);
    mujoco.mj_kinematics(model, data);
    mujoco.mjv_updateScene(model, data, option, perturb, camera, mujoco.mjtCatBit.mjCAT_ALL.value, scene);
  }
  const updated = (performance.now() - before) / rows.length;
  return { loaded: (loaded - started) / 1000, compiled: (compiled - loaded) / 1000, kinematics, updated, nq: model.nq };
}""" % ORIGIN  # noqa: UP031 (the JS has braces of its own)


def fetched(version: str) -> pathlib.Path:
    folder = pathlib.Path(tempfile.mkdtemp(prefix="gymview-mujoco-wasm-"))
    subprocess.run(["npm", "pack", f"@mujoco/mujoco@{version}", "--silent"], cwd=folder, check=True, capture_output=True)
    with tarfile.open(next(folder.glob("*.tgz"))) as archive:
        archive.extractall(folder, filter="data")
    return folder / "package"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="HalfCheetah-v5")
    parser.add_argument("--version", default="3.14.0", help="of @mujoco/mujoco")
    args = parser.parse_args()
    package = fetched(args.version)
    env = gym.make(args.env, render_mode="rgb_array")
    env.reset(seed=0)
    env.action_space.seed(0)
    painter = MujocoPainter.for_env(env)
    env.render()
    rows = []
    for _ in range(200):
        env.step(env.action_space.sample())
        rows.append(env.unwrapped.data.qpos.tolist())
    poses = painter.page_state(painter.frame_of(env).state)
    xml = pathlib.Path(env.unwrapped.fullpath).read_text()

    def serve(route) -> None:
        name = route.request.url.rsplit("/", 1)[-1]
        if name in ("mujoco.js", "mujoco.wasm"):
            kind = "application/wasm" if name.endswith(".wasm") else "text/javascript"
            route.fulfill(body=(package / name).read_bytes(), content_type=kind)
        else:
            route.fulfill(body="<!doctype html><body></body>", content_type="text/html")

    with chromium_page() as page:
        page.route(f"{ORIGIN}/**", serve)
        page.goto(f"{ORIGIN}/index.html")
        wasm = page.evaluate(PROBE, [xml, rows])
    module = sum((package / name).stat().st_size for name in ("mujoco.js", "mujoco.wasm"))
    three = len(frontend.SCENE3D_ESM.encode())
    print(f"{args.env}, @mujoco/mujoco {args.version}, Chromium on this machine\n")
    print("| | MuJoCo's WebAssembly in the page | the kernel's description (gymview) |")
    print("|---|---:|---:|")
    print(f"| sent once | {module / 1e6:.1f} MB (module and loader) and the model | "
          f"{three / 1e6:.2f} MB (gymview's scene3d.js, three.js in it) and the scene's geoms |")  # fmt: skip
    print(f"| bytes a frame | {4 * (wasm['nq'] + 7)} (qpos, camera) | {4 * len(poses)} (poses, camera) |")
    print(f"| page's set-up | {wasm['loaded']:.2f} s to load the module, {wasm['compiled'] * 1000:.0f} ms the model | "
          "none before the scene is built |")  # fmt: skip
    print(f"| page's work a frame before drawing | {wasm['kinematics']:.3f} ms kinematics, "
          f"{wasm['updated']:.3f} ms with mjv_updateScene | posing the bodies |")  # fmt: skip
    print(json.dumps(wasm))


if __name__ == "__main__":
    main()
