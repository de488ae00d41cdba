import time

import numpy as np
import pytest
from live_helpers import browser_says, feed_of
from waiting import wait_until

from gymview.live import stream_watcher
from gymview.live.feed import ViewFeed
from gymview.live.kernels.registry import live_views
from gymview.live.widget import HIDDEN_FPS, LiveView


def frame(size=8):
    return np.zeros((size, size, 3), np.uint8)


def test_nothing_is_sent_outside_a_notebook():
    sent = []
    view = LiveView(send=lambda header, buffers: sent.append(header))
    for _ in range(100):
        assert view.push(frame()) is False
    assert not view.frame_due()
    assert view.flush() and sent == []
    assert view.stats["frames_throttled"] == 100 and view.stats["frames_rendered"] == 0
    view.close()


def test_views_not_known_to_be_displayed_get_one_frame_a_second():
    # Shown inside a container, a view is confirmed only by the browser, maybe only when the cell
    # ends: until then it gets HIDDEN_FPS, never a frozen picture, never the full rate.
    view = LiveView(fps=30, send=lambda header, buffers: None, in_kernel=True)
    assert view.push(frame()) is True
    assert view.stats["fps_limit"] == HIDDEN_FPS and view.stats["visible"] is False
    assert view.push(frame()) is False
    view._repr_mimebundle_()
    assert view.stats["fps_limit"] == 30 and view.stats["visible"] is True
    view.close()


def test_push_sends_binary_frames_never_traits(shown):
    view = shown(max_size=32)
    assert view.push(np.zeros((64, 64), bool), step=3, episode=1, episode_return=2.5)
    assert view.flush()
    (header, buffers), = view.sent
    assert header["type"] == "frame" and (header["width"], header["height"]) == (32, 32)
    assert (header["step"], header["episode"], header["episode_return"]) == (3, 1, 2.5)
    assert isinstance(buffers[0], bytes) and buffers[0][:2] == b"\xff\xd8"
    assert not any(isinstance(v, (bytes, memoryview)) for v in view.get_state().values())


def test_push_throttles_and_counts_skipped_frames(shown):
    view = shown(fps=5)
    results = [view.push(frame()) for _ in range(50)]
    assert results[0] and sum(results) == 1
    assert view.stats["frames_throttled"] == 49 and view.stats["frames_dropped"] == 0


def test_bad_frames_raise_even_when_skipped(shown):
    view = shown()
    view.push(frame())
    with pytest.raises(ValueError, match="shape"):
        view.push(np.zeros((8, 8, 2), np.uint8))  # not due, still checked
    with pytest.raises(ValueError, match="render_mode"):
        view.push(None)


def test_ready_resends_the_latest_frame_and_acks_reach_the_next_header(shown):
    view = shown(fps=120)
    view.push(frame())
    view.flush()
    browser_says(view, {"type": "ready", "v": 2, "client": "A"})
    wait_until(lambda: len(view.sent) == 2, "the watcher to resend the latest frame")
    assert [h["seq"] for h, _ in view.sent] == [0, 0]  # the new view got the latest frame again
    browser_says(view, {"type": "ack", "seq": 0})
    browser_says(view, "garbage")
    browser_says(view, {"type": "ack", "seq": "x"})
    view.push(frame(), force=True)
    view.flush()
    assert view.sent[-1][0]["seq"] == 1 and view.sent[-1][0]["acked"] == 0


def test_visibility_is_tracked_per_browser_page(shown):
    view = shown(fps=30)
    browser_says(view, {"type": "ready", "v": 2, "client": "A"})
    browser_says(view, {"type": "ready", "v": 2, "client": "B"})
    browser_says(view, {"type": "visibility", "visible": False, "client": "B"})
    assert view.stats["visible"] and view.stats["fps_limit"] == 30  # page A still shows it
    browser_says(view, {"type": "visibility", "visible": False, "client": "A"})
    assert not view.stats["visible"] and view.stats["fps_limit"] == HIDDEN_FPS
    browser_says(view, {"type": "visibility", "visible": True, "client": "B"})
    assert view.stats["visible"] and view.stats["fps_limit"] == 30


def test_a_protocol_mismatch_is_reported(shown):
    view = shown()
    with pytest.warns(UserWarning, match="reload the browser page"):
        browser_says(view, {"type": "ready", "v": 99, "client": "A"})


def test_trait_changes_reconfigure_the_stream(shown):
    view = shown()
    view.fps = 12
    view.max_size = 100
    view.quality = 50
    view.image_format = "png"
    view.push(np.zeros((200, 400, 3), np.uint8))
    view.flush()
    header, buffers = view.sent[0]
    assert view.stats["fps_limit"] == 12 and (header["width"], header["format"]) == (100, "png")
    assert buffers[0][:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="fps"):
        view.fps = 0
    with pytest.raises(ValueError):
        LiveView(quality=0)


def test_bad_trait_values_are_refused_before_they_are_stored(shown):
    view = shown()
    for name, bad in (("quality", 500), ("image_format", "gif"), ("max_size", 5), ("fps", 0)):
        before = getattr(view, name)
        with pytest.raises(ValueError):
            setattr(view, name, bad)
        assert getattr(view, name) == before
    view.push(np.zeros((600, 600, 3), np.uint8))
    view.flush()
    assert view.sent[0][0]["width"] == 512


def test_stop_keeps_the_widget_and_close_is_final(shown):
    view = shown()
    view.push(frame())
    view.stop()
    assert len(view.sent) == 1 and view in live_views() and not view.stats["streaming"]
    view.close()
    view.close()
    assert view not in live_views()
    with pytest.raises(RuntimeError, match="closed"):
        view.push(frame())


def test_a_view_that_appears_after_stop_still_gets_the_last_frame(shown):
    view = shown()
    view.push(frame())
    view.stop()
    browser_says(view, {"type": "ready", "v": 2, "client": "tab"})
    wait_until(lambda: len(view.sent) == 2, "the watcher to resend the latest frame")
    assert [h["seq"] for h, _ in view.sent] == [0, 0]


def test_idle_watchers_end_and_restart_on_the_next_push(shown, monkeypatch):
    monkeypatch.setattr(stream_watcher, "IDLE_EXIT_SECONDS", 0.05)
    view = shown(fps=120)
    view.push(frame())
    view.flush()
    # a re-run cell that never closed its env leaves no thread
    wait_until(lambda: not view.stats["streaming"], "the idle watcher to end")
    for _ in range(3):
        assert view.push(frame(), force=True)
        assert view.flush()
    assert len(view.sent) == 4


def test_a_feed_lets_its_loop_skip_checks_until_the_next_frame_is_due(shown, monkeypatch):
    monkeypatch.setattr(stream_watcher, "PUMP_WAIT_SECONDS", 30.0)  # the feed's own pumping only
    interval = 60.0  # longer than any wait here, however busy the machine
    view = shown(fps=1 / interval)
    feed = feed_of(view, frame)
    before = time.perf_counter()
    feed.show()  # due at once: a frame is made, pushed and sent, then the feed says when to look again
    while view.stats["frames_sent"] < 1 or feed.next_check == 0.0:  # 0: timing the two steps after the frame
        feed.show()
    after = time.perf_counter()
    assert view.stats["frames_rendered"] == 1
    # one frame interval from the push (less the moments the feed spent between its two clock reads)
    assert before + interval - (after - before) <= feed.next_check <= after + interval
    outside = feed_of(LiveView())
    before = time.perf_counter()
    outside.show()
    after = time.perf_counter()
    assert before + 0.5 <= outside.next_check <= after + 0.5  # no front-end: look twice a second
    outside.view.close()


def test_pushing_every_step_pumps_frames_out(shown, monkeypatch):
    # Only the pushing loop sends here: the watcher would wait 30 s.
    monkeypatch.setattr(stream_watcher, "PUMP_WAIT_SECONDS", 30.0)
    view = shown(fps=120)
    pushed = 0
    while len(view.sent) < 5 and pushed < 10_000_000:
        pushed += view.push(frame(60))
    assert len(view.sent) == 5 and view.stats["frames_rendered"] >= 5


def test_a_bad_drawing_is_refused_when_pushed_not_in_the_encoder_process():
    from gymview.renderers import Drawing, renderer_for

    view = LiveView()  # outside a notebook too: the error comes at once
    renderer = renderer_for("CartPole-v1")
    with pytest.raises(ValueError, match=r"shape \(N, 4\)"):
        view.push(Drawing(renderer, np.zeros(3)))
    with pytest.raises(ValueError, match="finite"):
        view.push(Drawing(renderer, np.array([np.nan, 0.0, 0.0, 0.0])))
    with pytest.raises(TypeError, match="BatchRenderer"):
        view.push(Drawing("CartPole-v1", np.zeros(4)))
    assert view.push(Drawing(renderer, np.zeros(4))) is False  # a good one, with no front-end
    view.close()


def test_a_loop_that_counts_the_helper_process_pays_for_its_time_in_the_budget(shown):
    noise = np.random.default_rng(0).integers(0, 256, (1000, 1000, 3), dtype=np.uint8)  # slow to compress
    ticks = iter(range(10**6))  # the loop's own time per frame: microseconds of this clock
    view = shown(fps=120, max_size=2000, image_format="png", max_overhead=1.0, clock=lambda: next(ticks) * 1e-6)
    view.push(noise, force=True)
    view.flush()
    feed = ViewFeed(view, frame=lambda: noise, info=dict, helper_competes=lambda: True)
    feed.show(force=True)  # the first sample only warms up
    feed.show(force=True)
    # The helper's time for the frame (tens of milliseconds for a PNG of noise) is what limits the rate.
    limit, encode_ms = view.stats["fps_limit"], view.stats["last_encode_ms"]
    assert limit <= 1.0 / (encode_ms / 1000) + 0.005 and limit < 120


def test_torch_fills_every_core_with_its_default_threads_not_with_one():
    from gymview.live.pacing.cpus import torch_fills_cpus

    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(8)
        assert torch_fills_cpus(cpus=16.0) and torch_fills_cpus(cpus=8.0)  # a thread per core, or per two
        torch.set_num_threads(1)
        assert not torch_fills_cpus(cpus=16.0)
    finally:
        torch.set_num_threads(threads)


def test_a_live_view_shows_users_only_what_they_call():
    view = LiveView()
    names = {name for name in [*vars(LiveView), *vars(view)] if not name.startswith("_")}
    view.close()
    assert names == {"title", "fps", "max_size", "quality", "image_format", "codec", "draw", "show_controls",
                     "show", "frame_due", "push", "flush", "save_clip", "stats", "stop", "close"}
