import io
import threading
import time

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image

import gymview
from gymview import stream
from gymview.widget import HIDDEN_FPS, LiveView, live_views


@pytest.fixture
def shown():
    """A LiveView as a notebook would have it: in a kernel and displayed; sends are captured."""
    views = []

    def make(**kwargs):
        view = LiveView(**kwargs)
        view._in_kernel = True
        view._repr_mimebundle_()
        view.sent = []
        view.send = lambda content, buffers=None: view.sent.append((content, buffers))
        views.append(view)
        return view

    yield make
    for view in views:
        view.close()


def test_nothing_is_sent_or_kept_outside_a_notebook():
    view = LiveView()
    for _ in range(100):
        assert view.push(np.zeros((40, 40, 3), np.uint8)) is False
    assert not view.frame_due() and view.stats["frames_sent"] == 0
    assert view._buffer.take(timeout=0) is None  # no frame kept: memory cannot grow
    view.close()


def test_views_not_known_to_be_displayed_get_one_frame_a_second(monkeypatch):
    # Shown inside a container, a view is confirmed only by the browser, maybe only when the cell
    # ends: until then it gets HIDDEN_FPS, never a frozen picture, never the full rate.
    view = LiveView(fps=30)
    view._in_kernel = True
    view.send = lambda content, buffers=None: None
    assert view.push(np.zeros((4, 4, 3), np.uint8)) is True
    assert view._buffer.fps == HIDDEN_FPS and view.stats["visible"] is False
    assert view.push(np.zeros((4, 4, 3), np.uint8)) is False
    view._repr_mimebundle_()
    assert view._buffer.fps == 30 and view.stats["visible"] is True
    view.close()


def test_push_sends_binary_frames_never_traits(shown):
    view = shown(max_size=32)
    assert view.push(np.zeros((64, 64), bool), step=3, episode=1, episode_return=2.5)
    assert view.flush()
    (header, buffers), = view.sent
    assert header["type"] == "frame" and (header["width"], header["height"]) == (32, 32)
    assert header["step"] == 3 and isinstance(buffers[0], bytes) and buffers[0][:2] == b"\xff\xd8"
    state = view.get_state()
    assert not any(isinstance(v, (bytes, memoryview)) for v in state.values())


def test_push_throttles_and_counts_dropped_frames(shown):
    view = shown(fps=5)
    results = [view.push(np.zeros((8, 8, 3), np.uint8)) for _ in range(50)]
    assert results[0] and sum(results) == 1
    assert view.stats["frames_throttled"] == 49 and view.stats["frames_dropped"] == 0


def test_bad_frames_raise_even_when_skipped(shown):
    view = shown()
    view.push(np.zeros((8, 8, 3), np.uint8))
    with pytest.raises(ValueError, match="shape"):
        view.push(np.zeros((8, 8, 2), np.uint8))  # not due, still checked
    with pytest.raises(ValueError, match="render_mode"):
        view.push(None)


def test_browser_messages_ready_ack_visibility(shown):
    view = shown(fps=30)
    view.push(np.zeros((8, 8, 3), np.uint8))
    view.flush()
    view._on_browser_message(view, {"type": "ready", "v": 1}, [])
    view.flush()
    assert [h["seq"] for h, _ in view.sent] == [0, 0]  # the new view got the latest frame again
    view._on_browser_message(view, {"type": "ack", "seq": 0}, [])
    assert view._streamer._acked == 0
    view._on_browser_message(view, {"type": "visibility", "visible": False}, [])
    assert view._buffer.fps == HIDDEN_FPS and view.stats["visible"] is False
    view._on_browser_message(view, {"type": "visibility", "visible": True}, [])
    assert view._buffer.fps == 30
    view._on_browser_message(view, "garbage", [])
    view._on_browser_message(view, {"type": "ack", "seq": "x"}, [])


def test_trait_changes_reconfigure_the_stream(shown):
    view = shown()
    view.fps = 12
    view.max_size = 100
    view.quality = 50
    view.image_format = "png"
    assert view._buffer.fps == 12 and view._streamer.max_size == 100
    assert view._streamer.quality == 50 and view._streamer.image_format == "png"
    with pytest.raises(ValueError, match="fps"):
        view.fps = 0
    with pytest.raises(ValueError):
        LiveView(quality=0)


def test_stop_keeps_the_widget_and_close_is_final(shown):
    view = shown()
    view.push(np.zeros((8, 8, 3), np.uint8))
    view.stop()
    assert len(view.sent) == 1 and view in live_views()
    view.close()
    view.close()
    assert view not in live_views()
    with pytest.raises(RuntimeError, match="closed"):
        view.push(np.zeros((8, 8, 3), np.uint8))
    assert not view._streamer.running


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
    assert 1 <= len(renders) <= 3  # 200 fast steps take well under a second at 5 fps
    header = view.sent[-1][0]
    assert header["episode"] >= 1 and header["width"] == 512 and header["height"] == 341
    assert env.total_steps == 200


def test_watch_checks_for_due_frames_on_reset_no_more_than_on_step(shown, monkeypatch):
    # CartPole with random actions resets every ~20 steps; a full check on every reset once cost
    # a watched loop 8% of its speed.
    view = shown(fps=0.5)
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    view.flush()  # the first frame is sent (the encoder process is up): no poll for its reply is due
    checks = []
    original = view.frame_due
    monkeypatch.setattr(view, "frame_due", lambda: checks.append(1) or original())
    for _ in range(1000):  # well under 2 s: at 0.5 fps, no frame is due
        env.reset()
    env.close()
    assert 1 <= len(checks) <= 3  # one left from the first frame's polls, none more, one on close


def test_watch_tiles_vector_envs_with_labels(shown):
    view = shown(max_size=2000)
    envs = gymview.watch(gym.make_vec("CartPole-v1", num_envs=3, render_mode="rgb_array"), view=view, display=False)
    envs.reset(seed=0)
    for _ in range(30):
        envs.step(envs.action_space.sample())
    envs.close()
    header = view.sent[0][0]
    assert (header["width"], header["height"]) == (1200, 800)  # 2 x 2 grid of 600 x 400 frames
    assert envs.total_steps == 30 and envs.episodes_done >= 0


@pytest.mark.parametrize("mode", [None, "human", "ansi"])
def test_watch_needs_rgb_array(mode):
    kwargs = {} if mode is None else {"render_mode": mode}
    env = gym.make("CartPole-v1", **kwargs) if mode != "ansi" else gym.make("Blackjack-v1")
    with pytest.raises(ValueError, match="render_mode='rgb_array'"):
        gymview.watch(env)
    env.close()


def test_magic_status_and_stop(shown, capsys, monkeypatch):
    from gymview.magic import gymview_magic, load_ipython_extension

    view = shown(title="cartpole")
    view.push(np.zeros((8, 8, 3), np.uint8))
    view.flush()
    gymview_magic("status")
    out = capsys.readouterr().out
    assert "cartpole" in out and "sent" in out
    gymview_magic("stop")
    assert "stopped" in capsys.readouterr().out
    gymview_magic("frobnicate")
    assert "usage" in capsys.readouterr().out

    registered = {}

    class FakeShell:
        def register_magic_function(self, func, magic_kind, magic_name):
            registered[magic_name] = (func, magic_kind)

    import gymview.colab

    monkeypatch.setattr(gymview.colab, "setup", lambda **kwargs: None)
    load_ipython_extension(FakeShell())
    assert registered["gymview"][1] == "line"


def test_load_ext_runs_setup(monkeypatch):
    import gymview.colab
    from gymview.magic import load_ipython_extension

    calls = []
    monkeypatch.setattr(gymview.colab, "setup", lambda **kwargs: calls.append(kwargs))

    class FakeShell:
        def register_magic_function(self, func, magic_kind, magic_name):
            pass

    load_ipython_extension(FakeShell())
    assert calls == [{}]


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
    import ale_py  # noqa: F401  (registers the ALE envs)

    from gymview.preprocess import wrap

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


def test_a_view_that_appears_after_stop_still_gets_the_last_frame(shown):
    view = shown()
    view.push(np.zeros((8, 8, 3), np.uint8))
    view.stop()
    assert not view._streamer.running
    view._on_browser_message(view, {"type": "ready", "v": 1, "client": "tab"}, [])
    view.flush()
    assert [h["seq"] for h, _ in view.sent] == [0, 0]


def test_idle_stream_threads_end_and_restart_on_the_next_push(shown, monkeypatch):
    import gymview.stream

    monkeypatch.setattr(gymview.stream, "IDLE_EXIT_SECONDS", 0.05)
    view = shown(fps=120)
    view.push(np.zeros((8, 8, 3), np.uint8))
    view.flush()
    for _ in range(200):
        if not view._streamer.running:
            break
        threading.Event().wait(0.01)
    assert not view._streamer.running  # a re-run cell that never closed its env leaves no thread
    for _ in range(3):
        threading.Event().wait(0.01)
        assert view.push(np.zeros((8, 8, 3), np.uint8), force=True)
        assert view.flush()
    assert len(view.sent) == 4


def test_visibility_is_tracked_per_browser_page(shown):
    view = shown(fps=30)
    message = view._on_browser_message
    message(view, {"type": "ready", "v": 1, "client": "A"}, [])
    message(view, {"type": "ready", "v": 1, "client": "B"}, [])
    message(view, {"type": "visibility", "visible": False, "client": "B"}, [])
    assert view.visible and view._buffer.fps == 30  # page A still shows it
    message(view, {"type": "visibility", "visible": False, "client": "A"}, [])
    assert not view.visible and view._buffer.fps == HIDDEN_FPS
    message(view, {"type": "visibility", "visible": True, "client": "B"}, [])
    assert view.visible


def test_bad_trait_values_are_refused_before_they_are_stored(shown):
    view = shown()
    for name, bad in (("quality", 500), ("image_format", "gif"), ("max_size", 5), ("fps", 0)):
        before = getattr(view, name)
        with pytest.raises(ValueError):
            setattr(view, name, bad)
        assert getattr(view, name) == before
    assert view._streamer.max_size == 512


def test_a_protocol_mismatch_is_reported(shown):
    view = shown()
    with pytest.warns(UserWarning, match="reload the browser page"):
        view._on_browser_message(view, {"type": "ready", "v": 99, "client": "A"}, [])


def test_close_shows_the_final_state(shown):
    view = shown(fps=1)
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    for _ in range(20):
        env.step(0)
    env.close()
    env.close()
    assert [h["step"] for h, _ in view.sent] == [0, 20]


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


def test_fast_render_draws_classic_control_without_pygame(shown, monkeypatch):
    import io

    from PIL import Image

    view = shown(fps=120, max_size=600, image_format="png")
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False)
    monkeypatch.setattr(env.env, "render", lambda: pytest.fail("env.render() called"))
    env.reset(seed=4)
    view.flush()
    monkeypatch.undo()
    expected = env.env.render().astype(float)
    drawn = np.asarray(Image.open(io.BytesIO(view.sent[0][1][0]))).astype(float)
    psnr = 10 * np.log10(255**2 / np.mean((drawn - expected) ** 2))
    assert psnr > 30
    env.close()


def test_envs_without_a_numpy_renderer_use_env_render(shown):
    view = shown()
    env = gymview.watch(gym.make("FrozenLake-v1", render_mode="rgb_array"), view=view, display=False)
    assert env._renderer is None
    env.reset(seed=0)
    view.flush()
    assert view.sent[0][0]["width"] > 0
    env.close()


def test_seconds_until_due_lets_loops_skip_checks(shown):
    view = shown(fps=10)
    assert view.seconds_until_due() <= 0  # nothing sent yet: due now
    before = time.perf_counter()
    view.push(np.zeros((8, 8, 3), np.uint8))
    remaining = view.seconds_until_due()
    elapsed = time.perf_counter() - before
    assert 0.1 - elapsed <= remaining <= 0.1  # one frame interval from the push, however slow the machine
    outside = LiveView()
    assert outside.seconds_until_due() == 0.5  # no front-end: recheck twice a second
    outside.close()


def test_magic_setup_doctor_and_unload(monkeypatch, capsys):
    import gymview.colab
    import gymview.doctor
    from gymview.human import enable_inline_human, inline_human_enabled
    from gymview.magic import gymview_magic, unload_ipython_extension

    calls = []
    monkeypatch.setattr(gymview.colab, "setup", lambda **kwargs: calls.append("setup"))
    monkeypatch.setattr(gymview.doctor, "run_checks", lambda: calls.append("checks") or [])
    monkeypatch.setattr(gymview.doctor, "format_report", lambda checks: "REPORT")
    gymview_magic("setup")
    gymview_magic("doctor")
    assert calls == ["setup", "checks"] and "REPORT" in capsys.readouterr().out
    enable_inline_human()
    unload_ipython_extension(None)
    assert not inline_human_enabled()


def test_watch_with_a_view_refuses_settings_it_would_ignore(shown):
    view = shown()
    with pytest.raises(ValueError, match="set fps, max_size"):
        gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, fps=10, display=False)


def test_watch_pumps_each_encoded_frame_out_while_the_loop_runs(shown, monkeypatch):
    # The stream thread sends a frame only when the loop pumps (or after PUMP_WAIT_SECONDS, here
    # 30 s): without pumping, at most one frame would go out.
    monkeypatch.setattr(stream, "PUMP_WAIT_SECONDS", 30.0)
    view = shown(fps=30)
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    view.flush()  # the encoder process is up
    deadline = time.perf_counter() + 1.0
    while time.perf_counter() < deadline:
        *_, terminated, truncated, _info = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    assert len(view.sent) >= 11
    env.close()


def test_pushing_every_step_pumps_too(shown, monkeypatch):
    monkeypatch.setattr(stream, "PUMP_WAIT_SECONDS", 30.0)
    view = shown(fps=30)
    picture = np.zeros((60, 80, 3), np.uint8)
    view.push(picture)
    view.flush()  # the encoder process is up
    deadline = time.perf_counter() + 1.0
    while time.perf_counter() < deadline:
        view.push(picture)
    assert len(view.sent) >= 11


def test_watch_draws_classic_control_frames_in_the_encoder_process(shown, monkeypatch):
    view = shown(max_size=600, image_format="png")
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), view=view, display=False)
    monkeypatch.setattr(env.env, "render", lambda: pytest.fail("watch() called env.render()"))
    env.reset(seed=4)
    view.flush()
    header, buffers = view.sent[-1]
    shown_frame = np.asarray(Image.open(io.BytesIO(buffers[0])).convert("RGB")).astype(float)
    monkeypatch.undo()
    reference = env.env.render().astype(float)  # pygame's drawing of the same state
    psnr = 10 * np.log10(255.0**2 / np.mean((shown_frame - reference) ** 2))
    assert (header["width"], header["height"]) == (600, 400) and psnr > 30
    env.close()


def test_a_bad_drawing_is_refused_when_pushed_not_in_the_encoder_process():
    from gymview.renderers import Drawing, renderer_for

    view = LiveView()  # outside a notebook too: the error comes at once
    renderer = renderer_for("CartPole-v1")
    with pytest.raises(ValueError, match=r"shape \(N, 4\)"):
        view.push(Drawing(renderer, np.zeros(3)))
    with pytest.raises(ValueError, match="finite"):
        view.push(Drawing(renderer, np.array([np.nan, 0.0, 0.0, 0.0])))
    with pytest.raises(TypeError, match="BatchRenderer"):
        view.push(Drawing("CartPole-v1", np.zeros(4)))
    assert view.push(Drawing(renderer, np.zeros(4))) is False  # a good one, with no front-end
    view.close()
