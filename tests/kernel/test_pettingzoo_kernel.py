"""A watched PettingZoo AEC game in a real IPython kernel: its frames reach IOPub with the agent to
move and each agent's return."""

import io

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("pettingzoo")

pytestmark = pytest.mark.kernel

GAMES = """
import warnings, numpy as np, gymview
warnings.simplefilter("ignore", DeprecationWarning)
from pettingzoo.classic import connect_four_v3
env = gymview.watch(connect_four_v3.env(render_mode="rgb_array"), fps=30)
games = 0
env.reset(seed=0)
while games < 3 or env.view.stats["frames_sent"] < 10:
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        legal = np.flatnonzero(observation["action_mask"])
        env.step(None if termination or truncation else int(legal[len(legal) // 2]))
    games += 1
    final = dict(env.returns)
    env.reset()
env.close()
print("games", games, "final", final["player_0"], final["player_1"], "moves", env.total_steps)
"""


def test_an_aec_game_sends_frames_naming_the_agent_to_move_and_the_returns(kernel):
    result = kernel.run(GAMES)
    assert result.of_type("display_data"), "watch() shows the view inline"
    words = result.stdout.split()
    games, final, moves = int(words[1]), (float(words[3]), float(words[4])), int(words[6])
    frames = [content for _, content, _ in result.custom_frames()]
    assert len(frames) >= 10 and moves >= 3 * 7
    assert [frame["seq"] for frame in frames] == list(range(len(frames)))
    assert all(set(frame["returns"]) == {"player_0", "player_1"} for frame in frames)
    assert {frame["agent"] for frame in frames} <= {"player_0", "player_1", None}
    assert {frame["agent"] for frame in frames} & {"player_0", "player_1"}, "the status line names the agent to move"
    assert sum(final) == 0 and games >= 3
    last = frames[-1]  # close() sends the state the loop ended in: a new game, nobody has scored
    assert last["returns"] == {"player_0": 0.0, "player_1": 0.0} and last["episode"] == games + 1
    _, content, buffers = result.custom_frames()[len(frames) // 2]
    image = Image.open(io.BytesIO(buffers[0]))
    assert image.format == "JPEG" and image.size == (content["width"], content["height"])
    assert np.asarray(image.convert("L")).std() > 10, "a board, not a blank"
