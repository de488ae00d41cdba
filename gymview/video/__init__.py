"""Video files: ffmpeg processes, VideoRecorder, the RecordVideo wrapper, the notebook player and
record_batch, which turns thousands of episodes into video in parallel."""

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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
