"""gymview: see Gymnasium agents live in notebooks, and turn episodes into video fast.

>>> import gymnasium as gym, gymview
>>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))  # doctest: +SKIP
"""

from gymview._worker import WorkerError
from gymview.frames import tile, to_rgb_uint8
from gymview.player import show_video
from gymview.recorder import RecordVideo, VideoRecorder

__version__ = "0.1.0"

__all__ = ["RecordVideo", "VideoRecorder", "WorkerError", "show_video", "tile", "to_rgb_uint8", "__version__"]
