"""Atari-style observation preprocessing into network-ready, frame-stacked torch tensors.

Raw uint8 RGB frames from a vector env go in; (N, stack, size, size) tensors on the target device come out:
grayscale + area resize (matching gymnasium's ``AtariPreprocessing``) + frame stacking (matching
``FrameStackObservation``). Batches are processed in a background thread so stepping batch t+1 overlaps the
transfer and compute of batch t. torch is imported only here (``pip install gymview[torch]``).

>>> import numpy as np
>>> pipe = AtariPipeline(num_envs=2, device="cpu")
>>> pipe.put(np.zeros((2, 210, 160, 3), np.uint8)); obs = pipe.get()
>>> tuple(obs.shape), str(obs.dtype)
((2, 4, 84, 84), 'torch.uint8')
>>> pipe.close()
"""

from __future__ import annotations

import collections
import queue
import threading
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from gymview._internal.checks import check_int
from gymview._internal.worker import Worker
from gymview.image.tiling import tile

if TYPE_CHECKING:
    import torch

from gymview.atari.cuda import CudaTransfer
from gymview.atari.handoff import CONVERTED, Batch, HandOff
from gymview.atari.resize import (
    Cv2Resizer,
    FrameStack,
    RingStack,
    TorchResizer,
    import_cv2,
    import_torch,
)

POLL_SECONDS = 0.05  # how often a blocked put()/get() looks whether the worker thread died


class AtariPipeline:
    """Turn batches of raw uint8 RGB frames into stacked tensors on ``device``, in a background thread.

    Each batch gets grayscale and an area resize (matching gymnasium's ``AtariPreprocessing``), then frame stacking
    (matching ``FrameStackObservation``). ``put`` hands over one batch and returns at once; a background thread
    converts it while the caller goes on (steps its envs); ``get`` returns the result of the oldest batch not yet
    taken, always complete. A batch the thread has not begun when ``get`` asks for it (overlap would buy nothing)
    is converted in the caller's thread instead; while the caller comes back for its batches sooner than half a
    conversion, ``put`` converts each batch itself and wakes no thread (``pipe.overlaps`` says which). At most
    two batches wait for conversion (double buffering); a third ``put`` first converts the oldest itself. An
    error converting a batch is raised by the ``get`` (or ``process``) that asks for it, and the pipeline then
    refuses further batches.
    ``pipe.backend``, ``pipe.device`` and ``pipe.threads`` tell what is used.

    Args:
        num_envs: Envs per batch (N); frames are (N, H, W, 3), or (N, 1, H, W, 3) as ale_py's ``AtariVectorEnv``
            returns raw frames.
        size: Side of the square frames that come out.
        stack: Frames per stack, oldest first.
        grayscale: Convert to gray, giving (N, stack, size, size); ``False`` gives (N, stack, 3, size, size).
        scale: Give float32 in ``[0, 1]`` instead of uint8.
        max_pool: Take (N, 2, H, W, 3) frames, the last two emulator frames of each env, max-pooled after the gray
            conversion like ``AtariPreprocessing(frame_skip>1)`` (on a reset, pass the reset frame twice).
        device: A torch device; ``"auto"`` picks CUDA when torch sees a GPU, else the CPU.
        backend: ``"torch"`` (any device; on CUDA with pinned host buffers and copy and compute streams) or ``"cv2"``
            (CPU only, the fastest CPU path: the batch in one OpenCV gray conversion and one resize per thread,
            written straight into a numpy ring of stacks); ``"auto"`` picks torch on CUDA, else cv2 when installed.

    Raises:
        ValueError: When ``num_envs``, ``size`` or ``stack`` is not a positive integer, ``backend`` is unknown, or
            ``device`` is a GPU that torch does not see or that ``backend="cv2"`` cannot use.
        ImportError: When torch is not installed, or ``backend="cv2"`` and OpenCV is not.

    Examples:
        >>> import numpy as np
        >>> with AtariPipeline(num_envs=3, stack=2, device="cpu", scale=True) as pipe:
        ...     pipe.put(np.full((3, 210, 160, 3), 255, np.uint8))
        ...     pipe.put(np.zeros((3, 210, 160, 3), np.uint8), reset_mask=np.array([False, True, False]))
        ...     first, second = pipe.get(), pipe.get()
        >>> first[:, :, 0, 0].tolist(), second[:, :, 0, 0].tolist()
        ([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    """

    # Declared here: in __init__ the name torch is the imported module, not this file's TYPE_CHECKING import.
    device: torch.device
    _latest: tuple[torch.Tensor, Any] | None

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
            check_int(name, value)
        torch = self._torch = import_torch()
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        cv2 = import_cv2()
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
        self._most_threads = (
            max(1, min(cv2.getNumThreads(), int(num_envs))) if backend == "cv2" and cv2 is not None else 1
        )
        self.num_envs, self.size, self.stack = int(num_envs), int(size), int(stack)
        self.grayscale, self.scale, self.max_pool = bool(grayscale), bool(scale), bool(max_pool)
        self._cv2 = cv2
        self._frame_hw: tuple[int, int] | None = None  # learned from the first batch
        self._resize: Cv2Resizer | TorchResizer | None = None
        self._stack: FrameStack | RingStack | None = None
        self._unconverted: collections.deque[Batch] = collections.deque()  # put, not converted yet
        self._waiting: collections.deque[Batch] = collections.deque()  # put, not taken by get() yet
        self._in_order = threading.Lock()  # held while converting: batches convert one at a time, in put order
        self._wake: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._free_slots = threading.Semaphore(2)
        self._latest = None
        self._hand_off = HandOff()  # wake the thread only when the caller goes away long enough
        self._failure: BaseException | None = None
        self._cuda: CudaTransfer | None = CudaTransfer(torch, self.device) if self.device.type == "cuda" else None
        self._worker = Worker("preprocess", self._run, wake=lambda: self._wake.put(False))
        self._closed = False
        self._started = False  # the first batch restarts every env's stack

    @property
    def threads(self) -> int:
        """How many threads share one batch: the caller's (or the pipeline's), plus a pool for the cv2 backend.

        The first batch decides it, as its frame size says which resize runs; before it, the most it may be.
        """
        if isinstance(self._resize, Cv2Resizer):
            return self._resize.threads
        return self._most_threads

    @property
    def overlaps(self) -> bool:
        """Whether ``put`` hands batches to the thread now (else it converts them itself): see :class:`HandOff`."""
        return self._hand_off.overlaps

    # -- the user's thread -------------------------------------------------------------------
    def put(self, frames: np.ndarray, reset_mask: np.ndarray | None = None) -> None:
        """Hand over one batch of raw frames; returns as soon as the thread has room for it (or, while the
        caller asks for each batch at once, once it is converted here: see :attr:`overlaps`).

        The pipeline keeps a reference to ``frames``: do not write into that array until ``get`` has returned its
        result (gymnasium and ale_py vector envs return fresh arrays).

        Args:
            frames: (N, H, W, 3) uint8 frames; (N, 2, H, W, 3) with ``max_pool``; the size of the first batch's.
            reset_mask: (N,) bools: a True restarts that env's stack filled with this frame
                (``FrameStackObservation``'s padding). The first batch restarts every env.

        Raises:
            ValueError: When ``frames`` or ``reset_mask`` has the wrong shape.
            TypeError: When ``frames`` is not a uint8 numpy array.
            RuntimeError: When the pipeline is closed or failed on an earlier batch.
        """
        self._check_usable()
        batch = self._check_frames(frames)
        reset = self._reset_envs(reset_mask)  # last: it marks the pipeline as started
        if not self._hand_off.overlaps and not self._unconverted:
            # The caller comes back for each batch at once and would wait for it: convert it here, now,
            # as process() does (the get() that takes the batch raises its error).
            item = Batch(None, reset, done=CONVERTED)
            try:
                item.result = self._convert_here(batch, reset)
            except Exception as error:
                item.error = error
            item.put_at = self._hand_off.now()  # from here on the caller is away
            self._waiting.append(item)
            return
        self._worker.start()
        while not self._free_slots.acquire(blocking=False):
            # Both slots hold unconverted batches: convert the oldest here rather than wait for the thread.
            if self._in_order.acquire(blocking=False):
                try:
                    if self._unconverted:
                        self._convert_next()
                finally:
                    self._in_order.release()
            elif self._free_slots.acquire(timeout=POLL_SECONDS):
                break
            else:
                self._worker.check()
        item = Batch(batch, reset, self._hand_off.now())
        self._waiting.append(item)
        self._unconverted.append(item)
        self._wake.put(True)

    def get(self, timeout: float | None = None) -> torch.Tensor:
        """Take the stacked observations of the oldest batch not yet taken, converting it here if need be.

        Args:
            timeout: Seconds to wait for the thread to finish the batch; ``None`` waits as long as it takes.

        Returns:
            A (N, stack, size, size) tensor on ``device``. On CUDA it is ordered after its computation on the
                caller's current stream, so it can be used at once without a host synchronisation.

        Raises:
            RuntimeError: When no batch is waiting (one ``get`` per ``put``).
            TimeoutError: When the batch is not ready within ``timeout``.
        """
        if not self._waiting:
            raise RuntimeError("get() has no batch to return: call put(frames) first (one get() per put())")
        batch = self._waiting[0]
        self._hand_off.asked(batch.put_at)
        waited = 0.0
        while not batch.done.is_set():
            if self._in_order.acquire(blocking=False):
                try:
                    while not batch.done.is_set():
                        self._convert_next()
                finally:
                    self._in_order.release()
            elif not batch.done.wait(POLL_SECONDS):
                self._worker.check()
                waited += POLL_SECONDS
                if timeout is not None and waited >= timeout:
                    raise TimeoutError(f"no preprocessed batch within {timeout} s") from None
        self._waiting.popleft()
        if batch.error is not None:
            raise batch.error
        assert batch.result is not None  # done, without an error
        out, ready = batch.result
        if self._cuda is not None:
            self._cuda.hand_over(out, ready)
        return out

    def process(self, frames: np.ndarray, reset_mask: np.ndarray | None = None) -> torch.Tensor:
        """Convert one batch in the caller's thread and return its stacked observations.

        For a loop that needs each result before its next step (a policy acting on it): the same as ``put`` then
        ``get``, without touching the thread.

        Args:
            frames: The batch, as for ``put``.
            reset_mask: The envs whose stacks restart, as for ``put``.

        Returns:
            A (N, stack, size, size) tensor on ``device``.

        Raises:
            RuntimeError: When batches handed to ``put`` are still waiting for ``get``.

        Examples:
            >>> import numpy as np
            >>> with AtariPipeline(num_envs=1, stack=3, device="cpu") as pipe:
            ...     tuple(pipe.process(np.zeros((1, 210, 160, 3), np.uint8)).shape)
            (1, 3, 84, 84)
        """
        self._check_usable()
        if self._waiting:
            raise RuntimeError(
                f"process() needs an empty pipeline; take the {len(self._waiting)} pending batches with get()"
            )
        out, ready = self._convert_here(self._check_frames(frames), self._reset_envs(reset_mask))
        if self._cuda is not None:
            self._cuda.hand_over(out, ready)
        return out

    def preview(self, env_index: int = 0, zoom: int = 2) -> np.ndarray:
        """Show what the agent sees: one env's latest stack, side by side, oldest first.

        Args:
            env_index: Which env.
            zoom: Whole-number magnification.

        Returns:
            An (H, W, 3) uint8 image; black before the first batch.

        Raises:
            ValueError: When ``env_index`` is out of range or ``zoom`` is not a positive integer.

        Examples:
            >>> import numpy as np
            >>> with AtariPipeline(num_envs=1, device="cpu") as pipe:
            ...     _ = pipe.process(np.zeros((1, 210, 160, 3), np.uint8))
            ...     pipe.preview(zoom=2).shape
            (168, 672, 3)
        """
        if not 0 <= env_index < self.num_envs:
            raise ValueError(f"env_index must be in 0..{self.num_envs - 1}; got {env_index}")
        check_int("zoom", zoom)
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
        """Stop the threads; calling it again is harmless."""
        self._closed = True
        try:
            self._worker.stop()
        finally:
            if isinstance(self._resize, Cv2Resizer):
                self._resize.close()

    def __enter__(self) -> AtariPipeline:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"AtariPipeline(num_envs={self.num_envs}, size={self.size}, stack={self.stack}, "
            f"grayscale={self.grayscale}, scale={self.scale}, max_pool={self.max_pool}, "
            f"device='{self.device}', backend='{self.backend}', threads={self.threads})"
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

    def _reset_envs(self, reset_mask: np.ndarray | None) -> np.ndarray:
        """The indices of the envs whose stacks restart with this batch: every env's on the first batch."""
        if reset_mask is not None:
            mask = np.asarray(reset_mask)
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ValueError(
                    f"reset_mask must be a bool array of shape ({self.num_envs},); got {mask.dtype} {mask.shape}"
                )
        if not self._started:
            self._started = True
            return np.arange(self.num_envs)
        return np.flatnonzero(mask) if reset_mask is not None else np.empty(0, np.intp)

    def _check_usable(self) -> None:
        if self._closed:
            raise RuntimeError("this AtariPipeline is closed; create a new one")
        if self._failure is not None:
            message = (
                f"this AtariPipeline failed on an earlier batch ({self._failure!r}); its frame stacks are incomplete"
            )
            raise RuntimeError(message + ": create a new one") from self._failure

    def _convert_here(self, frames: np.ndarray, reset: np.ndarray) -> tuple[torch.Tensor, Any]:
        """Convert a batch in the caller's thread (process(), or put() for a caller that waits anyway)."""
        with self._in_order:
            try:
                started = self._hand_off.now()
                result = self._latest = self._convert(frames, reset)
                self._hand_off.converted(started)
                return result
            except BaseException as error:
                self._failure = error
                raise

    # -- the worker thread -------------------------------------------------------------------
    def _run(self, stop: threading.Event) -> None:
        while self._wake.get() and not stop.is_set():
            # The caller converting a batch itself (get() or process()) holds the lock: it takes the
            # batches it needs, so the thread need not wait its turn (and wake it again at the end).
            if not self._in_order.acquire(blocking=False):
                continue
            try:
                while self._unconverted and not stop.is_set():
                    self._convert_next()
            finally:
                self._in_order.release()

    def _convert_next(self) -> None:
        """Convert the oldest unconverted batch; the caller holds ``_in_order``."""
        batch = self._unconverted.popleft()
        try:
            if self._failure is None:
                assert batch.frames is not None  # dropped only once converted
                started = self._hand_off.now()
                batch.result = self._latest = self._convert(batch.frames, batch.reset)
                self._hand_off.converted(started)
            else:
                batch.error = RuntimeError(f"an earlier batch failed ({self._failure!r}); create a new AtariPipeline")
        except BaseException as error:  # handed to the get() that takes this batch
            batch.error = self._failure = error
        finally:
            batch.frames = None
            self._free_slots.release()
            batch.done.set()

    def _convert(self, frames: np.ndarray, reset: np.ndarray) -> tuple[torch.Tensor, Any]:
        torch = self._torch
        if self._resize is None:
            self._resize = self._make_resizer()
            if self.backend == "cv2":
                frame_shape = (self.size, self.size) if self.grayscale else (self.size, self.size, 3)
                self._stack = RingStack(self.num_envs, self.stack, frame_shape, channels_first=not self.grayscale)
            else:
                shape = (self.size, self.size) if self.grayscale else (3, self.size, self.size)
                self._stack = FrameStack(torch, self.num_envs, self.stack, shape, self.device)
            if self._cuda is not None:
                torch.cuda.synchronize(self.device)  # the set-up copies ran on the default stream
        if self.backend == "cv2":  # the casts: what _convert made for the backend on the first batch
            ring = cast(RingStack, self._stack)
            cast(Cv2Resizer, self._resize)(frames, ring.slot())
            return self._scaled(torch.from_numpy(ring.push(reset))), None
        resize = cast(TorchResizer, self._resize)
        if self._cuda is None:
            return self._finish(resize(torch.from_numpy(np.ascontiguousarray(frames))), reset), None
        with self._cuda.on_device(frames) as source:
            return self._finish(resize(source), reset), self._cuda.done()

    def _make_resizer(self) -> Cv2Resizer | TorchResizer:
        assert self._frame_hw is not None  # learned from the batch being converted
        height, width = self._frame_hw
        if self.backend == "cv2":
            return Cv2Resizer(self._cv2, self.size, self.grayscale, self.num_envs, height, width, self._most_threads)
        return TorchResizer(self._torch, self.size, self.grayscale, height, width, self.device)

    def _finish(self, frames: torch.Tensor, reset: np.ndarray) -> torch.Tensor:
        reset_index = self._torch.as_tensor(reset, device=self.device) if reset.size else None
        return self._scaled(cast(FrameStack, self._stack).push(frames, reset_index))  # the torch backend's

    def _scaled(self, stacked: torch.Tensor) -> torch.Tensor:
        if self.scale:
            return stacked.to(self._torch.float32).mul_(1.0 / 255.0)
        return stacked
