"""Frames the page draws from a state: what goes on the wire, the scene published once, what the kernel
still makes as pictures (a page that just rendered, the still image, replays of an older scene, clips)."""

import io
import json
import os
import pathlib

import gymnasium as gym
import numpy as np
import picture_envs  # noqa: F401 (registers gymview-tests/Pictures-v0)
import pytest
from live_helpers import ShownView, browser_says
from PIL import Image
from video_checks import psnr
from waiting import wait_until

import gymview
from gymview._internal import frontend
from gymview.image.frames import downsample
from gymview.live.encoding.replay import FrameHistory
from gymview.live.encoding.scene_frames import SCENE_BATCH_SECONDS
from gymview.live.streamer import FrameStreamer
from gymview.renderers import Drawing, TiledDrawing, TiledPainter, renderer_for


def cartpole(seed=0):
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    env.reset(seed=seed)
    return env


def test_a_watched_cartpole_sends_its_state_and_the_page_gets_the_scene_once(monkeypatch):
    view = ShownView(max_size=512)
    env = gymview.watch(cartpole(), view=view, display=False)
    monkeypatch.setattr(env.env, "render", lambda: pytest.fail("watch() called env.render()"))
    env.reset(seed=3)
    view.flush()
    first_state = np.float32(env.unwrapped.state)
    env.step(1)
    view.push(Drawing(renderer_for(env), renderer_for(env).state_of(env)), force=True)  # a second painter
    view.flush()
    header, buffers = view.sent[0]
    assert (header["format"], header["width"], header["height"], header["scene"]) == ("scene", 512, 341, 1)
    np.testing.assert_array_equal(np.frombuffer(buffers[0], "<f4"), first_state)
    assert view._scene["kind"] == "cartpole" and view._scene["id"] == view.sent[-1][0]["scene"] == 2
    assert not view._streamer.encodes_elsewhere or not view._streamer._encoder.has_run  # no helper process
    assert view.stats["sent_as"] == "scene" and view.stats["last_encode_ms"] == 0
    monkeypatch.undo()
    env.close()


def test_a_watched_lunar_lander_goes_to_the_page_as_its_state_and_never_calls_render(monkeypatch):
    pytest.importorskip("Box2D")
    view = ShownView(max_size=512)
    env = gymview.watch(gym.make("LunarLander-v3", render_mode="rgb_array"), view=view, display=False)
    monkeypatch.setattr(env.env, "render", lambda: pytest.fail("watch() called env.render()"))
    env.reset(seed=3)
    for _ in range(5):
        env.step(2)  # the main engine: its particles
    env.show_final_frame()  # the state now, from watch's own snapshot: the last of the last message's frames
    state = np.frombuffer(view.sent[-1][1][0], "<f4")[-92:]
    assert {header["format"] for header, _ in view.sent} == {"scene"} and view._scene["kind"] == "lunarlander"
    assert state[:2] == pytest.approx(env.unwrapped.lander.position, abs=1e-5)
    particles = [(*p.position, p.ttl) for p in env.unwrapped.particles]
    assert state[20 : 20 + 3 * len(particles)] == pytest.approx(np.ravel(particles), abs=1e-5)
    assert len(particles) == 5 and np.isnan(state[20 + 3 * len(particles) :]).all()
    monkeypatch.undo()
    env.close()


def test_a_watched_lunar_lander_drawn_in_the_kernel_is_drawn_by_the_helper_from_its_state(monkeypatch):
    pytest.importorskip("Box2D")
    view = ShownView(image_format="png", draw="kernel", max_size=600)
    env = gymview.watch(gym.make("LunarLander-v3", render_mode="rgb_array"), view=view, display=False)
    monkeypatch.setattr(env.env, "render", lambda: pytest.fail("watch() called env.render()"))
    env.reset(seed=3)
    env.step(2)
    env.show_final_frame()
    header, buffers = view.sent[-1]
    assert header["format"] == "png" and (header["width"], header["height"]) == (600, 400)
    monkeypatch.undo()
    env.close()


def test_a_watched_frozen_lake_goes_to_the_page_as_the_player_s_cell_after_one_drawing_of_its_board(monkeypatch):
    env = gym.make("FrozenLake-v1", render_mode="rgb_array")
    view = ShownView(max_size=512)
    env = gymview.watch(env, view=view, display=False)  # the board's pictures are drawn here, on a copy
    monkeypatch.setattr(env.env, "render", lambda: pytest.fail("watch() called env.render()"))
    env.reset(seed=0)
    env.step(2)
    env.show_final_frame()
    assert {header["format"] for header, _ in view.sent} == {"scene"} and view._scene["kind"] == "board"
    cell, facing = np.frombuffer(view.sent[-1][1][0], "<f4")[-2:].tolist()  # the last frame of the last message
    assert cell == env.unwrapped.s and facing in (0, 2)  # 2 where the player's art faces its last move
    assert {"board", "player0"} <= set(view._scene["images"])
    monkeypatch.undo()
    env.close()


def test_a_watched_bipedal_walker_goes_to_the_page_as_its_state_and_never_calls_render(monkeypatch):
    pytest.importorskip("Box2D")
    from gymview.renderers.bipedal_walker import BipedalWalkerRenderer

    view = ShownView(max_size=600)
    env = gymview.watch(gym.make("BipedalWalker-v3", render_mode="rgb_array"), view=view, display=False)
    monkeypatch.setattr(env.env, "render", lambda: pytest.fail("watch() called env.render()"))
    env.reset(seed=3)
    for _ in range(5):
        env.step(env.action_space.sample())
    env.show_final_frame()
    state = np.frombuffer(view.sent[-1][1][0], "<f4")[-BipedalWalkerRenderer.state_dim :]  # the last frame
    assert {header["format"] for header, _ in view.sent} == {"scene"} and view._scene["kind"] == "bipedalwalker"
    assert state[1:3] == pytest.approx(env.unwrapped.hull.position, abs=1e-5)
    monkeypatch.undo()
    env.close()


def test_a_watched_taxi_goes_to_the_page_as_where_its_pictures_go(monkeypatch):
    if "Taxi-v4" not in gym.registry:
        pytest.skip("an older gymnasium's Taxi (v3) is drawn otherwise: its frames go as pictures")
    env = gymview.watch(gym.make("Taxi-v4", render_mode="rgb_array"), view=ShownView(max_size=536), display=False)
    view = env.view
    monkeypatch.setattr(env.env, "render", lambda: pytest.fail("watch() called env.render()"))
    env.reset(seed=0)
    env.step(2)  # east: the taxi faces east
    env.show_final_frame()
    assert {header["format"] for header, _ in view.sent} == {"scene"} and view._scene["kind"] == "sprites"
    state = np.frombuffer(view.sent[-1][1][0], "<f4")[-9:]  # the last frame of the last message
    assert state[6] == 2 + 2 and {"background", "sprite0", "sprite9"} <= set(view._scene["images"])
    monkeypatch.undo()
    env.close()


def test_a_page_that_just_rendered_and_the_still_image_get_the_frame_as_a_picture():
    view = ShownView(max_size=600, image_format="png")
    env = gymview.watch(cartpole(), view=view, display=False)
    env.reset(seed=1)
    view.flush()
    browser_says(view, {"type": "ready", "v": 2, "client": "new-tab", "codecs": ["h264"]})
    view.flush()
    header, data = view._streamer.latest
    assert header["format"] == "png" and header["scene"] is None
    assert psnr(np.asarray(Image.open(io.BytesIO(data)).convert("RGB")), env.env.render()) > 30
    assert view.stats["sent_as"] == "scene"  # what went last is still the state
    env.close()


def test_draw_kernel_sends_pictures_and_draw_page_refuses_an_env_it_cannot_draw():
    view = ShownView(image_format="png", draw="kernel")
    env = gymview.watch(cartpole(), view=view, display=False)
    env.reset(seed=0)
    view.flush()
    assert view.sent[0][0]["format"] == "png" and view._scene == {}
    env.close()
    with pytest.raises(ValueError, match="draw='page'.: the page cannot draw gymview-tests/Pictures-v0.*Leave draw out"):
        gymview.watch(gym.make("gymview-tests/Pictures-v0", render_mode="rgb_array"), draw="page", display=False)
    view = ShownView(draw="page")  # a view of its own: refused at the first frame it cannot draw
    with pytest.raises(ValueError, match="draw='page': the page cannot draw these frames .*draw='auto'"):
        view.push(np.zeros((8, 8, 3), np.uint8))
    view.close()
    with pytest.raises(ValueError, match="draw must be one of"):
        gymview.LiveView(draw="browser")


class Stamped(gym.Wrapper):
    """A wrapper that draws on the env's pictures: the page cannot draw them."""

    def render(self):
        frame = self.env.render()
        frame[:4] = 0
        return frame


def test_an_env_of_a_family_the_page_draws_that_goes_as_pictures_says_why_on_the_status_line():
    view = ShownView(image_format="png")
    env = gymview.watch(Stamped(cartpole()), view=view, display=False)
    env.reset(seed=0)
    view.flush()
    assert view.sent[0][0]["format"] == "png" and view._scene == {}
    why = "drawn in the kernel: a wrapper changes its pictures (it overrides render())"
    said = lambda: view.states[-1][0]["message"] if view.states else None  # noqa: E731 (the latest state's line)
    wait_until(lambda: said() == why, lambda: f"the status line to say why; it says {said()!r}")
    count = len(view.states)
    browser_says(view, {"type": "ready", "v": 2, "client": "a-page-opened-later", "codecs": []})
    wait_until(lambda: len(view.states) > count, "the state for the page that opened later")
    assert said() == why  # a page that opens later reads it too
    env.close()
    again = gymview.watch(cartpole(), view=view, display=False)  # the view fed by another loop: nothing to say
    wait_until(lambda: said() == "", lambda: f"the status line to be emptied; it says {said()!r}")
    again.close()
    with pytest.raises(ValueError, match=r"cannot draw CartPole-v1 \(a wrapper changes its pictures"):
        gymview.watch(Stamped(cartpole()), draw="page", display=False)


def test_envs_the_page_cannot_draw_go_as_pictures_by_default():
    view = ShownView(image_format="png")
    env = gymview.watch(gym.make("gymview-tests/Pictures-v0", render_mode="rgb_array"), view=view, display=False)
    env.reset(seed=0)
    view.flush()
    assert view.sent[0][0]["format"] == "png" and view._scene == {}
    assert all(header["message"] == "" for header, _ in view.states)  # nothing to say: no family the page draws
    env.close()


def test_a_vector_env_sends_every_sub_env_s_state_and_return_for_the_grid():
    view = ShownView(fps=120)
    vector = gym.make_vec("CartPole-v1", num_envs=3, render_mode="rgb_array", vectorization_mode="sync")
    envs = gymview.watch(vector, view=view, display=False)
    envs.reset(seed=0)
    view.flush()
    header, buffers = view.sent[-1]
    assert header["format"] == "scene" and np.frombuffer(buffers[0], "<f4").shape == (3 * 4 + 3,)
    assert view._scene["kind"] == "grid" and view._scene["cell"]["kind"] == "cartpole"
    assert (view._scene["count"], view._scene["columns"]) == (3, 2)
    envs.close()


def test_scene_frames_are_kept_for_minutes_and_a_replay_of_an_older_scene_comes_as_a_picture(tmp_path):
    renderer = renderer_for("Acrobot-v1")
    view = ShownView(fps=120, max_size=256)
    for n in range(5):
        view.push(Drawing(renderer, np.array([0.3 * n, 0.1, 0.0, 0.0])), force=True)
        view.flush()
    assert view._streamer.history.seconds == 30 and view._streamer.history.scene_seconds == 600
    view.push(TiledDrawing.of(TiledPainter(renderer, 2), [np.zeros(4), np.ones(4)], [0.0, 1.0]), force=True)
    view.flush()
    view._controls.pause()
    browser_says(view, {"type": "replay", "index": 5, "id": "page:1"})  # the grid: the page has its scene
    browser_says(view, {"type": "replay", "index": 1, "id": "page:2"})  # an Acrobot: drawn here
    wait_until(lambda: len([h for h, _ in view.sent if h.get("replay") is not None]) == 2, "both replayed frames")
    newest, older = [(header, data) for header, data in view.sent if header.get("replay") is not None]
    assert newest[0]["format"] == "scene" and newest[0]["scene"] == 2
    assert older[0]["format"] == "jpeg" and older[0]["scene"] is None
    expected = downsample(renderer.render(np.array([[0.3, 0.1, 0.0, 0.0]]))[0], 256)
    assert psnr(np.asarray(Image.open(io.BytesIO(older[1][0])).convert("RGB")), expected) > 30
    clip = view.save_clip(tmp_path / "replay.gif")  # every kept frame drawn here
    with Image.open(clip) as gif:
        assert gif.n_frames == 6
    view.close()


def test_a_history_forgets_the_painters_of_scenes_it_no_longer_keeps():
    history = FrameHistory(seconds=1.0)
    for scene in (1, 2, 3):
        history.keep_painter(scene, object())
        history.add({"seq": scene, "format": "scene", "scene": scene, "width": 4, "height": 4}, b"\0" * 8, at=scene)
    assert len(history) == 2 and sorted(history._painters) == [2, 3]
    history.clear()
    assert history._painters == {}


def test_scene_frames_go_several_to_a_message_and_none_waits_past_a_flush():
    renderer = renderer_for("CartPole-v1")
    sent, now = [], [0.0]  # a clock that stands still: no frame waits long enough to go alone
    streamer = FrameStreamer(lambda header, buffers: sent.append((header, buffers[0])), clock=lambda: now[0])
    states = [np.array([0.1 * n, 0.0, 0.01 * n, 0.0]) for n in range(7)]
    for n, state in enumerate(states):
        streamer.offer(Drawing(renderer, state), {"step": n})
    assert [len(header["frames"]) for header, _ in sent] == [3, 3]
    streamer.flush()
    assert [len(header.get("frames", [None])) for header, _ in sent] == [3, 3, 1]
    header, data = sent[0]
    assert [frame["seq"] for frame in header["frames"]] == [0, 1, 2] and header["seq"] == 2
    assert [frame["step"] for frame in header["frames"]] == [0, 1, 2]
    np.testing.assert_array_equal(np.frombuffer(data, "<f4").reshape(3, 4), np.float32(states[:3]))
    assert streamer.sent == 7 and streamer.bytes_sent == 7 * 16
    streamer.offer(Drawing(renderer, states[0]), {"step": 7})
    now[0] += SCENE_BATCH_SECONDS  # one frame held that long goes alone with the next look
    streamer.offer(Drawing(renderer, states[1]), {"step": 8})
    assert [frame["step"] for frame in sent[-1][0]["frames"]] == [7, 8]
    streamer.stop()


def test_frames_held_go_with_the_producer_s_next_offer_and_with_the_watcher_only_once_it_stalls():
    renderer = renderer_for("CartPole-v1")
    sent, now = [], [0.0]
    streamer = FrameStreamer(lambda header, buffers: sent.append(header), clock=lambda: now[0])

    def watcher_looks(number):  # the watcher sends a state posted first, then looks at the frames held
        for mark in (number, -number):  # the second state goes out once the first look is over
            streamer.post({"type": "state", "n": mark})
            wait_until(lambda mark=mark: any(header.get("n") == mark for header in sent))
        return [header["frames"] if "frames" in header else header["step"] for header in sent if header["type"] == "frame"]

    streamer.offer(Drawing(renderer, np.zeros(4)), {"step": 0})
    now[0] += 0.4 * SCENE_BATCH_SECONDS
    streamer.offer(Drawing(renderer, np.zeros(4)), {"step": 1})
    now[0] += 0.8 * SCENE_BATCH_SECONDS  # due, but the loop offers frames faster: its next one takes them along
    assert watcher_looks(1) == []
    now[0] += SCENE_BATCH_SECONDS  # the loop stalls: the watcher sends them
    assert [frame["step"] for frame in watcher_looks(2)[0]] == [0, 1]
    streamer.offer(Drawing(renderer, np.zeros(4)), {"step": 2})
    now[0] += SCENE_BATCH_SECONDS  # a loop slower than that: each frame goes alone, when due
    assert watcher_looks(3)[1:] == [2]
    streamer.stop()


def test_a_new_scene_sends_the_frames_of_the_last_one_first():
    cartpole_renderer, acrobot_renderer = renderer_for("CartPole-v1"), renderer_for("Acrobot-v1")
    view = ShownView(fps=120)
    view.push(Drawing(cartpole_renderer, np.zeros(4)), force=True)
    view.push(Drawing(acrobot_renderer, np.zeros(4)), force=True)
    view.flush()
    assert [header["scene"] for header, _ in view.sent] == [1, 2]
    view.close()


def test_frames_held_for_a_message_go_before_a_newer_picture():
    renderer = renderer_for("CartPole-v1")
    sent = []
    streamer = FrameStreamer(lambda header, buffers: sent.append(header), offload=False, clock=lambda: 0.0)
    streamer.offer(Drawing(renderer, np.zeros(4)), {})
    streamer.offer(np.zeros((8, 8, 3), np.uint8), {})  # pixels: a frame the page cannot draw
    streamer.flush()
    assert [(header["seq"], header["format"]) for header in sent] == [(0, "scene"), (1, "jpeg")]
    assert streamer.messages_per_second(window=1.0) == 2.0  # messages, not frames
    streamer.stop()


def test_the_kernel_draws_a_scene_s_pictures_on_one_thread_whichever_asks():
    import threading

    from gymview.live.encoding.drawn_here import draw_here

    renderer = renderer_for("CartPole-v1")
    threads = set()

    class Recorded(type(renderer)):
        draws_with_opengl = True  # as MuJoCo's painters: on one thread

        def paint(self, state, canvas=None):
            threads.add(threading.get_ident())
            return super().paint(state, canvas)

    painter = Recorded(gym.make("CartPole-v1").unwrapped, "CartPole-v1")
    history = FrameHistory()
    history.keep_painter(1, painter)
    history.add({"seq": 0, "format": "scene", "scene": 1, "width": 60, "height": 40}, np.zeros(4, "<f4").tobytes(), 0.0)
    asked_from = [threading.Thread(target=history.get, args=(0, 2)) for _ in range(3)]
    for thread in asked_from:
        thread.start()
    for thread in asked_from:
        thread.join()
    history.get(0, scene=2)  # and from this thread
    assert len(threads) == 1 and threading.get_ident() not in threads
    assert draw_here(painter, threading.get_ident) in threads
    assert draw_here(renderer, threading.get_ident) == threading.get_ident()  # numpy's draw where asked


def test_a_page_view_refuses_pixels_of_any_kind_with_its_own_error(tmp_path):
    view = ShownView(draw="page")
    with pytest.raises(ValueError, match="draw='page': the page cannot draw these frames"):
        view.push([[0, 255], [255, 0]])  # not an array: still the draw error, not an AttributeError
    view.close()
    with pytest.raises(ValueError, match="record=..., draw='page'.: the view shows the frames being recorded"):
        gymview.watch(cartpole(), draw="page", record=tmp_path, display=False)


def test_a_page_that_asks_for_the_mujoco_module_is_sent_it_and_nothing_else_is():
    view = ShownView()
    for content in ({"type": "module", "name": 3}, {"type": "module", "name": "unknown"}, {"type": "module"}):
        browser_says(view, content)
    view.flush()
    assert view.sent == [] and view.stats["modules_sent"] == 0
    browser_says(view, {"type": "module", "name": "mujoco"})
    wait_until(lambda: view.sent, "the module went out")
    (header, buffers), = view.sent
    assert header == {"type": "module", "name": "mujoco"} and buffers[0].decode() == frontend.SCENE3D_ESM
    assert view.stats["modules_sent"] == 1
    view.close()


GLFW_PICTURES = """
import gc, json, os, threading, weakref
import gymnasium as gym, numpy as np
from gymview.headless.virtual_display import start_virtual_display
from gymview.image.frames import downsample
from gymview.live.encoding.drawn_here import draw_scene_here
from gymview.renderers import MujocoPainter

start_virtual_display()
errors, painters = [], []
def draw(frame, truth):
    picture = draw_scene_here(frame.painter, frame.state)
    errors.append(float(np.abs(picture.astype(int) - truth).mean()))
    small = draw_scene_here(frame.painter, frame.painter.page_state(frame.state), 48, page_state=True)
    errors.append(float(np.abs(small.astype(int) - downsample(truth, 48)).mean()))
for name in ("Reacher-v5", "Swimmer-v5", "Hopper-v5"):  # as a notebook that watches and closes one after another
    env = gym.make(name, render_mode="rgb_array", width=96, height=80)
    env.reset(seed=0)
    truth = env.render()  # the loop's first frame, on the main thread, where GLFW makes windows
    frame = MujocoPainter.for_env(env).frame_of(env)
    painters.append(weakref.ref(frame.painter))
    for _ in range(2):  # the still image on the caller's thread, a reloaded page's picture on the watcher's
        thread = threading.Thread(target=draw, args=(frame, truth))
        thread.start()
        thread.join()
    env.close()  # gymnasium's viewer ends GLFW here: every window of the process goes with it
del frame
gc.collect()
print(json.dumps({"errors": errors, "alive": [painter() is not None for painter in painters]}), flush=True)
os._exit(0)  # the virtual display stops at exit before GLFW's windows close, and Xlib would exit with 1
"""


def test_mujoco_pictures_made_in_the_kernel_through_glfw_never_make_windows_off_the_main_thread():
    # GLFW makes windows only on a process's main thread, and a MuJoCo env's close() ends GLFW in its process:
    # drawn on a thread of the kernel, the still image of a second watched MuJoCo env crashed the kernel
    import json
    import subprocess
    import sys

    pytest.importorskip("mujoco")
    environment = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "PYOPENGL_PLATFORM")}
    environment.update(MUJOCO_GL="glfw", PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[2]))
    done = subprocess.run([sys.executable, "-c", GLFW_PICTURES], capture_output=True, text=True, timeout=300,
                          env=environment)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(seen["errors"]) == 12 and max(seen["errors"]) < 2.0, seen  # each the env's own picture, every time
    assert seen["alive"] == [False, False, True], seen  # the helper holds the painter it drew last, no other


@pytest.mark.parametrize(("variables", "platform", "glfw"), [
    ({"MUJOCO_GL": "glfw"}, "linux", True),
    ({"MUJOCO_GL": "osmesa", "DISPLAY": ":0"}, "linux", False),
    ({"DISPLAY": ":0"}, "linux", True),  # gymnasium tries GLFW first
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
    ({}, "linux", False),  # GLFW cannot start: gymnasium goes on to EGL, OSMesa
    ({}, "darwin", True),
    ({}, "win32", True),
])
def test_mujoco_is_known_to_render_through_glfw_where_gymnasium_would_use_it(monkeypatch, variables, platform, glfw):
    from gymview.live.encoding.drawn_here import makes_glfw_windows

    for name in ("MUJOCO_GL", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.platform", platform)
    assert makes_glfw_windows() is glfw


NO_HELPER = """
import json, os, threading
import numpy as np
from gymview.live.encoding import encoder_process
from gymview.live.encoding.drawn_here import draw_scene_here

encoder_process.encoder_command = lambda: ["/nonexistent/python"]  # no helper can start here
threads = []
class PretendsOpenGL:
    draws_with_opengl = True
    def paint(self, state, canvas=None):
        threads.append(threading.current_thread().name)
        return np.full((6, 8, 3), int(state[0]), np.uint8)
pictures = [int(draw_scene_here(PretendsOpenGL(), np.array([value]))[0, 0, 0]) for value in (7.0, 9.0)]
print(json.dumps({"pictures": pictures, "threads": threads}))
"""


def test_where_no_helper_can_start_glfw_painters_draw_on_the_drawing_thread():
    import json
    import subprocess
    import sys

    environment = {**os.environ, "MUJOCO_GL": "glfw", "PYTHONPATH": str(pathlib.Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", NO_HELPER], capture_output=True, text=True, timeout=120,
                          env=environment)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["pictures"] == [7, 9] and all(name.startswith("gymview-draw") for name in seen["threads"]), seen


def test_a_view_s_kept_scene_frames_save_as_a_page_that_plays_them(tmp_path):
    from gymview.episodes.page_file import page_data, unpacked_states

    renderer = renderer_for("CartPole-v1")
    view = ShownView(fps=120)
    states = [np.array([0.1 * n, 0.0, 0.02 * n, 0.0]) for n in range(4)]
    for state in states:
        view.push(Drawing(renderer, state), force=True)
        view.flush()
    view.push(TiledDrawing.of(TiledPainter(renderer, 2), [np.zeros(4), np.ones(4)], [0.0, 1.0]), force=True)
    view.flush()
    data = json.loads(page_data(view.save_clip(tmp_path / "clip.html").read_text()))
    assert [scene["kind"] for scene in data["scenes"]] == ["cartpole", "grid"]
    assert [(s["scene"], s["frames"]) for s in data["segments"]] == [(0, 4), (1, 1)]
    np.testing.assert_allclose(unpacked_states(data["segments"][0]), np.array(states), rtol=0, atol=1e-5)
    assert unpacked_states(data["segments"][1]).tolist() == [[0, 0, 0, 0, 1, 1, 1, 1, 0, 1]]
    view.close()


def test_a_view_that_kept_pictures_says_to_save_them_as_video(tmp_path):
    view = ShownView(fps=120)
    view.push(np.zeros((32, 48, 3), np.uint8), force=True)
    view.flush()
    with pytest.raises(ValueError, match=r"1 of the 1 frames this view kept are pictures .*: save them as .mp4 or .gif"):
        view.save_clip(tmp_path / "clip.html")
    assert not (tmp_path / "clip.html").exists()
    view.close()


def test_a_watched_run_s_html_clip_charts_the_steps_of_its_frames(tmp_path):
    from gymview.episodes.page_file import page_data, unpacked_values

    now = [0.0]
    view = ShownView(fps=30, clock=lambda: now[0])  # a frame due at every step: 0.1 s apart
    env = gymview.watch(cartpole(), view=view, display=False)
    env.reset(seed=0)
    for _ in range(5):
        now[0] += 0.1
        env.step(1)
    view.flush()
    data = json.loads(page_data(view.save_clip(tmp_path / "run.html").read_text()))
    assert sum(segment["frames"] for segment in data["segments"]) == 6
    values = unpacked_values(data)
    assert values["return"] == [[0, 1, 2, 3, 4, 5]] and values["reward"][0][1:] == [1] * 5
    assert "reward" in data["charted"] and "terminated" not in data["charted"] and "step" not in data["values"]
    env.close()


def test_a_watched_vector_env_s_html_clip_charts_each_sub_env_s_steps(tmp_path):
    from gymview.episodes.page_file import page_data, unpacked_values

    now = [0.0]
    view = ShownView(fps=30, clock=lambda: now[0])
    vector = gym.make_vec("CartPole-v1", num_envs=2, render_mode="rgb_array", vectorization_mode="sync")
    envs = gymview.watch(vector, view=view, display=False)
    envs.reset(seed=0)
    for _ in range(3):
        now[0] += 0.1
        envs.step(np.array([0, 1]))
    view.flush()
    data = json.loads(page_data(view.save_clip(tmp_path / "grid.html").read_text()))
    returns = unpacked_values(data)["return"]
    assert data["scenes"][0]["kind"] == "grid" and len(returns) == 2  # a line a sub-env
    assert returns[0][-1] == returns[1][-1] == 3
    envs.close()


def test_a_watched_car_racing_goes_to_the_page_as_its_state_with_a_scene_for_each_track(monkeypatch):
    pytest.importorskip("Box2D")
    now = [0.0]
    view = ShownView(max_size=512, clock=lambda: now[0], draw="page")
    env = gymview.watch(gym.make("CarRacing-v3", render_mode="rgb_array"), view=view, display=False)
    monkeypatch.setattr(env.env, "render", lambda: pytest.fail("watch() called env.render()"))
    env.reset(seed=0)
    for _ in range(3):
        now[0] += 0.1
        env.step(np.array([0.0, 1.0, 0.0], np.float32))
    view.flush()
    first = view._scene
    assert first["kind"] == "carracing" and {header["format"] for header, _ in view.sent} == {"scene"}
    now[0] += 0.1
    env.reset(seed=1)  # a new track: a new scene
    view.flush()
    assert view._scene["id"] == first["id"] + 1 and view._scene["road"] != first["road"]
    assert not view._streamer.encodes_elsewhere or not view._streamer._encoder.has_run  # no helper process
    monkeypatch.undo()
    env.close()
    gymview.watch(gym.make("CarRacing-v3", render_mode="rgb_array"), draw="page", display=False).close()  # drawable
    vector = gym.make_vec("CarRacing-v3", num_envs=2, render_mode="rgb_array", vectorization_mode="sync")
    gymview.watch(vector, draw="page", display=False).close()  # and its grid
