import io

import gymnasium as gym
import numpy as np
import picture_envs  # noqa: F401 (registers gymview-tests/Pictures-v0)
import pytest
from live_helpers import sent_frames
from PIL import Image

import gymview
from gymview.live import stream_watcher


def psnr(a, b):
    return 10 * np.log10(255.0**2 / np.mean((a.astype(float) - b.astype(float)) ** 2))


def test_watch_renders_only_when_a_frame_is_due(shown, monkeypatch):
    view = shown(fps=5)
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False, fast_render=False)
    renders = []
    original = env.env.render
    monkeypatch.setattr(env.env, "render", lambda: renders.append(1) or original())
    env.reset(seed=1)
    for _ in range(200):
        *_, terminated, truncated, _info = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()
    # One render per frame accepted (the first, maybe one more on a slow machine, and close's).
    assert len(renders) == view.stats["frames_rendered"] and 2 <= len(renders) <= 4
    header = view.sent[-1][0]
    assert header["episode"] >= 1 and (header["width"], header["height"]) == (512, 341)
    assert env.total_steps == 200 and header["step"] == 200


def test_watch_checks_for_due_frames_on_reset_no_more_than_on_step(shown, monkeypatch):
    # CartPole with random actions resets every ~20 steps; a full check on every reset once cost
    # a watched loop 8% of its speed.
    view = shown(fps=0.5)
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    view.flush()  # the first frame is sent: no poll for its reply is due
    checks = []
    original = view.frame_due
    monkeypatch.setattr(view, "frame_due", lambda: checks.append(1) or original())
    for _ in range(1000):  # well under 2 s: at 0.5 fps, no frame is due
        env.reset()
    env.close()
    assert 1 <= len(checks) <= 3  # one left from the first frame's polls, none more, one on close


def test_watch_tiles_vector_envs_with_labels(shown):
    view = shown(max_size=2000, image_format="png")
    envs = gymview.watch(gym.make_vec("CartPole-v1", num_envs=3, render_mode="rgb_array"), view=view, display=False)
    envs.reset(seed=0)
    view.flush()
    header, buffers = view.sent[0]
    assert (header["width"], header["height"]) == (1200, 800)  # 2 x 2 grid of 600 x 400 frames
    picture = np.asarray(Image.open(io.BytesIO(buffers[0])).convert("RGB"))
    twin = gym.make_vec("CartPole-v1", num_envs=3, render_mode="rgb_array")
    twin.reset(seed=0)
    frames = list(twin.render())
    labelled = gymview.tile(frames, [f"env {i}  R 0" for i in range(3)])
    np.testing.assert_array_equal(picture, labelled)  # drawn at the reset, each with its label
    assert (labelled != gymview.tile(frames)).any(axis=-1)[:400, :600].sum() > 50
    for _ in range(30):
        envs.step(envs.action_space.sample())
    envs.close()
    twin.close()
    assert envs.total_steps == 30


@pytest.mark.parametrize("mode", [None, "human", "ansi"])
def test_watch_needs_rgb_array(mode):
    kwargs = {} if mode is None else {"render_mode": mode}
    env = gym.make("CartPole-v1", **kwargs) if mode != "ansi" else gym.make("Blackjack-v1")
    with pytest.raises(ValueError, match="render_mode='rgb_array'"):
        gymview.watch(env)
    env.close()


@pytest.mark.parametrize("fast_render", [False, True])
def test_watch_records_full_resolution_while_the_view_reuses_recorded_frames(shown, tmp_path, monkeypatch, fast_render):
    from video_checks import decode

    view = shown(fps=120)
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False,
                        record=tmp_path / "videos", fast_render=fast_render)
    renders = []
    original = env.env.env.render
    monkeypatch.setattr(env.env.env, "render", lambda: renders.append(1) or original())
    env.reset(seed=3)
    steps = 0
    for _ in range(2):
        done = False
        while not done:
            *_, terminated, truncated, _ = env.step(env.action_space.sample())
            steps += 1
            done = terminated or truncated
        env.reset()
    env.close()
    files = sorted((tmp_path / "videos").glob("*.mp4"))
    assert [f.name for f in files] == [f"CartPole-v1-episode-{i}.mp4" for i in range(3)]
    videos = [decode(f) for f in files[:2]]
    assert sum(len(v) for v in videos) == steps + 2  # one frame per step plus each reset
    assert videos[0].shape[1:3] == (400, 600)
    # The view rendered nothing of its own; with fast_render the recording drew with numpy too.
    assert len(renders) == (0 if fast_render else steps + 3)
    assert view.sent and view.sent[0][0]["width"] == 512
    with pytest.raises(ValueError, match="record"):
        gymview.watch(gym.make_vec("CartPole-v1", num_envs=2, render_mode="rgb_array"), record=tmp_path)


def test_watch_shows_what_the_agent_sees_beside_the_frames(shown):
    ale_py = pytest.importorskip("ale_py")  # gymview[atari]; absent only where the core is tested alone

    from gymview.atari import wrap

    gym.register_envs(ale_py)
    make = lambda: gym.make("ALE/Breakout-v5", frameskip=1, render_mode="rgb_array")  # noqa: E731
    view = shown(max_size=2000)
    envs = gymview.watch(wrap(gym.vector.SyncVectorEnv([make, make]), device="cpu"), view=view, display=False)
    envs.reset(seed=0)
    envs.step(envs.action_space.sample())
    envs.close()
    header = view.sent[0][0]
    # Two 210 x 160 game frames plus the 168 x 672 stack preview, in cells of 210 x 672, 2 x 2.
    assert (header["height"], header["width"]) == (420, 1344)


def test_close_shows_the_final_state(shown):
    view = shown(fps=1)
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    for _ in range(20):
        env.step(0)
    env.close()
    env.close()
    assert [h["step"] for h in sent_frames(view.sent)] == [0, 20]


def test_vector_partial_reset_keeps_the_running_returns(shown):
    from gymnasium.vector import AutoresetMode

    view = shown()
    make = lambda: gym.make("CartPole-v1", render_mode="rgb_array")  # noqa: E731
    sync = gym.vector.SyncVectorEnv([make, make], autoreset_mode=AutoresetMode.DISABLED)
    envs = gymview.watch(sync, view=view, display=False)
    envs.reset(seed=0)
    envs.step(np.array([0, 0]))
    envs.reset(options={"reset_mask": np.array([False, True])})
    assert envs.returns[0] == 1.0 and envs.returns[1] == 0.0
    envs.close()


def test_watch_draws_classic_control_frames_in_the_encoder_process(shown, monkeypatch):
    view = shown(max_size=600, image_format="png", draw="kernel")
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False)
    monkeypatch.setattr(env.env, "render", lambda: pytest.fail("watch() called env.render()"))
    env.reset(seed=4)
    view.flush()
    header, buffers = view.sent[-1]
    shown_frame = np.asarray(Image.open(io.BytesIO(buffers[0])).convert("RGB"))
    monkeypatch.undo()
    reference = env.env.render()  # pygame's drawing of the same state
    assert (header["width"], header["height"]) == (600, 400) and psnr(shown_frame, reference) > 30
    env.close()


def test_envs_without_a_numpy_renderer_use_env_render(shown):
    view = shown(max_size=4000, image_format="png")
    env = gymview.watch(gym.make("gymview-tests/Pictures-v0", render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    view.flush()
    shown_frame = np.asarray(Image.open(io.BytesIO(view.sent[0][1][0])).convert("RGB"))
    np.testing.assert_array_equal(shown_frame, env.render())
    env.close()


def test_watch_with_a_view_refuses_settings_it_would_ignore(shown):
    view = shown()
    make = lambda: gym.make("CartPole-v1", render_mode="rgb_array")  # noqa: E731
    for setting in ({"fps": 10}, {"max_size": 512}, {"quality": 80}, {"image_format": "jpeg"}, {"title": ""}):
        with pytest.raises(ValueError, match="set fps, max_size"):
            gymview.watch(make(), view=view, display=False, **setting)
    gymview.watch(make(), view=view, display=False).close()


def test_watch_pumps_each_encoded_frame_out_while_the_loop_runs(shown, monkeypatch):
    # Only the loop's pumping sends here: the watcher thread would wait 30 s.
    monkeypatch.setattr(stream_watcher, "PUMP_WAIT_SECONDS", 30.0)
    view = shown(fps=120)
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    steps = 0
    while len(view.sent) < 5 and steps < 5_000_000:
        *_, terminated, truncated, _info = env.step(env.action_space.sample())
        steps += 1
        if terminated or truncated:
            env.reset()
    # One pass may send two: the step's pump and the reset's each send a frame when the encoder has
    # one ready (on a loaded machine, CI saw 6).
    assert len(view.sent) >= 5 and steps < 5_000_000
    env.close()


def test_sync_vector_env_sub_envs_are_drawn_from_their_states_in_the_encoder_process(shown, monkeypatch):
    from gymview.renderers import tiled

    view = shown(fps=120, max_size=2000, image_format="png", draw="kernel")
    sync = gym.vector.SyncVectorEnv([lambda: gym.make("MountainCar-v0", render_mode="rgb_array")] * 2)
    envs = gymview.watch(sync, view=view, display=False)
    for env in sync.envs:
        monkeypatch.setattr(env, "render", lambda: pytest.fail("a sub-env was rendered in the loop"))
    envs.reset(seed=0)
    view.flush()
    monkeypatch.undo()
    header, buffers = view.sent[0]
    shown_frame = np.asarray(Image.open(io.BytesIO(buffers[0])).convert("RGB"))
    reference = tiled([env.render() for env in sync.envs], [0.0, 0.0])
    assert (header["width"], header["height"]) == (1200, 400) and psnr(shown_frame, reference) > 30
    envs.close()


def test_a_bad_tiled_drawing_is_refused_when_pushed():
    from gymview.renderers import TiledDrawing, TiledPainter, renderer_for

    painter = TiledPainter(renderer_for("CartPole-v1"), 2)
    view = gymview.LiveView()
    with pytest.raises(ValueError, match="needs 10 numbers"):
        view.push(TiledDrawing(painter, np.zeros(9)))
    with pytest.raises(ValueError, match="finite"):
        view.push(TiledDrawing(painter, np.array([np.nan] + [0.0] * 9)))
    with pytest.raises(TypeError, match="TiledPainter"):
        view.push(TiledDrawing("painter", np.zeros(10)))
    view.close()


def test_the_steps_a_watched_loop_keeps_give_the_garbage_collector_nothing_to_promote():
    """A step kept with an empty info dict stayed tracked by the garbage collector: every young collection
    (another thread's allocations start them: in a kernel, the IOPub thread's while frames go out) promoted the
    steps waiting to be settled, and the promotions added up to full collections, 26-31 ms each in a kernel, that
    the unwatched loop never ran."""
    import gc

    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
    env.reset(seed=0)
    gc.collect()
    for _ in range(100):  # fewer than a settle takes at a time: the steps wait, kept
        if any(env.step(0)[2:4]):
            env.reset()
    gc.collect(0)
    kept = [o for o in gc.get_objects(1) if type(o) is tuple and len(o) == 5 and o[1:3] == (1.0, False)]
    env.close()
    assert kept == []


def test_a_watched_env_s_own_work_is_timed_once_frames_flow_and_a_failure_there_is_told_not_raised(
    shown, monkeypatch
):
    timings = []

    def own_cost():
        timings.append(1)
        raise RuntimeError("timer broke")

    monkeypatch.setattr("gymview.watched.own_seconds_per_step", own_cost)
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=shown(), display=False)
    with pytest.warns(RuntimeWarning, match="own work could not be timed.*timer broke"):
        env.reset(seed=0)
        for _ in range(300):
            *_, terminated, truncated, _info = env.step(0)
            if terminated or truncated:
                env.reset()
    env.close()
    assert timings == [1] and env.total_steps == 300  # asked once, as frames began to flow; the loop went on


def test_a_watched_vector_env_s_own_work_is_timed_for_its_size_once_frames_flow(shown, monkeypatch):
    sizes = []

    def own_cost(num_envs):
        sizes.append(num_envs)
        raise RuntimeError("timer broke")

    monkeypatch.setattr("gymview.watched.own_seconds_per_vector_step", own_cost)
    envs = gymview.watch(gym.make_vec("CartPole-v1", num_envs=2, render_mode="rgb_array"), view=shown(), display=False)
    with pytest.warns(RuntimeWarning, match="own work could not be timed.*timer broke"):
        envs.reset(seed=0)
        for _ in range(300):
            envs.step(np.zeros(2, dtype=np.int64))
    envs.close()
    assert sizes == [2] and envs.total_steps == 300  # asked once, as frames began to flow; the loop went on
