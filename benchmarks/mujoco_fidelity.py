"""The MuJoCo fidelity set drawn by the page in Chromium: for each env, how like its own render the page's picture is
(SSIM), the bytes a frame carries, and how long the page takes to draw a frame, with and without the floor's
reflection, side by side.

    python benchmarks/mujoco_fidelity.py [--rounds 5] [--size 480]

Each env is stepped at random (seed 0); its page states are drawn one after another at --size x --size (as a view
of that size draws them: in software WebGL, at three quarters of it), the scene with its reflection and the same
scene without in alternating slices of 40 frames. Printed per env: SSIM against the env's render (the median of 4
states, at the size the tests compare), bytes of state a frame (float32), ms a frame drawn with and without the
reflection (medians over --rounds slices each), and the frames a second the page can draw at most (1000 / ms).
The dm_control suite runs where dm_control and shimmy are installed (the environment tests/packaging/dm_control.py
makes, with MUJOCO_GL=egl), gymnasium-robotics' Adroit hand where gymnasium-robotics is.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import statistics
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "browser"), str(REPO / "tests" / "helpers")]

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
from lab import drawn_by_page, scene_page  # noqa: E402
from mujoco_models import (  # noqa: E402
    ant_beside_a_crate,
    ant_beside_a_painted_box,
    ant_on_rough_ground,
    ant_with_a_mesh_body,
    ant_with_tendons,
)
from test_scene3d_browser import MAX_SIZE, ssim, states_along  # noqa: E402

from gymview.image.frames import downsample  # noqa: E402

DRAW = """async ([scene, states, size]) => {
  await window.scenes.loadScene(scene);
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = size;
  const context = canvas.getContext("2d");
  const frames = states.map((state) => Float32Array.from(state));
  window.scenes.drawScene(context, scene, frames[0], size, size); // builds the scene: not timed
  context.getImageData(0, 0, 1, 1);
  const started = performance.now();
  for (const state of frames) window.scenes.drawScene(context, scene, state, size, size);
  context.getImageData(0, 0, 1, 1); // waits for WebGL to finish
  const took = (performance.now() - started) / frames.length;
  window.scenes.forgetScene(scene);
  return took;
}"""


def fidelity_set(folder: pathlib.Path) -> list[tuple[str, str, dict]]:
    """(name, env id, gym.make's keywords) of each env installed here."""
    gymnasium = ("HalfCheetah-v5", "Hopper-v5", "Ant-v5", "Humanoid-v5", "InvertedDoublePendulum-v5")
    envs = [(name, name, {}) for name in gymnasium]
    envs += [(f"Ant {what}", "Ant-v5", {"xml_file": str(make(folder))}) for what, make in
             (("on a heightfield", ant_on_rough_ground), ("with a mesh body", ant_with_a_mesh_body),
              ("with spatial tendons", ant_with_tendons), ("beside a pictured crate", ant_beside_a_crate),
              ("beside a box painted by its texture coordinates", ant_beside_a_painted_box))]  # fmt: skip
    if importlib.util.find_spec("shimmy") and importlib.util.find_spec("dm_control"):
        import shimmy

        gym.register_envs(shimmy)
        envs += [(f"dm_control {task}", f"dm_control/{task}-v0", {}) for task in
                 ("cheetah-run", "walker-walk", "quadruped-walk", "reacher-easy", "cartpole-swingup")]  # fmt: skip
    if importlib.util.find_spec("gymnasium_robotics"):
        import gymnasium_robotics

        gym.register_envs(gymnasium_robotics)
        envs.append(("Adroit hand, door", "AdroitHandDoor-v1", {}))
    return envs


def measured(page, name: str, env_id: str, kwargs: dict, rounds: int, size: int) -> str:
    painter, pairs = states_along(env_id, count=4, **kwargs)
    scene = painter.page_scene()
    scores = []
    for state, rendered in pairs:
        expected = downsample(rendered, MAX_SIZE)
        drawn = drawn_by_page(page, {**scene, "id": 1}, state.astype(np.float32), expected.shape[1], expected.shape[0])
        scores.append(ssim(drawn, expected))
    states = [[float(x) for x in state] for state, _ in pairs] * 10
    times: dict[bool, list[float]] = {True: [], False: []}
    for round_ in range(rounds + 1):
        for mirrored in (True, False):
            took = page.evaluate(DRAW, [{**scene, "id": 2 + mirrored, "reflection": mirrored}, states, size])
            if round_:  # the first compiles the shaders
                times[mirrored].append(took)
    with_, without = statistics.median(times[True]), statistics.median(times[False])
    return (f"{name} | {statistics.median(scores):.3f} | {4 * len(pairs[0][0])} | {with_:.2f} / {without:.2f} | "
            f"{1000 / with_:.0f} / {1000 / without:.0f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=480)
    args = parser.parse_args()
    folder = pathlib.Path(tempfile.mkdtemp(prefix="gymview-fidelity-"))
    print(f"drawn at {args.size}x{args.size} in Chromium; ms a frame with / without the floor's reflection\n")
    print("env | SSIM | bytes/frame | ms a frame | frames/s at most")
    print("---|---:|---:|---:|---:")
    with scene_page() as page:
        for name, env_id, kwargs in fidelity_set(folder):
            print(measured(page, name, env_id, kwargs, args.rounds, args.size), flush=True)
        if page.errors:
            print("page errors:", page.errors)


if __name__ == "__main__":
    main()
