"""record_batch's concat video, a fragmented MP4 joined as the episodes came in, in Debian's Chromium:
its duration is known and a seek lands on the frame asked for, in any episode."""

import base64

import numpy as np
import pytest
from lab import chromium_page
from video_checks import psnr

import gymview
from gymview.episodes.clips import read_frames

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOAD = """(data) => {
    const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
    document.querySelector("video").src = URL.createObjectURL(new Blob([bytes], {type: "video/mp4"}));
}"""
PIXELS = """() => {
    const video = document.querySelector("video");
    const canvas = document.createElement("canvas");
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    const context = canvas.getContext("2d");
    context.drawImage(video, 0, 0);
    return Array.from(context.getImageData(0, 0, canvas.width, canvas.height).data);
}"""
SETTLED = "() => { const video = document.querySelector('video'); return !video.seeking && video.readyState >= 2; }"


def test_the_joined_video_has_its_duration_and_seeks_to_frames_of_every_episode(tmp_path):
    result = gymview.record_batch("CartPole-v1", lambda obs: int(obs[2] > 0), episodes=6, out=tmp_path, seed=3,
                                  layout="concat", workers=2, progress=False)  # fmt: skip
    (video,) = result.files
    starts = np.cumsum([0] + [row["frames"] for row in result.table])
    with chromium_page() as page:
        page.set_content("<video muted></video>")
        page.evaluate(LOAD, base64.b64encode(video.read_bytes()).decode())
        page.wait_for_function("() => document.querySelector('video').readyState >= 1", timeout=30_000)
        assert page.evaluate("() => document.querySelector('video').duration") == pytest.approx(starts[-1] / 30)
        for frame in [*(start + 3 for start in starts[:-1]), starts[-1] - 1]:  # into each episode, and the last frame
            page.evaluate("(time) => { document.querySelector('video').currentTime = time; }", (frame + 0.5) / 30)
            page.wait_for_function(SETTLED, timeout=30_000)
            shown = np.array(page.evaluate(PIXELS), np.uint8).reshape(400, 600, 4)[..., :3]
            assert psnr(shown, next(read_frames(video, frame, 1))) > 40, frame
            assert psnr(shown, next(read_frames(video, frame - 1, 1))) < psnr(shown, next(read_frames(video, frame, 1)))
        assert page.errors == []
