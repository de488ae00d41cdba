"""Video files: ffmpeg processes, VideoRecorder, the RecordVideo wrapper, the notebook player and
record_batch, which turns thousands of episodes into video in parallel."""

from typing import TYPE_CHECKING

from gymview._internal.lazy import lazy_exports

_EXPORTS = {
    "VideoRecorder": ".recorder",
    "RecordVideo": ".record_video",
    "show_video": ".player",
    "record_batch": ".batch",
    "BatchResult": ".batch",
    "Episode": ".batch_episode",
    "find_ffmpeg": ".ffmpeg",
    "FFmpegError": "gymview.errors",
    "FFmpegNotFoundError": "gymview.errors",
}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what editors and the API reference see; at run time each name is imported on first use
    from gymview.errors import FFmpegError, FFmpegNotFoundError
    from gymview.video.batch import BatchResult, record_batch
    from gymview.video.batch_episode import Episode
    from gymview.video.ffmpeg import find_ffmpeg
    from gymview.video.player import show_video
    from gymview.video.record_video import RecordVideo
    from gymview.video.recorder import VideoRecorder

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
