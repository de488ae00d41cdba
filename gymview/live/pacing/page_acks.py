"""PageAcks: flow control by the browser pages' acks, for a FrameStreamer (which holds its lock
around every call).

Each page acks the newest frame it drew, at most four times a second, which says how late it drew
it. While a page's acks arrive, frames go out as long as the oldest one it has not acknowledged left
less than ``max_lag`` seconds ago, and its last two acks did not both say it drew frames ``max_lag``
or more after they left (on a slow link frames queue: new ones wait until they drain; a link whose
round trip alone reaches ``max_lag`` needs a larger one). A page counts until its acks stop for
``ACK_FRESH_SECONDS``, or for twice its lag (a page behind a slow link acks late): then it is gone,
hidden or unable to answer during the cell, and the time throttle alone rules. The lag above the
page's least lag of the last ``BASE_SECONDS`` (its link's own delay) is the time frames queued on
the way: the H.264 stream's quality level follows it (:mod:`gymview.live.encoding.video_quality`).

>>> acks = PageAcks(max_lag=0.5)
>>> acks.acknowledge(-1, "k3x9", now=10.0)  # a page that acks
>>> acks.sent(0, at=10.0)
>>> acks.can_send(now=10.25), acks.can_send(now=10.5)  # frame 0 unacknowledged for max_lag
(True, False)
>>> acks.acknowledge(0, "k3x9", now=10.5), acks.can_send(now=10.5)  # its first lag: nothing queued yet
(0.0, True)
"""

from __future__ import annotations

import collections
import dataclasses

__all__ = ["ACK_FRESH_SECONDS", "PAGE_FORGOTTEN_SECONDS", "PageAcks"]

# Acknowledgements count as "arriving" while the last one is younger than this (or than twice the
# page's lag); after that the browser is gone, hidden or unable to answer during the cell.
ACK_FRESH_SECONDS = 1.0
# A page silent this long is gone (closed, reloaded): it is forgotten.
PAGE_FORGOTTEN_SECONDS = 60.0
# A page's own delay is its least lag over this long: longer than a queue lasts, short enough to
# follow a link that changes (a laptop that moves to another network).
BASE_SECONDS = 10.0


class PageAcks:
    """Every page's acks, and the frames (numbers, send times) not yet acknowledged by all of them."""

    def __init__(self, max_lag: float) -> None:
        self.max_lag = max_lag
        self.acked = -1  # the newest frame any page acknowledged
        self._pages: dict[str, _Page] = {}
        # bounded for a browser that never acks
        self._unacked: collections.deque[tuple[int, float]] = collections.deque(maxlen=512)

    def sent(self, seq: int, at: float) -> None:
        """Frame ``seq`` went out at ``at``."""
        self._unacked.append((seq, at))

    def can_send(self, now: float) -> bool:
        """False while a page whose acks arrive lags (see the module docstring)."""
        for page in self._pages.values():
            if page.silent(now):
                continue  # it holds nothing back
            for seq, sent_at in self._unacked:
                if seq > page.acked and sent_at >= page.since:  # its oldest frame not acknowledged
                    if now - sent_at >= self.max_lag or page.late >= self.max_lag:
                        return False
                    break
        return True

    def acknowledge(self, seq: int, page: str, now: float) -> float | None:
        """Page ``page`` drew the frames up to ``seq``; returns how long frame ``seq`` queued on its
        way (None when that is not known: an ack of a frame acked before, or forgotten)."""
        acks = self._pages.get(page)
        sent_at = next((at for number, at in self._unacked if number == seq), None)
        lag = None if sent_at is None or (acks is not None and seq <= acks.acked) else now - sent_at
        if acks is None or acks.silent(now):
            # A new page, or acks resuming after a silence (a blocking cell, a tab in the
            # background): frames sent before are not held against it, it may never ack them all.
            acks = self._pages[page] = _Page(int(seq), now, now)
        queued = None if lag is None else acks.heard_lag(lag, now)
        acks.acked, acks.last = max(acks.acked, int(seq)), now
        self.acked = max(self.acked, int(seq))
        for name in [name for name, other in self._pages.items() if now - other.last > PAGE_FORGOTTEN_SECONDS]:
            del self._pages[name]
        fresh = [other.acked for other in self._pages.values() if not other.silent(now)]
        while self._unacked and self._unacked[0][0] <= min(fresh):
            self._unacked.popleft()
        return queued


@dataclasses.dataclass
class _Page:
    """One browser page's acks: the newest frame it drew, when it last said so, since when its acks
    arrive without a silence, and how late it drew the frames its last acks named."""

    acked: int
    last: float
    since: float
    lag: float = 0.0  # the last ack's
    late: float = 0.0  # the lesser of its last two acks' lags: one slow draw (a page starting up) is no queue
    _previous: float = 0.0
    _lags: collections.deque = dataclasses.field(default_factory=collections.deque)  # (when, lag), least first

    def heard_lag(self, lag: float, now: float) -> float:
        """How long the frame acked now queued (``lag`` above the least of the last ``BASE_SECONDS``)."""
        lags = self._lags
        while lags and lags[-1][1] >= lag:  # a sliding minimum: lags[0] is the least of the window
            lags.pop()
        lags.append((now, lag))
        while now - lags[0][0] > BASE_SECONDS:
            lags.popleft()
        self.lag, self.late, self._previous = lag, min(lag, self._previous), lag
        return lag - lags[0][1]

    def silent(self, now: float) -> bool:
        """Its acks stopped: longer than ``ACK_FRESH_SECONDS`` without one, or than twice its lag."""
        return now - self.last >= max(ACK_FRESH_SECONDS, 2 * self.lag)
