"""The C heap's free memory goes back to the OS (the soak's RSS growth was memory glibc kept)."""

import json
import os
import subprocess
import sys

import pytest

# Run in a fresh process: how much a long test session's heap keeps of freed frames depends on what
# ran before it (its arenas and mmap threshold), and the test needs the heap to keep them.
SCENARIO = """
import json, threading
import numpy as np, psutil
from gymview._internal.memory import HeapTrimmer

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
trimmed, again = trimmer(now=100.0), trimmer(now=105.0)
print(json.dumps({"kept": kept_by_malloc, "after": me.memory_info().rss - base, "trimmed": trimmed, "again": again}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
@pytest.mark.skipif(any(name.startswith("MALLOC_") for name in os.environ) or "LD_PRELOAD" in os.environ,
                    reason="a tuned or replaced malloc keeps memory its own way")
def test_frames_freed_between_live_objects_are_given_back():
    done = subprocess.run([sys.executable, "-c", SCENARIO], capture_output=True, text=True, timeout=120, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["trimmed"] and not found["again"]  # at most once a period
    kept, after = found["kept"], found["after"]
    assert kept > 100 * 2**20, "the frames' memory should stay with malloc until trimmed"
    assert after < kept - 80 * 2**20, f"kept {kept >> 20} MiB, {after >> 20} MiB after the trim"
