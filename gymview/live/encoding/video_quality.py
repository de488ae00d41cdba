"""VideoQuality: the H.264 stream's quality level, from how long frames queue on the way to the pages.

Each ack says how late a page drew a frame; above that page's least lag of the last seconds (its
link's own delay) is the time the frame queued on the way (:class:`~gymview.live.pacing.page_acks.PageAcks`
works it out, per page). On a link too slow for the stream that queue grows: past half of
``max_lag`` the level goes up (each level roughly halves the bytes a frame; see
:data:`gymview.live.encoding.h264.QUALITY_LEVELS`), at most once a ``STEP_SECONDS``, before flow control has
to hold frames back; after ``CALM_SECONDS`` under a quarter of ``max_lag`` it comes down one level.
Flow control by acks still bounds the lag; the level keeps the frame rate up.

>>> quality = VideoQuality(max_lag=0.5)
>>> quality.heard(queued=0.0, now=9.0), quality.heard(queued=0.3, now=10.0), quality.heard(queued=0.3, now=10.5)
(0, 1, 1)
>>> [quality.heard(queued=0.02, now=t) for t in (12.0, 16.0, 17.0, 22.0)]
[1, 1, 0, 0]
"""

from __future__ import annotations

from gymview.live.encoding.h264 import QUALITY_LEVELS

__all__ = ["VideoQuality"]

# A level up waits this long after the last change: the frames already queued on the link arrive
# late whatever the new level does.
STEP_SECONDS = 1.0
# A level down needs this long without a late frame: a key frame of the new stream and the bigger
# frames that follow must not push the lag straight back up.
CALM_SECONDS = 5.0


class VideoQuality:
    """The quality level for the next frames, from how long each acked frame queued."""

    def __init__(self, max_lag: float) -> None:
        self.max_lag = max_lag
        self.level = 0
        self._changed_at = float("-inf")
        self._calm_since: float | None = None

    def heard(self, queued: float, now: float) -> int:
        """A page drew a frame that queued ``queued`` seconds on the way; the level from now on."""
        if queued > self.max_lag / 2:
            self._calm_since = None
            if self.level < len(QUALITY_LEVELS) - 1 and now - self._changed_at >= STEP_SECONDS:
                self.level, self._changed_at = self.level + 1, now
        elif queued < self.max_lag / 4:
            if self._calm_since is None:
                self._calm_since = now
            elif self.level > 0 and now - max(self._calm_since, self._changed_at) >= CALM_SECONDS:
                self.level, self._changed_at = self.level - 1, now
        else:
            self._calm_since = None
        return self.level
