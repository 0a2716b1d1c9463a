from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire import headers as h


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("internal spaces ok", "internal spaces ok"),
    ],
)
def test_value_encoding(value: str, encoded: str) -> None:
    assert h.encode_value(value) == encoded
    assert h.decode_value(encoded) == value


@given(st.text(max_size=40))
def test_any_text_round_trips(value: str) -> None:
    assert h.decode_value(h.encode_value(value)) == value


def test_malformed_sentinel_and_control_characters_are_refused() -> None:
    with pytest.raises(ValueError, match="Base64"):
        h.decode_value("=?base64?!!!?=")
    with pytest.raises(ValueError, match="control"):
        h.decode_value("a\x01b")
    # every C0 control but tab, and DEL, is refused; tab and everything else is kept
    for code in [*range(0x20), 0x7F]:
        raw = f"a{chr(code)}b"
        if code == 0x09:
            assert h.decode_value(raw) == raw
        else:
            with pytest.raises(ValueError, match="control"):
                h.decode_value(raw)
    # nor is anything beyond ASCII read as Latin-1: such a value travels Base64-encoded
    for raw in ["a\x80b", "café", "a\xa0", "\x85a", "Zürich".encode().decode("latin-1")]:
        with pytest.raises(ValueError, match="ASCII"):
            h.decode_value(raw)
    assert h.decode_value(" \ta\tb c ") == "a\tb c"


def test_param_values() -> None:
    assert h.param_value(True) == "true"
    assert h.param_value(False) == "false"
    assert h.param_value(42) == "42"
    assert h.param_value(None) is None
    assert h.param_value("x") == "x"
    assert h.param_value({"a": 1}) is None


def test_name_source() -> None:
    assert h.name_source("tools/call", {"name": "t"}) == "t"
    assert h.name_source("prompts/get", {"name": "p"}) == "p"
    assert h.name_source("resources/read", {"uri": "file:///x"}) == "file:///x"
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):  # the tasks extension
        assert h.name_source(method, {"taskId": "t-1"}) == "t-1"
    assert h.name_source("tasks/get", {"taskId": 7}) is None
    assert h.name_source("tools/list", {}) is None


def _schema(**props: object) -> dict[str, object]:
    return {"type": "object", "properties": props}


def test_header_params_valid_nested() -> None:
    schema = _schema(
        region={"type": "string", "x-mcp-header": "Region"},
        opts={"type": "object", "properties": {"verbose": {"type": "boolean", "x-mcp-header": "Verbose"}}},
    )
    assert h.header_params(schema) == {("region",): "Region", ("opts", "verbose"): "Verbose"}


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        (_schema(a={"type": "string", "x-mcp-header": ""}), "non-empty"),
        (_schema(a={"type": "number", "x-mcp-header": "A"}), "string, integer or boolean"),
        (_schema(a={"type": "object", "x-mcp-header": "A"}), "string, integer or boolean"),
        (_schema(a={"type": "array", "x-mcp-header": "A"}), "string, integer or boolean"),
        (_schema(a={"type": "null", "x-mcp-header": "A"}), "string, integer or boolean"),
        (
            _schema(a={"type": "string", "x-mcp-header": "A"}, b={"type": "string", "x-mcp-header": "a"}),
            "duplicates",
        ),
        (_schema(a={"type": "string", "x-mcp-header": "Has Space"}), "token"),
        (_schema(a={"type": "string", "x-mcp-header": "Co:lon"}), "token"),
        (_schema(a={"type": "string", "x-mcp-header": "Ünï"}), "token"),
        (_schema(a={"type": "string", "x-mcp-header": "Ctl\x01"}), "token"),
        (_schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}), "reachable"),
        (_schema(a={"anyOf": [{"type": "string", "x-mcp-header": "A"}]}), "reachable"),
    ],
)
def test_header_params_invalid(schema: dict[str, object], fragment: str) -> None:
    with pytest.raises(h.InvalidHeaderSpec, match=fragment):
        h.header_params(schema)


def _nested(key: str, depth: int, bottom: dict[str, object]) -> dict[str, object]:
    """A tool's inputSchema that nests ``depth`` schemas under ``key`` (``not``, ``items``...),
    as a server's tools/list decodes (orjson stops at 1024 levels)."""
    text = '{"type":"object",' + f'"{key}":{{' * depth + orjson.dumps(bottom).decode()[1:] + "}" * depth
    schema = orjson.loads(text)
    assert isinstance(schema, dict)
    return schema


@pytest.mark.parametrize("key", ["not", "items", "additionalProperties"])
def test_header_params_of_a_schema_as_deep_as_json_goes(key: str) -> None:
    """A server's tool nesting its inputSchema as deep as a JSON message may (a client reads
    every tool's x-mcp-header annotations): the annotation at the bottom is found and
    refused as unreachable, and none is no annotation, rather than a RecursionError."""
    bottom = {"type": "string", "x-mcp-header": "Deep"}
    with pytest.raises(h.InvalidHeaderSpec, match="not reachable"):
        h.header_params(_nested(key, 1020, bottom))
    assert h.header_params(_nested(key, 1020, {"type": "string"})) == {}


def test_header_params_deep_under_properties() -> None:
    """Under properties all the way down the annotation is reachable, at its full path."""
    schema: dict[str, object] = {"type": "string", "x-mcp-header": "Deep"}
    for _ in range(1200):
        schema = {"type": "object", "properties": {"p": schema}}
    assert h.header_params(schema) == {("p",) * 1200: "Deep"}
