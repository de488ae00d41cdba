"""Grayscale, area resize and frame stacks for Atari frames: OpenCV on the CPU, torch anywhere."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch


GRAY_WEIGHTS = (0.299, 0.587, 0.114)
"""RGB → gray weights of ALE's ``getScreenGrayscale`` (and of cv2's ``COLOR_RGB2GRAY``)."""



def import_torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise ImportError("gymview.atari needs PyTorch: pip install 'gymview[torch]'") from error
    return torch


def import_cv2() -> Any | None:
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


class Cv2Resizer:
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


class TorchResizer:
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


class FrameStack:
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
