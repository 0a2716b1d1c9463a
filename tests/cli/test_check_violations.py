"""``mcp-elicit check`` and servers that break the protocol (exit code 4): a banner on stdout,
no JSON-RPC, broken listings, requests to a client that declared nothing, a malformed
discover result. Cursors: an empty ``nextCursor`` (the end before 2026-07-28, with a
warning; a cursor at 2026-07-28), and one that never ends (bounded)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest

from cli.fake_http import JsonAnswering, fake_http, serving
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
    with fake_http(tmp_path) as base:  # call lists the tools too: it said "no tool 'echo'" (exit 1)
        called = run(capsys, "call", f"{base}/broken", "echo")
    assert called.code == 4, called.err
    assert "page 1 of tools/list has no tools list: None" in called.err


class _Cursors(JsonAnswering):
    """A server over HTTP without sessions whose every ``tools/list`` page holds one tool (its
    name numbered by the page) and the ``nextCursor`` that ``next_cursor`` makes of the
    cursor asked with (None: none; it gives None for the last page); ``modern``: at
    2026-07-28, else 2025-11-25. ``asked`` holds the cursors asked with, in order."""

    modern = False
    asked: ClassVar[list[str | None]]

    @staticmethod
    def next_cursor(cursor: str | None) -> str | None:
        return ""

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        method, rid = sent.get("method"), sent.get("id")
        info = {"name": "cursors", "version": "1"}
        if method == "server/discover" and self.modern:
            found = {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
            }
            result: dict[str, object] = {**found, "_meta": {"io.modelcontextprotocol/serverInfo": info}}
        elif method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
        elif method == "tools/list":
            cursor = (sent.get("params") or {}).get("cursor")
            self.asked.append(cursor)
            tool = {
                "name": f"echo{len(self.asked)}",
                "description": "Echo.",
                "inputSchema": {"type": "object"},
            }
            following = self.next_cursor(cursor)
            result = {"tools": [tool]} if following is None else {"tools": [tool], "nextCursor": following}
            if self.modern:
                result["resultType"] = "complete"
        elif rid is None:
            self._answer(202, None)
            return
        else:
            self._answer(404, {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
            return
        self._answer(200, {"jsonrpc": "2.0", "id": rid, "result": result})


def _cursors(modern: bool, next_cursor: Callable[[str | None], str | None] | None = None) -> type[_Cursors]:
    more: dict[str, object] = {"modern": modern, "asked": []}
    if next_cursor is not None:
        more["next_cursor"] = staticmethod(next_cursor)
    return type("Cursors", (_Cursors,), more)


def test_an_empty_next_cursor_before_2026_07_28_ends_the_list_with_a_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    handler = _cursors(modern=False)
    with serving(handler) as base:
        result = run(capsys, "check", "--json", f"{base}/mcp")
    assert result.code == 0, result.out
    report = result.json()
    assert (report["revision"], report["pages"], report["warnings"]) == ("2025-11-25", 1, 1)
    assert [t["name"] for t in report["tools"]] == ["echo1"]
    [problem] = report["problems"]
    assert (problem["severity"], problem["code"]) == ("warning", "empty-cursor")
    assert 'page 1 of tools/list gives nextCursor ""' in problem["message"]
    assert "leave nextCursor out of the last page" in problem["message"]
    assert handler.asked == [None]  # never asked with the empty cursor
    with serving(handler) as base:
        assert run(capsys, "check", "--strict", f"{base}/mcp").code == 1


def test_an_empty_next_cursor_at_2026_07_28_is_a_cursor_and_one_given_again_never_ends(
    capsys: pytest.CaptureFixture[str],
) -> None:
    handler = _cursors(modern=True)
    with serving(handler) as base:
        result = run(capsys, "check", "--json", f"{base}/mcp")
    assert result.code == 4, result.out
    said = result.json()["error"]
    assert "tools/list never ends: page 2 gives the cursor '' again" in said
    assert "at 2026-07-28 an empty nextCursor is a cursor, not the end" in said
    assert "leave nextCursor out of the last page" in said
    assert handler.asked == [None, ""]  # the first page, then the empty cursor once


def test_a_cursor_that_is_new_on_every_page_is_read_for_1000_pages_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 300 characters, then the number of the page: another cursor each time
    handler = _cursors(
        modern=True, next_cursor=lambda cursor: "p" * 300 + str(int((cursor or "")[300:] or 0) + 1)
    )
    with serving(handler) as base:
        result = run(capsys, "check", "--json", "--timeout", "30", f"{base}/mcp")
    assert result.code == 4, result.out
    said = result.json()["error"]
    assert "tools/list never ends: page 1000 gives yet another cursor" in said
    assert "mcp-elicit reads at most 1000 pages" in said
    assert len(said) < 600  # a long cursor is cut short
    assert len(handler.asked) == 1000


def test_an_empty_next_cursor_at_2026_07_28_is_followed_with_a_warning_for_older_clients(
    capsys: pytest.CaptureFixture[str],
) -> None:
    handler = _cursors(modern=True, next_cursor=lambda cursor: "" if cursor is None else None)
    with serving(handler) as base:
        result = run(capsys, "check", "--json", f"{base}/mcp")
    assert result.code == 0, result.out
    report = result.json()
    assert (report["pages"], handler.asked) == (2, [None, ""])
    [problem] = report["problems"]
    assert (problem["severity"], problem["code"]) == ("warning", "empty-cursor")
    assert 'page 1 of tools/list gives nextCursor "", a cursor at 2026-07-28' in problem["message"]
    assert "miss the pages after it" in problem["message"]
