"""A MuJoCo Playground rollout, stepped with jax.lax.scan on the CPU, played by show_rollout from its JAX arrays.
Runs where JAX and MuJoCo Playground are installed (./dev.sh test's stage tests/packaging/jax_rollouts.py)."""

import json
import pathlib

import numpy as np
import pytest

jax = pytest.importorskip("jax")
registry = pytest.importorskip("mujoco_playground").registry
mujoco = pytest.importorskip("mujoco")

import gymview  # noqa: E402
from gymview.episodes.page_file import page_data, unpacked_states  # noqa: E402

ENVS, STEPS = 3, 40
ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rollout():
    """CheetahRun (a DM Control suite env) stepped ENVS at once with random actions: qpos [T, B, nq], rewards."""
    env = registry.load("CheetahRun")
    states = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(0), ENVS))

    def step(state, key):
        action = jax.random.uniform(key, (ENVS, env.action_size), minval=-1.0, maxval=1.0)
        state = jax.vmap(env.step)(state, action)
        return state, (state.data.qpos, state.reward)

    _, (qpos, rewards) = jax.lax.scan(step, states, jax.random.split(jax.random.PRNGKey(1), STEPS))
    return env, qpos, rewards


def test_a_playground_rollout_plays_as_a_grid_of_its_envs_at_its_control_rate(rollout, tmp_path):
    env, qpos, rewards = rollout
    assert isinstance(qpos, jax.Array) and qpos.shape == (STEPS, ENVS, env.mj_model.nq)
    player = gymview.show_rollout(env, qpos, values={"reward": rewards})
    assert (player.frames, player.envs, player.fps) == (STEPS, ENVS, pytest.approx(1 / env.dt))
    scene = player._scenes[0]
    assert scene["kind"] == "grid" and scene["cell"]["kind"] == "mujoco" and scene["count"] == ENVS
    # each env's bodies where MuJoCo's kinematics puts them for its qpos, on the host
    model, data = env.mj_model, mujoco.MjData(env.mj_model)
    data.qpos[:] = np.asarray(qpos[STEPS - 1, 1])
    mujoco.mj_kinematics(model, data)
    states = np.frombuffer(player._states, "<f4").reshape(STEPS, -1)
    cell = states[STEPS - 1, scene["state_dim"] : 2 * scene["state_dim"]]
    torso = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "torso")
    np.testing.assert_allclose(cell[:3], data.xpos[torso], atol=1e-5)  # the torso is the first body that moves
    np.testing.assert_allclose(states[:, -ENVS], np.cumsum(np.asarray(rewards)[:, 0]), rtol=1e-5)  # env 0's label
    saved = json.loads(page_data(player.save(tmp_path / "cheetahs.html").read_text()))
    np.testing.assert_allclose(unpacked_states(saved["segments"][0]), states, rtol=0, atol=1e-5)


def test_the_jax_rollouts_notebook_runs_top_to_bottom(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    notebook = nbformat.read(ROOT / "notebooks" / "jax_rollouts.ipynb", as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert (tmp_path / "cheetahs.html").stat().st_size < 2_000_000
