"""The packaging checks ./dev.sh test runs after pytest find what they name."""

import sys

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent / "packaging"))

import lowest  # noqa: E402


def test_the_lowest_versions_run_names_only_tests_that_exist(repo_root):
    assert [path for path in lowest.UNIT_TESTS if not (repo_root / path).exists()] == []


def test_every_core_dependency_has_a_lowest_version():
    assert [pin.split("==")[0] for pin in lowest.lowest_pins()] == [
        "gymnasium", "numpy", "ipywidgets", "anywidget", "pillow", "imageio-ffmpeg", "av", "cloudpickle", "tqdm",
        "pyzmq"]


def test_the_jax_rollouts_stage_runs_tests_that_exist(repo_root):
    import jax_rollouts

    assert [path for path in jax_rollouts.ROLLOUT_TESTS if not (repo_root / path).exists()] == []
