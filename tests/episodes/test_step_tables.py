"""Every recorded video has its step table: one row per frame, equal to what the loop saw."""

import csv
import math
import os
import signal
import subprocess
import sys
import threading

import gymnasium as gym
import numpy as np
import pytest
from video_checks import decode, frames_decodable, kill_once_on_disk

import gymview
from gymview.episodes import StepTable, steps_path
from gymview.episodes.rows import RawStep
from gymview.episodes.table import TableJoiner

class Arm(gym.Env):
    """A small env with a vector action, numbers and a text in its info, drawn with numpy."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(self, render_mode="rgb_array"):
        self.render_mode = render_mode
        self.action_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
        self.observation_space = gym.spaces.Box(-100.0, 100.0, (3,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = self.np_random.uniform(-1, 1, 3)
        self.t = 0
        return self.position.astype(np.float32), {"distance": float(np.linalg.norm(self.position))}

    def step(self, action):
        self.position = self.position + action
        self.t += 1
        info = {"distance": float(np.linalg.norm(self.position)), "label": "arm", "whole": self.position.copy(),
                "episode": {"r": 1.0}, "lives": np.int64(3)}
        return self.position.astype(np.float32), -info["distance"], self.t >= 12, False, info

    def render(self):
        frame = np.zeros((48, 64, 3), np.uint8)
        frame[:, : 4 * self.t + 4] = 200
        return frame


def column(rows, name):
    return [row[name] for row in rows]


def test_record_video_tables_hold_the_rewards_actions_info_and_logged_values_the_loop_saw(tmp_path):
    env = gymview.RecordVideo(Arm(), tmp_path / "videos", episode_trigger=lambda episode: True)
    seen = []  # per episode: (reward, action, distance, logged value) of each step
    for episode in range(2):
        observation, _ = env.reset(seed=episode)
        steps, done = [], False
        while not done:
            action = np.float32([0.1, -0.2, 0.3]) * (episode + 1)
            observation, reward, terminated, truncated, info = env.step(action)
            env.log(value=float(observation.sum()))
            steps.append((reward, action.copy(), info["distance"], float(observation.sum())))
            action[:] = 99  # the loop reuses its array: the table kept what was stepped
            done = terminated or truncated
        seen.append(steps)
    env.close()
    for episode, steps in enumerate(seen):
        video = tmp_path / "videos" / f"rl-video-episode-{episode}.mp4"
        rows = gymview.read_steps(video)
        assert len(rows) == len(steps) + 1 == decode(video).shape[0]
        assert column(rows, "frame") == list(range(len(rows)))
        assert column(rows, "step") == list(range(len(rows))) and set(column(rows, "episode")) == {episode}
        assert column(rows, "reward") == [0.0] + [reward for reward, *_ in steps]
        assert column(rows, "return") == pytest.approx(np.cumsum(column(rows, "reward")).tolist())
        assert column(rows, "terminated") == [0] * len(steps) + [1] and set(column(rows, "truncated")) == {0}
        for index in range(3):
            assert column(rows, f"action_{index}")[1:] == pytest.approx([action[index] for _, action, *_ in steps])
        assert math.isnan(rows[0]["action_0"]) and math.isnan(rows[0]["value"])  # the reset's frame: no action yet
        assert column(rows, "distance")[1:] == [distance for _, _, distance, _ in steps]
        assert column(rows, "lives")[1:] == [3] * len(steps)
        assert column(rows, "value")[1:] == pytest.approx([value for *_, value in steps])
        assert not {"label", "whole", "episode_r", "info_episode"} & set(rows[0])  # texts, arrays, dicts: no column


def test_watch_record_tables_hold_the_rewards_and_the_values_logged_on_the_watched_env(tmp_path):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), record=tmp_path, display=False)
    observation, _ = env.reset(seed=3)
    rewards, actions, values, done = [], [], [], False
    while not done:
        action = int(observation[2] > 0)
        env.log(value=float(observation[2]))  # before the step: the value of what the frame on screen shows
        values.append(float(observation[2]))
        observation, reward, terminated, truncated, _ = env.step(action)
        rewards.append(reward)
        actions.append(action)
        done = terminated or truncated
    env.close()
    rows = gymview.read_steps(tmp_path / "CartPole-v1-episode-0.mp4")
    assert column(rows, "reward")[1:] == rewards and column(rows, "action")[1:] == actions
    assert column(rows, "return")[-1] == sum(rewards) and rows[-1]["terminated"] + rows[-1]["truncated"] == 1
    assert column(rows, "value")[:-1] == pytest.approx(values)  # logged between steps: on the row of the frame shown


def balance_and_log(observation):
    gymview.log(angle=float(observation[2]), doubled=2.0 * float(observation[0]))
    return int(observation[2] + 0.3 * observation[3] > 0)


def played_alone(seed, max_steps):
    """(rewards, logged angles) of one CartPole episode of balance_and_log from ``seed``, in this process."""
    env = gym.make("CartPole-v1")
    observation, _ = env.reset(seed=seed)
    rewards, angles = [], []
    for _ in range(max_steps):
        angles.append(float(observation[2]))
        observation, reward, terminated, truncated, _ = env.step(int(observation[2] + 0.3 * observation[3] > 0))
        rewards.append(float(reward))
        if terminated or truncated:
            break
    return rewards, angles


@pytest.mark.parametrize("layout", ["per-episode", "concat"])
def test_record_batch_tables_equal_each_episode_played_alone(tmp_path, layout):
    result = gymview.record_batch("CartPole-v1", balance_and_log, episodes=3, out=tmp_path, seed=5, max_steps=40,
                                  layout=layout, workers=2, progress=False)
    assert result.failed == []
    if layout == "concat":
        rows = gymview.read_steps(result.files[0])
        assert column(rows, "frame") == list(range(len(rows))) == list(range(sum(r["frames"] for r in result.table)))
        starts = [index for index, row in enumerate(rows) if row["step"] == 0] + [len(rows)]
        by_episode = [rows[start:end] for start, end in zip(starts, starts[1:])]
    else:
        by_episode = [gymview.read_steps(row["file"]) for row in result.table]
    for row, episode_rows in zip(result.table, by_episode):
        rewards, angles = played_alone(row["seed"], 40)
        assert column(episode_rows, "reward") == [0.0] + rewards
        assert column(episode_rows, "angle")[:-1] == pytest.approx(angles[: len(episode_rows) - 1])
        assert math.isnan(episode_rows[-1]["angle"])  # the episode ended: the policy saw no last observation
        assert episode_rows[-1]["return"] == row["return"] and episode_rows[-1]["step"] == row["steps"]
        assert episode_rows[-1]["truncated"] == int(row["truncated"])
        assert column(episode_rows, "doubled")[:-1] != column(episode_rows, "angle")[:-1]


def test_a_value_first_logged_mid_video_gets_a_column_with_the_rows_before_it_empty(tmp_path):
    env = gymview.RecordVideo(gym.make("MountainCar-v0", render_mode="rgb_array", max_episode_steps=None), tmp_path)
    env.reset(seed=0)
    for step in range(1, 200):  # past several fragments: the first rows are on disk before "late" comes
        env.step(2)
        if step >= 150:
            env.log(late=step)
    env.close()
    rows = gymview.read_steps(tmp_path / "rl-video-episode-0.mp4")
    assert len(rows) == 200
    assert all(math.isnan(row["late"]) for row in rows[:150]) and column(rows, "late")[150:] == list(range(150, 200))
    with open(steps_path(tmp_path / "rl-video-episode-0.mp4"), newline="") as file:
        assert len(list(csv.DictReader(file))) == 200  # the header was written anew, no row twice


def test_rows_wait_in_memory_about_a_second_of_frames_however_long_the_recording(tmp_path):
    env = gymview.RecordVideo(gym.make("MountainCar-v0", render_mode="rgb_array", max_episode_steps=None), tmp_path)
    env.reset(seed=0)
    most = 0
    for _ in range(3000):
        env.step(2)
        most = max(most, env._table.waiting)
    env.close()
    # frames queued for the encoder (32), states waiting to be drawn (32), a fragment (30 at 30 fps)
    assert most <= 32 + 32 + 30 + 2
    assert len(gymview.read_steps(tmp_path / "rl-video-episode-0.mp4")) == 3001


def test_log_refuses_what_is_not_one_number_and_the_table_s_own_columns(tmp_path):
    env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), tmp_path)
    with pytest.raises(RuntimeError, match="reset"):
        env.log(value=1.0)
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"one number.*shape \(2,\)"):
        env.log(value=np.zeros(2))
    with pytest.raises(ValueError, match="'reward' is a column"):
        env.log(reward=1.0)
    env.log(value=np.float32(1.5), count=np.array([3]))
    env.close()
    assert gymview.read_steps(tmp_path / "rl-video-episode-0.mp4")[0]["count"] == 3.0


def test_gymview_log_outside_a_recording_does_nothing_so_the_same_policy_runs_anywhere():
    assert gymview.log(value=1.0) is False
    with pytest.raises(TypeError, match="one number"):
        gymview.log(value="high")


def test_read_steps_of_a_video_without_a_table_says_which_videos_have_one(tmp_path):
    env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), tmp_path, steps=False)
    env.reset(seed=0)
    env.step(0)
    env.close()
    assert sorted(os.listdir(tmp_path)) == ["rl-video-episode-0.mp4"]
    with pytest.raises(FileNotFoundError, match="gymview.RecordVideo"):
        gymview.read_steps(tmp_path / "rl-video-episode-0.mp4")


ENDLESS_LOGGED_EPISODE = """
import gymnasium as gym, gymview
env = gymview.RecordVideo(gym.make("MountainCar-v0", render_mode="rgb_array", max_episode_steps=None), {folder!r},
                          fast_render={fast_render})
observation, _ = env.reset(seed=0)
step = 0
while True:
    observation, *_ = env.step(2 if observation[1] >= 0 else 0)
    step += 1
    env.log(value=0.5 * step)
"""


@pytest.mark.slow
@pytest.mark.parametrize("fast_render", [True, False], ids=["drawn", "rendered"])
def test_a_killed_recording_leaves_the_rows_of_every_frame_that_plays(tmp_path, fast_render):
    video = tmp_path / "rl-video-episode-0.mp4"
    kill_once_on_disk(ENDLESS_LOGGED_EPISODE.format(folder=str(tmp_path), fast_render=fast_render), video, 90)
    playing = frames_decodable(video)
    with open(steps_path(video), newline="") as file:
        on_disk = list(csv.DictReader(file))
    assert len(on_disk) >= playing >= 90
    rows = gymview.read_steps(video)
    assert len(rows) == playing  # the rows of frames whose fragment never came out are left out
    assert column(rows, "frame") == column(rows, "step") == list(range(playing))
    assert column(rows, "value")[1:] == [0.5 * step for step in range(1, playing)]
    assert column(rows, "reward")[1:] == [-1.0] * (playing - 1)


def test_pandas_reads_a_step_table_in_one_call_with_the_rows_read_steps_gives(tmp_path):
    pandas = pytest.importorskip("pandas")
    env = gymview.RecordVideo(Arm(), tmp_path / "videos", episode_trigger=lambda episode: True)
    env.reset(seed=0)
    for step in range(1, 13):
        env.step(np.float32([0.1, 0.0, -0.1]))
        if step >= 5:  # a column that starts mid-video: its earlier cells are empty
            env.log(value=step / 2)
    env.close()
    video = tmp_path / "videos" / "rl-video-episode-0.mp4"
    rows = gymview.read_steps(video)
    frame = pandas.read_csv(steps_path(video))
    assert list(frame.columns) == list(rows[0])
    assert all(pandas.api.types.is_numeric_dtype(frame[name]) for name in frame.columns)
    assert all(pandas.api.types.is_integer_dtype(frame[name]) for name in ("frame", "episode", "step", "terminated"))
    read = frame.to_dict("records")
    assert len(read) == len(rows) == 13
    for by_pandas, ours in zip(read, rows):
        assert by_pandas.keys() == ours.keys()
        for name, value in ours.items():
            # pandas before 3.0 parses floats to within an ulp (its fast parser), not exactly
            assert (math.isnan(value) and math.isnan(by_pandas[name])) or by_pandas[name] == pytest.approx(value), name
    assert frame["value"].isna().sum() == 5 and frame["value"].iloc[-1] == 6.0


def table_of(video, steps, logged):
    """The step table of ``video``: ``steps`` steps, each logging ``logged(step)`` (a dict, maybe empty)."""
    table = StepTable(video)
    table.add(RawStep(0, 0, 0.0, 0.0, False, False, None, {}))
    for step in range(1, steps + 1):
        table.add(RawStep(0, step, 1.0, float(step), step == steps, False, 1, {}, logged(step) or None))
    table.close()


def test_joined_tables_count_frames_through_and_take_columns_as_they_come(tmp_path):
    parts = [tmp_path / f"part-{number}.mp4" for number in range(4)]
    table_of(parts[0], 3, lambda step: {})
    table_of(parts[1], 2, lambda step: {})
    table_of(parts[2], 4, lambda step: {"value": step / 2} if step > 1 else {})  # a new column: the table anew
    table_of(parts[3], 1, lambda step: {})  # fewer columns: its cells there empty
    joined = TableJoiner(tmp_path / "joined.mp4")
    for part in parts:
        joined.add(part)
    rows = gymview.read_steps(tmp_path / "joined.mp4")  # no video there: every row
    assert joined.frames == len(rows) == 4 + 3 + 5 + 2
    assert column(rows, "frame") == list(range(14))
    assert column(rows, "step") == [0, 1, 2, 3, 0, 1, 2, 0, 1, 2, 3, 4, 0, 1]
    assert column(rows, "return") == [0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 1.0]
    values = column(rows, "value")
    assert all(math.isnan(value) for value in values[:9] + values[12:]) and values[9:12] == [1.0, 1.5, 2.0]


def test_a_joined_table_where_one_video_has_none_is_left_out(tmp_path):
    table_of(tmp_path / "a.mp4", 2, lambda step: {})
    table_of(tmp_path / "c.mp4", 2, lambda step: {})
    joined = TableJoiner(tmp_path / "joined.mp4")
    joined.add(tmp_path / "a.mp4")
    assert steps_path(tmp_path / "joined.mp4").is_file()
    joined.add(tmp_path / "b.mp4")  # no table: the joined one would have a gap
    joined.add(tmp_path / "c.mp4")
    assert not steps_path(tmp_path / "joined.mp4").exists()


ENDLESS_CONCAT_BATCH = """
import gymview
gymview.record_batch("CartPole-v1", lambda obs: int(obs[2] > 0), episodes=5000, out={out!r}, layout="concat",
                     max_steps=20, workers=2, progress=False)
"""


@pytest.mark.slow
def test_a_killed_concat_batch_leaves_a_joined_video_that_plays_each_frame_with_its_row_and_every_part(tmp_path):
    video = tmp_path / "episodes.mp4"
    child = subprocess.Popen([sys.executable, "-c", ENDLESS_CONCAT_BATCH.format(out=str(tmp_path))],
                             start_new_session=True)  # its workers in its group: all killed at once
    try:
        for _ in range(1200):  # a guard, not a timing: at most a minute
            if video.exists() and frames_decodable(video) >= 63:  # three episodes joined
                break
            threading.Event().wait(0.05)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    playing = frames_decodable(video)
    rows = gymview.read_steps(video)
    assert len(rows) == playing >= 63
    assert column(rows, "frame") == list(range(playing))
    assert column(rows, "step") == [frame % 21 for frame in range(playing)]  # episodes of 20 steps, one after another
    parts = [path.name for path in tmp_path.glob(".gymview-parts-*/episode-*.mp4")]
    assert len(parts) >= playing // 21  # what was joined is kept as its parts too until the batch ends
