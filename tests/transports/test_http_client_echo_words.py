"""A body that is no JSON-RPC message hides what the request carried as the command line
does (``command_redaction.redact_secrets``): a header's or a query's value of 8 characters
or more wherever the body repeats it, one of 4 to 7 where it stands as a word, so a short
value does not hide the words of the page that merely contain it."""

from __future__ import annotations

import asyncio

import pytest

from mcp_elicit.errors import MCPElicitError
from mcp_elicit.transports.http_client import connect_http

from support.raw_http import Seen, raw_server, response

pytestmark = pytest.mark.anyio


async def saying(seen: Seen, writer: asyncio.StreamWriter) -> None:
    """A 400 page quoting the headers it got, then a sentence using their short values inside words."""
    said = (
        f"bad key {seen.headers.get('x-api-key')} for mode {seen.headers.get('x-mode')};"
        f" textual context, keyed by {seen.headers.get('x-api-key')}x"
    )
    writer.write(response("400 Bad Request", {"Content-Type": "text/plain"}, said.encode()))
    await writer.drain()


async def test_a_short_header_value_is_hidden_as_a_word_and_a_long_one_anywhere() -> None:
    long_key = "hk-Word7hidden9kept"
    headers = {"X-Api-Key": long_key, "X-Mode": "text"}
    async with raw_server(saying) as raw:
        with pytest.raises(MCPElicitError) as caught:
            async with asyncio.timeout(30), connect_http(raw.url, headers=headers, versions=["2025-11-25"]):
                pass
    said = str(caught.value)
    assert "bad key REDACTED for mode REDACTED; textual context, keyed by REDACTEDx" in said, said
    assert long_key not in said
