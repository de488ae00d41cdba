"""gymview with PettingZoo's own envs: watch() keeps the AEC and Parallel APIs, the view names the agent
to move and each agent's return, record= writes the episodes, Stop and play() steer the agents."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

pettingzoo = pytest.importorskip("pettingzoo")

from live_helpers import browser_says  # noqa: E402
from pettingzoo import AECEnv, ParallelEnv  # noqa: E402
from video_checks import decode  # noqa: E402
from waiting import wait_until  # noqa: E402

import gymview  # noqa: E402
from gymview.integrations.pettingzoo import WatchedAECEnv, WatchedParallelEnv  # noqa: E402

with warnings.catch_warnings():  # pettingzoo 1.27 prefers pettingzoo.make(); the modules work on 1.26 too
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.butterfly import knights_archers_zombies_v11, pistonball_v6
    from pettingzoo.classic import connect_four_v3, tictactoe_v3

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

COLUMN_KEYS = {str(column + 1): column for column in range(7)}  # keys 1..7 drop a piece in columns 0..6


def same(a, b):
    """Observations (arrays, or dicts of them) equal."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    return np.array_equal(np.asarray(a), np.asarray(b))


def first_legal(observation):
    return int(np.flatnonzero(observation["action_mask"])[0])


def aec_transcript(env, seed, choose, moves=200):
    """What an agent_iter loop sees: (agent, observation, reward, termination, truncation) each turn,
    and the rewards after each step."""
    seen = []
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for agent in env.agent_iter(moves):
        observation, reward, termination, truncation, _ = env.last()
        seen.append((agent, observation, reward, termination, truncation))
        env.step(None if termination or truncation else choose(env, agent, observation, rng))
        seen.append(("rewards", dict(env.rewards)))
    return seen


def random_masked(env, agent, observation, rng):
    mask = observation["action_mask"] if isinstance(observation, dict) else None
    choices = np.flatnonzero(mask) if mask is not None else np.arange(env.action_space(agent).n)
    return int(rng.choice(choices))


@pytest.mark.parametrize("make", [connect_four_v3.env, tictactoe_v3.env, knights_archers_zombies_v11.env],
                         ids=["connect_four", "tictactoe", "knights_archers_zombies"])
def test_a_watched_aec_env_is_the_same_aec_env(make, shown):
    plain = aec_transcript(make(render_mode="rgb_array"), 7, random_masked)
    watched = gymview.watch(make(render_mode="rgb_array"), view=shown(), display=False)
    assert isinstance(watched, (WatchedAECEnv, AECEnv))
    seen = aec_transcript(watched, 7, random_masked)
    assert len(seen) == len(plain)
    for mine, theirs in zip(seen, plain):
        assert mine[0] == theirs[0] and all(same(a, b) for a, b in zip(mine[1:], theirs[1:]))
    assert watched.possible_agents == make().possible_agents
    assert watched.observation_space(watched.possible_agents[0]) == make().observation_space(watched.possible_agents[0])
    assert watched.unwrapped is watched.env.unwrapped
    watched.close()


def test_a_watched_parallel_env_is_the_same_parallel_env(shown):
    def transcript(env):
        observations, infos = env.reset(seed=3)
        seen = [observations]
        rng = np.random.default_rng(3)
        while env.agents:
            actions = {agent: rng.uniform(-1, 1, 1).astype(np.float32) for agent in env.agents}
            seen.append(env.step(actions))
        return seen

    plain = transcript(pistonball_v6.parallel_env(render_mode="rgb_array", max_cycles=30))
    watched = gymview.watch(pistonball_v6.parallel_env(render_mode="rgb_array", max_cycles=30), view=shown(),
                            display=False)
    assert isinstance(watched, (WatchedParallelEnv, ParallelEnv))
    seen = transcript(watched)
    assert len(seen) == len(plain) == 31
    assert same(seen[0], plain[0])
    for mine, theirs in zip(seen[1:], plain[1:]):
        assert all(same(dict(a), dict(b)) for a, b in zip(mine, theirs))  # observations, rewards, ... per agent
    rewards = [dict(step[1]) for step in plain[1:]]
    assert watched.returns == pytest.approx({agent: sum(r[agent] for r in rewards) for agent in watched.possible_agents})
    watched.close()


def test_the_status_line_names_the_agent_to_move_and_each_agents_return(shown):
    view = shown(fps=120, max_size=128)
    env = gymview.watch(connect_four_v3.env(render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    for column in [0, 1, 0, 1, 0, 1, 0]:  # player_0 wins down column 0
        env.feed.show(force=True)
        view.flush()
        assert view.sent[-1][0]["agent"] == env.agent_selection
        env.step(column)
    env.close()  # sends the final state
    final = view.sent[-1][0]
    assert final["agent"] is not None  # the loser still has to take its last (finishing) turn
    assert final["returns"] == {"player_0": 1.0, "player_1": -1.0} == env.returns
    assert final["episode_return"] is None and final["step"] == 7 and final["episode"] == 1
    first = view.sent[0][0]
    assert first["agent"] == "player_0" and first["returns"] == {"player_0": 0.0, "player_1": 0.0}


def test_a_parallel_view_names_no_agent_to_move(shown):
    view = shown(fps=120, max_size=128)
    env = gymview.watch(pistonball_v6.parallel_env(render_mode="rgb_array", max_cycles=3), view=view, display=False)
    env.reset(seed=0)
    env.step({agent: np.zeros(1, np.float32) for agent in env.agents})
    env.close()
    header = view.sent[-1][0]
    assert header["agent"] is None and sorted(header["returns"]) == sorted(env.possible_agents)
    made = gymview.watch(pistonball_v6.parallel_env(render_mode="rgb_array"), display=False, fps=10)
    assert (made.view.title, made.view.fps) == ("pistonball_v6", 10.0)  # the view watch() makes is named after the env
    made.close()


def test_record_writes_each_episode_to_a_video_that_plays(tmp_path):
    env = gymview.watch(tictactoe_v3.env(render_mode="rgb_array"), record=tmp_path, display=False)
    moves = []
    for seed in (0, 1):
        env.reset(seed=seed)
        moves.append(0)
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if not (termination or truncation):
                moves[-1] += 1
            env.step(None if termination or truncation else first_legal(observation))
    env.close()
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "tictactoe_v3-episode-0.mp4", "tictactoe_v3-episode-0.steps.csv",  # each video with its step table
        "tictactoe_v3-episode-1.mp4", "tictactoe_v3-episode-1.steps.csv"]
    assert env.videos == [tmp_path / "tictactoe_v3-episode-0.mp4", tmp_path / "tictactoe_v3-episode-1.mp4"]
    height, width = env.render().shape[:2]
    for path, count in zip(env.videos, moves):
        frames = decode(path)
        assert frames.shape[0] == count + 1 == len(gymview.read_steps(path))  # the reset, then one frame a move
        assert abs(frames.shape[1] - height) <= 1 and abs(frames.shape[2] - width) <= 1
        assert frames[-1].std() > 5  # a board, not a blank


def test_record_a_parallel_env(tmp_path):
    env = gymview.watch(pistonball_v6.parallel_env(render_mode="rgb_array", max_cycles=5), record=tmp_path / "v",
                        display=False)
    env.reset(seed=0)
    while env.agents:
        env.step({agent: np.zeros(1, np.float32) for agent in env.agents})
    env.close()
    (path,) = env.videos
    assert path.name == "pistonball_v6-episode-0.mp4" and decode(path).shape[0] == 6


@pytest.mark.parametrize("kind", ["aec", "parallel"])
def test_stop_in_the_view_raises_stopped_at_a_step_boundary(shown, kind):
    view = shown()
    if kind == "aec":
        env = gymview.watch(connect_four_v3.env(render_mode="rgb_array"), view=view, display=False)
        env.reset(seed=0)
        env.step(3)
        before = env.observe(env.agent_selection)["observation"].copy()
        action = 4
    else:
        env = gymview.watch(pistonball_v6.parallel_env(render_mode="rgb_array"), view=view, display=False)
        env.reset(seed=0)
        action = {agent: np.zeros(1, np.float32) for agent in env.agents}
    browser_says(view, {"type": "control", "action": "stop", "id": "page:1"})
    with pytest.raises(gymview.Stopped):
        env.step(action)
    if kind == "aec":  # the move was not made
        assert env.total_steps == 1 and same(env.observe(env.agent_selection)["observation"], before)
    env.step(action)  # stepping again after a stop goes on
    env.close()


def test_play_plays_every_agent_and_pause_and_step_hold_moves():
    env = gymview.watch(connect_four_v3.env(render_mode="rgb_array"), display=False)
    run = gymview.play(env, lambda observation, agent: first_legal(observation), speed="max")
    try:
        wait_until(lambda: len(run.results) >= 2, "two games")
        run.pause()
        wait_until(lambda: env.feed.controls.holding, "the loop held by the pause")
        held = env.total_steps
        run.step()
        wait_until(lambda: env.total_steps == held + 1, "the one move Step lets through")
        wait_until(lambda: env.feed.controls.holding, "held again")
    finally:
        run.stop()
    first = run.results[0]
    assert set(first["returns"]) == {"player_0", "player_1"} and sum(first["returns"].values()) == 0
    assert first["steps"] > 0 and first["terminated"]
    env.close()


def test_play_a_parallel_env_with_a_policy_per_agent():
    env = pistonball_v6.parallel_env(render_mode="rgb_array", max_cycles=6)
    asked = set()

    def push(observation, agent):
        asked.add(agent)
        return np.ones(1, np.float32)

    run = gymview.play(env, {"piston_0": push, "piston_1": push}, episodes=2, speed="max", seed=0)
    results = run.wait(timeout=120)
    assert [result["steps"] for result in results] == [6, 6] and all(result["truncated"] for result in results)
    assert asked == {"piston_0", "piston_1"} and sorted(results[0]["returns"]) == sorted(env.possible_agents)
    assert isinstance(run.env, WatchedParallelEnv)
    run.env.close()


def test_a_person_plays_one_agent_with_keys_against_a_policy(shown):
    view = shown()
    env = gymview.watch(connect_four_v3.env(render_mode="rgb_array"), view=view, display=False)
    opponent_moves = []

    def opponent(observation):
        opponent_moves.append(1)
        return 1  # column 1, every time

    run = gymview.play(env, {"player_1": opponent}, keys=COLUMN_KEYS, agent="player_0", speed="max", episodes=1,
                       seed=0)
    try:
        assert view.get_state("_keyboard")["_keyboard"]  # the view takes the person's keys
        for turn in range(4):  # the person drops four pieces in column 0 and wins
            wait_until(lambda: run.steps_taken == 2 * turn, f"the person's turn {turn}")
            assert env.agent_selection == "player_0"  # the loop waits for the person's key
            browser_says(view, {"type": "key", "key": "1", "down": True, "id": f"page:{2 * turn}"})
            browser_says(view, {"type": "key", "key": "1", "down": False, "id": f"page:{2 * turn + 1}"})
        results = run.wait(timeout=60)
    finally:
        run.stop()
    assert results == [{"steps": 7, "returns": {"player_0": 1.0, "player_1": -1.0}, "terminated": True,
                        "truncated": False}]
    assert len(opponent_moves) == 3 and not view.get_state("_keyboard")["_keyboard"]
    env.close()


def test_a_key_for_a_move_the_mask_forbids_is_ignored(shown):
    view = shown()
    env = gymview.watch(tictactoe_v3.env(render_mode="rgb_array"), view=view, display=False)
    cells = {str(cell + 1): cell for cell in range(9)}
    run = gymview.play(env, lambda observation: 4, keys=cells, agent="player_2", speed="max", steps=2)
    try:
        wait_until(lambda: run.steps_taken == 1, "the policy's move (the centre)")
        env.feed.controls.press("5", True)  # the centre is taken: ignored
        env.feed.controls.press("1", True)
        run.wait(timeout=60)
    finally:
        run.stop()
    board = env.observe("player_1")["observation"]
    assert board[1, 1, 0] == 1 and board[0, 0, 1] == 1  # player_1 in the centre, the person in the corner
    env.close()


def test_stop_ends_a_person_s_turn_while_it_waits_for_a_key():
    env = gymview.watch(tictactoe_v3.env(render_mode="rgb_array"), display=False)
    run = gymview.play(env, keys={"1": 0}, speed="max")
    wait_until(lambda: env.episode == 1, "the game started: player_1, the person, to move")
    run.stop()
    assert run.stopped and run.done and run.steps_taken == 0
    env.close()


def test_play_arguments_are_checked():
    env = gymview.watch(connect_four_v3.env(render_mode="rgb_array"), display=False)
    with pytest.raises(ValueError, match="this env's agents are"):
        gymview.play(env, keys=COLUMN_KEYS, agent="player_9")
    with pytest.raises(ValueError, match="give keys too"):
        gymview.play(env, agent="player_0")
    with pytest.raises(ValueError, match="does not have"):
        gymview.play(env, {"player_7": first_legal})
    with pytest.raises(ValueError, match="leave it out of policy"):
        gymview.play(env, {"player_0": first_legal}, keys=COLUMN_KEYS, agent="player_0")
    with pytest.raises(ValueError, match="not an action"):
        gymview.play(env, keys={"9": 8})
    with pytest.raises(TypeError, match="one key name"):
        gymview.play(env, keys={("1", "2"): 0})
    env.close()
    pistons = gymview.watch(pistonball_v6.parallel_env(render_mode="rgb_array"), display=False)
    with pytest.raises(ValueError, match="needs noop"):
        gymview.play(pistons, keys={"a": np.ones(1, np.float32)})
    pistons.close()


def test_watch_says_how_to_make_an_env_that_renders():
    with pytest.raises(ValueError, match=r"connect_four_v3.env\(render_mode='rgb_array'\)"):
        gymview.watch(connect_four_v3.env())
    with pytest.raises(ValueError, match=r"pistonball_v6.parallel_env\(render_mode='rgb_array'\)"):
        gymview.watch(pistonball_v6.parallel_env(render_mode="human"))


def test_gymview_imports_pettingzoo_only_for_a_pettingzoo_env():
    code = ("import sys, gymnasium as gym, gymview; env = gymview.watch(gym.make('CartPole-v1', render_mode='rgb_array'));"
            "env.reset(seed=0); env.step(0); env.close(); print('pettingzoo' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_with_noop_the_keys_held_choose_the_persons_action_at_each_turn():
    env = gymview.watch(knights_archers_zombies_v11.env(render_mode="rgb_array"), display=False)
    played = []
    inner = env.env.step
    env.env.step = lambda action: (played.append((env.env.agent_selection, action)), inner(action))[1]
    run = gymview.play(env, lambda observation: 4, keys={"w": 0, ("w", "d"): 3}, noop=5, agent="knight_0",
                       speed="max")
    try:
        wait_until(lambda: sum(agent == "knight_0" for agent, _ in played) >= 3, "the knight's turns with no key held")
        env.feed.controls.set_keys({"w", "d"})  # both held at once
        wait_until(lambda: ("knight_0", 3) in played, "the knight's action for w and d held together")
    finally:
        run.stop()
    knight = [action for agent, action in played if agent == "knight_0"]
    assert knight[0] == 5 and set(knight) <= {5, 3}  # noop, then the combination (never "w" alone)
    assert {action for agent, action in played if agent.startswith("archer")} <= {4, None}  # the policy's
    env.close()
