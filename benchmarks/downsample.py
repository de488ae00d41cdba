"""What shrinking a frame for the live view costs, and how far the two-step shrink is from the exact area average.

    python benchmarks/downsample.py [--repeats 30]

For frames of common sizes shrunk to the view's default 512 pixels: milliseconds (median of ``--repeats``) of
``gymview.image.frames.downsample`` (PIL's whole-block reduce, then a box resize for the rest), of one box resize
over the whole frame (the exact area average), and how far apart the two are: PSNR, and the largest difference in
levels of 0-255.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import numpy as np
from PIL import Image

from gymview.image.frames import downsample, fit_size

SIZES = [(1080, 1920), (720, 1280), (480, 640), (600, 600)]


def frame_of(height: int, width: int) -> np.ndarray:
    """Gradients, a checkerboard of 60-pixel squares and noise: edges and smooth areas, as renders have."""
    y, x = np.mgrid[0:height, 0:width]
    noise = np.random.default_rng(0).integers(0, 32, (height, width), dtype=np.int64)
    channels = [x * 255 // width, y * 255 // height, ((x // 60 + y // 60) % 2) * 223 + noise]
    return np.stack(channels, axis=-1).astype(np.uint8)


def box_resize(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    return np.asarray(Image.fromarray(frame).resize(size, Image.Resampling.BOX))


def milliseconds(work, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    print("| frame | shrunk to | downsample, ms | one box resize, ms | PSNR between them, dB | largest difference |")
    print("|---|---|---:|---:|---:|---:|")
    for height, width in SIZES:
        frame = frame_of(height, width)
        small_height, small_width = fit_size(height, width, 512)
        exact = functools.partial(box_resize, frame, (small_width, small_height))
        difference = np.abs(downsample(frame, 512).astype(int) - exact().astype(int))
        mse = float((difference**2).mean())
        psnr = "identical" if mse == 0 else f"{10 * np.log10(255**2 / mse):.1f}"
        ours_ms = milliseconds(functools.partial(downsample, frame, 512), args.repeats)
        exact_ms = milliseconds(exact, args.repeats)
        print(f"| {width}x{height} | {small_width}x{small_height} | {ours_ms:.2f} | {exact_ms:.2f} "
              f"| {psnr} | {int(difference.max())} |", flush=True)

if __name__ == "__main__":
    main()
