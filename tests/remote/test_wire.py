"""The messages on the wire: built, read, and refused when they break a limit or a type."""

import json

import pytest

from gymview.remote import wire
from gymview.remote.address import parse_address
from gymview.remote.wire import MAX_BODY_BYTES, MAX_HEAD_BYTES, MAX_PART_BYTES, RunInfo, decode, encode

RUN = {"id": "vm/12/1", "name": "CartPole-v1", "host": "vm", "pid": 12}


def head(**fields):
    return json.dumps({"v": 1, **fields}).encode()


def test_each_kind_goes_and_comes_back_as_it_was():
    frame = decode(encode("to_page", {"run": "r"}, {"type": "frame", "seq": 3}, [b"\xff\xd8jpeg"]))
    assert (frame.kind, frame.text("run"), frame.body, frame.buffers) == ("to_page", "r", {"type": "frame", "seq": 3}, [b"\xff\xd8jpeg"])
    runs = decode(encode("runs", {"watching": None}, [RUN]))
    assert runs.runs() == [RunInfo("vm/12/1", "CartPole-v1", "vm", 12)] and runs.text("watching") is None
    assert decode(encode("viewers", {}, {"vm/12/1": 2})).counts() == {"vm/12/1": 2}
    assert decode(encode("ended", {"run": "r"})).body is None


@pytest.mark.parametrize("parts", [
    [],                                            # no part at all
    [head(kind="watch")],                          # one part
    [head(kind="watch"), b"", b"x", b"y"],         # four parts
    [head(kind="to_page"), b'{"type":"frame"}', b"a", b"b"],  # two buffers
    [head(kind="watch"), b"", b"buffer"],          # a buffer where the kind has none
    [b"\xff\xfe not utf-8", b""],                  # not text
    [b"[1, 2, 3]", b""],                           # JSON, not an object
    [b'{"kind": "watch"}', b""],                   # no version
    [head(kind="launch"), b""],                    # a kind nobody sends
    [head(kind=["watch"]), b""],                   # the kind is not a string
    [head(kind="page", run="r"), b""],             # a page message without its content
    [head(kind="page", run="r"), b"[1]"],          # its content is a list, not an object
    [head(kind="runs"), b'{"not": "a list"}'],     # runs as an object
    [head(kind="watch", run=7), b""],              # a run id that is a number
    [head(kind="runs", watching={"a": 1}), b"[]"],  # the run watched as an object
    [head(kind="watch"), b"{}"],                   # a body where the kind has none
    [b"{" * 100_000 + b"}" * 100_000, b""],        # nested deeper than any parser should go
    [head(kind="page", run="r"), b"[" * 100_000],  # a body nested too deep
])
def test_anything_else_is_none(parts):
    assert decode(parts) is None


def test_each_part_is_measured_before_it_is_parsed():
    big_head = head(kind="watch", pad="x" * MAX_HEAD_BYTES)
    assert decode([big_head, b""]) is None
    big_body = json.dumps({"type": "ack", "pad": "x" * MAX_BODY_BYTES}).encode()
    assert decode([head(kind="page", run="r"), big_body]) is None
    scene = json.dumps({"kind": "mujoco", "pad": "x" * MAX_BODY_BYTES}).encode()  # a scene may be larger
    assert decode([head(kind="scene", run="r"), scene]).body["kind"] == "mujoco"


def test_a_message_over_a_limit_is_not_built():
    with pytest.raises(ValueError, match="over gymview's limit"):
        encode("page", {}, {"pad": "x" * MAX_BODY_BYTES})
    with pytest.raises(ValueError, match="lower max_size"):
        encode("to_page", {}, {"type": "frame"}, [bytes(MAX_PART_BYTES + 1)])


@pytest.mark.parametrize("value", [
    None, [], {"id": "r", "name": "n", "host": "h"}, {**RUN, "pid": "12"}, {**RUN, "pid": True}, {**RUN, "pid": -1},
    {**RUN, "name": ""}, {**RUN, "host": 5}, {**RUN, "id": "x" * (wire.MAX_TEXT + 1)},
])
def test_a_run_that_is_not_well_formed_is_left_out(value):
    assert RunInfo.read(value) is None
    assert decode(encode("runs", {}, [value, RUN])).runs() == [RunInfo.read(RUN)]


def test_counts_keep_only_counts():
    body = {"a": 1, "b": "2", "c": True, "d": -1, "e": 2.5}
    assert decode(encode("viewers", {}, body)).counts() == {"a": 1}


@pytest.mark.parametrize("text, host, port, loopback", [
    ("5555", "127.0.0.1", 5555, True), (":5555", "127.0.0.1", 5555, True), ("localhost:7", "localhost", 7, True),
    ("0.0.0.0:5555", "0.0.0.0", 5555, False), ("[::1]:5555", "::1", 5555, True), ("head-node:80", "head-node", 80, False),
])
def test_addresses(text, host, port, loopback):
    address = parse_address(text)
    assert (address.host, address.port, address.loopback) == (host, port, loopback)


@pytest.mark.parametrize("text", ["", "host", "host:", "host:0", "host:65536", "::1:5555", "[::1]", "a b:5", "h:5x"])
def test_an_address_that_is_not_host_and_port_says_how_one_looks(text):
    with pytest.raises(ValueError, match="HOST:PORT, like '127.0.0.1:5555'"):
        parse_address(text)


def test_localhost_binds_the_loopback_interface():
    assert parse_address("localhost:5555").bind_endpoint == "tcp://127.0.0.1:5555"
    assert parse_address("localhost:5555").connect_endpoint == "tcp://localhost:5555"
