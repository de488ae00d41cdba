"""Envs of several sub-envs or agents keep step data too: a watched gymnasium vector env, a watched SB3
VecEnv and watched PettingZoo envs keep one row per step, each sub-env's or agent's columns named
``reward[0]``, ``return[player_1]``..., take ``env.log(...)`` (one number, or one per sub-env or
agent), chart them under the paused view's replay and, when recorded, write them beside the video."""

import gymnasium as gym
import numpy as np
import pytest
from live_helpers import browser_says
from video_checks import decode, frames_decodable, kill_once_on_disk
from waiting import wait_until

import gymview
from gymview.episodes.keyed_rows import KeyedStepTracker, keyed_row_of
from gymview.episodes.recent import RecentSteps
from gymview.episodes.rows import RawStep


def replay_steps(view, env):
    """The steps message a paused page gets, after a frame of the latest step is kept."""
    env.feed.show(force=True)
    assert view.flush()
    browser_says(view, {"type": "steps", "id": "page:1"})
    wait_until(lambda: [header for header, _ in view.sent if header.get("type") == "steps"], "the steps message")
    (message,) = [header for header, _ in view.sent if header.get("type") == "steps"]
    kept = [header for header, _, _ in view._streamer.history.snapshot()]
    assert message["frames"] == [header["row"] for header in kept]  # each frame names its step
    return message


def step_columns(message, first_step):
    """The message's columns from the row of vector step ``first_step`` on."""
    start = message["columns"]["step"].index(first_step)
    return {name: values[start:] for name, values in message["columns"].items()}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_watched_vector_env_keeps_each_sub_env_s_rewards_returns_ends_actions_and_logged_values(shown, mode):
    view = shown()
    envs = gymview.watch(gym.make_vec("CartPole-v1", 3, vectorization_mode=mode, render_mode="rgb_array"),
                         view=view, display=False)
    envs.reset(seed=0)
    seen = {"rewards": [], "returns": [], "terminated": [], "actions": []}
    returns = np.zeros(3)
    for step in range(1, 41):
        actions = np.array([step % 2, 1, 0])
        _, rewards, terminated, truncated, _ = envs.step(actions)
        returns += rewards
        envs.log(value=[step, -step, 2 * step], lr=0.5)  # one number per sub-env, and one for all
        seen["rewards"].append(rewards.tolist())
        seen["returns"].append(returns.tolist())
        seen["terminated"].append(terminated.astype(int).tolist())
        seen["actions"].append(actions.tolist())
        returns[terminated | truncated] = 0.0
    message = replay_steps(view, envs)
    columns = step_columns(message, 1)
    assert columns["step"] == list(range(1, 41))
    for index in range(3):
        assert columns[f"reward[{index}]"] == [rewards[index] for rewards in seen["rewards"]]
        assert columns[f"return[{index}]"] == pytest.approx([each[index] for each in seen["returns"]])
        assert columns[f"terminated[{index}]"] == [each[index] for each in seen["terminated"]]
        assert columns[f"action[{index}]"] == [each[index] for each in seen["actions"]]
    assert columns["value[1]"] == [-step for step in range(1, 41)] and set(columns["lr"]) == {0.5}
    assert "reward" not in columns and "value" not in columns  # every sub-env's own, or one for all
    assert message["rows"][-1]["value[2]"] == 80 and message["rows"][-1]["step"] == 40
    envs.close()


def test_kept_rewards_and_returns_stay_as_the_step_gave_them_whatever_the_caller_does_with_its_arrays(shown):
    # PPO adds a bootstrap value to a time limit's reward in the array the VecEnv returned, after the step; a
    # caller may scale its rewards in place; neither may change what the replay's charts show of that step.
    vec_env = pytest.importorskip("stable_baselines3.common.vec_env")  # the sb3 extra
    view = shown()
    venv = gymview.watch(vec_env.DummyVecEnv([lambda: gym.make("CartPole-v1", render_mode="rgb_array")] * 2),
                         view=view, display=False)
    venv.reset()
    _, rewards, _, _ = venv.step(np.array([0, 1]))
    rewards += 100.0
    message = replay_steps(view, venv)
    columns = step_columns(message, 1)
    assert columns["reward[0]"] == [1.0] and columns["return[1]"] == [1.0]
    venv.close()
    view = shown()
    envs = gymview.watch(gym.make_vec("CartPole-v1", 2, render_mode="rgb_array"), view=view, display=False)
    envs.reset(seed=0)
    _, rewards, _, _, _ = envs.step(np.array([0, 1]))
    rewards *= 0.5
    columns = step_columns(replay_steps(view, envs), 1)
    assert columns["reward[1]"] == [1.0] and envs.returns.tolist() == [1.0, 1.0]
    envs.close()


def test_a_watched_vector_env_of_torch_tensors_keeps_its_steps(shown):
    torch = pytest.importorskip("torch")  # the torch extra

    class ToTorch(gym.vector.VectorWrapper):  # what gymnasium's NumpyToTorch makes of a step's rewards and ends
        def step(self, actions):
            observations, rewards, terminations, truncations, infos = self.env.step(actions)
            return observations, *map(torch.from_numpy, (rewards, terminations, truncations)), infos

    view = shown()
    envs = gymview.watch(ToTorch(gym.make_vec("CartPole-v1", 2, render_mode="rgb_array")), view=view, display=False)
    envs.reset(seed=0)
    for _ in range(3):
        _, rewards, _, _, _ = envs.step(np.array([0, 1]))
    assert isinstance(rewards, torch.Tensor) and envs.returns.tolist() == [3.0, 3.0] and envs.total_steps == 3
    assert step_columns(replay_steps(view, envs), 1)["return[0]"] == [1.0, 2.0, 3.0]
    envs.close()


def test_a_vector_env_whose_rewards_are_not_one_number_a_sub_env_is_told_so(shown):
    class Nested(gym.vector.VectorWrapper):  # a broken env: one list of rewards a sub-env
        def step(self, actions):
            observations, rewards, terminations, truncations, infos = self.env.step(actions)
            return observations, rewards[:, None], terminations, truncations, infos

    envs = gymview.watch(Nested(gym.make_vec("CartPole-v1", 2, render_mode="rgb_array")), view=shown(), display=False)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"rewards of shape \(2, 1\), not one number for each of its 2 sub-envs"):
        envs.step(np.array([0, 1]))
    assert envs.total_steps == 0 and envs.returns.tolist() == [0.0, 0.0]
    envs.close()


def test_vector_and_multi_agent_log_refuses_what_is_not_a_number_per_sub_env_or_agent(shown):
    envs = gymview.watch(gym.make_vec("CartPole-v1", 2, render_mode="rgb_array"), view=shown(), display=False)
    with pytest.raises(RuntimeError, match="reset"):
        envs.log(value=1.0)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="got 3 numbers for 2 sub-envs"):
        envs.log(value=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="column of every step"):
        envs.log(reward=[1.0, 2.0])
    with pytest.raises(TypeError, match="one number"):
        envs.log(value=["high", "low"])
    with pytest.raises(TypeError, match="one number"):
        envs.log(value="high")
    envs.close()
    tictactoe_v3 = pytest.importorskip("pettingzoo.classic").tictactoe_v3  # the pettingzoo extra
    env = gymview.watch(tictactoe_v3.env(render_mode="rgb_array"), view=shown(), display=False)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="'nobody'"):
        env.log(value={"nobody": 1.0})
    with pytest.raises(ValueError, match="column of every step"):
        env.log(**{"return[player_1]": 1.0})
    env.close()


@pytest.mark.parametrize("vec_env", ["DummyVecEnv", "SubprocVecEnv"])
def test_a_watched_sb3_vec_env_keeps_each_sub_env_s_steps_and_tells_time_limits_from_ends(shown, vec_env):
    vec_env = getattr(pytest.importorskip("stable_baselines3.common.vec_env"), vec_env)  # the sb3 extra
    view = shown()
    venv = vec_env([lambda: gym.make("CartPole-v1", render_mode="rgb_array", max_episode_steps=6),  # cut short
                    lambda: gym.make("CartPole-v1", render_mode="rgb_array")])  # pushed one way: falls
    venv = gymview.watch(venv, view=view, display=False)
    venv.reset()
    seen, returns = [], np.zeros(2)
    for step in range(1, 31):
        actions = np.array([step % 2, 1])
        _, rewards, dones, infos = venv.step(actions)
        returns += rewards
        venv.log(value=[step / 10, step / 20])
        truncated = [int(info.get("TimeLimit.truncated", False)) for info in infos]
        seen.append((rewards.tolist(), returns.tolist(), dones.astype(int).tolist(), truncated, actions.tolist()))
        returns[dones] = 0.0
    message = replay_steps(view, venv)
    columns = step_columns(message, 1)
    assert columns["step"] == list(range(1, 31))
    for index in range(2):
        assert columns[f"reward[{index}]"] == [rewards[index] for rewards, *_ in seen]
        assert columns[f"return[{index}]"] == pytest.approx([returns[index] for _, returns, *_ in seen])
        assert columns[f"truncated[{index}]"] == [truncated[index] for *_, truncated, _ in seen]
        assert columns[f"terminated[{index}]"] == [
            done[index] - truncated[index] for _, _, done, truncated, _ in seen]
        assert columns[f"action[{index}]"] == [actions[index] for *_, actions in seen]
        assert columns[f"value[{index}]"] == pytest.approx([step / (10 * (index + 1)) for step in range(1, 31)])
    assert any(truncated[0] for *_, truncated, _ in seen)  # the time limit was reached, and said so
    assert any(columns["terminated[1]"]) and not any(columns["truncated[1]"])
    assert not any(name.startswith("TimeLimit") for name in columns)
    venv.close()


def test_a_recorded_aec_game_s_table_holds_each_agent_s_rewards_returns_moves_and_logged_values(tmp_path, shown):
    view = shown()
    tictactoe_v3 = pytest.importorskip("pettingzoo.classic").tictactoe_v3
    env = gymview.watch(tictactoe_v3.env(render_mode="rgb_array"), view=view, display=False, record=tmp_path)
    env.reset(seed=0)
    moves = []  # (mover, action, rewards after the move, returns after it)
    returns = {"player_1": 0.0, "player_2": 0.0}
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        action = int(np.flatnonzero(observation["action_mask"])[-1])
        env.step(action)
        for name, reward in env.rewards.items():
            returns[name] += reward
        env.log(value={agent: len(moves) / 10}, clock=float(len(moves)))
        moves.append((agent, action, dict(env.rewards), dict(returns)))
    env.close()
    (video,) = env.videos
    rows = gymview.read_steps(video)
    assert len(rows) == len(moves) + 1 == decode(video).shape[0]  # a row per frame: the reset's, then each move
    assert [row["step"] for row in rows] == list(range(len(rows))) and {row["episode"] for row in rows} == {0}
    assert rows[0]["return[player_1]"] == rows[0]["return[player_2]"] == 0.0
    for row, (mover, action, rewards, returned) in zip(rows[1:], moves):
        assert row[f"action[{mover}]"] == action
        other = "player_2" if mover == "player_1" else "player_1"
        assert np.isnan(row[f"action[{other}]"])  # only the mover acted
        for name in returns:
            assert row[f"reward[{name}]"] == rewards[name] and row[f"return[{name}]"] == returned[name]
        assert row[f"value[{mover}]"] == pytest.approx(row["clock"] / 10)
    assert rows[-1]["terminated[player_1]"] == 1 and sorted(returns.values()) == [-1.0, 1.0]
    (listed,) = gymview.show_video(tmp_path).rows  # the folder's table of episodes: no one return, an end
    assert listed["steps"] == len(moves) and listed["terminated"] and np.isnan(listed["return"])


def test_a_recorded_parallel_env_s_table_and_replay_hold_every_agent_s_steps(tmp_path, shown):
    view = shown()
    pistonball_v6 = pytest.importorskip("pettingzoo.butterfly").pistonball_v6
    env = gymview.watch(pistonball_v6.parallel_env(render_mode="rgb_array", n_pistons=5), view=view, display=False,
                        record=tmp_path)
    env.reset(seed=0)
    seen = []
    for step in range(1, 16):
        actions = {agent: np.array([0.5 if step % 2 else -0.5], np.float32) for agent in env.agents}
        _, rewards, _, _, _ = env.step(actions)
        env.log(value={agent: step + index for index, agent in enumerate(sorted(rewards))}, shared=step)
        seen.append(dict(rewards))
    message = replay_steps(view, env)
    env.close()
    rows = gymview.read_steps(env.videos[0])
    assert len(rows) == 16 == decode(env.videos[0]).shape[0]
    agents = sorted(seen[0])
    for row, rewards in zip(rows[1:], seen):
        for index, agent in enumerate(agents):
            assert row[f"reward[{agent}]"] == pytest.approx(rewards[agent])
            assert row[f"action[{agent}]"] == (0.5 if row["step"] % 2 else -0.5)
            assert row[f"value[{agent}]"] == row["step"] + index
        assert row["shared"] == row["step"]
    assert [row[f"return[{agents[0]}]"] for row in rows[1:]] == pytest.approx(
        np.cumsum([rewards[agents[0]] for rewards in seen]))
    live = message["rows"][-1]  # the replay's charts get the same rows
    assert {name: live[name] for name in rows[-1] if name != "frame"} == pytest.approx(
        {name: value for name, value in rows[-1].items() if name != "frame"})


def test_kept_steps_of_several_sub_envs_stay_bounded():
    tracker = KeyedStepTracker()
    recent = RecentSteps(tracker, limit=100, row_of=keyed_row_of)
    for step in range(1000):
        tracker.record(RawStep(0, step, np.ones(4), np.full(4, float(step)), np.zeros(4, bool), np.zeros(4, bool),
                               None, {}))
    assert recent.rows([899])[0] is None and recent.rows([999])[0]["return[3]"] == 999.0
    assert recent.window(first=0)["columns"]["step"] == list(range(900, 1000))


ENDLESS_GAME = """
import numpy as np, gymnasium as gym, gymview
from pettingzoo import ParallelEnv

class Endless(ParallelEnv):
    metadata = {{"name": "endless_v0", "render_modes": ["rgb_array"], "render_fps": 30}}

    def __init__(self):
        self.render_mode = "rgb_array"
        self.possible_agents = ["left", "right"]

    def observation_space(self, agent):
        return gym.spaces.Discrete(2)

    def action_space(self, agent):
        return gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        self.agents, self.t = list(self.possible_agents), 0
        return {{agent: 0 for agent in self.agents}}, {{agent: {{}} for agent in self.agents}}

    def step(self, actions):
        self.t += 1
        rewards = {{"left": 1.0, "right": -1.0}}
        nothing = {{agent: False for agent in self.agents}}
        return ({{agent: 0 for agent in self.agents}}, rewards, nothing, dict(nothing),
                {{agent: {{"t": self.t}} for agent in self.agents}})

    def render(self):
        frame = np.zeros((48, 64, 3), np.uint8)
        frame[:, : self.t % 64] = 200
        return frame

env = gymview.watch(Endless(), record={folder!r}, display=False)
env.reset(seed=0)
while True:
    env.step({{"left": 1, "right": 0}})
    env.log(value={{"left": 0.5 * env.total_steps}})
"""


@pytest.mark.slow
def test_a_killed_multi_agent_recording_leaves_the_rows_of_every_frame_that_plays(tmp_path):
    pytest.importorskip("pettingzoo")
    video = tmp_path / "endless_v0-episode-0.mp4"
    kill_once_on_disk(ENDLESS_GAME.format(folder=str(tmp_path)), video, 90)
    playing = frames_decodable(video)
    rows = gymview.read_steps(video)
    assert len(rows) == playing >= 90  # the rows of frames whose fragment never came out are left out
    assert [row["step"] for row in rows] == list(range(playing))
    assert [row["return[left]"] for row in rows] == [float(step) for step in range(playing)]
    assert [row["t[right]"] for row in rows[1:]] == [float(step) for step in range(1, playing)]
    assert [row["value[left]"] for row in rows[1:]] == [0.5 * step for step in range(1, playing)]


def test_kept_steps_are_a_few_objects_not_one_a_step():
    """Kept one object a step, the replay's steps were promoted by each young collection and started full
    collections (35 ms in a kernel, every few seconds of a watched vector env) that the unwatched loop never ran."""
    import gc

    from gymview.episodes.recent import CHUNK_STEPS

    tracker = KeyedStepTracker()
    recent = RecentSteps(tracker, limit=20_000, row_of=keyed_row_of)
    for step in range(5_000):
        tracker.record(RawStep(0, step, np.ones(4), np.full(4, float(step)), np.zeros(4, bool), np.zeros(4, bool),
                               np.zeros(4, np.int64), {}))
    gc.collect()
    alive = sum(1 for o in gc.get_objects() if type(o) is RawStep)
    assert alive <= CHUNK_STEPS + 1
    assert recent.rows([0])[0]["step"] == 0 and recent.rows([4_999])[0]["return[2]"] == 4_999.0  # all still kept
