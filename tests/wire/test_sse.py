from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire.sse import KEEPALIVE, MAX_RETRY_MS, Event, EventDecoder, encode_event

STREAM = (
    encode_event(b'{"a":1}', event_id="1", retry=500)
    + KEEPALIVE
    + encode_event('{"t":"日本"}'.encode(), event="message")
    + b"data: line1\r\ndata: line2\r\n\r\n"
)
EXPECTED = [
    Event('{"a":1}', "message", "1", 500),
    Event('{"t":"日本"}', "message", "1", None),
    Event("line1\nline2", "message", "1", None),
]


def test_decode_whole() -> None:
    decoder = EventDecoder()
    assert decoder.feed(STREAM) == EXPECTED
    assert decoder.last_event_id == "1"
    assert decoder.retry == 500


def test_split_at_every_byte() -> None:
    for cut in range(len(STREAM) + 1):
        decoder = EventDecoder()
        assert decoder.feed(STREAM[:cut]) + decoder.feed(STREAM[cut:]) == EXPECTED, cut


def test_multiline_data_is_split_into_data_lines() -> None:
    assert encode_event(b"a\nb") == b"data: a\ndata: b\n\n"


@given(st.lists(st.integers(0, len(STREAM)), max_size=6))
def test_any_split(cuts: list[int]) -> None:
    decoder = EventDecoder()
    out = []
    last = 0
    for cut in sorted(cuts):
        out.extend(decoder.feed(STREAM[last:cut]))
        last = cut
    out.extend(decoder.feed(STREAM[last:]))
    assert out == EXPECTED


@given(st.binary(max_size=300))
def test_garbage_never_crashes(data: bytes) -> None:
    for event in EventDecoder().feed(data):
        assert isinstance(event.data, str)


def test_a_priming_event_is_not_handed_on_but_its_id_and_retry_count() -> None:
    decoder = EventDecoder()
    priming = encode_event(b"", event_id="s-0", retry=1000)
    assert priming == b"id: s-0\nretry: 1000\ndata: \n\n"
    assert decoder.feed(priming) == []
    assert decoder.last_event_id == "s-0" and decoder.retry == 1000
    # two empty data lines are one line break of data: that one is an event
    assert decoder.feed(b"data: \ndata: \n\n") == [Event("\n", "message", "s-0", None)]


def test_a_line_longer_than_the_limit_is_refused_however_split() -> None:
    decoder = EventDecoder(max_size=10)
    assert decoder.feed(b"data: 1234") == []
    with pytest.raises(ValueError, match="SSE line is longer than the limit of 10"):
        decoder.feed(b"5")


def test_an_event_longer_than_the_limit_is_refused() -> None:
    decoder = EventDecoder(max_size=10)
    assert decoder.feed(b"data: 1234\ndata: 5678\n") == []
    with pytest.raises(ValueError, match="SSE event's data is longer than the limit of 10"):
        decoder.feed(b"data: 9\n")


def test_a_line_fed_in_pieces_is_whole_when_it_ends() -> None:
    decoder = EventDecoder()
    pieces = [b"data: "] + [b"ab"] * 1000 + [b"\r", b"\n", b"\n"]
    events = [event for piece in pieces for event in decoder.feed(piece)]
    assert events == [Event("ab" * 1000)]


def test_a_leading_byte_order_mark_is_skipped_even_when_split() -> None:
    stream = b"\xef\xbb\xbfdata: first\n\n"
    for cut in range(len(stream) + 1):
        decoder = EventDecoder()
        assert decoder.feed(stream[:cut]) + decoder.feed(stream[cut:]) == [Event("first")], cut


def test_only_the_first_byte_order_mark_is_skipped() -> None:
    decoder = EventDecoder()
    assert decoder.feed("data: a\n\n\ufeffdata: b\n\n".encode()) == [Event("a")]


def test_a_retry_of_digits_that_are_not_ascii_is_ignored() -> None:
    decoder = EventDecoder()
    assert decoder.feed("retry: ²\nretry: ٣\ndata: x\n\n".encode()) == [Event("x")]
    assert decoder.retry is None
    assert decoder.feed(b"retry: 250\ndata: y\n\n") == [Event("y", retry=250)]


def test_a_retry_of_thousands_of_digits_is_read_as_the_longest_wait() -> None:
    # int() refuses over 4300 digits: the ValueError ended the stream, reported as a
    # refused response; a retry of a few hundred digits passed, and the client's delay
    # (retry / 1000) overflowed a float.
    decoder = EventDecoder()
    for digits in ("9" * 5000, "9" * 400):
        assert decoder.feed(f"retry: {digits}\ndata: x\n\n".encode()) == [Event("x", retry=MAX_RETRY_MS)]
        assert decoder.retry == MAX_RETRY_MS
        assert decoder.retry / 1000 > 3e7  # a float: a year and more, no overflow
    assert decoder.feed(("retry: " + "0" * 5000 + "250\ndata: y\n\n").encode()) == [Event("y", retry=250)]
