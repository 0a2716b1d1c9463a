"""Fixtures for the transport tests: one real ``mcp-elicit serve --http`` process serving the
conformance server for the whole session, and a checked client for it per test; and, for the
2025-11-25 session tests, the sessions' server in process on 127.0.0.1 per test (``served``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import McpHttp
from support.http_sessions import build
from support.procs import HttpProcess, InProcess, http_process, uvicorn_server
from support.wire import WireChecker


@pytest.fixture(scope="session")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpProcess]:
    with http_process(log_dir=tmp_path_factory.mktemp("http-server")) as server:
        yield server
        assert server.alive, server.stderr()
        assert "Traceback" not in server.stderr(), server.stderr()


@pytest.fixture
async def mcp(http_server: HttpProcess, wire: WireChecker) -> AsyncIterator[McpHttp]:
    """A client of the session's HTTP server; every message it receives is schema-checked."""
    assert http_server.alive, http_server.stderr()
    async with httpx.AsyncClient(timeout=10.0) as client:
        yield McpHttp(client, http_server.url, wire)
    assert http_server.alive, http_server.stderr()


@pytest.fixture
async def served() -> AsyncIterator[tuple[Server, InProcess]]:
    app = build()
    async with uvicorn_server(StreamableHTTP(app, keepalive=0.2, resume_within=0.2)) as running:
        yield app, running
