"""Atari-style observation preprocessing into network-ready, frame-stacked torch tensors.

Raw uint8 RGB frames from a vector env go in; (N, stack, size, size) tensors on the target
device come out: grayscale + area resize (matching gymnasium's ``AtariPreprocessing``) + frame
stacking (matching ``FrameStackObservation``). Batches are processed in a background thread
so stepping batch t+1 overlaps the transfer and compute of batch t. torch is imported only
here (``pip install gymview[torch]``); ``import gymview`` never imports this module.

>>> import numpy as np
>>> pipe = AtariPipeline(num_envs=2, device="cpu")
>>> pipe.put(np.zeros((2, 210, 160, 3), np.uint8))
>>> obs = pipe.get()
>>> tuple(obs.shape), str(obs.dtype)
((2, 4, 84, 84), 'torch.uint8')
>>> pipe.close()
"""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING, Any

import gymnasium.vector
import numpy as np
from gymnasium.spaces import Box

from gymview._worker import Worker
from gymview.frames import tile

if TYPE_CHECKING:
    import torch

__all__ = ["AtariPipeline", "PreprocessedVectorEnv", "wrap", "atari_vector_env", "area_weights", "GRAY_WEIGHTS"]

GRAY_WEIGHTS = (0.299, 0.587, 0.114)
"""RGB → gray weights of ALE's ``getScreenGrayscale`` (and of cv2's ``COLOR_RGB2GRAY``)."""

_POLL_S = 0.05  # how often a blocked put()/get() looks whether the worker thread died


def _torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise ImportError("gymview.preprocess needs PyTorch: pip install 'gymview[torch]'") from error
    return torch


def _cv2() -> Any | None:
    try:
        import cv2
    except ImportError:
        return None
    return cv2


def area_weights(source: int, target: int) -> np.ndarray:
    """(target, source) matrix of area-resize weights: each row averages the source pixels it covers.

    ``area_weights(h, s) @ image @ area_weights(w, s).T`` is OpenCV's ``INTER_AREA`` resize.

    >>> area_weights(5, 2).round(2).tolist()
    [[0.4, 0.4, 0.2, 0.0, 0.0], [0.0, 0.0, 0.2, 0.4, 0.4]]
    """
    if source < 1 or target < 1:
        raise ValueError(f"sizes must be positive; got source={source}, target={target}")
    scale = source / target
    edges = np.arange(target + 1) * scale
    left, right = edges[:-1, None], edges[1:, None]
    pixel = np.arange(source)[None, :]
    overlap = np.clip(np.minimum(right, pixel + 1) - np.maximum(left, pixel), 0.0, None)
    return overlap / overlap.sum(axis=1, keepdims=True)


class _Cv2Resizer:
    """CPU: one batched cv2 grayscale conversion, then cv2 INTER_AREA per frame (cv2 releases the GIL)."""

    name = "cv2"

    def __init__(self, cv2: Any, torch: Any, size: int, grayscale: bool) -> None:
        self._cv2, self._torch, self._size, self._grayscale = cv2, torch, size, grayscale

    def __call__(self, frames: np.ndarray) -> torch.Tensor:
        cv2, size = self._cv2, self._size
        n, k, h, w, _ = frames.shape
        frames = np.ascontiguousarray(frames)
        if self._grayscale:
            images = cv2.cvtColor(frames.reshape(n * k * h, w, 3), cv2.COLOR_RGB2GRAY).reshape(n, k, h, w)
        else:
            images = frames
        images = images.max(axis=1) if k > 1 else images[:, 0]
        if self._grayscale:
            out = np.empty((n, size, size), np.uint8)
            for index in range(n):
                cv2.resize(images[index], (size, size), dst=out[index], interpolation=cv2.INTER_AREA)
        else:
            out = np.empty((n, size, size, 3), np.uint8)
            for index in range(n):
                cv2.resize(images[index], (size, size), dst=out[index], interpolation=cv2.INTER_AREA)
            out = out.transpose(0, 3, 1, 2)
        return self._torch.from_numpy(out)


class _TorchResizer:
    """Any device: gray = weighted channel sum, area resize = two small matmuls, all in float32."""

    name = "torch"

    def __init__(self, torch: Any, size: int, grayscale: bool, height: int, width: int, device: Any) -> None:
        self._torch, self._grayscale = torch, grayscale
        self._rows = torch.tensor(area_weights(height, size), dtype=torch.float32, device=device)
        self._columns = torch.tensor(area_weights(width, size).T, dtype=torch.float32, device=device)
        self._gray = torch.tensor(GRAY_WEIGHTS, dtype=torch.float32, device=device)

    def __call__(self, frames: torch.Tensor) -> torch.Tensor:
        pixels = frames.float()  # (n, k, h, w, 3)
        if self._grayscale:
            images = (pixels @ self._gray).round_()  # ALE rounds its gray screen to uint8 levels
        else:
            images = pixels.permute(0, 1, 4, 2, 3)
        images = images.amax(dim=1) if images.shape[1] > 1 else images[:, 0]
        resized = self._rows @ images @ self._columns
        return resized.round_().clamp_(0, 255).to(self._torch.uint8)


class _FrameStack:
    """Per-env stacks in one ring buffer on the device: each step writes one frame per env."""

    def __init__(self, torch: Any, num_envs: int, stack: int, frame_shape: tuple[int, ...], device: Any) -> None:
        self._ring = torch.zeros((num_envs, stack, *frame_shape), dtype=torch.uint8, device=device)
        self._stack = stack
        self._head = stack - 1
        self._orders = [
            torch.tensor([(head + 1 + age) % stack for age in range(stack)], device=device) for head in range(stack)
        ]

    def push(self, frames: torch.Tensor, reset_index: torch.Tensor | None) -> torch.Tensor:
        """Add the newest frame of every env; envs in ``reset_index`` restart filled with it."""
        self._head = (self._head + 1) % self._stack
        self._ring[:, self._head] = frames
        if reset_index is not None:
            self._ring[reset_index] = frames[reset_index].unsqueeze(1)
        return self._ring.index_select(1, self._orders[self._head])  # a new tensor, oldest frame first


class AtariPipeline:
    """Turn batches of raw uint8 RGB frames into stacked (N, stack, size, size) tensors on ``device``.

    ``put(frames, reset_mask)`` hands over one batch and returns at once; a background thread
    converts it; ``get()`` returns the result of the oldest batch not yet taken, always complete.
    At most two batches wait for the thread (double buffering); a third ``put()`` blocks until
    one is taken up. ``put()`` keeps a reference to ``frames``: do not write into that array until
    its result came back from ``get()`` (gymnasium and ale_py vector envs return fresh arrays).

    ``frames`` is (N, H, W, 3), or (N, 1, H, W, 3) as ale_py's ``AtariVectorEnv`` returns raw
    frames. With ``max_pool=True`` it is (N, 2, H, W, 3): the last two emulator frames of each env,
    max-pooled after the gray conversion like ``AtariPreprocessing(frame_skip>1)`` (on a reset,
    pass the reset frame twice). A True in ``reset_mask`` restarts that env's stack filled with this
    frame (``FrameStackObservation``'s default padding); the first batch restarts every env.

    ``grayscale=False`` gives (N, stack, 3, size, size); ``scale=True`` gives float32 in [0, 1].
    ``backend``: ``"torch"`` (any device; CUDA: pinned host buffers, a copy stream and a compute
    stream ordered by events) or ``"cv2"`` (CPU only, the fastest CPU path); ``"auto"`` picks
    torch on CUDA, else cv2 when installed. ``pipe.backend`` and ``pipe.device`` tell what was used.

    >>> import numpy as np
    >>> with AtariPipeline(num_envs=3, stack=2, device="cpu", scale=True) as pipe:
    ...     pipe.put(np.full((3, 210, 160, 3), 255, np.uint8))
    ...     pipe.put(np.zeros((3, 210, 160, 3), np.uint8), reset_mask=np.array([False, True, False]))
    ...     first, second = pipe.get(), pipe.get()
    >>> first[:, :, 0, 0].tolist(), second[:, :, 0, 0].tolist()
    ([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    """

    def __init__(
        self,
        num_envs: int,
        size: int = 84,
        stack: int = 4,
        grayscale: bool = True,
        scale: bool = False,
        max_pool: bool = False,
        device: str | torch.device = "auto",
        backend: str = "auto",
    ) -> None:
        for name, value in (("num_envs", num_envs), ("size", size), ("stack", stack)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive int; got {value!r}")
        torch = self._torch = _torch()
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device: torch.device = torch.device(device)
        cv2 = _cv2()
        if backend == "auto":
            backend = "cv2" if self.device.type == "cpu" and cv2 is not None else "torch"
        if backend not in ("cv2", "torch"):
            raise ValueError(f"backend must be 'auto', 'cv2' or 'torch'; got {backend!r}")
        if backend == "cv2" and cv2 is None:
            raise ImportError("backend='cv2' needs OpenCV: pip install 'gymview[atari]' (or use backend='torch')")
        if backend == "cv2" and self.device.type != "cpu":
            raise ValueError(f"backend='cv2' runs on the CPU only; use backend='torch' for device {self.device}")
        if self.device.type == "cuda":
            if not torch.cuda.is_available():
                raise ValueError(f"device='{device}' but this torch sees no CUDA GPU; use device='auto' or 'cpu'")
            if self.device.index is None:
                self.device = torch.device("cuda", torch.cuda.current_device())
        self.backend: str = backend
        self.num_envs, self.size, self.stack = int(num_envs), int(size), int(stack)
        self.grayscale, self.scale, self.max_pool = bool(grayscale), bool(scale), bool(max_pool)
        self._cv2 = cv2
        self._frame_hw: tuple[int, int] | None = None  # learned from the first batch
        self._resize: _Cv2Resizer | _TorchResizer | None = None
        self._stack: _FrameStack | None = None
        self._inputs: queue.Queue[tuple[np.ndarray, np.ndarray] | None] = queue.Queue()
        self._results: queue.Queue[tuple[torch.Tensor, Any]] = queue.Queue()
        self._free_slots = threading.Semaphore(2)
        self._outstanding = 0  # batches put but not yet taken by get()
        self._latest: tuple[torch.Tensor, Any] | None = None
        self._cuda: _CudaTransfer | None = _CudaTransfer(torch, self.device) if self.device.type == "cuda" else None
        self._worker = Worker("preprocess", self._run, wake=lambda: self._inputs.put(None))
        self._closed = False
        self._started = False  # the first batch restarts every env's stack

    # -- the user's thread -------------------------------------------------------------------
    def put(self, frames: np.ndarray, reset_mask: np.ndarray | None = None) -> None:
        """Hand over one batch of raw frames; returns as soon as the thread has room for it."""
        if self._closed:
            raise RuntimeError("this AtariPipeline is closed; create a new one")
        batch = self._check_frames(frames)
        mask = self._check_mask(reset_mask)  # last: it marks the pipeline as started
        self._worker.start()
        while not self._free_slots.acquire(timeout=_POLL_S):
            self._worker.check()
            if not self._worker.running:
                self._worker.start()
        self._outstanding += 1
        self._inputs.put((batch, mask))

    def get(self, timeout: float | None = None) -> torch.Tensor:
        """Stacked observations of the oldest batch not yet taken: (N, stack, size, size).

        On CUDA the tensor is ordered after its computation on the caller's current stream, so it
        can be used at once without a host synchronisation.
        """
        if self._outstanding == 0:
            raise RuntimeError("get() has no batch to return: call put(frames) first (one get() per put())")
        waited = 0.0
        while True:
            try:
                out, ready = self._results.get(timeout=_POLL_S)
                break
            except queue.Empty:
                self._worker.check()
                waited += _POLL_S
                if timeout is not None and waited >= timeout:
                    raise TimeoutError(f"no preprocessed batch within {timeout} s") from None
        self._outstanding -= 1
        if self._cuda is not None:
            self._cuda.hand_over(out, ready)
        return out

    def process(self, frames: np.ndarray, reset_mask: np.ndarray | None = None) -> torch.Tensor:
        """The stacked observations for this batch, converted in the caller's thread.

        For a loop that needs each result before its next step (a policy acting on it), where
        handing the batch to the thread would only add a hand-off.

        >>> import numpy as np
        >>> with AtariPipeline(num_envs=1, stack=3, device="cpu") as pipe:
        ...     tuple(pipe.process(np.zeros((1, 210, 160, 3), np.uint8)).shape)
        (1, 3, 84, 84)
        """
        if self._closed:
            raise RuntimeError("this AtariPipeline is closed; create a new one")
        if self._outstanding:
            raise RuntimeError(f"process() needs an empty pipeline; take the {self._outstanding} pending batches with get()")
        self._worker.check()
        batch = self._check_frames(frames)
        out, ready = self._latest = self._convert(batch, self._check_mask(reset_mask))
        if self._cuda is not None:
            self._cuda.hand_over(out, ready)
        return out

    def preview(self, env_index: int = 0, zoom: int = 2) -> np.ndarray:
        """What the agent sees: env ``env_index``'s latest stack side by side, oldest first, as (H, W, 3) uint8.

        >>> import numpy as np
        >>> with AtariPipeline(num_envs=1, device="cpu") as pipe:
        ...     _ = pipe.process(np.zeros((1, 210, 160, 3), np.uint8))
        ...     pipe.preview(zoom=2).shape
        (168, 672, 3)
        """
        if not 0 <= env_index < self.num_envs:
            raise ValueError(f"env_index must be in 0..{self.num_envs - 1}; got {env_index}")
        if zoom < 1:
            raise ValueError(f"zoom must be a positive int; got {zoom}")
        latest = self._latest
        if latest is None:
            return np.zeros((self.size * zoom, self.size * zoom * self.stack, 3), np.uint8)
        out, ready = latest
        if ready is not None:
            ready.synchronize()
        frames = out[env_index].cpu().numpy()
        if self.scale:
            frames = (frames * 255.0 + 0.5).astype(np.uint8)
        frames = frames[..., None].repeat(3, axis=-1) if self.grayscale else frames.transpose(0, 2, 3, 1)
        frames = frames.repeat(zoom, axis=1).repeat(zoom, axis=2)
        return tile(list(frames), columns=self.stack)

    def close(self) -> None:
        """Stop the thread (re-raising its failure, if any). Idempotent."""
        self._closed = True
        self._worker.stop()

    def __enter__(self) -> AtariPipeline:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"AtariPipeline(num_envs={self.num_envs}, size={self.size}, stack={self.stack}, "
            f"grayscale={self.grayscale}, scale={self.scale}, max_pool={self.max_pool}, "
            f"device='{self.device}', backend='{self.backend}')"
        )

    def _check_frames(self, frames: np.ndarray) -> np.ndarray:
        if not isinstance(frames, np.ndarray):
            raise TypeError(f"frames must be a numpy array of uint8 RGB frames; got {type(frames).__name__}")
        if frames.dtype != np.uint8:
            raise TypeError(f"frames must have dtype uint8 (raw emulator frames); got {frames.dtype}")
        pooled = 2 if self.max_pool else 1
        if frames.ndim == 4 and not self.max_pool:
            frames = frames[:, None]
        if frames.ndim != 5 or frames.shape[0] != self.num_envs or frames.shape[1] != pooled or frames.shape[4] != 3:
            expected = (
                f"({self.num_envs}, 2, H, W, 3): the last two frames of each env, as max_pool=True"
                if self.max_pool
                else f"({self.num_envs}, H, W, 3) or ({self.num_envs}, 1, H, W, 3)"
            )
            raise ValueError(f"frames must have shape {expected}; got {frames.shape}")
        height, width = frames.shape[2:4]
        if self._frame_hw is None:
            if height < self.size or width < self.size:
                raise ValueError(f"frames of {height}x{width} are smaller than size={self.size}")
            self._frame_hw = (height, width)
        elif (height, width) != self._frame_hw:
            raise ValueError(f"frames must keep the size of the first batch, {self._frame_hw}; got {(height, width)}")
        return frames

    def _check_mask(self, reset_mask: np.ndarray | None) -> np.ndarray:
        first, self._started = not self._started, True
        if reset_mask is None:
            return np.full(self.num_envs, first)
        mask = np.asarray(reset_mask)
        if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
            raise ValueError(f"reset_mask must be a bool array of shape ({self.num_envs},); got {mask.dtype} {mask.shape}")
        return mask | first

    # -- the worker thread -------------------------------------------------------------------
    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            item = self._inputs.get()
            if item is None:
                return
            try:
                result = self._convert(*item)
            finally:
                self._free_slots.release()
            self._latest = result
            self._results.put(result)

    def _convert(self, frames: np.ndarray, reset_mask: np.ndarray) -> tuple[torch.Tensor, Any]:
        torch = self._torch
        if self._resize is None:
            self._resize = self._make_resizer()
            shape = (self.size, self.size) if self.grayscale else (3, self.size, self.size)
            self._stack = _FrameStack(torch, self.num_envs, self.stack, shape, self.device)
            if self._cuda is not None:
                torch.cuda.synchronize(self.device)  # the set-up copies ran on the default stream
        reset = np.flatnonzero(reset_mask)
        if self._cuda is None:
            source = frames if self.backend == "cv2" else torch.from_numpy(np.ascontiguousarray(frames))
            return self._finish(self._resize(source), reset), None
        with self._cuda.on_device(frames) as source:
            return self._finish(self._resize(source), reset), self._cuda.done()

    def _make_resizer(self) -> _Cv2Resizer | _TorchResizer:
        if self.backend == "cv2":
            return _Cv2Resizer(self._cv2, self._torch, self.size, self.grayscale)
        height, width = self._frame_hw
        return _TorchResizer(self._torch, self.size, self.grayscale, height, width, self.device)

    def _finish(self, frames: torch.Tensor, reset: np.ndarray) -> torch.Tensor:
        reset_index = self._torch.as_tensor(reset, device=self.device) if reset.size else None
        stacked = self._stack.push(frames, reset_index)
        if self.scale:
            return stacked.to(self._torch.float32).mul_(1.0 / 255.0)
        return stacked


class _CudaTransfer:
    """Pinned host slots → device slots on a copy stream; compute on a second stream; events order them.

    Slot k alternates between batches (double buffering): the host waits for the copy that last read
    pinned slot k before refilling it, and the copy stream waits for the compute that last read device
    slot k before overwriting it, so copying batch t+1 overlaps computing batch t.
    """

    def __init__(self, torch: Any, device: Any) -> None:
        self._torch, self._device = torch, device
        self._copy_stream = torch.cuda.Stream(device)
        self._compute_stream = torch.cuda.Stream(device)
        self._copied = [torch.cuda.Event(), torch.cuda.Event()]
        self._computed = [torch.cuda.Event(), torch.cuda.Event()]
        self._pinned: list[Any] = [None, None]
        self._on_device: list[Any] = [None, None]
        self._slot = 1

    def on_device(self, frames: np.ndarray) -> _ComputeScope:
        torch = self._torch
        self._slot ^= 1
        slot = self._slot
        if self._pinned[slot] is None or tuple(self._pinned[slot].shape) != frames.shape:
            self._pinned[slot] = torch.empty(frames.shape, dtype=torch.uint8, pin_memory=True)
            with torch.cuda.stream(self._copy_stream):
                self._on_device[slot] = torch.empty(frames.shape, dtype=torch.uint8, device=self._device)
            self._on_device[slot].record_stream(self._compute_stream)
        self._copied[slot].synchronize()  # the previous copy out of this pinned slot has finished
        np.copyto(self._pinned[slot].numpy(), frames)
        with torch.cuda.stream(self._copy_stream):
            self._copy_stream.wait_event(self._computed[slot])  # the device slot is no longer read
            self._on_device[slot].copy_(self._pinned[slot], non_blocking=True)
            self._copied[slot].record(self._copy_stream)
        self._compute_stream.wait_event(self._copied[slot])
        return _ComputeScope(torch, self._compute_stream, self._on_device[slot], self._computed[slot])

    def done(self) -> Any:
        """An event recorded after the batch's last kernel; the consumer's stream waits on it."""
        ready = self._torch.cuda.Event()
        ready.record(self._compute_stream)
        return ready

    def hand_over(self, out: torch.Tensor, ready: Any) -> None:
        consumer = self._torch.cuda.current_stream(self._device)
        consumer.wait_event(ready)
        out.record_stream(consumer)  # the allocator must not reuse out's memory before the consumer is done


class _ComputeScope:
    """``with`` block running on the compute stream; records the slot's 'computed' event on exit."""

    def __init__(self, torch: Any, stream: Any, source: Any, computed: Any) -> None:
        self._context = torch.cuda.stream(stream)
        self._stream, self._source, self._computed = stream, source, computed

    def __enter__(self) -> Any:
        self._context.__enter__()
        return self._source

    def __exit__(self, *exc_info: object) -> None:
        self._computed.record(self._stream)
        self._context.__exit__(*exc_info)


class PreprocessedVectorEnv(gymnasium.vector.VectorWrapper):
    """A vector env whose observations are :class:`AtariPipeline` tensors; see :func:`wrap`."""

    def __init__(self, env: gymnasium.vector.VectorEnv, pipeline: AtariPipeline) -> None:
        vector = gymnasium.vector
        super().__init__(env)
        space = env.single_observation_space
        if not (isinstance(space, Box) and space.dtype == np.uint8 and space.shape[-1:] == (3,) and len(space.shape) in (3, 4)):
            raise ValueError(
                f"wrap() needs raw RGB frames, a uint8 Box of shape (H, W, 3); got {space}. For ale_py's vector "
                "env pass img_height=210, img_width=160, grayscale=False, stack_num=1 (or use atari_vector_env())"
            )
        mode = env.metadata.get("autoreset_mode", vector.AutoresetMode.NEXT_STEP)
        self._next_step = vector.AutoresetMode(mode) == vector.AutoresetMode.NEXT_STEP
        if vector.AutoresetMode(mode) == vector.AutoresetMode.SAME_STEP:
            raise ValueError(
                "wrap() needs autoreset_mode NEXT_STEP (gymnasium's default) or DISABLED: with SAME_STEP the "
                "final frame of an episode only exists in info['final_obs']. Make the env with "
                "vector_kwargs={'autoreset_mode': gymnasium.vector.AutoresetMode.NEXT_STEP}"
            )
        self.pipeline = pipeline
        shape = (pipeline.stack, pipeline.size, pipeline.size)
        if not pipeline.grayscale:
            shape = (pipeline.stack, 3, pipeline.size, pipeline.size)
        high, dtype = (1.0, np.float32) if pipeline.scale else (255, np.uint8)
        self.single_observation_space = Box(0, high, shape, dtype)
        self.observation_space = vector.utils.batch_space(self.single_observation_space, env.num_envs)
        self._ended = np.zeros(env.num_envs, dtype=bool)

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if options and "reset_mask" in options and not np.all(options["reset_mask"]):
            raise ValueError(
                "wrap() restarts frame stacks on full resets and on next-step autoresets; a partial "
                "reset(options={'reset_mask': ...}) is not supported"
            )
        observations, infos = self.env.reset(seed=seed, options=options)
        self._ended[:] = False
        return self.pipeline.process(observations, np.ones(self.num_envs, dtype=bool)), infos

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        # NEXT_STEP: an env that ended last step was reset by this step, and returns its reset frame.
        restarted = self._ended if self._next_step else np.zeros(self.num_envs, dtype=bool)
        stacked = self.pipeline.process(observations, restarted)
        self._ended = np.logical_or(terminations, truncations)
        return stacked, rewards, terminations, truncations, infos

    def close(self, **kwargs: Any) -> None:
        self.pipeline.close()
        super().close(**kwargs)


def wrap(
    vector_env: gymnasium.vector.VectorEnv,
    size: int = 84,
    stack: int = 4,
    grayscale: bool = True,
    scale: bool = False,
    device: str | torch.device = "auto",
    backend: str = "auto",
) -> PreprocessedVectorEnv:
    """Wrap a vector env of raw RGB frames so its observations are stacked tensors on ``device``.

    Each observation equals ``AtariPreprocessing(frame_skip=1, noop_max=0)`` +
    ``FrameStackObservation(stack)`` applied per env (within 2 grey levels); envs that
    autoreset restart their stack from the reset frame.

    >>> import gymnasium as gym, ale_py
    >>> gym.register_envs(ale_py)
    >>> envs = wrap(gym.make_vec("ALE/Pong-v5", 2, "sync", frameskip=1), device="cpu")
    >>> obs, _ = envs.reset(seed=0)
    >>> tuple(obs.shape), envs.pipeline.backend
    ((2, 4, 84, 84), 'cv2')
    >>> envs.close()
    """
    pipeline = AtariPipeline(
        vector_env.num_envs, size=size, stack=stack, grayscale=grayscale, scale=scale, device=device, backend=backend
    )
    return PreprocessedVectorEnv(vector_env, pipeline)


class _NativeToTorch(gymnasium.vector.VectorWrapper):
    """ale_py's natively preprocessed stacks as torch tensors (zero-copy on the CPU).

    ALE pads a fresh stack with black frames; this repeats the reset frame instead, like
    ``FrameStackObservation`` and :class:`AtariPipeline`, so every device gives the same stacks.
    """

    def __init__(self, env: gymnasium.vector.VectorEnv, stack: int, scale: bool, device: Any) -> None:
        super().__init__(env)
        if env.metadata.get("autoreset_mode") != gymnasium.vector.AutoresetMode.NEXT_STEP:
            raise ValueError("atari_vector_env() needs autoreset_mode=AutoresetMode.NEXT_STEP (ale_py's default)")
        self._torch, self._stack, self._scale, self._device = _torch(), stack, scale, device
        self._age = np.zeros(env.num_envs, dtype=int)  # frames each env's stack holds since its reset, minus one
        self._ended = np.zeros(env.num_envs, dtype=bool)
        self.backend = "ale_py"

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if options and "reset_mask" in options and not np.all(options["reset_mask"]):
            raise ValueError("atari_vector_env() restarts stacks on full resets and autoresets only, not partial resets")
        observations, infos = self.env.reset(seed=seed, options=options)
        self._age[:] = 0
        self._ended[:] = False
        return self._to_torch(observations), infos

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self._age = np.where(self._ended, 0, self._age + 1)
        self._ended = np.logical_or(terminations, truncations)
        return self._to_torch(observations), rewards, terminations, truncations, infos

    def _to_torch(self, observations: np.ndarray) -> torch.Tensor:
        young = np.flatnonzero(self._age < self._stack - 1)
        if young.size:
            observations = np.array(observations)  # ALE's buffer may be read-only
            for index in young:
                first = self._stack - 1 - self._age[index]
                observations[index, :first] = observations[index, first]
        tensor = self._torch.from_numpy(observations).to(self._device, non_blocking=True)
        return tensor.to(self._torch.float32).mul_(1.0 / 255.0) if self._scale else tensor


def atari_vector_env(
    game: str,
    num_envs: int,
    size: int = 84,
    stack: int = 4,
    scale: bool = False,
    device: str | torch.device = "auto",
    **ale_kwargs: Any,
) -> gymnasium.vector.VectorEnv:
    """The fastest way here to stacked gray Atari tensors on ``device`` from ale_py's ``AtariVectorEnv``.

    On the CPU ALE's own C++ preprocessing is fastest (it converts the palette straight to gray,
    in its worker threads), so it is used (``.backend == 'ale_py'``), with fresh stacks padded by
    repeating the reset frame as on the GPU path (ALE itself pads with black);
    on CUDA ALE returns raw frames and the :class:`AtariPipeline` does the rest on the GPU.
    ``ale_kwargs`` go to ``AtariVectorEnv`` (e.g. ``frameskip=4, noop_max=30``).

    >>> envs = atari_vector_env("pong", num_envs=2, device="cpu", frameskip=1)
    >>> obs, _ = envs.reset(seed=0)
    >>> tuple(obs.shape), envs.backend
    ((2, 4, 84, 84), 'ale_py')
    >>> envs.close()
    """
    from ale_py.vector_env import AtariVectorEnv

    torch = _torch()
    resolved = torch.device("cuda" if device == "auto" and torch.cuda.is_available() else "cpu" if device == "auto" else device)
    if resolved.type == "cpu":
        native = AtariVectorEnv(
            game, num_envs, img_height=size, img_width=size, grayscale=True, stack_num=stack, **ale_kwargs
        )
        return _NativeToTorch(native, stack, scale, resolved)
    raw = AtariVectorEnv(game, num_envs, img_height=210, img_width=160, grayscale=False, stack_num=1, **ale_kwargs)
    wrapped = wrap(raw, size=size, stack=stack, scale=scale, device=resolved, backend="torch")
    wrapped.backend = "torch"
    return wrapped
