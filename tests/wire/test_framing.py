from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire.framing import LineFramer, Oversized

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
