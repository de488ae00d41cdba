"""Grayscale, area resize and frame stacks for Atari frames: OpenCV on the CPU, torch anywhere."""

from __future__ import annotations

import concurrent.futures
import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from gymview.atari.exact_area import CHUNK_FRAMES, ExactAreaResize, integer_area_weights

if TYPE_CHECKING:
    import torch


GRAY_WEIGHTS = (0.299, 0.587, 0.114)
"""RGB to gray weights of ALE's ``getScreenGrayscale`` (and of OpenCV's ``COLOR_RGB2GRAY``): red, green, blue."""


def import_torch() -> Any:
    """Import torch, saying how to install it when it is missing.

    Returns:
        The ``torch`` module.

    Raises:
        ImportError: When PyTorch is not installed (``pip install 'gymview[torch]'``).

    Examples:
        >>> import_torch().__name__
        'torch'
    """
    try:
        import torch
    except ImportError as error:
        raise ImportError("gymview.atari needs PyTorch: pip install 'gymview[torch]'") from error
    return torch


def import_cv2() -> Any | None:
    """Import OpenCV if it is installed.

    Returns:
        The ``cv2`` module, or ``None`` when OpenCV is not installed.

    Examples:
        >>> cv2 = import_cv2()
        >>> cv2 is None or hasattr(cv2, "resize")
        True
    """
    try:
        import cv2
    except ImportError:
        return None
    return cv2


def area_weights(source: int, target: int) -> np.ndarray:
    """Build the matrix of an area resize along one axis: each row averages the source pixels it covers.

    ``area_weights(h, s) @ image @ area_weights(w, s).T`` is OpenCV's ``INTER_AREA`` resize of an (h, w) image to
    (s, s).

    Args:
        source: Pixels along the axis before the resize.
        target: Pixels along the axis after it.

    Returns:
        A float64 (target, source) array whose rows sum to 1.

    Raises:
        ValueError: When a size is not positive.

    Examples:
        >>> area_weights(5, 2).round(2).tolist()
        [[0.4, 0.4, 0.2, 0.0, 0.0], [0.0, 0.0, 0.2, 0.4, 0.4]]
    """
    if source < 1 or target < 1:
        raise ValueError(f"sizes must be positive; got source={source}, target={target}")
    weights = integer_area_weights(source, target)
    return weights / weights.sum(axis=1, keepdims=True)


class Cv2Resizer:
    """Gray and resize a batch of frames on the CPU with OpenCV, split over threads, straight into ``out``.

    Each part of the batch (one per thread) is converted to gray in one ``cvtColor`` into a buffer kept between
    batches, then shrunk. Gray frames whose sizes repeat in a short pattern (Atari's 210x160 to 84x84) are shrunk
    by ``ExactAreaResize``, which gives OpenCV's ``INTER_AREA`` pixels for less work (checked once against this
    OpenCV at start). Other frames go through one ``INTER_AREA`` resize of the part's frames stacked on top of each
    other: with n frames of height h stacked into one image of height n*h resized to n*size, each frame's rows map
    onto its own output rows, so the result equals n separate resizes (checked once at start on random pixels;
    where the scale's rounding makes it differ, each frame is resized on its own). OpenCV and numpy release the
    GIL, so the parts run at once on a thread pool; ``cv2.setNumThreads(1)`` keeps it all in the caller's thread.

    Args:
        cv2: The ``cv2`` module.
        size: Side of the square frames that come out.
        grayscale: Convert to gray before resizing; ``False`` resizes the RGB frames.
        num_envs: Frames per batch.
        height: Height of the frames that go in.
        width: Width of the frames that go in.
        threads: The most threads to use (``AtariPipeline`` gives OpenCV's own count, ``cv2.getNumThreads()``,
            capped at the batch size); with ``ExactAreaResize``, at most one per 32 frames.

    Examples:
        >>> import numpy as np
        >>> resize = Cv2Resizer(import_cv2(), 84, True, num_envs=2, height=210, width=160, threads=1)
        >>> out = np.empty((2, 84, 84), np.uint8)
        >>> resize(np.full((2, 1, 210, 160, 3), 255, np.uint8), out)
        >>> resize.threads, int(out.min()), int(out.max())
        (1, 255, 255)
        >>> resize.close()
    """

    name = "cv2"

    def __init__(
        self, cv2: Any, size: int, grayscale: bool, num_envs: int, height: int, width: int, threads: int
    ) -> None:
        self._cv2, self._size, self._grayscale = cv2, size, grayscale
        exact = (
            ExactAreaResize(height, width, size)
            if grayscale and ExactAreaResize.supported(height, width, size)
            else None
        )
        if exact is not None and not exact.matches_cv2(cv2):
            exact = None
        # numpy holds the GIL between its calls: a part pays for its thread only with a whole chunk.
        most = num_envs if exact is None else num_envs // CHUNK_FRAMES
        parts = self.threads = max(1, min(threads, most))
        """How many threads convert one batch: the caller's and ``threads - 1`` from a pool."""
        bounds = np.linspace(0, num_envs, parts + 1).round().astype(int)
        self._parts = [slice(a, b) for a, b in itertools.pairwise(bounds)]
        self._exact = (
            None if exact is None else [exact] + [ExactAreaResize(height, width, size) for _ in self._parts[1:]]
        )
        self.stacked = self._exact is not None or num_envs == 1 or self._stacking_is_exact(num_envs, height, width)
        self._gray: list[np.ndarray | None] = [None] * parts  # each part's gray frames, reused
        self._pool = (
            concurrent.futures.ThreadPoolExecutor(parts - 1, thread_name_prefix="gymview-preprocess-part")
            if parts > 1
            else None
        )

    def __call__(self, frames: np.ndarray, out: np.ndarray) -> None:
        """Resize (N, K, H, W, 3) frames, max-pooled over K, into ``out``: (N, size, size[, 3]) uint8."""
        if self._pool is None:
            self._convert(0, frames, out)
            return
        *others, last = self._parts
        pending = [
            self._pool.submit(self._convert, index, frames[part], out[part]) for index, part in enumerate(others)
        ]
        self._convert(len(others), frames[last], out[last])
        for future in pending:
            future.result()

    def close(self) -> None:
        """Shut the thread pool down, waiting for its work."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def _convert(self, part: int, frames: np.ndarray, out: np.ndarray) -> None:
        cv2 = self._cv2
        n, k, h, w, _ = frames.shape
        frames = np.ascontiguousarray(frames)
        if self._grayscale:
            gray = self._gray[part]
            if gray is None or gray.shape != (n * k * h, w):
                gray = self._gray[part] = np.empty((n * k * h, w), np.uint8)
            cv2.cvtColor(frames.reshape(n * k * h, w, 3), cv2.COLOR_RGB2GRAY, dst=gray)
            images = gray.reshape(n, k, h, w)
        else:
            images = frames
        images = images.max(axis=1) if k > 1 else images[:, 0]
        if self._exact is not None:
            self._exact[part](images, out)
        else:
            self._resize(images, out)

    def _resize(self, images: np.ndarray, out: np.ndarray) -> None:
        cv2, size = self._cv2, self._size
        if self.stacked:
            n, h = images.shape[:2]
            tall = images.reshape(n * h, *images.shape[2:])
            cv2.resize(tall, (size, n * size), dst=out.reshape(n * size, *out.shape[2:]), interpolation=cv2.INTER_AREA)
            return
        for index in range(len(images)):
            cv2.resize(images[index], (size, size), dst=out[index], interpolation=cv2.INTER_AREA)

    def _stacking_is_exact(self, num_envs: int, height: int, width: int) -> bool:
        channels = () if self._grayscale else (3,)
        images = np.random.default_rng(0).integers(0, 256, (num_envs, height, width, *channels), dtype=np.uint8)
        together = np.empty((num_envs, self._size, self._size, *channels), np.uint8)
        apart = np.empty_like(together)
        self.stacked = True
        self._resize(images, together)
        self.stacked = False
        self._resize(images, apart)
        return bool(np.array_equal(together, apart))


class RingStack:
    """Keep CPU frame stacks in one numpy ring, (stack, N, ...), where the resize writes each step's frames in place.

    ``slot()`` is where the next frames go; ``push(reset)`` makes them the newest and returns a new (N, stack, ...)
    array, oldest first (the one copy a step makes: results handed out are never written again).

    Args:
        num_envs: Envs per batch (N).
        stack: Frames per stack.
        frame_shape: Shape of one frame: (size, size) gray, or (size, size, 3).
        channels_first: Give (N, stack, 3, size, size) for RGB frames instead of (N, stack, size, size, 3).

    Examples:
        >>> import numpy as np
        >>> ring = RingStack(num_envs=2, stack=3, frame_shape=(1, 1), channels_first=False)
        >>> ring.slot()[:] = [[[5]], [[7]]]
        >>> ring.push(np.array([1]))[:, :, 0, 0].tolist()
        [[0, 0, 5], [7, 7, 7]]
    """

    def __init__(self, num_envs: int, stack: int, frame_shape: tuple[int, ...], channels_first: bool) -> None:
        self._ring = np.zeros((stack, num_envs, *frame_shape), np.uint8)
        self._stack, self._head, self._channels_first = stack, stack - 1, channels_first
        shape = (
            (num_envs, stack, frame_shape[2], *frame_shape[:2]) if channels_first else (num_envs, stack, *frame_shape)
        )
        self._out_shape = shape

    def slot(self) -> np.ndarray:
        """Give the array the next frames go into.

        Returns:
            A (N, ...) view into the ring; write every env's frame into it before ``push``.
        """
        return self._ring[(self._head + 1) % self._stack]

    def push(self, reset: np.ndarray) -> np.ndarray:
        """Make the frames in ``slot()`` the newest, restarting the stacks of the envs in ``reset``.

        Args:
            reset: Indices of the envs whose stacks restart, filled with their newest frame.

        Returns:
            A new (N, stack, ...) uint8 array, oldest frame first.
        """
        self._head = (self._head + 1) % self._stack
        newest = self._ring[self._head]
        if reset.size:
            self._ring[:, reset] = newest[reset]
        out = np.empty(self._out_shape, np.uint8)
        for age in range(self._stack):
            frames = self._ring[(self._head + 1 + age) % self._stack]
            out[:, age] = frames.transpose(0, 3, 1, 2) if self._channels_first else frames
        return out


class TorchResizer:
    """Gray and resize a batch of frames on any torch device: a weighted channel sum, then two small matmuls.

    All the arithmetic is in float32; gray levels are rounded like ALE's gray screen.

    Args:
        torch: The ``torch`` module.
        size: Side of the square frames that come out.
        grayscale: Convert to gray before resizing; ``False`` resizes the RGB frames, channels first.
        height: Height of the frames that go in.
        width: Width of the frames that go in.
        device: The torch device the frames are on.

    Examples:
        >>> import torch
        >>> resize = TorchResizer(torch, 84, True, height=210, width=160, device="cpu")
        >>> tuple(resize(torch.full((2, 1, 210, 160, 3), 255, dtype=torch.uint8)).shape)
        (2, 84, 84)
    """

    name = "torch"

    def __init__(self, torch: Any, size: int, grayscale: bool, height: int, width: int, device: Any) -> None:
        self._torch, self._grayscale = torch, grayscale
        self._rows = torch.tensor(area_weights(height, size), dtype=torch.float32, device=device)
        self._columns = torch.tensor(area_weights(width, size).T, dtype=torch.float32, device=device)
        self._gray = torch.tensor(GRAY_WEIGHTS, dtype=torch.float32, device=device)

    def __call__(self, frames: torch.Tensor) -> torch.Tensor:
        pixels = frames.float()  # (n, k, h, w, 3)
        # ALE rounds its gray screen to uint8 levels
        images = (pixels @ self._gray).round_() if self._grayscale else pixels.permute(0, 1, 4, 2, 3)
        images = images.amax(dim=1) if images.shape[1] > 1 else images[:, 0]
        resized = self._rows @ images @ self._columns
        return resized.round_().clamp_(0, 255).to(self._torch.uint8)


class FrameStack:
    """Keep per-env frame stacks in one ring buffer on a torch device: each step writes one frame per env.

    Args:
        torch: The ``torch`` module.
        num_envs: Envs per batch.
        stack: Frames per stack.
        frame_shape: Shape of one frame: (size, size) gray, or (3, size, size).
        device: The torch device of the ring.

    Examples:
        >>> import torch
        >>> stacks = FrameStack(torch, num_envs=2, stack=3, frame_shape=(1, 1), device="cpu")
        >>> _ = stacks.push(torch.tensor([[[1]], [[2]]], dtype=torch.uint8), None)
        >>> stacks.push(torch.tensor([[[3]], [[4]]], dtype=torch.uint8), torch.tensor([1]))[:, :, 0, 0].tolist()
        [[0, 1, 3], [4, 4, 4]]
    """

    def __init__(self, torch: Any, num_envs: int, stack: int, frame_shape: tuple[int, ...], device: Any) -> None:
        self._ring = torch.zeros((num_envs, stack, *frame_shape), dtype=torch.uint8, device=device)
        self._stack = stack
        self._head = stack - 1
        self._orders = [
            torch.tensor([(head + 1 + age) % stack for age in range(stack)], device=device) for head in range(stack)
        ]

    def push(self, frames: torch.Tensor, reset_index: torch.Tensor | None) -> torch.Tensor:
        """Add the newest frame of every env; the envs in ``reset_index`` restart filled with it.

        Args:
            frames: (N, ...) uint8 frames, one per env.
            reset_index: Indices of the envs whose stacks restart, or ``None``.

        Returns:
            A new (N, stack, ...) tensor, oldest frame first.
        """
        self._head = (self._head + 1) % self._stack
        self._ring[:, self._head] = frames
        if reset_index is not None:
            self._ring[reset_index] = frames[reset_index].unsqueeze(1)
        return self._ring.index_select(1, self._orders[self._head])  # a new tensor, oldest frame first
