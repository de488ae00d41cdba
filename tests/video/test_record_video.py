"""gymnasium's own RecordVideo tests (tests/wrappers/test_record_video.py), run against gymview's,
plus checks that the two wrappers write the same files with the same frames."""

import os

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import RenderCollection
from video_checks import decode, psnr

from gymview import RecordVideo


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def mp4_files(folder):
    return {file for file in os.listdir(folder) if file.endswith(".mp4")}


# --- ported from gymnasium ---------------------------------------------------------------------


def test_video_folder_and_filenames(video_folder="custom_video_folder", name_prefix="video-prefix"):
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    env = RecordVideo(
        env,
        video_folder=video_folder,
        name_prefix=name_prefix,
        episode_trigger=lambda x: x in [1, 4],
        step_trigger=lambda x: x in [0, 25],
    )
    env.reset(seed=123)
    env.action_space.seed(123)
    for _ in range(100):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()
    assert mp4_files(video_folder) == {
        "video-prefix-step-0.mp4",
        "video-prefix-step-25.mp4",
        "video-prefix-episode-1.mp4",
        "video-prefix-episode-4.mp4",
    }


@pytest.mark.parametrize("episodic_trigger", [None, lambda x: x in [0, 3, 5, 10, 12]])
def test_episodic_trigger(episodic_trigger):
    env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos", episode_trigger=episodic_trigger)
    env.reset()
    episode_count = 0
    for _ in range(199):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
            episode_count += 1
    env.close()
    assert env.episode_trigger is not None
    assert len(mp4_files("videos")) == sum(env.episode_trigger(i) for i in range(episode_count + 1))


def test_step_trigger():
    env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos", step_trigger=lambda x: x % 100 == 0)
    env.reset()
    for _ in range(199):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()
    assert len(mp4_files("videos")) == 2


def test_both_episodic_and_step_trigger():
    env = RecordVideo(
        gym.make("CartPole-v1", render_mode="rgb_array"),
        "videos",
        step_trigger=lambda x: x == 100,
        episode_trigger=lambda x: x == 0 or x == 3,
    )
    env.reset(seed=123)
    env.action_space.seed(123)
    for _ in range(199):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()
    assert len(mp4_files("videos")) == 3


def test_video_length(video_length: int = 10):
    env = RecordVideo(
        gym.make("CartPole-v1", render_mode="rgb_array"), "videos", step_trigger=lambda x: x == 0, video_length=video_length
    )
    env.reset(seed=123)
    env.action_space.seed(123)
    for _ in range(video_length):
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            break
    assert env.recording
    env.step(env.action_space.sample())
    assert not env.recording
    env.close()
    assert mp4_files("videos") == {"rl-video-step-0.mp4"}
    assert decode("videos/rl-video-step-0.mp4").shape[0] == video_length + 1  # gymnasium's rule


def test_with_rgb_array_list(n_steps: int = 10):
    for make in (
        lambda: RecordVideo(RenderCollection(gym.make("CartPole-v1", render_mode="rgb_array")), "videos"),
        lambda: RenderCollection(RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos")),
    ):
        env = make()
        env.reset(seed=123)
        env.action_space.seed(123)
        for _ in range(n_steps):
            env.step(env.action_space.sample())
        render_out = env.render()
        assert isinstance(render_out, list) and len(render_out) == n_steps + 1
        assert all(isinstance(render, np.ndarray) and render.ndim == 3 for render in render_out)
        assert env.render() == []
        env.close()


def test_incompatible_render_mode():
    """Construction with a render mode that yields no image fails with one clear message, and a
    half-built wrapper cleans up without raising (gymnasium's test as of Farama-Foundation/Gymnasium@3f0476a)."""
    env = gym.make("CartPole-v1")  # render_mode is None
    with pytest.raises(ValueError) as exc_info:
        RecordVideo(env, "videos")
    assert len(exc_info.value.args) == 1
    assert "rgb_array" in str(exc_info.value)
    env.close()
    # `__del__` on a wrapper whose `__init__` never ran.
    RecordVideo.__new__(RecordVideo).__del__()


def test_record_video_within_vector():
    def make_env(seed):
        def thunk():
            env = gym.make("CartPole-v1", render_mode="rgb_array", max_episode_steps=20)
            if seed == 1:
                env = RecordVideo(env, "videos", step_trigger=lambda x: x % 100 == 0)
            return env

        return thunk

    envs = gym.vector.SyncVectorEnv([make_env(1 + i) for i in range(2)])
    envs.reset()
    for _ in range(199):
        envs.step(envs.action_space.sample())
    envs.close()
    assert len(mp4_files("videos")) == 2


# --- gymview's own -----------------------------------------------------------------------------


def run(wrapper, folder, steps=150, **options):
    env = wrapper(gym.make("CartPole-v1", render_mode="rgb_array"), folder, **options)
    env.reset(seed=7)
    env.action_space.seed(7)
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()
    return env


def test_same_files_and_frames_as_gymnasiums_wrapper():
    options = dict(episode_trigger=lambda e: e in (0, 2), step_trigger=lambda s: s == 60, video_length=15)
    run(gym.wrappers.RecordVideo, "theirs", **options)
    run(RecordVideo, "ours", **options)
    assert mp4_files("ours") == mp4_files("theirs") and len(mp4_files("ours")) >= 2
    for name in mp4_files("ours"):
        theirs, ours = decode(f"theirs/{name}"), decode(f"ours/{name}")
        assert ours.shape == theirs.shape, name
        assert min(psnr(a, b) for a, b in zip(ours, theirs)) > 30, name


def step_beside_a_twin(env, env_id, seed, actions, after_step=None):
    """Reset and step ``env`` and a plain ``env_id`` alike; return the twin's frames (reset first).

    ``after_step(step, frame)`` runs after each step with the twin's newest frame.
    """
    twin = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=seed)
    twin.reset(seed=seed)
    expected = [twin.render()]
    for step, action in enumerate(actions):
        env.step(action)
        twin.step(action)
        expected.append(twin.render())
        if after_step is not None:
            after_step(step, expected[-1])
    twin.close()
    return expected


def assert_video_shows(path, expected, count):
    frames = decode(path)
    assert frames.shape == (count, 400, 600, 3)
    assert min(psnr(a, b) for a, b in zip(frames, expected)) > 30


def test_whole_episode_content_matches_the_rendered_frames():
    env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos", fps=50)
    expected = step_beside_a_twin(env, "CartPole-v1", 3, [i % 2 for i in range(20)])
    assert env.frames_recorded == 21
    env.close()
    assert_video_shows("videos/rl-video-episode-0.mp4", expected, 21)


@pytest.mark.parametrize("fast_render", [True, False])
def test_classic_control_frames_come_from_the_fast_renderer_unless_turned_off(monkeypatch, fast_render):
    env = gym.make("MountainCar-v0", render_mode="rgb_array")
    pygame_calls = []
    render = env.unwrapped.render
    monkeypatch.setattr(env.unwrapped, "render", lambda: pygame_calls.append(1) or render())
    env = RecordVideo(env, "videos", fast_render=fast_render)
    expected = step_beside_a_twin(env, "MountainCar-v0", 5, [2] * 30)
    env.close()
    assert len(pygame_calls) == (0 if fast_render else 31)
    assert_video_shows("videos/rl-video-episode-0.mp4", expected, 31)


def test_fast_render_keeps_last_frame_current_and_video_length_exact():
    env = RecordVideo(gym.make("MountainCar-v0", render_mode="rgb_array"), "videos", video_length=40)

    def like_a_live_view(step, frame):  # what watch(record=...) would show now
        if step in (4, 20):
            assert env.frames_recorded == step + 2
            assert psnr(env.last_frame, frame) > 30

    expected = step_beside_a_twin(env, "MountainCar-v0", 2, [step % 3 for step in range(60)], like_a_live_view)
    env.close()
    # gymnasium's rule: stop once more than video_length frames are in
    assert_video_shows("videos/rl-video-episode-0.mp4", expected, 41)


def test_the_fast_renderer_records_every_step_in_order_with_a_bounded_set_of_arrays():
    # States are drawn 32 at a time and converted where the drawing changed: a frame converted in
    # the wrong place, or given back to the arrays too early, would show as another step's frame.
    env = RecordVideo(gym.make("MountainCar-v0", render_mode="rgb_array"), "videos", video_length=300)
    env.reset(seed=0)
    expected = [env.render()]
    for step in range(150):
        env.step(2 if step % 40 < 20 else 0)
        expected.append(env.render())
        if step == 100:
            arrays = len(env._recorder._feed._ours)
    env.close()
    assert arrays <= env_queue_depth(600, 400) + 3  # the queue, the encoded, the previous, the filled
    frames = decode("videos/rl-video-episode-0.mp4")
    assert len(frames) == 151
    for index, frame in enumerate(frames):
        assert psnr(frame, expected[index]) > 30, index
        earlier = expected[max(0, index - 5)]
        if np.abs(earlier.astype(int) - expected[index]).max() > 100:  # the car moved: tell the two apart
            assert psnr(frame, expected[index]) > psnr(frame, earlier), index


def env_queue_depth(width, height):
    from gymview.video import encoder_feed

    return max(2, min(32, encoder_feed._QUEUE_BYTES // (width * height * 3)))


def test_a_wrapper_drawing_on_frames_is_recorded_as_drawn():
    class Stripe(gym.Wrapper):
        def render(self):
            frame = self.env.render()
            frame[:40] = (255, 0, 0)
            return frame

    env = RecordVideo(Stripe(gym.make("CartPole-v1", render_mode="rgb_array")), "videos")
    env.reset(seed=0)
    env.step(0)
    env.close()
    frames = decode("videos/rl-video-episode-0.mp4")
    assert len(frames) == 2
    assert np.abs(frames[:, 5:35, 5:595].astype(int) - (255, 0, 0)).mean() < 8


def test_constructor_checks():
    with pytest.raises(ValueError, match="rgb_array"):
        RecordVideo(gym.make("CartPole-v1"), "videos")
    with pytest.raises(ValueError, match="video_length"):
        RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos", video_length=-1)
    open("a-file", "w").close()
    with pytest.raises(PermissionError, match="cannot write videos"):
        RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "a-file/videos")


def test_stop_recording_without_a_recording():
    env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos", episode_trigger=lambda e: False)
    env.reset()
    with pytest.raises(RuntimeError, match="no recording was started"):
        env.stop_recording()
    env.close()
    assert mp4_files("videos") == set()


def test_fps_comes_from_the_env_metadata():
    env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos")
    assert env.frames_per_sec == 50
    env.close()


def test_a_wrapper_dropped_while_recording_keeps_its_video_and_says_so():
    import gc

    env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos", disable_logger=False)
    env.reset(seed=0)
    for _ in range(5):
        env.step(0)
    with pytest.warns(UserWarning, match="not closed while recording rl-video-episode-0"):
        del env
        gc.collect()
    assert decode("videos/rl-video-episode-0.mp4").shape[0] == 6


def record_one_episode(folder, seed, barrier):
    env = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), folder, episode_trigger=lambda e: e == 0)
    barrier.wait(timeout=120)  # both workers hold a recorder at once
    env.reset(seed=seed)
    done = False
    while not done:
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        done = terminated or truncated
    env.close()


def test_recorders_sharing_a_folder_never_overwrite_each_other():
    import concurrent.futures
    import multiprocessing

    envs = [RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos", episode_trigger=lambda e: e < 2)
            for _ in range(4)]  # what make_vec_env(..., wrapper_class=RecordVideo) builds
    for seed, env in enumerate(envs):
        env.reset(seed=seed)
    for _ in range(60):  # stepped in turn, as a DummyVecEnv does; pushing left ends an episode in ~10 steps
        for env in envs:
            *_, terminated, truncated, _ = env.step(0)
            if terminated or truncated:
                env.reset()
    for env in envs:
        env.close()
    prefixes = ["rl-video", "rl-video-1", "rl-video-2", "rl-video-3"]
    assert mp4_files("videos") == {f"{p}-episode-{n}.mp4" for p in prefixes for n in (0, 1)}
    assert all(decode(f"videos/{name}").shape[0] > 0 for name in mp4_files("videos"))
    # Worker processes (spawned, like SubprocVecEnv's default) share it too, while this process holds a name.
    holder = RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "shared")
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        barrier = manager.Barrier(2)
        list(pool.map(record_one_episode, ["shared", "shared"], [1, 2], [barrier, barrier]))
    holder.close()
    assert mp4_files("shared") == {"rl-video-1-episode-0.mp4", "rl-video-2-episode-0.mp4"}


def test_a_wrapper_left_open_at_exit_ends_quietly(tmp_path):
    import subprocess
    import sys

    code = (
        "import gymnasium as gym, gymview\n"
        f"env = gymview.RecordVideo(gym.make('CartPole-v1', render_mode='rgb_array'), {str(tmp_path)!r})\n"
        "env.reset(seed=0); env.step(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Exception ignored" not in done.stderr, done.stderr
    assert decode(tmp_path / "rl-video-episode-0.mp4").shape[0] == 2  # finished by the recorder's finalizer
