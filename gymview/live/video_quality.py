"""VideoQuality: the H.264 stream's quality level, from how late the pages' acks say frames arrive.

Each ack names the newest frame a page drew; the time since that frame was sent is what the link
and the page add. Its least value over the last ``BASE_SECONDS`` is the link's own delay (latency,
the page's drawing, the ack's way back); what comes on top is the frames queued on the way. On a
link too slow for the stream that queue grows: past half of ``max_lag`` the level goes up (each
level roughly halves the bytes a frame; see :data:`gymview.live.h264.QUALITY_LEVELS`), at most once a
``STEP_SECONDS``, before flow control has to hold frames back; after ``CALM_SECONDS`` under a quarter
of ``max_lag`` it comes down one level. Flow control by acks still bounds the lag; the level keeps
the frame rate up.

>>> quality = VideoQuality(max_lag=0.5)
>>> quality.heard(lag=0.1, now=9.0), quality.heard(lag=0.4, now=10.0), quality.heard(lag=0.4, now=10.5)
(0, 1, 1)
>>> [quality.heard(lag=0.12, now=t) for t in (12.0, 16.0, 17.0, 22.0)]
[1, 1, 0, 0]
"""

from __future__ import annotations

import collections

from gymview.live.h264 import QUALITY_LEVELS

__all__ = ["VideoQuality"]

# A level up waits this long after the last change: the frames already queued on the link arrive
# late whatever the new level does.
STEP_SECONDS = 1.0
# A level down needs this long without a late frame: a key frame of the new stream and the bigger
# frames that follow must not push the lag straight back up.
CALM_SECONDS = 5.0
# The link's own delay is the least lag over this long: longer than a queue lasts, short enough to
# follow a link that changes (a laptop that moves to another network).
BASE_SECONDS = 10.0


class VideoQuality:
    """The quality level for the next frames, from each ack's lag."""

    def __init__(self, max_lag: float) -> None:
        self.max_lag = max_lag
        self.level = 0
        self._changed_at = float("-inf")
        self._calm_since: float | None = None
        self._lags: collections.deque[tuple[float, float]] = collections.deque()  # (when, lag), least first

    def heard(self, lag: float, now: float) -> int:
        """A page drew a frame ``lag`` seconds after it was sent; the level from now on."""
        lags = self._lags
        while lags and lags[-1][1] >= lag:  # a sliding minimum: lags[0] is the least of the window
            lags.pop()
        lags.append((now, lag))
        while now - lags[0][0] > BASE_SECONDS:
            lags.popleft()
        queued = lag - lags[0][1]
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
