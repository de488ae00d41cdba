"""PageAcks: frames held while a page lags; a frame lost on the way holds nothing back for long."""

from gymview.live.pacing.page_acks import LOST_SECONDS, PageAcks


def test_frames_lost_on_the_way_hold_frames_back_only_until_they_count_as_lost():
    acks = PageAcks(max_lag=0.5)
    acks.acknowledge(0, "page", now=10.0)
    acks.sent(0, at=9.9)
    for seq in (1, 2, 3):  # dropped on the way (a published run's link changing hubs): the page never gets them
        acks.sent(seq, at=10.0)
    now, held = 10.0, []
    while now < 10.0 + LOST_SECONDS + 1.0:
        acks.acknowledge(0, "page", now=now)  # the page, four times a second, acks the newest frame it has
        held.append((now, acks.can_send(now)))
        now += 0.25
    assert [at for at, can in held if not can] == [at for at, _ in held if 10.5 <= at < 10.0 + LOST_SECONDS]
    assert held[-1][1], "frames go out again: the page acks what it gets"


def test_a_slow_page_is_still_waited_for_by_its_lag():
    acks = PageAcks(max_lag=0.5)
    acks.acknowledge(-1, "page", now=0.0)
    seq, now = 0, 0.0
    for _ in range(20):  # every frame reaches the page, each 0.8 s after it went out
        acks.sent(seq, at=now)
        now += 0.8
        acks.acknowledge(seq, "page", now=now)
        seq += 1
    acks.sent(seq, at=now)
    assert not acks.can_send(now + 0.1), "its acks say it draws 0.8 s late: the next frame waits"
