"""A notebook far from its kernel: frames drawn per second and bytes per frame, JPEG against H.264.

    python benchmarks/remote_view.py [--seconds 6] [--links 0,4,1] [--only same,browser,loop]

same     The same frames both ways: 300 frames of each env (CartPole-v1, Acrobot-v1, HalfCheetah-v5,
         Breakout), taken every step and every 10th step, shrunk to 512 pixels and compressed as the
         helper does it: downsample + JPEG quality 80, and the view's H.264 stream (scale + encode,
         crf 23, a key frame every 60): bytes per frame, the ratio, and milliseconds per frame.
browser  JupyterLab in Chromium through tests/browser/slow_link.py: each link (0: localhost, no
         proxy limit; 4 and 1: Mbit/s each way with 40 ms latency) carries each env watched at fps=30,
         once with codec="jpeg" and once with codec="auto" (H.264: Chromium decodes it), the loop
         running free for ``--seconds`` after 3 s of warm-up (the helper process starts, the page
         builds its decoder and the first frames reach it late). Per run: frames/s the page drew over the run's last seconds,
         frames/s sent, the frame rate the overhead budget allowed at the end (``max_overhead``
         counts the helper's and the server's time per frame where no core is idle), bytes per frame
         sent and the loop's steps/s.
loop     The loop's speed with each codec in one kernel, no page: slices of a CartPole watched with
         codec="h264", one watched with codec="jpeg" and the plain env, alternating; medians of
         h264 / jpeg (and of a second plain slice / plain, the noise floor).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "kernel"))
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO / "benchmarks"))

from browser_loop import RUN_SLICE  # noqa: E402

ENVS = {
    "CartPole-v1": 'gym.make("CartPole-v1", render_mode="rgb_array")',
    "Acrobot-v1": 'gym.make("Acrobot-v1", render_mode="rgb_array")',
    "HalfCheetah-v5": 'gym.make("HalfCheetah-v5", render_mode="rgb_array")',
    "Breakout": 'gym.make("ALE/Breakout-v5", render_mode="rgb_array")',
}

SETUP = """
import statistics, time, ale_py, gymnasium as gym, gymview
gym.register_envs(ale_py)
gymview.setup(quiet=True, human=False)
""" + RUN_SLICE + """
def remote(name, env, codec, seconds):
    env = gymview.watch(env, fps=30, codec=codec, draw="kernel", title=f"{name} {codec}")
    env.reset(seed=0)
    env.action_space.seed(0)
    run_slice(env, 3.0)  # the helper process, the first frames, the page's decoder: the first second stutters
    before = env.view.stats
    print("WARM", flush=True)
    steps = run_slice(env, seconds)
    after = env.view.stats
    frames = after["frames_sent"] - before["frames_sent"]
    per_frame = (after["bytes_sent"] - before["bytes_sent"]) / max(frames, 1)
    print("REMOTE", steps, frames / seconds, per_frame, after["sent_as"], after["fps_limit"], flush=True)
    env.close()
print("READY")
"""


def same_frames(count: int = 300) -> None:
    import ale_py
    import gymnasium as gym
    import numpy as np

    from gymview.image.codec import encode_frame
    from gymview.image.frames import downsample, fit_size
    from gymview.live.encoding.h264 import H264Encoder

    import gymview

    gym.register_envs(ale_py)
    gymview.setup(quiet=True, human=False)  # MuJoCo's OpenGL backend
    print(f"\nThe same frames both ways ({count} frames shrunk to 512 pixels; ms/frame to shrink and compress in brackets):\n")
    print("| env | frames taken | JPEG q80 bytes/frame | H.264 bytes/frame | H.264 / JPEG |\n|---|---|---:|---:|---:|")
    for name, make in ENVS.items():
        env = eval(make)  # noqa: S307 - the benchmark's own table
        for stride in (1, 10):
            env.reset(seed=0)
            env.action_space.seed(0)
            frames = []
            while len(frames) < count:
                for _ in range(stride):
                    _, _, terminated, truncated, _ = env.step(env.action_space.sample())
                    if terminated or truncated:
                        env.reset()
                frames.append(env.render())
            started = time.perf_counter()
            jpeg = [len(encode_frame(downsample(frame, 512), "jpeg", 80)) for frame in frames]
            jpeg_ms = (time.perf_counter() - started) / count * 1e3
            height, width = fit_size(*frames[0].shape[:2], 512)
            encoder, started = H264Encoder(), time.perf_counter()
            video = [len(encoder.encode(frame, (width, height))[0]) for frame in frames]
            video_ms = (time.perf_counter() - started) / count * 1e3
            print(f"| {name} | every {stride} step(s) | {np.mean(jpeg):,.0f} ({jpeg_ms:.2f} ms) | "
                  f"{np.mean(video):,.0f} ({video_ms:.2f} ms) | {np.mean(video) / np.mean(jpeg):.3f} |", flush=True)
        env.close()


def drawn_in(page, cell: int) -> int:
    """Frames the view in cell ``cell`` drew so far (read just before its cell closes it)."""
    return page.evaluate(
        "(i) => Number(window.jupyterapp.shell.currentWidget.content.widgets[i].node"
        ".querySelector('.gymview')?.dataset.framesDrawn || 0)", cell)


def through_links(links: list[float], seconds: float, envs: list[str]) -> None:
    from lab import chromium_page, notebook_of, open_notebook, running_server, start_cell, wait_for_output
    from slow_link import SlowLink

    runs = [(link, name, codec) for link in links for name in envs for codec in ("jpeg", "auto")]
    cells = [SETUP] + [f"remote({name!r}, {ENVS[name]}, {codec!r}, {seconds})" for _, name, codec in runs]
    print(f"\nJupyterLab + Chromium through a link of each rate (40 ms each way), fps=30, {seconds:g} s a run:\n")
    print("| link | env | codec | frames/s drawn | frames/s sent | fps limit at the end | bytes/frame | loop steps/s | sent as |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "root"
        root.mkdir()
        (root / "remote.ipynb").write_text(json.dumps(notebook_of(cells)))
        with running_server(root, "lab") as server, SlowLink(server.port) as link, chromium_page() as page:
            open_notebook(page, server, "remote.ipynb", port=link.port)
            start_cell(page, 0)
            wait_for_output(page, 0, "READY", timeout_ms=120_000)
            for index, (rate, name, codec) in enumerate(runs, 1):
                if rate:
                    link.limit(rate * 1e6, 0.040)
                else:
                    link.limit(None, 0.0)
                start_cell(page, index)
                wait_for_output(page, index, "WARM", timeout_ms=180_000)
                page.evaluate(
                    "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].node"
                    ".querySelector('.gymview')?.scrollIntoView({block: 'center'})", index)
                first, started = drawn_in(page, index), time.monotonic()
                text = wait_for_output(page, index, "REMOTE", timeout_ms=int(seconds * 1000) + 180_000)
                last, elapsed = drawn_in(page, index), time.monotonic() - started
                line = next(line for line in text.splitlines() if line.startswith("REMOTE"))
                _, steps, sent_fps, per_frame, sent_as, fps_limit = line.split()
                # a view rendered again (an output added above it) counts from 0: no figure then
                drawn = f"{(last - first) / elapsed:.1f}" if last >= first else "n/a"
                print(f"| {rate or 'localhost'}{' Mbit/s' if rate else ''} | {name} | {codec} | {drawn} | "
                      f"{float(sent_fps):.1f} | {float(fps_limit):.1f} | {float(per_frame):,.0f} | {float(steps):,.0f} | {sent_as} |",
                      flush=True)
                link.limit(None, 0.0)


def loop_speed(rounds: int) -> None:
    from conftest import running_kernel

    code = SETUP + """
jpeg = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), codec="jpeg", draw="kernel")
video = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), codec="h264", draw="kernel")
plain = gym.make("CartPole-v1")
slots = {"h264": video, "jpeg": jpeg, "plain": plain, "plain again": plain}
for env in slots.values():
    env.reset(seed=0)
    run_slice(env, 0.5)
rates = {slot: [] for slot in slots}
for index in range(ROUNDS):
    for slot in (list(slots) if index % 2 else list(slots)[::-1]):
        rates[slot].append(run_slice(slots[slot], 0.25))
ratio = statistics.median(v / j for v, j in zip(rates["h264"], rates["jpeg"]))
jpeg_ratio = statistics.median(j / p for j, p in zip(rates["jpeg"], rates["plain"]))
floor = statistics.median(a / p for a, p in zip(rates["plain again"], rates["plain"]))
print("LOOP", ratio, jpeg_ratio, floor, video.view.stats["sent_as"], video.view.stats["frames_sent"], jpeg.view.stats["frames_sent"])
""".replace("ROUNDS", str(rounds))
    with running_kernel(str(REPO)) as kernel:
        text = kernel.run(code, timeout=rounds * 2 + 300).stdout
    _, ratio, jpeg_ratio, floor, sent_as, video_frames, jpeg_frames = next(
        line for line in text.splitlines() if line.startswith("LOOP")).split()
    print(f"\nThe loop with each codec, {rounds} rounds of alternating 0.25 s slices in one kernel (no page):")
    print(f"  codec='h264' / codec='jpeg' = {float(ratio):.3f}x (jpeg / plain = {float(jpeg_ratio):.3f}x; "
          f"noise floor {float(floor):.3f}x; frames sent: {video_frames} as {sent_as}, {jpeg_frames} as jpeg)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=8.0, help="each browser run's measured seconds")
    parser.add_argument("--envs", default=",".join(ENVS), help="which envs the browser part runs, comma-separated")
    parser.add_argument("--links", default="0,4,1", help="Mbit/s each way, 0 for localhost")
    parser.add_argument("--only", default="same,browser,loop", help="which parts, comma-separated")
    parser.add_argument("--rounds", type=int, default=40, help="alternating slices for the loop part")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    if "same" in parts:
        same_frames()
    if "browser" in parts:
        through_links([float(x) for x in args.links.split(",")], args.seconds, args.envs.split(","))
    if "loop" in parts:
        loop_speed(args.rounds)


if __name__ == "__main__":
    main()
