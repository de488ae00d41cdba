"""Pinned host buffers and copy/compute CUDA streams for AtariPipeline's device path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch


class CudaTransfer:
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

    def on_device(self, frames: np.ndarray) -> ComputeScope:
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
        return ComputeScope(torch, self._compute_stream, self._on_device[slot], self._computed[slot])

    def done(self) -> Any:
        """An event recorded after the batch's last kernel; the consumer's stream waits on it."""
        ready = self._torch.cuda.Event()
        ready.record(self._compute_stream)
        return ready

    def hand_over(self, out: torch.Tensor, ready: Any) -> None:
        consumer = self._torch.cuda.current_stream(self._device)
        consumer.wait_event(ready)
        out.record_stream(consumer)  # the allocator must not reuse out's memory before the consumer is done


class ComputeScope:
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
