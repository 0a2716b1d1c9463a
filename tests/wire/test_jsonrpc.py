from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.errors import InvalidRequest, InvalidResponse, ParseError, ProtocolError
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.jsonrpc import ErrorResponse, Notification, Request, Response


def test_request_notification_response_error() -> None:
    assert jsonrpc.decode(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}') == Request(1, "tools/list", None)
    assert jsonrpc.decode('{"jsonrpc":"2.0","id":"a","method":"x","params":{"k":1}}') == Request(
        "a", "x", {"k": 1}
    )
    assert jsonrpc.decode(b'{"jsonrpc":"2.0","method":"notifications/x"}') == Notification(
        "notifications/x", None
    )
    assert jsonrpc.decode(b'{"jsonrpc":"2.0","id":3,"result":{}}') == Response(3, {})
    err = jsonrpc.decode(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}')
    assert err == ErrorResponse(None, {"code": -32700, "message": "x"})


@pytest.mark.parametrize(
    ("raw", "rid", "fragment"),
    [
        (b'{"jsonrpc":"1.0","id":1,"method":"x"}', 1, '"jsonrpc" must be "2.0"'),
        (b'{"id":1,"method":"x"}', 1, '"jsonrpc" must be "2.0"'),
        (b'{"jsonrpc":"2.0","id":true,"method":"x"}', None, '"id" must be a string or an integer'),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"x"}', None, '"id" must be a string or an integer'),
        (
            b'{"jsonrpc":"2.0","id":1180591620717411303424,"method":"x"}',
            None,
            "an integer of at most 64 bits",
        ),
        (b'{"jsonrpc":"2.0","id":-9223372036854775809,"method":"x"}', None, "an integer of at most 64 bits"),
        (b'{"jsonrpc":"2.0","id":1e3,"method":"x"}', None, "without a fraction or exponent"),
        (b'{"jsonrpc":"2.0","id":1180591620717411303424,"result":{}}', None, "an integer of at most 64 bits"),
        (b'{"jsonrpc":"2.0","id":7,"method":5}', 7, '"method" must be a non-empty string'),
        (b'{"jsonrpc":"2.0","id":7,"method":""}', 7, '"method" must be a non-empty string'),
        (b'{"jsonrpc":"2.0","id":8,"method":"x","params":[1]}', 8, '"params" must be an object'),
        (b'[{"jsonrpc":"2.0","id":1,"method":"x"}]', None, "batches are not supported"),
        (b'"hello"', None, "must be a JSON object"),
        (b'{"jsonrpc":"2.0","id":9}', 9, 'needs "method", "result" or "error"'),
        (b'{"jsonrpc":"2.0","id":9,"result":[]}', 9, '"result" must be an object'),
        (b'{"jsonrpc":"2.0","id":9,"error":{"code":"x","message":"m"}}', 9, '"error" must be an object'),
    ],
)
def test_invalid_requests_keep_the_id_when_readable(raw: bytes, rid: object, fragment: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        jsonrpc.decode(raw)
    assert info.value.request_id == rid
    assert fragment in info.value.message
    assert info.value.code == -32600


@pytest.mark.parametrize(
    ("raw", "rid", "response"),
    [
        (b'{"jsonrpc":"2.0","id":9,"result":[]}', 9, True),
        (b'{"jsonrpc":"2.0","id":"s-1","result":null}', "s-1", True),
        (b'{"jsonrpc":"2.0","id":9,"error":null}', 9, True),
        (b'{"id":9,"result":{}}', 9, True),
        (b'{"jsonrpc":"2.0","id":true,"result":{}}', None, True),
        (b'{"jsonrpc":"2.0","id":9}', 9, False),
        (b'{"jsonrpc":"1.0","id":9,"method":"x","result":{}}', 9, False),
        (b'{"id":9,"method":"x"}', 9, False),
    ],
)
def test_a_malformed_response_is_told_from_a_malformed_request(
    raw: bytes, rid: object, response: bool
) -> None:
    """A response's id names a request of the receiver's, so a receiver must know which it got."""
    with pytest.raises(InvalidRequest) as info:
        jsonrpc.decode(raw)
    assert isinstance(info.value, InvalidResponse) is response
    assert info.value.request_id == rid


@pytest.mark.parametrize("raw", [b"", b"{", b'{"a":}', b"\xff\xfe", b"NaN", b'{"jsonrpc":"2.0"}garbage'])
def test_not_json_is_a_parse_error(raw: bytes) -> None:
    with pytest.raises(ParseError) as info:
        jsonrpc.decode(raw)
    assert info.value.code == -32700
    assert "not valid JSON" in info.value.message


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (b"\xff\xfe garbage", "byte 0xff at offset 0"),
        (b'{"jsonrpc":"2.0","method":"x\xc3"}', "byte 0xc3 at offset 28"),
        (memoryview(b'{"a":"\xed\xa0\x80"}'), "byte 0xed at offset 6"),  # an encoded surrogate
    ],
)
def test_bytes_that_are_not_utf8_are_named(raw: bytes | memoryview, where: str) -> None:
    with pytest.raises(ParseError) as info:
        jsonrpc.decode(raw)
    assert info.value.message == f"Parse error: the message is not valid JSON (not UTF-8: {where})"


def test_encoders_round_trip() -> None:
    assert orjson.loads(jsonrpc.encode_result(1, {"a": 1})) == {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}}
    err = orjson.loads(jsonrpc.encode_error(None, InvalidRequest("bad")))
    assert err == {"jsonrpc": "2.0", "error": {"code": -32600, "message": "bad"}}
    assert jsonrpc.decode(jsonrpc.encode_request(5, "m", {"x": 1})) == Request(5, "m", {"x": 1})
    assert jsonrpc.decode(jsonrpc.encode_notification("n", None)) == Notification("n", None)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash(raw: bytes) -> None:
    try:
        jsonrpc.decode(raw)
    except ProtocolError:
        pass


@given(
    st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]), json_values)
)
def test_arbitrary_objects_decode_or_raise_invalid_request(value: dict[str, object]) -> None:
    try:
        message = jsonrpc.decode(orjson.dumps(value))
    except InvalidRequest:
        return
    assert isinstance(message, (Request, Notification, Response, ErrorResponse))


def test_a_response_with_both_result_and_error_is_malformed() -> None:
    # JSON-RPC 2.0: exactly one of them; the result was taken and the error ignored
    with pytest.raises(InvalidResponse, match='both "result" and "error"') as caught:
        jsonrpc.decode(b'{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":-32603,"message":"no"}}')
    assert caught.value.request_id == 3
