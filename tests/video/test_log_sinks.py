"""Finished videos handed to TensorBoard (torch's SummaryWriter, tensorboardX), W&B (an offline run)
and functions: RecordVideo and record_batch with ``log_to=``, read back with the libraries' own readers."""

import subprocess
import sys
import threading
import warnings

import gymnasium as gym
import imageio_ffmpeg
import pytest
from log_readers import gif_frames, tensorboard_videos, wandb_logged, wandb_offline  # noqa: F401
from video_checks import decode
from waiting import wait_until

import gymview
from gymview.errors import VideoLogError
from gymview.video.log_sinks import VideoLog

CARTPOLE_FPS = 50  # CartPole's render_fps


def run_episodes(env, episodes, seed=0):
    """Play ``episodes`` episodes with random actions; the steps each took."""
    lengths = []
    env.action_space.seed(seed)
    for episode in range(episodes):
        env.reset(seed=seed + episode)
        steps, done = 0, False
        while not done:
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            steps, done = steps + 1, terminated or truncated
        lengths.append(steps)
    return lengths


def recorded(folder, log_to, **options):
    return gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), str(folder),
                               episode_trigger=lambda episode: True, log_to=log_to, **options)


def file_fps(path):
    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    reader.close()
    return meta["fps"]


@pytest.fixture(params=["torch", "tensorboardX"])
def summary_writer(request, tmp_path):
    pytest.importorskip("tensorboard")  # its EventAccumulator reads the results back
    if request.param == "torch":
        pytest.importorskip("torch")
        from torch.utils.tensorboard import SummaryWriter
    else:
        SummaryWriter = pytest.importorskip("tensorboardX").SummaryWriter
    writer = SummaryWriter(str(tmp_path / "runs"))
    yield writer
    writer.close()


def test_record_video_logs_each_episode_to_tensorboard_at_its_env_step(tmp_path, summary_writer):
    env = recorded(tmp_path / "videos", summary_writer)
    lengths = run_episodes(env, 3)
    env.close()
    summary_writer.close()  # written out (tensorboardX writes from a thread of its own)
    videos = tensorboard_videos(tmp_path / "runs")
    assert list(videos) == ["videos/rl-video"]
    steps = [sum(lengths[: n + 1]) for n in range(3)]  # env steps taken when each recording stopped
    assert [video["step"] for video in videos["videos/rl-video"]] == steps
    for video, length in zip(videos["videos/rl-video"], lengths):
        assert gif_frames(video, CARTPOLE_FPS) == length + 1  # the reset frame, then one per step, at 50 fps
        assert (video["width"], video["height"]) == (256, 171)  # 600x400 shrunk to 256 on the long side
    assert sorted(path.name for path in (tmp_path / "videos").glob("*.mp4")) == [f"rl-video-episode-{n}.mp4" for n in range(3)]


def test_record_video_logs_the_mp4_to_a_wandb_run_at_its_real_fps(tmp_path, wandb_offline):  # noqa: F811
    run = wandb_offline.init(project="gymview-test", mode="offline", dir=str(tmp_path))
    env = recorded(tmp_path / "videos", run, fps=24)
    lengths = run_episodes(env, 2)
    env.close()
    run.finish()
    files, videos = wandb_logged(tmp_path, "videos/rl-video", 2)
    assert [row["env_step"] for row in videos] == [lengths[0], sum(lengths)]
    for row, length, episode in zip(videos, lengths, range(2)):
        assert row["videos/rl-video/_type"] == "video-file"
        logged = files / row["videos/rl-video/path"]
        assert file_fps(logged) == 24  # the file's own rate, not W&B's 4 fps for arrays
        assert len(decode(logged)) == length + 1
        assert logged.read_bytes() == (tmp_path / "videos" / f"rl-video-episode-{episode}.mp4").read_bytes()


def test_the_wandb_module_logs_to_its_active_run_and_needs_one(tmp_path, wandb_offline):  # noqa: F811
    with pytest.raises(ValueError, match=r"wandb\.init"):
        recorded(tmp_path / "none", wandb_offline)
    wandb_offline.init(project="gymview-test", mode="offline", dir=str(tmp_path))
    env = recorded(tmp_path / "videos", wandb_offline, name_prefix="eval")
    lengths = run_episodes(env, 1)
    env.close()
    wandb_offline.finish()
    _, videos = wandb_logged(tmp_path, "videos/eval", 1)
    assert [row["env_step"] for row in videos] == lengths


def test_a_function_gets_each_path_and_its_info_on_a_thread_of_the_logs_own(tmp_path):
    calls = []

    def log(path, info):
        calls.append((path, info, threading.current_thread().name, path.stat().st_size))

    env = recorded(tmp_path / "v", log, fps=20)
    lengths = run_episodes(env, 2)
    env.close()
    assert [info for _, info, _, _ in calls] == [
        dict(episode=0, name="rl-video-episode-0", fps=20, step=lengths[0], frames=lengths[0] + 1),
        dict(episode=1, name="rl-video-episode-1", fps=20, step=sum(lengths), frames=lengths[1] + 1),
    ]
    for path, info, thread, size in calls:
        assert thread == "gymview-video-log"  # not the loop's thread: the loop never waits for it
        assert path == tmp_path / "v" / f"{info['name']}.mp4" and size > 0  # a finished file
        assert len(decode(path)) == info["frames"]


def test_the_loop_records_on_while_a_video_is_being_logged(tmp_path):
    release, entered = threading.Event(), threading.Event()
    logged = []

    def slow_log(path, info):
        entered.set()
        assert release.wait(60)
        logged.append(info["episode"])

    env = recorded(tmp_path / "v", slow_log)
    run_episodes(env, 1)
    env.reset(seed=5)  # stops episode 0: its logging starts in the background
    wait_until(entered.is_set, "the logger to be called")
    run_episodes(env, 3, seed=6)  # three more episodes recorded and finished while the logger holds episode 0
    assert logged == []
    release.set()
    env.close()  # waits for the logs
    assert logged == [0, 1, 2, 3, 4]
    assert len(list((tmp_path / "v").glob("*.mp4"))) == 5


def test_a_failing_logger_keeps_the_videos_and_each_error_reaches_the_user(tmp_path):
    def broken(path, info):
        raise OSError(f"disk full at step {info['step']}")

    env = recorded(tmp_path / "v", broken)
    lengths = run_episodes(env, 2)  # episode 0's log fails in the background; episode 1 records on
    raised = []
    for action in (lambda: env.reset(seed=9), env.close):  # the failures come out at a recording's end or close()
        try:
            action()
        except VideoLogError as error:
            raised.append(error)
    assert raised and all(isinstance(error.__cause__, OSError) for error in raised)
    assert "rl-video-episode-0.mp4" in str(raised[0]) and "disk full" in str(raised[0]) and "kept" in str(raised[0])
    text = " ".join(map(str, raised))
    videos = sorted(path.name for path in (tmp_path / "v").glob("*.mp4"))  # 2, or 3 if reset() raised nothing
    assert len(videos) in (2, 3) and all(name in text for name in videos)  # no failure goes unsaid
    for episode, length in enumerate(lengths):
        assert len(decode(tmp_path / "v" / f"rl-video-episode-{episode}.mp4")) == length + 1


def test_close_finishes_every_video_and_frees_its_names_before_raising_what_failed(tmp_path):
    calls = []

    def broken(path, info):
        calls.append(path.name)
        raise OSError("quota")

    env = recorded(tmp_path / "v", broken)
    lengths = run_episodes(env, 1)
    env.reset(seed=1)  # episode 0 stops: its log fails in the background while episode 1 records
    wait_until(lambda: calls, "episode 0's log")
    for _ in range(3):
        env.step(0)
    with pytest.raises(VideoLogError) as raised:
        env.close()
    assert "rl-video-episode-0.mp4" in str(raised.value) and "rl-video-episode-1.mp4" in str(raised.value)
    assert calls == ["rl-video-episode-0.mp4", "rl-video-episode-1.mp4"]
    assert len(decode(tmp_path / "v" / "rl-video-episode-0.mp4")) == lengths[0] + 1
    assert len(decode(tmp_path / "v" / "rl-video-episode-1.mp4")) == 4
    again = recorded(tmp_path / "v", None, name_prefix="rl-video")
    run_episodes(again, 1)
    again.close()
    assert not list((tmp_path / "v").glob("rl-video-1-*"))  # the first recorder's names were freed


def test_a_logger_that_never_returns_is_given_up_on_with_a_clear_error(tmp_path):
    release = threading.Event()
    log = VideoLog(lambda path, info: release.wait(60), tag="videos/stuck")
    log.log_later(tmp_path / "a.mp4", {"step": 1, "fps": 30})
    with pytest.raises(VideoLogError, match=r"still runs after 0\.1 s; the videos themselves are finished and kept"):
        log.finish(timeout=0.1)
    release.set()
    log.finish()  # and it ends once the logger returns


def test_tensorboard_gifs_keep_the_videos_speed_above_50_fps(tmp_path, summary_writer):
    """Browsers play GIF delays under 20 ms as 100 ms: a 60 fps video keeps every other frame."""
    env = recorded(tmp_path / "videos", summary_writer, fps=60)
    (length,) = run_episodes(env, 1)
    env.close()
    summary_writer.close()
    (video,) = tensorboard_videos(tmp_path / "runs")["videos/rl-video"]
    assert min(video["delays_ms"]) >= 20
    assert abs(gif_frames(video, 60) - (length + 1)) <= 1  # within the last kept frame's two


def test_what_log_to_cannot_take_is_refused_before_anything_is_recorded(tmp_path):
    with pytest.raises(TypeError, match="SummaryWriter, a wandb run"):
        recorded(tmp_path / "a", "runs/")
    with pytest.raises(TypeError, match="log_to"):
        gymview.record_batch("CartPole-v1", None, episodes=1, out=tmp_path / "b", log_to=3, progress=False)
    assert not (tmp_path / "b").exists()


def test_a_writer_with_only_add_video_gets_the_tensor_layout_and_fps(tmp_path):
    class Writer:  # another library's writer: duck-typed by its add_video
        def __init__(self):
            self.calls = []

        def add_video(self, tag, tensor, global_step=None, fps=4):
            self.calls.append((tag, tensor.shape, tensor.dtype.name, global_step, fps))

    writer = Writer()
    env = recorded(tmp_path / "v", writer, fps=25)
    (length,) = run_episodes(env, 1)
    env.close()
    assert writer.calls == [("videos/rl-video", (1, length + 1, 3, 171, 256), "uint8", length, 25.0)]
    assert VideoLog(writer, tag="t").describe() == "TensorBoard (Writer)"


@pytest.mark.parametrize("layout,tag", [("per-episode", "videos/episode"), ("mosaic", "videos/mosaic"),
                                         ("concat", "videos/episodes")])
def test_record_batch_logs_its_files_in_episode_order_to_tensorboard(tmp_path, summary_writer, layout, tag):
    result = gymview.record_batch("CartPole-v1", None, episodes=5, out=tmp_path / "videos", workers=2, max_steps=30,
                                  layout=layout, tiles=2, keep=lambda episode: episode.index != 1, progress=False,
                                  log_to=summary_writer)
    summary_writer.close()  # written out (tensorboardX writes from a thread of its own)
    videos = tensorboard_videos(tmp_path / "runs")
    assert list(videos) == [tag]
    kept = [row for row in result.table if row["episode"] != 1]
    firsts = {"per-episode": [0, 2, 3, 4], "mosaic": [0, 3], "concat": [0]}[layout]
    assert [video["step"] for video in videos[tag]] == firsts  # the episode index (a file's first)
    assert len(videos[tag]) == len(result.files)
    for video, path in zip(videos[tag], result.files):
        assert gif_frames(video, 30) == len(decode(path)) and max(video["width"], video["height"]) == 256
    assert all(row["error"] is None for row in kept)


def test_record_batch_logs_to_wandb_in_episode_order(tmp_path, wandb_offline):  # noqa: F811
    run = wandb_offline.init(project="gymview-test", mode="offline", dir=str(tmp_path))
    result = gymview.record_batch("CartPole-v1", None, episodes=4, out=tmp_path / "videos", workers=2, max_steps=20,
                                  fps=15, progress=False, log_to=run)
    run.finish()
    files, videos = wandb_logged(tmp_path, "videos/episode", 4)
    assert [row["episode"] for row in videos] == [0, 1, 2, 3]
    for row, path in zip(videos, result.files):
        assert file_fps(files / row["videos/episode/path"]) == 15
        assert (files / row["videos/episode/path"]).read_bytes() == path.read_bytes()


def test_record_batch_hands_a_function_each_file_in_the_callers_thread(tmp_path):
    calls = []
    gymview.record_batch("CartPole-v1", None, episodes=3, out=tmp_path / "again", workers=2, max_steps=10, fps=15,
                         progress=False, log_to=lambda path, info: calls.append((path.name, info, threading.current_thread())))
    assert [(name, info["step"], info["frames"], info["fps"]) for name, info, _ in calls] == [
        (f"episode-000{n}.mp4", n, 11, 15) for n in range(3)]
    assert all(thread is threading.main_thread() for _, _, thread in calls)


def test_record_batch_keeps_going_when_the_logger_fails(tmp_path):
    def broken(path, info):
        raise RuntimeError("no space left")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = gymview.record_batch("CartPole-v1", None, episodes=3, out=tmp_path, workers=1, max_steps=5,
                                      progress=False, log_to=broken)
    assert [str(warning.message).count("no space left") for warning in caught] == [1]  # once, not per episode
    assert [row["error"] for row in result.table] == ["logging failed: RuntimeError('no space left')"] * 3
    assert [len(decode(path)) for path in result.files] == [6, 6, 6]


def test_import_gymview_loads_neither_tensorboard_nor_wandb():
    code = ("import sys, gymview, gymview.video.log_sinks, gymview.video.record_video; "
            "print(sorted(m for m in ('tensorboard', 'tensorboardX', 'wandb', 'moviepy') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_a_video_finished_as_the_interpreter_exits_is_still_logged(tmp_path):
    script = f"""
import gymnasium as gym, gymview
def log(path, info):
    open({str(tmp_path / "logged.txt")!r}, "a").write(path.name + "\\n")
env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), {str(tmp_path / "v")!r},
                          episode_trigger=lambda episode: True, log_to=log)
env.reset(seed=0)
for _ in range(5):
    env.step(0)
"""  # no close(): the recorder's finalizer finishes the video at exit
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "gymview" not in done.stderr, done.stderr
    assert (tmp_path / "logged.txt").read_text() == "rl-video-episode-0.mp4\n"
    assert len(decode(tmp_path / "v" / "rl-video-episode-0.mp4")) == 6


def test_videos_queued_behind_a_slow_logger_are_logged_before_the_interpreter_exits(tmp_path):
    script = f"""
import threading, time, gymnasium as gym, gymview
logging_started = threading.Event()
def log(path, info):
    if info["episode"] == 0:
        logging_started.set()
        time.sleep(1)  # still logging episode 0 when the script ends
    open({str(tmp_path / "logged.txt")!r}, "a").write(path.name + "\\n")
env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), {str(tmp_path / "v")!r},
                          episode_trigger=lambda episode: True, log_to=log)
for episode in range(2):
    env.reset(seed=episode)
    for _ in range(5):
        env.step(0)
assert logging_started.wait(60)
"""  # no close(): episode 1 is finished by the recorder's finalizer at exit
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "gymview" not in done.stderr, done.stderr
    assert (tmp_path / "logged.txt").read_text() == "rl-video-episode-0.mp4\nrl-video-episode-1.mp4\n"
