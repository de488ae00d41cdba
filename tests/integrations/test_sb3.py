"""gymview inside stable-baselines3's own training loop."""

import pytest

sb3 = pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from video_checks import decode  # noqa: E402

import gymview  # noqa: E402
import gymview.integrations.sb3  # noqa: E402


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


@pytest.fixture
def venv():
    made = []

    def make(n_envs=4, vec_env_cls=None, **kwargs):
        from stable_baselines3.common.vec_env import DummyVecEnv

        made.append(make_vec_env("CartPole-v1", n_envs=n_envs, seed=0, env_kwargs={"render_mode": "rgb_array"},
                                 vec_env_cls=vec_env_cls or DummyVecEnv, **kwargs))
        return made[-1]

    yield make
    for env in made:
        env.close()


@pytest.mark.parametrize("start_method", [None, "fork", "forkserver"])
def test_watch_takes_an_sb3_vec_env_and_ppo_trains_on_it(shown, venv, start_method):
    from stable_baselines3.common.vec_env import SubprocVecEnv, VecEnv

    kwargs = {} if start_method is None else {"vec_env_cls": SubprocVecEnv, "vec_env_kwargs": {"start_method": start_method}}
    # the frames' clock stands still: after the first frame none is due, however slowly the steps go
    view = shown(fps=120, max_size=2000, clock=lambda: 0.0)
    watched = gymview.watch(venv(**kwargs), view=view, display=False)
    assert isinstance(watched, VecEnv)
    model = PPO("MlpPolicy", watched, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=512)
    watched.close()
    header = view.sent[0][0]
    assert (header["width"], header["height"]) == (1200, 800)  # 4 sub-envs, 2 x 2 tiles of 600 x 400
    assert view.sent[-1][0]["step"] == watched.returns.total_steps == 128  # 512 steps over 4 envs
    assert view.stats["frames_rendered"] == 2  # frames only when due (the first), and the final one at close


def _decoded(buffers):
    import io

    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(buffers[0])).convert("RGB")).astype(float)


@pytest.mark.parametrize("fast_render", [True, False])
def test_in_process_sub_envs_are_drawn_from_their_states_like_their_renders(shown, venv, fast_render):
    import numpy as np

    from gymview.renderers.grid import tiled

    view = shown(fps=120, max_size=2000, image_format="png", draw="kernel")
    watched = gymview.watch(venv(), view=view, display=False, fast_render=fast_render)
    watched.reset()
    for _ in range(5):
        watched.step(np.ones(4, dtype=int))
    watched.returns.running[:] = [1, 2, 3, 4]
    watched.show_final_frame()
    rendered = tiled(watched.venv.get_images(), [1, 2, 3, 4]).astype(float)
    frame = _decoded(view.sent[-1][1])
    watched.close()
    mse = np.mean((frame - rendered) ** 2)
    if fast_render:  # drawn by gymview's renderer (not pygame's pixels), within the PSNR its own tests hold it to
        assert 0 < mse and 10 * np.log10(255**2 / mse) >= 30
        assert view.stats["last_encode_ms"] > 0
    else:
        assert mse == 0


def test_mujoco_sub_envs_are_drawn_by_the_page_as_a_grid(shown, software_opengl):
    pytest.importorskip("mujoco")
    import numpy as np
    from live_helpers import sent_frames

    vec = make_vec_env("Hopper-v5", 2, env_kwargs={"render_mode": "rgb_array", "width": 64, "height": 48})
    view = shown(fps=120)
    watched = gymview.watch(vec, view=view, display=False)
    watched.reset()
    for _ in range(5):
        watched.step(np.zeros((2, 3)))
    watched.show_final_frame()
    formats = [frame["format"] for frame in sent_frames(view.sent)]
    watched.close()
    # the first frame is rendered (it makes each sub-env's viewer and camera), the others are poses
    assert formats[-1] == "scene" and view.stats["sent_as"] == "scene", formats


def test_car_racing_sub_envs_are_drawn_by_the_page_as_a_grid_of_their_tracks(shown):
    pytest.importorskip("Box2D")
    import numpy as np
    from live_helpers import sent_frames

    vec = make_vec_env("CarRacing-v3", 2, env_kwargs={"render_mode": "rgb_array"})
    view = shown(fps=120)
    watched = gymview.watch(vec, view=view, display=False)
    watched.reset()
    for _ in range(3):
        watched.step(np.tile([0.0, 1.0, 0.0], (2, 1)))
    watched.show_final_frame()
    formats = [frame["format"] for frame in sent_frames(view.sent)]
    scene = view._scene
    watched.close()
    assert formats and set(formats) == {"scene"}, formats
    assert scene["kind"] == "grid" and [cell["kind"] for cell in scene["cells"]] == ["carracing"] * 2
    assert scene["cells"][0]["road"] != scene["cells"][1]["road"]  # a track each


def test_a_vec_env_wrapper_that_makes_its_own_frames_is_shown_as_it_makes_them(shown, venv):
    import numpy as np
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class Inverted(VecEnvWrapper):
        def reset(self):
            return self.venv.reset()

        def step_wait(self):
            return self.venv.step_wait()

        def get_images(self):
            return [255 - image for image in self.venv.get_images()]

    from gymview.renderers.grid import tiled

    view = shown(fps=120, max_size=2000, image_format="png")
    watched = gymview.watch(Inverted(venv()), view=view, display=False)
    watched.reset()
    watched.show_final_frame()
    expected = tiled(watched.venv.get_images(), [0, 0, 0, 0]).astype(float)
    watched.close()
    assert np.array_equal(_decoded(view.sent[-1][1]), expected)


def test_watch_callback_shows_the_training_env(shown, venv):
    view = shown(fps=120, max_size=2000)
    model = PPO("MlpPolicy", venv(2), n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256, callback=gymview.integrations.sb3.WatchCallback(view=view))
    header = view.sent[-1][0]
    assert (header["width"], header["height"]) == (1200, 400) and header["step"] == 128
    assert not view.stats["streaming"]  # training ended: the view stopped


def test_what_watch_cannot_take_is_refused_before_a_view_exists():
    before = len(gymview.live_views())
    with pytest.raises(TypeError, match="stable-baselines3 VecEnv"):
        gymview.watch(object())
    import gymnasium as gym
    from stable_baselines3.common.vec_env import DummyVecEnv

    no_frames = DummyVecEnv([lambda: gym.make("CartPole-v1")] * 2)  # render_mode=None
    with pytest.raises(ValueError, match="make_vec_env"):
        gymview.watch(no_frames)
    assert len(gymview.live_views()) == before


def test_stop_from_the_view_ends_learn_on_a_watched_vec_env_and_through_the_callback():
    from gymview.integrations.sb3 import WatchCallback

    venv = gymview.watch(make_vec_env("CartPole-v1", n_envs=2, env_kwargs={"render_mode": "rgb_array"}), display=False)
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=32, device="cpu", seed=0)
    venv.feed.controls.stop()
    with pytest.raises(gymview.Stopped):
        model.learn(10_000)
    venv.close()
    plain = make_vec_env("CartPole-v1", n_envs=2, env_kwargs={"render_mode": "rgb_array"})
    callback = WatchCallback(display=False)
    model = PPO("MlpPolicy", plain, n_steps=32, batch_size=32, device="cpu", seed=0)
    model.learn(64, callback=callback)  # makes the callback's view
    callback.feed.controls.stop()
    model.learn(10_000, callback=callback, reset_num_timesteps=False)
    assert model.num_timesteps < 64 + 10_000 and callback.feed.controls.state == "stopped"
    plain.close()


def test_while_torch_fills_every_core_a_watched_vec_env_pays_for_the_helper_process(shown, venv):
    import os

    import numpy as np
    import psutil
    import torch

    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(min(len(os.sched_getaffinity(0)), psutil.cpu_count(logical=False) or 1))
        view = shown(fps=120, max_size=2000, draw="kernel")
        watched = gymview.watch(venv(), view=view, display=False)
        watched.reset()
        for _ in range(3):  # frames drawn off the loop: the loop's own share is a state copy (~0.02 ms)
            watched.show_final_frame()
            watched.step(np.ones(4, dtype=int))
        limit = view.stats["fps_limit"]
        watched.close()
    finally:
        torch.set_num_threads(threads)
    # Drawing and encoding 4 CartPoles takes the helper milliseconds, over the 0.83 ms that 10% of a
    # 120 fps frame interval allows; the loop's own share (a state copy) is ~0.02 ms. Load only
    # raises the cost. (The rule with torch on one thread: tests/live/test_widget.py.)
    assert limit < 120, limit


def test_watch_callback_logs_videos_of_the_first_sub_env_to_tensorboard(tmp_path, venv):
    pytest.importorskip("tensorboard")
    from log_readers import gif_frames, tensorboard_videos
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tmp_path / "runs"))
    calls = []
    callback = gymview.integrations.sb3.WatchCallback(display=False, log_to=writer, log_every=256,
                                                      video_folder=tmp_path / "videos")
    spy = gymview.integrations.sb3.WatchCallback(display=False, log_to=lambda path, info: calls.append(info),
                                                 log_every=256, video_folder=tmp_path / "spy")
    model = PPO("MlpPolicy", venv(2), n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=1024, callback=[callback, spy])
    writer.close()
    callback.view.close()
    spy.view.close()
    (videos,) = tensorboard_videos(tmp_path / "runs").values()
    assert len(videos) == len(calls) >= 3  # the first episode, then one after every 256 steps
    files = sorted((tmp_path / "videos").glob("training-step-*.mp4"), key=lambda path: int(path.stem.split("-")[-1]))
    assert [path.name for path in files] == [f"{info['name']}.mp4" for info in calls]
    for video, info, path in zip(videos, calls, files):
        assert video["step"] == info["step"] and info["step"] % 2 == 0  # num_timesteps: 2 sub-envs a step
        assert gif_frames(video, 50) == info["frames"] == len(decode(path))
    starts = [int(info["name"].split("-")[-1]) for info in calls]
    assert starts[0] == 0 and all(later >= earlier + 256 for earlier, later in zip(starts, starts[1:]))


def test_watch_callback_raises_a_failed_log_when_training_ends_and_keeps_the_video(tmp_path, venv):
    def broken(path, info):
        raise OSError("quota")

    callback = gymview.integrations.sb3.WatchCallback(display=False, log_to=broken, log_every=10_000,
                                                      video_folder=tmp_path)
    model = PPO("MlpPolicy", venv(2), n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    with pytest.raises(gymview.errors.VideoLogError, match="quota"):
        model.learn(total_timesteps=128, callback=callback)
    callback.view.close()
    (path,) = tmp_path.glob("training-step-0.mp4")
    assert len(decode(path)) > 1


def test_a_second_learn_counting_from_zero_keeps_the_first_ones_videos(tmp_path, venv):
    logged = []
    callback = gymview.integrations.sb3.WatchCallback(display=False, log_to=lambda path, info: logged.append(path.name),
                                                      log_every=10_000, video_folder=tmp_path)
    model = PPO("MlpPolicy", venv(2), n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    for _ in range(2):
        model.learn(total_timesteps=64, callback=callback)  # reset_num_timesteps=True: both start at step 0
    callback.view.close()
    assert logged == ["training-step-0.mp4", "training-step-0-2.mp4"]
    assert all(len(decode(tmp_path / name)) > 1 for name in logged)
