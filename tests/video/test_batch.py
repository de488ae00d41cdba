"""record_batch: layouts, reproducibility, failures, executors and the command line."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import imageio_ffmpeg
import numpy as np
import pytest

from gymview.cli import main
from gymview.video.batch import COLUMNS, BatchResult, Episode, record_batch

pytestmark = pytest.mark.timeout(120)


def balance(observation: np.ndarray) -> int:
    """Push the cart towards where the pole leans."""
    return int(observation[2] > 0)


def frame_count(path: str | Path) -> int:
    return imageio_ffmpeg.count_frames_and_secs(str(path))[0]


def frame_size(path: str | Path) -> tuple[int, int]:
    reader = imageio_ffmpeg.read_frames(str(path))
    try:
        return next(reader)["size"]
    finally:
        reader.close()


@pytest.fixture(scope="module")
def per_episode(tmp_path_factory: pytest.TempPathFactory) -> BatchResult:
    out = tmp_path_factory.mktemp("per-episode")
    return record_batch("CartPole-v1", balance, episodes=20, out=out, max_steps=12, workers=2, seed=5, progress=False)


def test_per_episode_files_hold_every_step(per_episode: BatchResult) -> None:
    table = per_episode.table
    assert [row["episode"] for row in table] == list(range(20))
    assert [row["seed"] for row in table] == list(range(5, 25))
    assert all(list(row) == list(COLUMNS) for row in table)
    assert [Path(path).name for path in per_episode.files] == [f"episode-{i:04d}.mp4" for i in range(20)]
    for row in table:
        assert row["error"] is None
        assert row["terminated"] or (row["truncated"] and row["steps"] == 12)
        assert row["frames"] == row["steps"] + 1 == frame_count(row["file"])
    assert "20 episodes" in repr(per_episode) and "<table>" in per_episode._repr_html_()


def test_same_seed_gives_same_episodes(tmp_path: Path) -> None:
    def noisy_policy(observation: np.ndarray) -> int:  # random numbers from the global RNG are seeded too
        return int(np.random.random() < 0.5)

    runs = [
        record_batch("CartPole-v1", noisy_policy, episodes=8, out=tmp_path / str(run), keep=lambda ep: False,
                     workers=2, seed=11, progress=False).table  # fmt: skip
        for run in range(2)
    ]
    assert runs[0] == runs[1]
    assert len({row["steps"] for row in runs[0]}) > 1  # the episodes do differ from one another
    assert all(row["file"] is None and row["frames"] == 0 for row in runs[0])
    assert not list((tmp_path / "0").iterdir())  # nothing was encoded


def test_keep_chooses_the_videos(tmp_path: Path) -> None:
    def keep(ep: Episode) -> bool:  # runs in the workers: what it sees decides the files
        return ep.index % 2 == 0 and ep.seed == ep.index and (ep.steps, ep.truncated, ep.terminated) == (10, True, False)

    result = record_batch("MountainCar-v0", None, episodes=6, out=tmp_path, max_steps=10, workers=2, progress=False,
                          keep=keep)  # fmt: skip
    assert [row["file"] is not None for row in result.table] == [True, False] * 3
    assert [row["frames"] for row in result.table] == [11, 0] * 3
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        name for number in (0, 2, 4) for name in (f"episode-000{number}.mp4", f"episode-000{number}.steps.csv")]


def test_mosaic_tiles_episodes_with_labels(tmp_path: Path) -> None:
    result = record_batch("CartPole-v1", balance, episodes=20, out=tmp_path, layout="mosaic", tiles=9,
                          max_steps=10, workers=2, progress=False)  # fmt: skip
    assert [path.name for path in result.files] == ["mosaic-0000.mp4", "mosaic-0001.mp4", "mosaic-0002.mp4"]
    for number, path in enumerate(result.files):
        members = result.table[number * 9 : number * 9 + 9]
        assert {row["file"] for row in members} == {str(path)}
        assert frame_count(path) == max(row["frames"] for row in members)
    assert frame_size(result.files[0]) == (3 * 600, 3 * 400)  # 3 x 3 tiles at full size (fits 1920)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name for path in result.files]  # no leftovers


def test_concat_joins_episodes_without_leftovers(tmp_path: Path, per_episode: BatchResult) -> None:
    from video_checks import decode, psnr

    result = record_batch("CartPole-v1", balance, episodes=20, out=tmp_path, layout="concat", max_steps=12,
                          workers=2, seed=5, progress=False)  # fmt: skip
    assert [path.name for path in result.files] == ["episodes.mp4"]
    assert frame_count(result.files[0]) == sum(row["frames"] for row in result.table)
    assert {row["file"] for row in result.table} == {str(result.files[0])}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["episodes.mp4", "episodes.steps.csv"]
    joined, start = decode(result.files[0]), 0
    for row, alone in zip(result.table, per_episode.table):  # each episode's frames, in order, as in its own file
        assert row["frames"] == alone["frames"]
        frames = joined[start : start + row["frames"]]
        assert all(psnr(a, b) > 40 for a, b in zip(frames, decode(alone["file"]), strict=True)), row["episode"]
        start += row["frames"]


def test_concat_that_cannot_be_joined_keeps_every_part_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "episodes.mp4").mkdir()  # where the joined video would go: joining fails at once
    result = record_batch("CartPole-v1", balance, episodes=4, out=tmp_path, layout="concat", max_steps=5,
                          workers=2, progress=False)  # fmt: skip
    assert len(result.files) == 4 and all(path.is_file() for path in result.files)
    assert [frame_count(path) for path in result.files] == [row["frames"] for row in result.table]
    assert all("could not join the episodes" in row["error"] and "parts are kept" in row["error"] for row in result.table)
    assert (tmp_path / "episodes.mp4").is_dir()  # left as it was


def test_concat_works_in_a_folder_whose_path_has_quotes(tmp_path: Path) -> None:
    out = tmp_path / "it's \"here\""
    result = record_batch("CartPole-v1", balance, episodes=3, out=out, layout="concat", max_steps=4,
                          workers=1, progress=False)  # fmt: skip
    assert result.failed == [] and result.files == [out / "episodes.mp4"]
    assert frame_count(result.files[0]) == 15
    assert sorted(p.name for p in out.iterdir()) == ["episodes.mp4", "episodes.steps.csv"]


def renders_as(kind: str):
    """An env factory whose frames come as ``kind``: float in [0, 1], gray (H, W), or RGBA."""

    def make() -> gym.Env:
        class Converted(gym.Wrapper):
            def render(self):
                frame = self.env.render()
                if kind == "float":
                    return frame / 255.0
                if kind == "gray":
                    return frame.mean(axis=2).astype(np.uint8)
                return np.dstack([frame, np.full(frame.shape[:2], 255, np.uint8)])

        return Converted(gym.make("CartPole-v1", render_mode="rgb_array"))

    return make


@pytest.mark.parametrize("kind", ["float", "gray", "rgba"])
def test_every_layout_takes_what_env_render_returns(tmp_path: Path, kind: str) -> None:
    from video_checks import decode

    brightness = {}
    for layout in ("per-episode", "mosaic"):
        result = record_batch(renders_as(kind), balance, episodes=1, out=tmp_path / layout, layout=layout, tiles=1,
                              max_steps=3, workers=1, vectorized=False, progress=False)  # fmt: skip
        assert result.failed == [], result.failed
        brightness[layout] = decode(result.files[0])[0].mean()
    # CartPole is mostly white: a float frame read as uint8 (0 or 1) would be black.
    assert brightness["per-episode"] > 200 and brightness["mosaic"] > 200  # (the mosaic has a dark label)


def test_an_episode_that_raises_is_a_row_with_its_error(tmp_path: Path) -> None:
    doomed = gym.make("CartPole-v1").reset(seed=3)[0]

    def fragile(observation: np.ndarray) -> int:
        if np.allclose(observation, doomed):
            raise ValueError("boom")
        return balance(observation)

    result = record_batch("CartPole-v1", fragile, episodes=5, out=tmp_path, max_steps=6, workers=2, progress=False)
    errors = [row["error"] for row in result.table]
    assert errors[:3] == [None] * 3 and errors[4] is None
    assert errors[3].startswith("ValueError: boom (test_batch.py:")
    assert result.failed == [result.table[3]]
    assert result.table[3]["frames"] == 1 == frame_count(result.table[3]["file"])  # what there was is kept


def test_a_worker_that_dies_fails_only_its_own_episode_naming_how(tmp_path: Path) -> None:
    from dying_envs import DiesOnSeed

    result = record_batch(DiesOnSeed(3, exit_code=7), balance, episodes=6, out=tmp_path, max_steps=5, workers=2,
                          progress=False)  # fmt: skip
    errors = [row["error"] for row in result.table]
    assert errors[:3] + errors[4:] == [None] * 5, errors
    assert errors[3] == "worker failed: its worker process died (exit code 7), also when run again alone"
    assert [path.name for path in result.files] == [f"episode-{i:04d}.mp4" for i in (0, 1, 2, 4, 5)]
    assert [frame_count(path) for path in result.files] == [6] * 5


def test_mosaics_are_made_after_a_worker_died(tmp_path: Path) -> None:
    from dying_envs import DiesOnSeed

    result = record_batch(DiesOnSeed(2), balance, episodes=6, out=tmp_path, layout="mosaic", tiles=4, max_steps=5,
                          workers=2, progress=False)  # fmt: skip
    assert result.failed == [result.table[2]] and "(killed by SIGKILL)" in result.table[2]["error"]
    assert [path.name for path in result.files] == ["mosaic-0000.mp4", "mosaic-0001.mp4"]
    assert [row["file"] is not None for row in result.table] == [True, True, False, True, True, True]


def test_an_episode_whose_worker_died_once_is_recorded_when_run_again(tmp_path: Path) -> None:
    from dying_envs import DiesOnSeed

    died = tmp_path / "died"
    result = record_batch(DiesOnSeed(1, exit_code=7, once=died), balance, episodes=4, out=tmp_path / "videos",
                          max_steps=5, workers=2, progress=False)  # fmt: skip
    assert died.exists() and result.failed == [] and len(result.files) == 4


def test_an_executor_of_the_callers_that_breaks_fails_the_rows_and_the_batch_returns(tmp_path: Path) -> None:
    from dying_envs import DiesOnSeed

    with concurrent.futures.ProcessPoolExecutor(2) as executor:
        result = record_batch(DiesOnSeed(1, exit_code=7), balance, episodes=4, out=tmp_path, layout="mosaic", tiles=2,
                              max_steps=5, executor=executor, progress=False)  # fmt: skip
    assert result.table[1]["error"].startswith("worker failed: BrokenProcessPool")
    assert result.files == [] and len(result.failed) == 4  # the mosaics could not be sent to the broken pool


def test_env_render_is_used_without_a_vectorized_renderer(tmp_path: Path) -> None:
    result = record_batch("CartPole-v1", balance, episodes=3, out=tmp_path / "a", max_steps=5, workers=1,
                          vectorized=False, progress=False)  # fmt: skip
    assert [frame_count(path) for path in result.files] == [row["frames"] for row in result.table] == [6, 6, 6]
    mosaic = record_batch("CartPole-v1", balance, episodes=3, out=tmp_path / "b", max_steps=5, workers=1,
                          vectorized=False, layout="mosaic", tiles=4, progress=False)  # fmt: skip
    assert frame_count(mosaic.files[0]) == 6 and frame_size(mosaic.files[0]) == (1200, 800)
    joined = record_batch("CartPole-v1", balance, episodes=3, out=tmp_path / "d", max_steps=5, workers=1,
                          vectorized=False, layout="concat", progress=False)  # fmt: skip
    assert joined.failed == [] and frame_count(joined.files[0]) == 18  # parts written plain, copied into fragments
    no_rgb = record_batch(lambda: gym.make("CartPole-v1"), balance, episodes=1, out=tmp_path / "c", workers=1,
                          vectorized=False, progress=False)  # fmt: skip
    assert "render_mode='rgb_array'" in no_rgb.table[0]["error"]


def test_spawned_workers_get_closures(tmp_path: Path) -> None:
    threshold = 0.0  # a closure: plain pickle cannot send it, cloudpickle can

    def lean(observation: np.ndarray) -> int:
        return int(observation[2] > threshold)

    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as executor:
        result = record_batch(lambda: gym.make("CartPole-v1", render_mode="rgb_array"), lean, episodes=2, out=tmp_path,
                              max_steps=4, executor=executor, progress=False)  # fmt: skip
    assert [row["frames"] for row in result.table] == [5, 5] and not result.failed


def test_dask_local_cluster(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            result = record_batch("CartPole-v1", balance, episodes=4, out=tmp_path, max_steps=5,
                                  executor=client.get_executor(), progress=False)  # fmt: skip
    assert [frame_count(path) for path in result.files] == [6, 6, 6, 6] and not result.failed


def test_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "my_policies.py").write_text("def push(observation):\n    return 2 if observation[1] >= 0 else 0\n")
    monkeypatch.chdir(tmp_path)
    code = main(["record", "MountainCar-v0", "--episodes", "3", "--out", "videos", "--policy", "my_policies:push",
                 "--keep", "terminated", "--workers", "1", "--no-progress"])  # fmt: skip
    assert code == 0
    assert "3 episodes" in capsys.readouterr().out
    assert len(list((tmp_path / "videos").glob("episode-*.mp4"))) == 3
    with pytest.raises(SystemExit, match="module:function"):
        main(["record", "MountainCar-v0", "--policy", "push"])
    completed = subprocess.run(
        [sys.executable, "-m", "gymview", "record", "CartPole-v1", "--episodes", "1", "--max-steps", "3",
         "--out", str(tmp_path / "cli"), "--workers", "1", "--no-progress"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + str(Path(__file__).parents[2])},
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "cli" / "episode-0000.mp4").exists()


def test_bad_arguments_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="layout must be one of"):
        record_batch("CartPole-v1", balance, out=tmp_path, layout="grid")
    for bad in (0, True, 2.0):
        with pytest.raises(ValueError, match="episodes must be an integer of at least 1"):
            record_batch("CartPole-v1", balance, episodes=bad, out=tmp_path)
    with pytest.raises(ValueError, match=r"workers must be an integer of at least 1, or None \(one per core\)"):
        record_batch("CartPole-v1", balance, workers=False, out=tmp_path)
    with pytest.raises(TypeError, match="policy must be a function"):
        record_batch("CartPole-v1", "greedy", out=tmp_path)
    with pytest.raises(TypeError, match="env must be an env id"):
        record_batch(42, balance, out=tmp_path)
    with pytest.raises(gym.error.Error):
        record_batch("NoSuchEnv-v0", balance, out=tmp_path)
