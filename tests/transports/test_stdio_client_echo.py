"""``cat`` as the server: it writes back every message it is sent. The client reads back its
own request (same id, same method) and says the program echoes its input and is not an
MCP server; it does not take the request for the server's own, refuse it, and read its
refusal, echoed, as the server's answer ("initialize came before the session was
initialized")."""

from __future__ import annotations

import shutil

import pytest
from cli.helpers import run

from mcp_elicit.errors import MCPElicitError
from mcp_elicit.transports.stdio_client import connect_stdio

pytestmark = pytest.mark.skipif(shutil.which("cat") is None, reason="needs cat")


@pytest.mark.anyio
@pytest.mark.parametrize("versions", [["2025-11-25"], ["2026-07-28"], ["2026-07-28", "2025-11-25"]])
async def test_a_program_that_echoes_its_input_is_said_not_to_be_a_server(versions: list[str]) -> None:
    with pytest.raises(MCPElicitError) as caught:
        async with connect_stdio(["cat"], versions=versions, timeout=5, probe_timeout=5):
            pass
    said = str(caught.value)
    assert "echoes what it is sent" in said and "not an MCP server" in said, said
    assert "before the session was initialized" not in said, said


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_check_says_cat_is_not_a_server(capsys: pytest.CaptureFixture[str], protocol: str) -> None:
    result = run(capsys, "check", "--protocol", protocol, "--timeout", "5", "--", "cat")
    assert result.code == 3, result.err  # it never answered
    assert "echoes what it is sent" in result.err and "not an MCP server" in result.err, result.err
    assert "before the session was initialized" not in result.err, result.err
