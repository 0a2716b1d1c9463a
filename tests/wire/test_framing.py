from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire.framing import LineFramer, Oversized, leading_id

MESSAGES = [b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', '{"k":"é日本"}'.encode(), b"{}"]
STREAM = b"\n".join(MESSAGES) + b"\r\n"


def _feed_in_pieces(framer: LineFramer, data: bytes, cuts: list[int]) -> list[bytes | Oversized]:
    out: list[bytes | Oversized] = []
    last = 0
    for cut in sorted(cuts):
        out.extend(framer.feed(data[last:cut]))
        last = cut
    out.extend(framer.feed(data[last:]))
    return out


def test_whole_input() -> None:
    assert LineFramer().feed(STREAM) == MESSAGES


def test_split_at_every_byte() -> None:
    for cut in range(len(STREAM) + 1):
        assert _feed_in_pieces(LineFramer(), STREAM, [cut]) == MESSAGES, cut


def test_byte_by_byte() -> None:
    framer = LineFramer()
    out = []
    for i in range(len(STREAM)):
        out.extend(framer.feed(STREAM[i : i + 1]))
    assert out == MESSAGES


def test_blank_lines_skipped_and_partial_line_held() -> None:
    framer = LineFramer()
    assert framer.feed(b"\n\n  \n{}\n{") == [b"{}"]
    assert framer.pending == 1
    assert framer.feed(b"}\n") == [b"{}"]


def test_oversized_line_is_reported_once_and_stream_recovers() -> None:
    framer = LineFramer(max_line=8)
    assert framer.feed(b"0123456789") == []
    assert framer.pending == 0
    assert framer.feed(b"abc\n{}\n") == [Oversized(13), b"{}"]


@given(st.lists(st.integers(0, len(STREAM)), max_size=6))
def test_any_split_gives_the_same_messages(cuts: list[int]) -> None:
    assert _feed_in_pieces(LineFramer(), STREAM, cuts) == MESSAGES


@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=5))
def test_garbage_never_crashes_and_memory_stays_bounded(data: bytes, cuts: list[int]) -> None:
    framer = LineFramer(max_line=64)
    for item in _feed_in_pieces(framer, data, [c for c in cuts if c <= len(data)]):
        assert isinstance(item, (bytes, Oversized))
        if isinstance(item, bytes):
            assert b"\n" not in item and len(item) <= 64
    assert framer.pending <= 64


def test_a_last_line_without_newline_is_given_at_the_end() -> None:
    framer = LineFramer()
    assert framer.feed(b'{}\n{"a": 1}\r') == [b"{}"]
    assert framer.finish() == [b'{"a": 1}']
    assert framer.pending == 0
    assert framer.finish() == []
    assert LineFramer().finish() == []
    blank = LineFramer()
    blank.feed(b"  ")
    assert blank.finish() == []
    oversized = LineFramer(max_line=4)
    assert oversized.feed(b"0123456") == []
    assert oversized.finish() == [Oversized(7)]


def test_an_oversized_line_keeps_its_head() -> None:
    framer = LineFramer(max_line=16)
    line = b'{"jsonrpc":"2.0","id":7,"params":"' + b"x" * 100 + b'"}'
    out: list[bytes | Oversized] = []
    for i in range(0, len(line), 5):
        out.extend(framer.feed(line[i : i + 5]))
    out.extend(framer.feed(b"\n"))
    assert out == [Oversized(len(line))]
    assert isinstance(out[0], Oversized)
    assert line.startswith(out[0].head) and len(out[0].head) >= 16


@pytest.mark.parametrize(
    ("head", "rid"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"x": "', 7),
        (b'{"jsonrpc":"2.0","id":"a\\"b\\u00e9","method":"tools/call","params":{"x":"', 'a"b\u00e9'),
        (b' { "id" : -3 , "params":[', -3),
        (b'{"params": {"id": 1, "more": "', None),  # an id inside params is not the message's
        (b'{"params": {"x": [1, {"id": 2}]}, "id": 9, "p": "', 9),
        (b'{"jsonrpc":"2.0","id":12', None),  # the number may go on
        (b'{"jsonrpc":"2.0","id":"ab', None),  # the string may go on
        (b'{"jsonrpc":"2.0","id":1.5,"x":"', None),  # not a request id
        (b'{"jsonrpc":"2.0","id":null,"x":"', None),
        (b'{"jsonrpc":"2.0","id":true,"x":"', None),
        (b'[{"id": 1}, "', None),
        (b"not json at all", None),
        (b"", None),
        (b'{"jsonrpc":"2.0","method":"x","params":{"t":"' + b"y" * 200, None),
    ],
)
def test_leading_id(head: bytes, rid: object) -> None:
    assert leading_id(head) == rid


@given(st.binary(max_size=200))
def test_leading_id_never_fails(data: bytes) -> None:
    rid = leading_id(data)
    assert rid is None or isinstance(rid, (str, int))
