"""The 2026-07-28 checks of the protocol core, in the order the spec asks for them."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.core.server import ServerCore, ServerIdentity
from mcp_elicit.errors import (
    HeaderMismatch,
    InvalidRequest,
    InvalidRequestMeta,
    MethodNotFound,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from mcp_elicit.wire.jsonrpc import Request

CORE = ServerCore(ServerIdentity("t", "1.0", capabilities={"tools": {}}))
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _request(method: str = "tools/list", meta: Any = META, **params: Any) -> Request:
    body = dict(params)
    if meta is not None:
        body["_meta"] = meta
    return Request(7, method, body)


def _headers(version: str = "2026-07-28", method: str = "tools/list", **more: str) -> dict[str, str]:
    return {"mcp-protocol-version": version, "mcp-method": method, **more}


def _fails(message: Request, headers: dict[str, str] | None, error: type[ProtocolError]) -> ProtocolError:
    with pytest.raises(error) as info:
        CORE.check_modern(message, headers)
    assert info.value.request_id == 7
    return info.value


def test_a_good_request_passes_with_and_without_headers() -> None:
    call = CORE.check_modern(_request(), _headers())
    assert call.method == "tools/list"
    assert call.revision == "2026-07-28"
    assert not call.capabilities.elicitation_form
    assert CORE.check_modern(_request(), None).method == "tools/list"


@pytest.mark.parametrize(
    "meta",
    [
        None,
        {},
        {"io.modelcontextprotocol/clientCapabilities": {}},
        {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    ],
)
def test_missing_meta_fields_are_invalid_params_400(meta: Any) -> None:
    err = _fails(_request(meta=meta), _headers(), InvalidRequestMeta)
    assert err.code == -32602
    assert err.http_status == 400


def test_meta_completeness_comes_before_header_match() -> None:
    meta = {"io.modelcontextprotocol/clientCapabilities": {}}
    _fails(_request(meta=meta), _headers(version="2026-07-28"), InvalidRequestMeta)


def test_header_mismatch_wins_over_unsupported_version() -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    err = _fails(_request(meta=meta), _headers(version="2026-07-28"), HeaderMismatch)
    assert err.code == -32020
    assert err.http_status == 400


def test_unsupported_version_lists_supported_ones() -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    err = _fails(_request(meta=meta), _headers(version="v999.0.0"), UnsupportedProtocolVersion)
    assert err.code == -32022
    assert err.data["requested"] == "v999.0.0"
    assert "2026-07-28" in err.data["supported"]
    assert set(err.data["supported"]) <= set(CORE.discover()["supportedVersions"])


@pytest.mark.parametrize("headers", [_headers(version=""), None], ids=["HTTP", "no headers"])
def test_an_empty_version_is_an_unsupported_one(headers: dict[str, str] | None) -> None:
    """``""`` is a string, as the schema asks, naming no revision: -32022 with the list to
    retry from, as any unsupported version gets (it was -32602 saying the version must be
    "a string", which it was, and with nothing to retry with)."""
    meta = {**META, "io.modelcontextprotocol/protocolVersion": ""}
    err = _fails(_request(meta=meta), headers, UnsupportedProtocolVersion)
    assert (err.code, err.http_status) == (-32022, 400)
    assert err.data["requested"] == "" and "2026-07-28" in err.data["supported"]


def test_missing_version_header() -> None:
    err = _fails(_request(), {"mcp-method": "tools/list"}, HeaderMismatch)
    assert "MCP-Protocol-Version" in err.message


@pytest.mark.parametrize(
    ("headers", "fragment"),
    [
        (_headers(method="tools/call"), "does not match body method"),
        ({"mcp-protocol-version": "2026-07-28"}, "Mcp-Method header is required"),
    ],
)
def test_method_header(headers: dict[str, str], fragment: str) -> None:
    assert fragment in _fails(_request(), headers, HeaderMismatch).message


@pytest.mark.parametrize(
    ("method", "params", "name_header", "ok"),
    [
        ("tools/call", {"name": "x"}, "x", True),
        ("tools/call", {"name": "x"}, "y", False),
        ("tools/call", {"name": "x"}, None, False),
        ("prompts/get", {"name": "日本"}, "=?base64?5pel5pys?=", True),
        ("resources/read", {"uri": "file:///a b"}, "file:///a b", True),
        ("resources/read", {"uri": "file:///a"}, "=?base64?###?=", False),
    ],
)
def test_name_header(method: str, params: dict[str, Any], name_header: str | None, ok: bool) -> None:
    headers = _headers(method=method)
    if name_header is not None:
        headers["mcp-name"] = name_header
    message = _request(method, **params)
    if ok:
        assert CORE.check_modern(message, headers).method == method
    else:
        _fails(message, headers, HeaderMismatch)


@pytest.mark.parametrize(
    ("body", "header"),
    [
        ("https://me:PASSWORD" + "x" * 50 + "@h/r", "https://me:PASSWORD" + "y" * 50 + "@h/r"),
        ("db:t?token=SECRET", "db:t?token=SECRETS"),
        ("https://h/" + "p" * 36 + "?token=SECRET", "https://h/" + "q" * 36 + "?token=SECRET"),
    ],
)
def test_a_name_header_mismatch_quotes_neither_uri_with_its_key(body: str, header: str) -> None:
    """Both URIs are redacted, then cut to the 60 characters a header's value is quoted at:
    the other way round, the cut falls inside a password and keeps its start from any
    later redaction (the log line's, the span's)."""
    headers = {**_headers(method="resources/read"), "mcp-name": header}
    said = _fails(_request("resources/read", uri=body), headers, HeaderMismatch).message
    assert "does not match body value" in said
    assert "PASS" not in said and "SECR" not in said, said


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/subscribe", "unknown/method"]
)
def test_removed_and_unknown_methods_are_404(method: str) -> None:
    err = _fails(_request(method), _headers(method=method), MethodNotFound)
    assert err.code == -32601
    assert err.http_status == 404


def test_handshake_era_detection() -> None:
    init = Request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    assert CORE.is_handshake_request(init, {})
    assert CORE.is_handshake_request(init, None)
    bare = _request(meta=None)
    assert CORE.is_handshake_request(bare, {"mcp-session-id": "abc"})
    assert CORE.is_handshake_request(bare, {"mcp-protocol-version": "2025-11-25"})
    assert CORE.is_handshake_request(bare, None, in_session=True)
    assert not CORE.is_handshake_request(bare, None)
    assert not CORE.is_handshake_request(bare, _headers())
    assert not CORE.is_handshake_request(bare, {"mcp-protocol-version": "v999", "mcp-session-id": "abc"})
    # _meta naming a version decides: a session header is ignored, a handshake header is a mismatch later
    assert not CORE.is_handshake_request(_request(), {"mcp-session-id": "abc"})
    assert not CORE.is_handshake_request(_request(), {"mcp-protocol-version": "2025-11-25"})
    assert not CORE.is_handshake_request(_request(), _headers())
    assert not CORE.is_handshake_request(_request("initialize"), _headers(method="initialize"))
    assert not CORE.is_handshake_request(_request("initialize"), None)


def test_finish_stamps_result_type_server_info_and_cache_hints() -> None:
    listed = CORE.finish("tools/list", {"tools": []})
    assert listed["resultType"] == "complete"
    assert listed["ttlMs"] == 0
    assert listed["cacheScope"] == "private"
    assert listed["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "t", "version": "1.0"}
    called = CORE.finish("tools/call", {"content": [], "_meta": {"x": 1}})
    assert "ttlMs" not in called
    assert called["_meta"]["x"] == 1
    pending = CORE.finish("resources/read", {"resultType": "input_required", "inputRequests": {}})
    assert "ttlMs" not in pending
    legacy = CORE.finish("tools/list", {"tools": []}, modern=False)
    assert "resultType" not in legacy


def test_discover() -> None:
    result = CORE.discover()
    assert result["supportedVersions"][0] == "2026-07-28"
    assert result["capabilities"] == {"tools": {}}


@pytest.mark.parametrize(
    ("message", "headers"),
    [
        (_request("tools/call", name="t"), _headers(method="tools/call", **{"mcp-name": "n" * 12000})),
        (_request(), _headers(method="x" * 12000)),
        (_request(), _headers(version="9" * 12000)),
        (_request(meta={**META, "io.modelcontextprotocol/protocolVersion": "v" * 12000}), None),
    ],
)
def test_a_huge_header_or_version_is_quoted_cut_short(
    message: Request, headers: dict[str, str] | None
) -> None:
    """An error quotes at most 60 characters of what it refuses, and says how long it was:
    a header of 12,000 characters is not echoed back whole."""
    core = ServerCore(ServerIdentity(name="s", version="1"))
    with pytest.raises(ProtocolError) as caught:
        core.check_modern(message, headers)
    error = caught.value.to_error()
    assert len(str(error)) < 500
    assert "..." in error["message"]


@pytest.mark.parametrize(
    ("version", "header"),
    [(2026, "2026"), (20260728, "20260728"), (None, "null"), (True, "true"), (["2026-07-28"], "2026-07-28")],
    ids=["number", "a date as a number", "null", "boolean", "array"],
)
def test_a_version_that_is_not_a_string_is_invalid_params(version: Any, header: str) -> None:
    """The schema asks a string of ``_meta`` protocolVersion: one of another type makes the
    request malformed, -32602 (HTTP 400) saying so, whatever the version header holds. With
    the header spelling the same number it was -32022, naming as requested a version the
    request never gave as one."""
    meta = {**META, "io.modelcontextprotocol/protocolVersion": version}
    err = _fails(_request(meta=meta), _headers(version=header), InvalidRequestMeta)
    assert (err.code, err.http_status) == (-32602, 400)
    assert "(a string)" in err.message


@pytest.mark.parametrize(
    "bad", [{"progressToken": 1.5}, {"io.modelcontextprotocol/logLevel": "loud"}], ids=["token", "level"]
)
@pytest.mark.parametrize(
    ("version", "header", "error"),
    [
        ("2099-01-01", None, UnsupportedProtocolVersion),
        ("2099-01-01", "2026-07-28", HeaderMismatch),
        ("2099-01-01", "2099-01-01", UnsupportedProtocolVersion),
        ("2025-11-25", None, InvalidRequest),
    ],
    ids=["unsupported", "header disagrees", "header agrees", "a session's revision"],
)
def test_the_version_is_checked_before_the_optional_meta_fields(
    bad: dict[str, Any], version: str, header: str | None, error: type[ProtocolError]
) -> None:
    """The required fields present, the version checks come first: what a progressToken or
    a logLevel may be is the version's to say (the client retries on -32022's list). They
    were -32602 about the optional field without headers, or with a header that agreed."""
    meta = {**META, "io.modelcontextprotocol/protocolVersion": version, **bad}
    _fails(_request(meta=meta), None if header is None else _headers(version=header), error)
