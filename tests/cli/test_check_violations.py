"""``mcp-elicit check`` and servers that break the protocol (exit code 4): a banner on stdout,
no JSON-RPC, broken listings, requests to a client that declared nothing, a malformed
discover result."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.fake_http import fake_http
from cli.helpers import fake, run


def test_a_banner_on_stdout_is_a_violation(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", "--", *fake("noisy"))
    assert result.code == 4
    assert "✓ echo" in result.out  # the report is still given
    assert "PROTOCOL VIOLATION (exit 4)" in result.out
    assert "'Starting the fake server on stdio...'" in result.out
    assert "print logs to stderr" in result.out


def test_a_server_that_never_speaks_json_rpc(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", "--timeout", "0.5", "--", *fake("junk"))
    assert result.code == 4
    assert "never answered in JSON-RPC" in result.err
    assert "'Starting the fake server on stdio...'" in result.err


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [
        ("loop", "tools/list never ends: page 2 gives the cursor 'again' again"),
        # what a client that stops at an empty cursor takes for the end: say how to end
        ("empty-cursor", "'' again; to end the list, leave nextCursor out of the last page"),
        ("no-tools", "has no tools list"),
        # 1000 levels (a JSON reader takes 1024): quoting it with repr raised RecursionError
        ("deep-page", "page 1 of tools/list has no tools list: {'items': {'a': {'a': {...}}}}"),
    ],
)
def test_broken_listing_is_a_violation(capsys: pytest.CaptureFixture[str], mode: str, fragment: str) -> None:
    result = run(capsys, "check", "--", *fake(mode))
    assert result.code == 4
    assert fragment in result.err


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize(
    ("mode", "step"), [("asks-on-connect", "while connecting"), ("asks-on-list", "during tools/list")]
)
def test_a_request_to_a_client_that_declared_nothing_is_a_violation(
    capsys: pytest.CaptureFixture[str], era: str, mode: str, step: str
) -> None:
    result = run(capsys, "check", "--json", "--", *fake(mode, era))
    assert result.code == 4
    assert result.json()["tools_listed"] is True  # the report is still given
    [violation] = result.json()["violations"]
    assert "the server sent the request 'elicitation/create'" in violation
    assert step in violation
    assert "declared no capabilities" in violation


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [
        ("caps-list", "server/discover gave capabilities that are not an object: ['tools']"),
        ("discover-input-required", "answered server/discover with resultType 'input_required'"),
    ],
)
def test_a_malformed_discover_result_is_a_violation(
    capsys: pytest.CaptureFixture[str], mode: str, fragment: str
) -> None:
    result = run(capsys, "check", "--json", "--", *fake(mode, "modern"))
    assert result.code == 4
    assert any(fragment in v for v in result.json()["violations"])


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_summary_does_not_claim_tools_were_listed(capsys: pytest.CaptureFixture[str], era: str) -> None:
    result = run(capsys, "check", "--", *fake("no-capabilities", era))
    assert result.code == 0
    assert "lists its tools" not in result.out
    assert "declares no tools capability, so no tools were listed." in result.out


def test_a_broken_listing_over_http(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with fake_http(tmp_path) as base:
        result = run(capsys, "check", f"{base}/broken", "--json")
    assert result.code == 4
    assert result.json()["exit_code"] == 4
    assert "has no tools list" in result.json()["error"]
