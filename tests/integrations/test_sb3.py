"""gymview inside stable-baselines3's own training loop."""

import pytest

sb3 = pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from video_checks import decode  # noqa: E402

import gymview  # noqa: E402


def test_record_video_as_make_vec_env_wrapper_class_gives_every_env_its_own_files(tmp_path):
    folder = tmp_path / "v"
    venv = make_vec_env("CartPole-v1", n_envs=4, seed=0, env_kwargs={"render_mode": "rgb_array"},
                        wrapper_class=gymview.RecordVideo,
                        wrapper_kwargs={"video_folder": str(folder), "episode_trigger": lambda e: e < 2})
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=512)
    venv.close()
    names = sorted(path.name for path in folder.glob("*.mp4"))
    prefixes = ["rl-video", "rl-video-1", "rl-video-2", "rl-video-3"]
    assert names == sorted(f"{p}-episode-{n}.mp4" for p in prefixes for n in (0, 1))
    assert all(decode(path).shape[0] > 0 for path in folder.glob("*.mp4"))
