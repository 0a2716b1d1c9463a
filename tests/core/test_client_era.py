"""Deciding a server's era from the answer to the ``server/discover`` probe (core.era)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.core.era import (
    Legacy,
    Modern,
    Reprobe,
    judge_probe,
    modern_preferences,
    pick_version,
    retry_version,
)
from mcp_elicit.errors import (
    HeaderMismatch,
    MissingClientCapability,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcp_elicit.wire.jsonrpc import ErrorResponse, Response

BOTH = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26")
MODERN_ONLY = ("2026-07-28",)


def result(**fields: Any) -> Response:
    return Response(1, fields)


def error(code: int, message: str = "no", data: Any = None) -> ErrorResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return ErrorResponse(1, body)


def test_pick_version_follows_the_client_preference_and_ignores_junk() -> None:
    assert pick_version(["2025-06-18", 3, "2025-11-25"], BOTH) == "2025-11-25"
    assert pick_version(["1999-01-01"], BOTH) is None
    assert modern_preferences(BOTH) == ("2026-07-28",)


def test_a_discover_result_means_modern() -> None:
    verdict = judge_probe(
        result(supportedVersions=["2026-07-28"], capabilities={}), requested="2026-07-28", preferred=BOTH
    )
    assert verdict == Modern("2026-07-28", {"supportedVersions": ["2026-07-28"], "capabilities": {}})


def test_a_discover_result_without_supported_versions_is_still_modern() -> None:
    verdict = judge_probe(result(capabilities={}), requested="2026-07-28", preferred=BOTH)
    assert isinstance(verdict, Modern)
    assert verdict.version == "2026-07-28"


def test_a_discover_result_listing_only_handshake_revisions_is_legacy() -> None:
    verdict = judge_probe(result(supportedVersions=["2025-11-25"]), requested="2026-07-28", preferred=BOTH)
    assert isinstance(verdict, Legacy)


def test_a_discover_result_with_nothing_in_common_is_an_error() -> None:
    with pytest.raises(UnsupportedProtocolVersion, match="offers no revision this client speaks"):
        judge_probe(result(supportedVersions=["2099-01-01"]), requested="2026-07-28", preferred=BOTH)


def test_unsupported_version_names_the_revision_to_retry_with() -> None:
    verdict = judge_probe(
        error(-32022, data={"supported": ["2026-07-28"], "requested": "2026-07-28"}),
        requested="2026-07-28",
        preferred=BOTH,
        status=400,
    )
    assert verdict == Reprobe("2026-07-28")


def test_unsupported_version_naming_only_handshake_revisions_falls_back() -> None:
    verdict = judge_probe(
        error(-32022, data={"supported": ["2025-11-25"]}), requested="2026-07-28", preferred=BOTH
    )
    assert isinstance(verdict, Legacy)


def test_unsupported_version_with_nothing_in_common_is_an_error() -> None:
    with pytest.raises(UnsupportedProtocolVersion) as caught:
        judge_probe(error(-32022, data={"supported": ["2099-01-01"]}), requested="2026-07-28", preferred=BOTH)
    assert caught.value.data["supported"] == ["2099-01-01"]


@pytest.mark.parametrize(("code", "cls"), [(-32020, HeaderMismatch), (-32021, MissingClientCapability)])
def test_other_modern_errors_are_raised_never_a_fallback(code: int, cls: type[Exception]) -> None:
    with pytest.raises(cls):
        judge_probe(error(code), requested="2026-07-28", preferred=BOTH, status=400)


@pytest.mark.parametrize("code", [-32601, -32602, -32600, -32000, -32603, 42])
def test_any_other_error_means_legacy(code: int) -> None:
    verdict = judge_probe(error(code), requested="2026-07-28", preferred=BOTH, status=400)
    assert isinstance(verdict, Legacy)
    assert str(code) in verdict.reason


@pytest.mark.parametrize("status", [400, 404, 405, 406, 200])
def test_an_http_answer_without_a_json_rpc_body_means_legacy(status: int) -> None:
    verdict = judge_probe(None, requested="2026-07-28", preferred=BOTH, status=status, body="Bad Request")
    assert isinstance(verdict, Legacy)
    assert f"HTTP {status}" in verdict.reason


def test_no_answer_on_stdio_means_legacy() -> None:
    assert isinstance(judge_probe(None, requested="2026-07-28", preferred=BOTH), Legacy)


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (401, r"requires authorization \(HTTP 401\): pass auth=OAuth\(\.\.\.\)"),
        (403, r"refused access \(HTTP 403\): the credentials sent, if any, do not grant it"),
    ],
)
def test_authorization_failures_are_not_an_era(status: int, says: str) -> None:
    with pytest.raises(TransportError, match=says) as caught:
        judge_probe(None, requested="2026-07-28", preferred=BOTH, status=status)
    assert "does not perform MCP authorization" not in str(caught.value)  # it does: http_auth.OAuth


def test_too_many_requests_is_not_an_era() -> None:
    # a server shedding load says nothing of the revisions it speaks: not a fallback, not a violation
    with pytest.raises(TransportError, match=r"busy \(HTTP 429 Too Many Requests\): try again later"):
        judge_probe(None, requested="2026-07-28", preferred=BOTH, status=429, body="slow down")


def test_an_unavailable_server_is_not_an_era() -> None:
    # a server shutting down answers 503 with a JSON-RPC error: not a server of an earlier revision
    stopping = error(-32603, "Service unavailable: the server is shutting down")
    with pytest.raises(
        TransportError, match=r"unavailable \(HTTP 503 .*\): try again later\. .*shutting down"
    ):
        judge_probe(stopping, requested="2026-07-28", preferred=BOTH, status=503)
    with pytest.raises(TransportError, match=r"unavailable \(HTTP 503 .*\): try again later\. overloaded"):
        judge_probe(None, requested="2026-07-28", preferred=BOTH, status=503, body="overloaded")


def test_a_server_failure_is_not_an_era() -> None:
    with pytest.raises(TransportError, match="HTTP 502"):
        judge_probe(None, requested="2026-07-28", preferred=BOTH, status=502, body="bad gateway")


@pytest.mark.parametrize("status", [429, 500, 503])
@pytest.mark.parametrize(
    "body",
    [
        "x" * 180 + " https://me:SECRETPASSWORD@h/",  # the cut at 200 falls inside the password
        "x" * 170 + " https://h/p?key=SECRETKEY",  # inside the query
        "x" * 150 + " https://me:pw@h/" + "y" * 40 + "?key=SECRETKEY",
    ],
)
def test_a_quoted_body_is_redacted_before_it_is_cut(status: int, body: str) -> None:
    """A URL the cut at 200 characters falls inside keeps none of its secret: the body is
    redacted whole, then cut (a span redacting the cut message finds no "@" to end the
    password at, and would show its start)."""
    with pytest.raises(TransportError) as caught:
        judge_probe(None, requested="2026-07-28", preferred=BOTH, status=status, body=body)
    assert "SECR" not in str(caught.value)
    assert "pw" not in str(caught.value)
    assert "?RE" in str(caught.value) or "REDACTED" in str(caught.value)


def test_a_json_rpc_error_with_status_500_is_judged_by_its_code() -> None:
    assert isinstance(judge_probe(error(-32603), requested="2026-07-28", preferred=BOTH, status=500), Legacy)


def test_retry_version_takes_the_preferred_modern_revision_offered() -> None:
    err = {"code": -32022, "message": "x", "data": {"supported": ["2025-11-25", "2026-07-28"]}}
    assert retry_version(err, "2026-07-28", BOTH) == "2026-07-28"


def test_retry_version_without_a_common_modern_revision_raises() -> None:
    err = {"code": -32022, "message": "x", "data": {"supported": ["2025-11-25"]}}
    with pytest.raises(UnsupportedProtocolVersion, match="server: 2025-11-25"):
        retry_version(err, "2026-07-28", MODERN_ONLY)
    with pytest.raises(UnsupportedProtocolVersion, match="none named"):
        retry_version({"code": -32022, "message": "x"}, "2026-07-28", MODERN_ONLY)


def test_retry_version_quotes_what_is_not_a_version_short() -> None:
    # an entry nested 1000 deep (a JSON reader takes 1024): str() of it raised RecursionError
    deep: object = "2026-07-28"
    for _ in range(1000):
        deep = [deep]
    err = {"code": -32022, "message": "x", "data": {"supported": [deep, "x" * 1_000_000, 3]}}
    with pytest.raises(UnsupportedProtocolVersion, match=r"server: \[\[\[\[\.\.\.\]\]\]\], 'xxx") as caught:
        retry_version(err, "2026-07-28", MODERN_ONLY)
    assert len(str(caught.value)) < 400
