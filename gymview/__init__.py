"""gymview: see Gymnasium agents live in notebooks, and turn episodes into video fast.

>>> import gymnasium as gym, gymview
>>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))  # doctest: +SKIP
"""

from gymview._worker import WorkerError
from gymview.batch import BatchResult, record_batch
from gymview.colab import SetupReport, setup
from gymview.frames import tile, to_rgb_uint8
from gymview.magic import load_ipython_extension, unload_ipython_extension
from gymview.player import show_video
from gymview.recorder import RecordVideo, VideoRecorder
from gymview.widget import LiveView, live_views
from gymview.wrapper import WatchedEnv, WatchedVectorEnv, watch

__version__ = "0.1.0"

__all__ = [
    "BatchResult",
    "LiveView",
    "RecordVideo",
    "SetupReport",
    "VideoRecorder",
    "WatchedEnv",
    "WatchedVectorEnv",
    "WorkerError",
    "live_views",
    "load_ipython_extension",
    "record_batch",
    "setup",
    "show_video",
    "tile",
    "to_rgb_uint8",
    "unload_ipython_extension",
    "watch",
    "__version__",
]
