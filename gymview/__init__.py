"""gymview: see Gymnasium agents live in notebooks, and turn episodes into video fast.

Every public name is imported on first use: ``import gymview`` loads neither IPython, widgets,
torch nor ffmpeg helpers.

>>> import gymnasium as gym, gymview
>>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))  # doctest: +SKIP
"""

from typing import TYPE_CHECKING

from gymview._internal.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "BatchResult": "gymview.video.batch",
    "EncoderProcessError": "gymview.errors",
    "FFmpegError": "gymview.errors",
    "FFmpegNotFoundError": "gymview.errors",
    "FitnessError": "gymview.errors",
    "FrameError": "gymview.errors",
    "Job": "gymview.jobs",
    "Run": "gymview.playback",
    "Stopped": "gymview.errors",
    "attach": "gymview.remote.attached",
    "background": "gymview.jobs",
    "compare": "gymview.video.compare",
    "play": "gymview.playback",
    "should_stop": "gymview.jobs",
    "show_episode": "gymview.episodes.player",
    "show_rollout": "gymview.rollouts.player",
    "LiveView": "gymview.live.widget",
    "RecordVideo": "gymview.video.record_video",
    "SetupReport": "gymview.headless.provision",
    "VideoLogError": "gymview.errors",
    "VideoRecorder": "gymview.video.recorder",
    "WatchedEnv": "gymview.watched",
    "WatchedVectorEnv": "gymview.watched",
    "WorkerError": "gymview.errors",
    "export_episode": "gymview.video.export",
    "live_views": "gymview.live.kernels.registry",
    "log": "gymview.episodes.current",
    "load_ipython_extension": "gymview.magic",
    "read_steps": "gymview.episodes.table",
    "record_batch": "gymview.video.batch",
    "setup": "gymview.notebook",
    "show_video": "gymview.video.player",
    "tile": "gymview.image.tiling",
    "to_rgb_uint8": "gymview.image.frames",
    "unload_ipython_extension": "gymview.magic",
    "watch": "gymview.watched",
}

# importable, but not what users call: helpers of the live view, and IPython's hooks for %load_ext gymview
_UNLISTED = {"live_views", "tile", "to_rgb_uint8", "load_ipython_extension", "unload_ipython_extension"}

__all__ = [*(name for name in _EXPORTS if name not in _UNLISTED), "__version__"]

if TYPE_CHECKING:  # what editors and the API reference see; at run time each name is imported on first use
    from gymview.episodes.current import log
    from gymview.episodes.player import show_episode
    from gymview.episodes.table import read_steps
    from gymview.errors import (
        EncoderProcessError,
        FFmpegError,
        FFmpegNotFoundError,
        FitnessError,
        FrameError,
        Stopped,
        VideoLogError,
        WorkerError,
    )
    from gymview.headless.provision import SetupReport
    from gymview.image.frames import to_rgb_uint8
    from gymview.image.tiling import tile
    from gymview.jobs import Job, background, should_stop
    from gymview.live.kernels.registry import live_views
    from gymview.live.widget import LiveView
    from gymview.magic import load_ipython_extension, unload_ipython_extension
    from gymview.notebook import setup
    from gymview.playback import Run, play
    from gymview.remote.attached import attach
    from gymview.rollouts.player import show_rollout
    from gymview.video.batch import BatchResult, record_batch
    from gymview.video.compare import compare
    from gymview.video.export import export_episode
    from gymview.video.player import show_video
    from gymview.video.record_video import RecordVideo
    from gymview.video.recorder import VideoRecorder
    from gymview.watched import WatchedEnv, WatchedVectorEnv, watch

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
