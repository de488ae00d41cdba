"""The C heap's free memory goes back to the OS (the soak's RSS growth was memory glibc kept)."""

import os
import sys
import threading

import numpy as np
import psutil
import pytest

from gymview._internal.memory import HeapTrimmer


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
@pytest.mark.skipif(any(name.startswith("MALLOC_") for name in os.environ) or "LD_PRELOAD" in os.environ,
                    reason="a tuned or replaced malloc keeps memory its own way")
def test_frames_freed_between_live_objects_are_given_back():
    me = psutil.Process()
    base = me.memory_info().rss
    np.ones(2_000_000, np.uint8)  # once freed, glibc serves frame-sized blocks from its heap, not mmap

    def frames_with_small_objects_between():
        kept = []
        for _ in range(200):
            kept += [np.ones(720_000, np.uint8), np.ones(10, np.uint8)]  # a MountainCar frame, then a tiny array
        return kept[1::2]  # the frames are freed; the tiny arrays keep the heap from shrinking by itself

    survivors = []
    worker = threading.Thread(target=lambda: survivors.append(frames_with_small_objects_between()))
    worker.start()
    worker.join()
    kept_by_malloc = me.memory_info().rss - base
    trimmer = HeapTrimmer(period=10.0)
    assert trimmer(now=100.0) and not trimmer(now=105.0)
    after = me.memory_info().rss - base
    assert kept_by_malloc > 100 * 2**20, "the frames' memory should stay with malloc until trimmed"
    assert after < kept_by_malloc - 80 * 2**20, f"kept {kept_by_malloc >> 20} MiB, {after >> 20} MiB after the trim"
