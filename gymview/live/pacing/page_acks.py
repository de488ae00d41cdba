"""Flow control by the browser pages' acks, for a FrameStreamer (which holds its lock around every call).

Each page acks the newest frame it drew, at most four times a second. Frames are held while a page's oldest
frame not acknowledged left ``max_lag`` ago, or its last two acks both came ``max_lag`` after their frames (a
slow link's queue drains first); not by a page silent for ``ACK_FRESH_SECONDS`` or twice its lag (gone, hidden),
nor by a frame its acks passed over for ``LOST_SECONDS`` (lost on the way: a published run's link may drop one).

>>> acks = PageAcks(max_lag=0.5)
>>> acks.acknowledge(-1, "k3x9", now=10.0); acks.sent(0, at=10.0)
>>> acks.can_send(now=10.25), acks.can_send(now=10.5)  # frame 0 unacknowledged for max_lag
(True, False)
>>> acks.acknowledge(0, "k3x9", now=10.5); acks.can_send(now=10.5)
True
"""

from __future__ import annotations

import collections
import dataclasses

__all__ = ["ACK_FRESH_SECONDS", "LOST_SECONDS", "PAGE_FORGOTTEN_SECONDS", "PageAcks"]

ACK_FRESH_SECONDS = 1.0
# A frame a page whose acks arrive has not acknowledged for this long never reached it (a published run's frame
# dropped by a full pipe, or while its hub changed): it holds no frame back. A page that draws its frames later than
# that, or than twice ``max_lag`` or its own lag, is taken for one that lost them.
LOST_SECONDS = 2.0
PAGE_FORGOTTEN_SECONDS = 60.0  # a page silent this long is gone (closed, reloaded): it is forgotten


class PageAcks:
    """Every page's acks, and the frames (numbers, send times) not yet acknowledged by all of them."""

    def __init__(self, max_lag: float) -> None:
        self.max_lag = max_lag
        self.acked = -1  # the newest frame any page acknowledged
        self._pages: dict[str, _Page] = {}
        self._unacked: collections.deque[tuple[int, float]] = collections.deque(maxlen=512)  # a page may never ack

    def sent(self, seq: int, at: float) -> None:
        """Frame ``seq`` went out at ``at``."""
        self._unacked.append((seq, at))

    def can_send(self, now: float) -> bool:
        """False while a page whose acks arrive lags (see the module docstring)."""
        for page in self._pages.values():
            lost_after = max(LOST_SECONDS, 2 * self.max_lag, 2 * page.lag)  # a page far behind draws late
            oldest = next(
                (at for seq, at in self._unacked if seq > page.acked and at >= page.since and now - at < lost_after),
                None,
            )
            if not page.silent(now) and oldest is not None and max(now - oldest, page.late) >= self.max_lag:
                return False
        return True

    def acknowledge(self, seq: int, page: str, now: float) -> None:
        """Page ``page`` drew the frames up to ``seq``."""
        acks = self._pages.get(page)
        sent_at = next((at for number, at in self._unacked if number == seq), None)
        lag = None if sent_at is None or (acks is not None and seq <= acks.acked) else now - sent_at
        if acks is None or acks.silent(now):
            # a new page, or acks resuming after a silence (a blocking cell, a tab in the background): frames sent
            # before are not held against it, it may never ack them all
            acks = self._pages[page] = _Page(seq, now, now)
        if lag is not None:
            acks.late, acks.lag = min(lag, acks.lag), lag
        acks.acked, acks.last = max(acks.acked, seq), now
        self.acked = max(self.acked, seq)
        for name in [name for name, other in self._pages.items() if now - other.last > PAGE_FORGOTTEN_SECONDS]:
            del self._pages[name]
        fresh = [other.acked for other in self._pages.values() if not other.silent(now)]
        while self._unacked and self._unacked[0][0] <= min(fresh):
            self._unacked.popleft()


@dataclasses.dataclass
class _Page:
    """One page: the newest frame it drew, when it said so, since when its acks arrive, how late it drew the
    frame its last ack named, and the lesser of its last two acks' lags (one slow draw is no queue)."""

    acked: int
    last: float
    since: float
    lag: float = 0.0
    late: float = 0.0

    def silent(self, now: float) -> bool:
        """Its acks stopped: longer than ``ACK_FRESH_SECONDS`` without one, or than twice its lag."""
        return now - self.last >= max(ACK_FRESH_SECONDS, 2 * self.lag)
