import functools
import subprocess
import sys
import threading

import numpy as np
import pytest
from waiting import wait_until

torch = pytest.importorskip("torch")
gym = pytest.importorskip("gymnasium")
ale_py = pytest.importorskip("ale_py")
pytest.importorskip("cv2")

from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation  # noqa: E402

from gymview.atari import AtariPipeline, area_weights, atari_vector_env, wrap
from gymview.atari.resize import import_torch  # noqa: E402

gym.register_envs(ale_py)

CPU_BACKENDS = ["cv2", "torch"]
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
# (game, episode length in emulator frames): different lengths put resets at different steps of a batch
ENVS = [("ALE/Breakout-v5", 45), ("ALE/Pong-v5", 70), ("ALE/Breakout-v5", 100)]


class RecordFrames(gym.Wrapper):
    """Keeps every raw RGB frame the env returns, below AtariPreprocessing."""

    def __init__(self, env):
        super().__init__(env)
        self.frames = []

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.frames.append(obs)
        return obs, info

    def step(self, action):
        obs, *rest = self.env.step(action)
        self.frames.append(obs)
        return (obs, *rest)


@functools.cache
def recorded(frame_skip=1, grayscale=True, steps=120, stack=4):
    """Run len(ENVS) reference envs side by side, resetting an env on the step after it ended.

    Returns per step: the raw input batch (N, K, 210, 160, 3), the reset mask, the reference
    stacked observations (N, stack, ...) and which envs ended on that step.
    """
    envs, recorders = [], []
    for game, length in ENVS:
        base = gym.make(game, frameskip=1, repeat_action_probability=0.0, max_episode_steps=length)
        recorder = RecordFrames(base)
        env = AtariPreprocessing(recorder, frame_skip=frame_skip, noop_max=0, screen_size=84, grayscale_obs=grayscale)
        envs.append(FrameStackObservation(env, stack))
        recorders.append(recorder)
    rng = np.random.default_rng(0)
    pooled = 2 if frame_skip > 1 else 1
    ended = np.ones(len(envs), bool)
    batches = []
    for _ in range(steps):
        raw, expected, reset, now_ended = [], [], ended.copy(), np.zeros(len(envs), bool)
        for index, (env, recorder) in enumerate(zip(envs, recorders)):
            recorder.frames.clear()
            if ended[index]:
                obs, _ = env.reset(seed=index)
                frames = [recorder.frames[-1]] * pooled
            else:
                obs, _, terminated, truncated, _ = env.step(rng.integers(env.action_space.n))
                now_ended[index] = terminated or truncated
                frames = (recorder.frames * 2)[-pooled:]  # a mid-skip episode end may leave one frame
            raw.append(np.stack(frames))
            expected.append(obs)
        batches.append((np.stack(raw), reset, np.stack(expected), now_ended))
        ended = now_ended
    for env in envs:
        env.close()
    return batches


# On the step an episode ends, AtariPreprocessing leaves its frame-skip loop before reading the
# screen, so it repeats the previous frame; gymview gives the real last frame. Those steps are
# compared separately: all frames but the newest one must still match.
def assert_close(actual, expected, what):
    if actual.size == 0:
        return
    difference = np.abs(actual.astype(int) - expected.astype(int))
    assert difference.max() <= 2 and difference.mean() <= 0.5, f"{what}: max {difference.max()}, mean {difference.mean()}"


def run_pipeline(pipe, batches):
    outputs = []
    for raw, reset, _, _ in batches:
        pipe.put(raw if pipe.max_pool else raw[:, 0], reset_mask=reset)
        outputs.append(pipe.get().cpu().numpy())
    return outputs


def assert_matches_reference(outputs, batches, what):
    all_out = np.stack(outputs)
    all_expected = np.stack([expected for _, _, expected, _ in batches])
    ended = np.stack([ended for _, _, _, ended in batches])
    assert all_out.shape == all_expected.shape and all_out.dtype == np.uint8
    assert ended.sum() >= 3, "the recording should contain episode ends"
    assert_close(all_out[~ended], all_expected[~ended], what)
    assert_close(all_out[ended][:, :-1], all_expected[ended][:, :-1], f"{what}, older frames at episode ends")
    return all_out[~ended], all_expected[~ended]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_matches_atari_preprocessing_and_frame_stack_with_resets_inside_batches(backend):
    batches = recorded()
    assert sum(reset.sum() for _, reset, _, _ in batches[1:]) >= 3, "the recording should contain resets"
    with AtariPipeline(len(ENVS), device="cpu", backend=backend) as pipe:
        outputs = run_pipeline(pipe, batches)
    ours, expected = assert_matches_reference(outputs, batches, backend)
    if backend == "cv2":  # the same operations as the reference: exactly equal
        np.testing.assert_array_equal(ours, expected)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_max_pool_matches_frame_skip_4(backend):
    batches = recorded(frame_skip=4, steps=40)
    with AtariPipeline(len(ENVS), device="cpu", backend=backend, max_pool=True) as pipe:
        outputs = run_pipeline(pipe, batches)
    for step, (out, (_, _, expected, ended)) in enumerate(zip(outputs, batches)):
        # AtariPreprocessing keeps a stale screen on a step that ends mid-skip; compare the others.
        keep = ~ended
        assert_close(out[keep], expected[keep], f"step {step}")
        assert_close(out[~keep, :-1], expected[~keep, :-1], f"step {step}, episode end")


def test_rgb_option_matches_atari_preprocessing_rgb():
    batches = recorded(grayscale=False, steps=30)
    with AtariPipeline(len(ENVS), device="cpu", grayscale=False) as pipe:
        outputs = run_pipeline(pipe, batches)
    out = np.stack(outputs)
    expected = np.stack([expected for _, _, expected, _ in batches]).transpose(0, 1, 2, 5, 3, 4)
    assert out.shape == expected.shape == (30, len(ENVS), 4, 3, 84, 84)
    assert_close(out, expected, "rgb")


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_scale_gives_float32_in_unit_range(backend):
    raw = recorded()[5][0][:, 0]
    with AtariPipeline(len(ENVS), device="cpu", backend=backend) as plain:
        expected = plain.process(raw).numpy()
    with AtariPipeline(len(ENVS), device="cpu", backend=backend, scale=True) as scaled:
        out = scaled.process(raw)
    assert out.dtype == torch.float32 and 0.0 <= out.min() and out.max() <= 1.0
    np.testing.assert_allclose(out.numpy(), expected / 255.0, atol=1e-6)


def flat_frames(values):
    """(N, 210, 160, 3) frames, env i a flat grey of values[i] (gray and resize keep it exactly)."""
    return np.broadcast_to(np.asarray(values, np.uint8)[:, None, None, None], (len(values), 210, 160, 3)).copy()


def levels(out):
    return out[:, :, 0, 0].tolist()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_stack_order_and_reset_mask_semantics(backend):
    with AtariPipeline(3, stack=3, device="cpu", backend=backend) as pipe:
        pipe.put(flat_frames([10, 20, 30]))  # first batch: every stack starts filled with it
        pipe.put(flat_frames([11, 21, 31]))
        pipe.put(flat_frames([12, 22, 32]), reset_mask=np.array([False, True, False]))
        pipe.put(flat_frames([13, 23, 33]), reset_mask=np.array([True, False, False]))
        first, second, third, fourth = (pipe.get() for _ in range(4))
    assert levels(first) == [[10, 10, 10], [20, 20, 20], [30, 30, 30]]
    assert levels(second) == [[10, 10, 11], [20, 20, 21], [30, 30, 31]]
    assert levels(third) == [[10, 11, 12], [22, 22, 22], [30, 31, 32]]
    assert levels(fourth) == [[13, 13, 13], [22, 22, 23], [31, 32, 33]]


def test_results_are_not_overwritten_by_later_batches():
    with AtariPipeline(2, stack=2, device="cpu") as pipe:
        kept = [pipe.process(flat_frames([v, v + 1])) for v in (0, 50, 100)]
        for v in (150, 200):  # double buffering never reuses a tensor handed out
            pipe.process(flat_frames([v, v]))
    assert [levels(out) for out in kept] == [[[0, 0], [1, 1]], [[0, 50], [1, 51]], [[50, 100], [51, 101]]]


def test_puts_run_ahead_of_gets_and_get_returns_oldest_first():
    with AtariPipeline(1, stack=1, device="cpu") as pipe:
        for value in range(5):  # more than the two slots: put() waits for the thread, never deadlocks
            pipe.put(flat_frames([value]))
        assert [levels(pipe.get())[0][0] for _ in range(5)] == [0, 1, 2, 3, 4]
        with pytest.raises(RuntimeError, match="put"):
            pipe.get()
        pipe.put(flat_frames([9]))
        with pytest.raises(RuntimeError, match="pending"):
            pipe.process(flat_frames([9]))


def preprocess_threads():
    return [thread for thread in threading.enumerate() if thread.name == "gymview-preprocess"]


def test_close_leaves_no_thread_and_is_idempotent():
    pipe = AtariPipeline(2, device="cpu")
    pipe._hand_off.overlaps = True  # as after a caller that stayed away from get(): the thread starts
    pipe.put(flat_frames([1, 2]))
    assert preprocess_threads()
    pipe.close()
    pipe.close()
    assert not preprocess_threads()
    with pytest.raises(RuntimeError, match="closed"):
        pipe.put(flat_frames([1, 2]))


@pytest.mark.parametrize("converted_by", ["thread", "caller"])
def test_a_failed_batch_raises_its_error_in_get_and_the_pipeline_refuses_more(converted_by):
    pipe = AtariPipeline(2, device="cpu")
    pipe.process(flat_frames([1, 2]))
    ran_in = []
    converting = threading.Event()

    def broken(frames, out):
        ran_in.append(threading.current_thread().name)
        converting.set()
        raise ArithmeticError("resize exploded")

    pipe._resize = broken
    pipe._hand_off.overlaps = converted_by == "thread"  # as after a caller that stayed away from get()
    pipe.put(flat_frames([1, 2]))
    if converted_by == "thread":
        assert converting.wait(10)  # the thread took the batch before get() asked
    with pytest.raises(ArithmeticError, match="resize exploded"):
        pipe.get(timeout=10)
    if converted_by == "thread":
        assert ran_in == ["gymview-preprocess"]
    with pytest.raises(RuntimeError, match="failed on an earlier batch"):
        pipe.put(flat_frames([1, 2]))
    with pytest.raises(RuntimeError, match="failed on an earlier batch"):
        pipe.process(flat_frames([1, 2]))
    pipe.close()
    assert not preprocess_threads()


def test_a_caller_that_waits_for_each_result_converts_in_its_own_thread():
    with AtariPipeline(2, device="cpu") as pipe:
        pipe.process(flat_frames([1, 2]))
        names = []
        resize = pipe._resize

        def traced(frames, out):
            names.append(threading.current_thread().name)
            resize(frames, out)

        pipe._resize = traced
        for value in range(20):
            pipe.put(flat_frames([value, value]))
            assert levels(pipe.get())[0][-1] == value
    # The thread converts only a batch it reaches before get() asks, which needs the caller to lose
    # the GIL between put() and get(): it may happen now and then, never on every one of 20 batches.
    assert "MainThread" in names


class StepClock:
    """The pipeline's clock in these tests: it moves only when told (a conversion, the caller away)."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def traced_with_clock(pipe, clock, seconds_per_conversion=1.0):
    """Record which thread converts each batch; each conversion takes ``seconds_per_conversion`` on ``clock``."""
    pipe._hand_off.now = clock
    names, resize = [], pipe._resize

    def traced(frames, out):
        names.append(threading.current_thread().name)
        clock.now += seconds_per_conversion
        resize(frames, out)

    pipe._resize = traced
    return names


def test_a_caller_that_asks_for_each_batch_at_once_converts_it_in_put_and_wakes_no_thread():
    clock = StepClock()
    with AtariPipeline(2, device="cpu") as pipe:
        pipe.process(flat_frames([0, 0]))  # makes the resizer, which the tracing wraps
        names = traced_with_clock(pipe, clock)
        for value in range(1, 21):
            pipe.put(flat_frames([value, value]))
            assert len(names) == value  # converted before put() returned
            clock.now += 0.001  # the caller asks 1 ms later: a 1 s conversion would not overlap anything
            assert levels(pipe.get())[0][-1] == value
        assert not pipe.overlaps
        assert set(names) == {"MainThread"}
        assert not preprocess_threads()  # never started


def test_a_caller_that_steps_between_put_and_get_has_its_batches_converted_by_the_thread():
    clock = StepClock()
    with AtariPipeline(2, device="cpu") as pipe:
        pipe.process(flat_frames([0, 0]))
        names = traced_with_clock(pipe, clock)
        value, handed_over = 0, []
        for value in range(1, 16):  # the caller steps its envs (2 s) between put() and get()
            was_overlapping = pipe.overlaps
            pipe.put(flat_frames([value, value]))
            if was_overlapping:
                wait_until(lambda: len(names) == value, "the thread converting the batch")
                handed_over.append(names[-1])
            clock.now += 2.0
            assert levels(pipe.get())[0][-1] == value
        assert pipe.overlaps
        assert handed_over and set(handed_over) == {"gymview-preprocess"}
        assert len(names) == value  # every batch converted once, in order (the levels above)
        for value in range(16, 26):  # the caller asks at once again: back to converting in put()
            pipe.put(flat_frames([value, value]))
            clock.now += 0.001
            assert levels(pipe.get())[0][-1] == value
        assert not pipe.overlaps and names[-1] == "MainThread"


@pytest.mark.parametrize(
    ("frames", "error", "message"),
    [
        (np.zeros((2, 210, 160, 3), np.float32), TypeError, "uint8"),
        ([[0]], TypeError, "numpy array"),
        (np.zeros((3, 210, 160, 3), np.uint8), ValueError, r"\(2, H, W, 3\)"),
        (np.zeros((2, 210, 160), np.uint8), ValueError, "shape"),
        (np.zeros((2, 2, 210, 160, 3), np.uint8), ValueError, "shape"),
        (np.zeros((2, 40, 40, 3), np.uint8), ValueError, "smaller than size"),
    ],
)
def test_bad_frames_get_clear_errors(frames, error, message):
    with AtariPipeline(2, device="cpu") as pipe:
        with pytest.raises(error, match=message):
            pipe.put(frames)


def test_bad_reset_mask_frame_size_change_and_max_pool_shape():
    with AtariPipeline(2, device="cpu") as pipe:
        with pytest.raises(ValueError, match="reset_mask"):
            pipe.put(flat_frames([1, 2]), reset_mask=np.array([1, 0]))
        with pytest.raises(ValueError, match="reset_mask"):
            pipe.process(flat_frames([1, 2]), reset_mask=np.array([True]))
        # bad input leaves the pipeline usable, and the first good batch still fills every stack
        assert levels(pipe.process(flat_frames([3, 4]))) == [[3, 3, 3, 3], [4, 4, 4, 4]]
        pipe.process(flat_frames([1, 2]))
        with pytest.raises(ValueError, match="keep the size"):
            pipe.put(np.zeros((2, 220, 160, 3), np.uint8))
    with AtariPipeline(2, device="cpu", max_pool=True) as pipe:
        with pytest.raises(ValueError, match="last two frames"):
            pipe.put(flat_frames([1, 2]))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_envs": 0}, "num_envs"),
        ({"num_envs": 2, "stack": 1.5}, "stack"),
        ({"num_envs": 2, "backend": "numba"}, "backend"),
        ({"num_envs": 2, "device": "cuda", "backend": "cv2"}, "CPU only"),
        pytest.param({"num_envs": 2, "device": "cuda"}, "no CUDA", marks=pytest.mark.skipif(torch.cuda.is_available(), reason="has CUDA")),
    ],
)
def test_bad_arguments_get_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AtariPipeline(**kwargs)


def test_backend_choice_on_cpu():
    with AtariPipeline(1, device="cpu") as pipe:
        assert (pipe.backend, pipe.device.type) == ("cv2", "cpu")
    with AtariPipeline(1, device="cpu", backend="torch") as pipe:
        assert pipe.backend == "torch"


def test_missing_torch_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r"gymview\[torch\]"):
        import_torch()


def test_import_gymview_imports_neither_torch_nor_preprocess():
    code = "import sys, gymview; print('torch' in sys.modules, 'gymview.atari' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


def test_area_weights_are_opencv_inter_area():
    import cv2

    image = np.random.default_rng(1).integers(0, 256, (210, 160)).astype(np.float32)
    ours = area_weights(210, 84) @ image @ area_weights(160, 84).T
    np.testing.assert_allclose(ours, cv2.resize(image, (84, 84), interpolation=cv2.INTER_AREA), atol=1e-3)


def test_preview_shows_the_latest_stack_side_by_side():
    with AtariPipeline(2, stack=3, device="cpu", scale=True) as pipe:
        assert pipe.preview().shape == (168, 504, 3)  # before any batch: black
        pipe.process(flat_frames([10, 20]))
        pipe.process(flat_frames([11, 21]))
        image = pipe.preview(env_index=1, zoom=2)
        with pytest.raises(ValueError, match="env_index"):
            pipe.preview(env_index=2)
    assert image.shape == (168, 504, 3) and image.dtype == np.uint8
    assert [image[0, column * 168, 0] for column in range(3)] == [20, 20, 21]


def make_sync(wrappers=()):
    def make(game, length):
        env = gym.make(game, frameskip=1, repeat_action_probability=0.0, max_episode_steps=length)
        for wrapper in wrappers:
            env = wrapper(env)
        return env

    return gym.vector.SyncVectorEnv([functools.partial(make, "ALE/Breakout-v5", length) for _, length in ENVS])


def test_wrap_handles_next_step_autoreset_like_per_env_wrappers():
    reference = make_sync(
        [lambda e: AtariPreprocessing(e, frame_skip=1, noop_max=0), lambda e: FrameStackObservation(e, 4)]
    )
    envs = wrap(make_sync(), device="cpu")
    assert envs.observation_space.shape == (3, 4, 84, 84)
    obs, _ = envs.reset(seed=3)
    expected, _ = reference.reset(seed=3)
    assert_close(obs.numpy(), expected, "reset")
    rng = np.random.default_rng(2)
    autoresets = 0
    for step in range(110):
        actions = rng.integers(0, 4, size=3)
        obs, _, terminated, truncated, _ = envs.step(actions)
        expected, *_ = reference.step(actions)
        ended = terminated | truncated
        assert_close(obs.numpy()[~ended], expected[~ended], f"step {step}")
        assert_close(obs.numpy()[ended, :-1], expected[ended, :-1], f"step {step}, episode end")
        autoresets += int(np.sum(ended))
    assert autoresets >= 3
    envs.close()
    reference.close()
    assert not preprocess_threads()


def test_wrap_rejects_same_step_autoreset_partial_resets_and_preprocessed_obs():
    same_step = gym.vector.SyncVectorEnv(
        [lambda: gym.make("ALE/Pong-v5", frameskip=1)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    with pytest.raises(ValueError, match="NEXT_STEP"):
        wrap(same_step, device="cpu")
    same_step.close()
    envs = wrap(make_sync(), device="cpu")
    with pytest.raises(ValueError, match="partial"):
        envs.reset(options={"reset_mask": np.array([True, False, False])})
    envs.close()
    native = gym.make_vec("ALE/Pong-v5", 2)  # ale_py's own preprocessing: already (2, 4, 84, 84)
    with pytest.raises(ValueError, match="raw RGB frames"):
        wrap(native, device="cpu")
    native.close()


def test_wrap_of_ale_raw_frames_matches_atari_vector_env_native_path():
    options = dict(frameskip=1, noop_max=0, repeat_action_probability=0.0, use_fire_reset=False)
    native = atari_vector_env("breakout", 2, device="cpu", **options)
    assert native.backend == "ale_py"
    raw = ale_py.vector_env.AtariVectorEnv(
        "breakout", 2, img_height=210, img_width=160, grayscale=False, stack_num=1, **options
    )
    ours = wrap(raw, device="cpu")
    obs, _ = ours.reset(seed=5)
    expected, _ = native.reset(seed=5)
    assert_close(obs.numpy(), expected.numpy(), "reset")
    for step in range(40):
        actions = np.array([step % 4, (step + 1) % 4])
        obs, *_ = ours.step(actions)
        expected, *_ = native.step(actions)
        assert_close(obs.numpy(), expected.numpy(), f"step {step}")
    ours.close()
    native.close()


@needs_cuda
def test_cuda_matches_atari_preprocessing_and_frame_stack_and_the_cpu_torch_path():
    batches = recorded()
    with AtariPipeline(len(ENVS), device="cuda") as pipe:
        assert pipe.backend == "torch"
        outputs = []
        for raw, reset, _, _ in batches:  # every batch put before any is taken: double buffering at work
            pipe.put(raw[:, 0], reset_mask=reset)
        for _ in batches:
            out = pipe.get()
            assert out.is_cuda
            outputs.append(out.cpu().numpy())
    assert_matches_reference(outputs, batches, "cuda")
    with AtariPipeline(len(ENVS), device="cpu", backend="torch") as pipe:
        np.testing.assert_array_equal(np.stack(outputs), np.stack(run_pipeline(pipe, batches)))


@needs_cuda
def test_cuda_results_are_ordered_on_the_consumer_stream_and_scale():
    side = torch.cuda.Stream()
    with AtariPipeline(2, stack=2, device="cuda", scale=True) as pipe, torch.cuda.stream(side):
        pipe.put(flat_frames([0, 255]))
        pipe.put(flat_frames([255, 0]), reset_mask=np.array([False, True]))
        first, second = pipe.get(), pipe.get()
        result = (first + second).cpu()  # kernels on `side`, ordered after the pipeline's events
    assert first.dtype == torch.float32
    # env 0: [0, 0] + [0, 1]; env 1: [1, 1] + [0, 0] (restarted by the reset mask)
    assert result[:, :, 0, 0].tolist() == [[0.0, 1.0], [1.0, 1.0]]


# --- the CUDA path on a machine without CUDA ----------------------------------------------------
# Streams and events are simulated (they log what the pipeline asks of them; work runs at once on
# CPU tensors), so the CUDA code path runs everywhere: its results must equal the references, and
# the log must show the ordering that makes double buffering safe on a real GPU.


class FakeStream:
    def __init__(self, log, label):
        self.log, self.label = log, label

    def wait_event(self, event):
        self.log.append(("wait", self.label, event.label))


class FakeEvent:
    count = 0

    def __init__(self, log, label=None):
        FakeEvent.count += 1
        self.log, self.label = log, label or f"event{FakeEvent.count}"

    def record(self, stream):
        self.log.append(("record", self.label, stream.label))

    def synchronize(self):
        self.log.append(("host_wait", self.label))


class FakeCuda:
    def __init__(self, log):
        self.log, self._current = log, threading.local()
        self._made = 0

    def is_available(self):
        return True

    def current_device(self):
        return 0

    def Stream(self, device=None):  # noqa: N802 - torch's name
        self._made += 1
        return FakeStream(self.log, ("copy", "compute")[self._made - 1])

    def Event(self):  # noqa: N802
        return FakeEvent(self.log)

    def current_stream(self, device=None):
        return getattr(self._current, "stream", None) or FakeStream(self.log, "consumer")

    def synchronize(self, device=None):
        self.log.append(("device_sync",))

    def stream(self, stream):
        cuda = self

        class Scope:
            def __enter__(self):
                self.previous = getattr(cuda._current, "stream", None)
                cuda._current.stream = stream

            def __exit__(self, *exc_info):
                cuda._current.stream = self.previous

        return Scope()


class FakeDevice:
    type, index = "cuda", 0


class FakeCudaTorch:
    """torch, except that 'cuda' devices are simulated by CPU tensors and logging streams."""

    def __init__(self, log):
        self.cuda = FakeCuda(log)

    def __getattr__(self, name):
        return getattr(torch, name)

    def device(self, *args):
        return FakeDevice() if "cuda" in str(args[0]) else torch.device(*args)

    def _on_cpu(self, function, *args, **kwargs):
        kwargs.pop("pin_memory", None)
        if isinstance(kwargs.get("device"), FakeDevice):
            kwargs["device"] = "cpu"
        return function(*args, **kwargs)

    def tensor(self, *args, **kwargs):
        return self._on_cpu(torch.tensor, *args, **kwargs)

    def as_tensor(self, *args, **kwargs):
        return self._on_cpu(torch.as_tensor, *args, **kwargs)

    def zeros(self, *args, **kwargs):
        return self._on_cpu(torch.zeros, *args, **kwargs)

    def empty(self, *args, **kwargs):
        return self._on_cpu(torch.empty, *args, **kwargs)


def test_cuda_path_runs_with_simulated_streams_and_orders_every_hand_over(monkeypatch):
    log = []
    fake = FakeCudaTorch(log)
    monkeypatch.setattr("gymview.atari.pipeline.import_torch", lambda: fake)
    handed_to = []
    monkeypatch.setattr(torch.Tensor, "record_stream", lambda tensor, stream: handed_to.append(stream.label), raising=False)
    batches = recorded()[:12]
    with AtariPipeline(len(ENVS), device="cuda") as pipe:
        assert (pipe.backend, pipe.device.type) == ("torch", "cuda")
        outputs = []
        for index, (raw, reset, _, _) in enumerate(batches):
            pipe.put(raw[:, 0], reset_mask=reset)
            if index % 2:  # both slots in use, then both results taken
                outputs += [pipe.get().numpy(), pipe.get().numpy()]
        transfer = pipe._cuda
    assert_close(np.stack(outputs), np.stack([expected for _, _, expected, _ in batches]), "simulated cuda")

    copied = [event.label for event in transfer._copied]
    computed = [event.label for event in transfer._computed]
    steps = iter(log)
    for batch in range(len(batches)):
        slot = batch % 2
        # The protocol of one batch, in this order (other entries may come in between):
        expected = [
            ("host_wait", copied[slot]),  # the pinned slot's previous copy is done before refilling it
            ("wait", "copy", computed[slot]),  # the device slot's previous reader is done
            ("record", copied[slot], "copy"),
            ("wait", "compute", copied[slot]),  # compute starts after the copy
            ("record", computed[slot], "compute"),
        ]
        for entry in expected:
            assert entry in steps, f"batch {batch}: {entry} missing or out of order in {log}"
    ready = [entry for entry in log if entry[0] == "record" and entry[2] == "compute" and entry[1] not in computed]
    consumer_waits = [entry[2] for entry in log if entry[:2] == ("wait", "consumer")]
    assert len(ready) == len(batches) and consumer_waits == [entry[1] for entry in ready]  # get() waits for each
    assert handed_to.count("consumer") == len(batches)  # outputs are not recycled under the consumer


def test_cv2_results_do_not_depend_on_the_resize_threads_or_stacking_frames_for_one_resize(monkeypatch):
    import cv2

    from gymview.atari.exact_area import ExactAreaResize
    from gymview.atari.resize import Cv2Resizer

    batches = recorded()[:30]

    def outputs():
        with AtariPipeline(len(ENVS), device="cpu", backend="cv2") as pipe:
            result = np.stack(run_pipeline(pipe, batches))
            threads = pipe.threads
        assert not [t for t in threading.enumerate() if t.name.startswith("gymview-preprocess")]
        return result, threads

    exact, threads = outputs()
    assert threads == 1  # 3 envs: less than a chunk of ExactAreaResize
    monkeypatch.setattr(ExactAreaResize, "supported", staticmethod(lambda *sizes: False))
    default, threads = outputs()
    assert threads == min(cv2.getNumThreads(), len(ENVS))
    previous = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        alone, threads = outputs()
    finally:
        cv2.setNumThreads(previous)
    assert threads == 1
    monkeypatch.setattr(Cv2Resizer, "_stacking_is_exact", lambda self, *args: False)
    frame_by_frame, _ = outputs()
    np.testing.assert_array_equal(exact, default)
    np.testing.assert_array_equal(default, alone)
    np.testing.assert_array_equal(default, frame_by_frame)
