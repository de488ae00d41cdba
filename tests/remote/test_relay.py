"""What a notebook passes to its page: frames checked, numbers shifted across runs."""

import pytest

from gymview.remote.relay import Renumbering, for_page

FRAME = {"type": "frame", "seq": 5, "format": "jpeg", "width": 64, "height": 48, "acked": 3}


@pytest.mark.parametrize("content, buffers, ok", [
    (FRAME, [b"jpeg"], True),
    ({**FRAME, "format": "h264"}, [b"nal"], True),
    ({"type": "state", "state": "paused", "heard": ["k:1"]}, [], True),
    (FRAME, [], False),                                    # no picture
    (FRAME, [b"a", b"b"], False),                          # two pictures
    ({**FRAME, "format": "gif"}, [b"x"], False),           # a format the page cannot draw
    ({**FRAME, "seq": "5"}, [b"x"], False),
    ({**FRAME, "seq": True}, [b"x"], False),
    ({**FRAME, "width": 0}, [b"x"], False),
    ({**FRAME, "height": 10**9}, [b"x"], False),
    ({**FRAME, "frames": [{"seq": 1}, {"seq": "2"}]}, [b"x"], False),
    ({**FRAME, "frames": []}, [b"x"], False),
    ({**FRAME, "replay": -1}, [b"x"], False),
    ({"type": "state", "state": 3}, [], False),
    ({"type": "state", "state": "paused"}, [b"x"], False),
    ({"type": "script", "src": "alert(1)"}, [], False),
    ({"type": "module", "name": "mujoco"}, [b"alert(1)"], False),  # JavaScript comes from the notebook only
    (["frame"], [b"x"], False),
])
def test_only_what_the_page_takes_goes_to_it(content, buffers, ok):
    assert for_page(content, buffers) is ok


def test_a_run_attached_again_numbers_on_from_the_frames_before():
    numbers = Renumbering()
    assert [numbers.out({**FRAME, "seq": seq})["seq"] for seq in (100, 101, 103)] == [0, 1, 3]
    numbers.new_run()  # the run started again: its frames count from 0
    first = numbers.out({**FRAME, "seq": 0, "acked": -1})
    assert (first["seq"], first["acked"]) == (4, 3)
    assert numbers.back({"type": "ack", "seq": 4, "client": "p"}) == {"type": "ack", "seq": 0, "client": "p"}
    assert numbers.back({"type": "ack", "seq": 3, "client": "p"}) is None  # a frame of the run before
    assert numbers.back({"type": "control", "action": "pause"}) == {"type": "control", "action": "pause"}


def test_frames_sent_together_are_numbered_from_the_first():
    numbers = Renumbering()
    numbers.out({**FRAME, "seq": 9})
    numbers.new_run()
    batch = numbers.out({**FRAME, "format": "scene", "seq": 12, "frames": [{"seq": 10}, {"seq": 11}, {"seq": 12}]})
    assert [frame["seq"] for frame in batch["frames"]] == [1, 2, 3] and batch["seq"] == 3


def test_a_replayed_frame_keeps_its_place():
    numbers = Renumbering()
    numbers.out({**FRAME, "seq": 7})
    numbers.out({**FRAME, "seq": 8})
    replay = numbers.out({**FRAME, "seq": 2, "replay": 0})
    assert replay["seq"] == -5 and numbers.top == 1  # the page shows it as a replay; live numbering goes on
