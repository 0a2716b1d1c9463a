"""``mcp-elicit call`` (``prompt``, ``read``) against a server that asks in 2025-11-25's
ways on a 2026-07-28 connection: built with the official Python SDK
(tests/peers/sdk_era_server.py), whose server sends -32042 and ``elicitation/create``
whatever the revision. The failure shows what the server asked (a URL step judged, never
opened) and that ``--protocol 2025-11-25`` lets the CLI follow it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.helpers import answers_file, run

from support.peers import fastmcp_python, sdk_python
from support.procs import ROOT

__all__ = ["fastmcp_python", "sdk_python"]  # fixtures

pytestmark = pytest.mark.slow

SERVER = ROOT / "tests" / "peers" / "sdk_era_server.py"
FOLLOW = "--protocol 2025-11-25"


def test_url_elicitation_required_at_2026_shows_its_steps_and_the_protocol_to_follow_them(
    capsys: pytest.CaptureFixture[str], sdk_python: Path
) -> None:
    result = run(capsys, "call", "link", "provider=gh", "--", str(sdk_python), str(SERVER))
    assert result.code == 1, result.err
    assert "error -32042: URL elicitation required" in result.err
    assert "2025-11-25's way" in result.err
    assert "Sign in to gh" in result.err
    assert "url: https://example.com/oauth/start  (site: example.com)" in result.err
    assert "not opened" in result.err
    assert FOLLOW in result.err
    assert "pass Client" not in result.err  # the library's words for it, which a command cannot pass


def test_url_elicitation_required_in_json_names_the_steps_and_a_refused_url_is_said_so(
    capsys: pytest.CaptureFixture[str], sdk_python: Path
) -> None:
    result = run(
        capsys,
        "call",
        "--json",
        "link",
        "provider=gh",
        "url=https://bank.com@evil.example/login",
        "--",
        str(sdk_python),
        str(SERVER),
    )
    assert result.code == 1, result.err
    error = result.json()["error"]
    assert "url: https://bank.com@evil.example/login  (site: evil.example)" in error
    assert "refused: The address has a user name or password before '@' (bank.com)" in error
    # at 2025-11-25 the client would refuse it all the same: no --protocol leads anywhere
    assert "This client refuses the URL of every step" in error and FOLLOW not in error


@pytest.mark.parametrize(
    ("command", "words", "method"),
    [
        ("call", ["confirm", "name=Al"], "tools/call"),
        ("prompt", ["greeting", "name=Al"], "prompts/get"),
        ("read", ["notes://today"], "resources/read"),
    ],
)
def test_a_server_initiated_elicitation_refused_at_2026_says_which_protocol_carries_it(
    capsys: pytest.CaptureFixture[str], sdk_python: Path, command: str, words: list[str], method: str
) -> None:
    result = run(capsys, command, *words, "--", str(sdk_python), str(SERVER))
    assert result.code == 1, result.err
    assert f"{method}: the server answered with error -32600: Cannot send 'elicitation/create'" in result.err
    assert "server-initiated requests" in result.err
    assert FOLLOW in result.err
    assert "pass Client" not in result.err


def test_at_2025_11_25_the_same_server_gets_no_hint(
    capsys: pytest.CaptureFixture[str], sdk_python: Path
) -> None:
    result = run(
        capsys,
        "call",
        "confirm",
        "name=Al",
        "--ui",
        "none",
        "--protocol",
        "2025-11-25",
        "--",
        str(sdk_python),
        str(SERVER),
    )
    assert FOLLOW not in result.err


def test_a_tool_error_naming_server_initiated_requests_gets_the_hint(
    capsys: pytest.CaptureFixture[str], fastmcp_python: Path, tmp_path: Path
) -> None:
    script = answers_file(tmp_path, [{"action": "accept", "content": {"value": True}}])
    server = ROOT / "tests" / "peers" / "fastmcp_server.py"
    result = run(capsys, "call", "confirm", "--answers", script, "--", str(fastmcp_python), str(server))
    assert result.code == 1, result.err
    assert "unavailable on 2026-07-28 connections" in result.out
    assert "server-initiated requests" in result.err
    assert FOLLOW in result.err


def test_another_tool_error_gets_no_hint(
    capsys: pytest.CaptureFixture[str], fastmcp_python: Path, tmp_path: Path
) -> None:
    server = ROOT / "tests" / "peers" / "fastmcp_server.py"
    result = run(capsys, "call", "guarded", "name=Al", "--ui", "none", "--", str(fastmcp_python), str(server))
    assert FOLLOW not in result.err
