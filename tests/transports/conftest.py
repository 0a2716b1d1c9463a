"""Fixtures for the transport tests: one real ``mcp-elicit serve --http`` process serving the
conformance server for the whole session, and a checked client for it per test; and, for the
2025-11-25 session tests, the sessions' server in process on 127.0.0.1 per test (``served``) and
a session opened on it (``session``); the stdio servers of the stdio tests (``conformance`` and
``waiting`` shared by a module, and ``own_conformance`` and ``own_waiting`` per test; a module
using the shared ones sets a module-scoped ``anyio_backend``); and the authorization site of the
client authorization tests (``site``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import McpHttp
from support.http_sessions import Session, build
from support.mcp_authorization import McpAuthorization, serving, whoami_server
from support.procs import HttpProcess, InProcess, http_process, stdio_process, uvicorn_server
from support.stdio_transport import WAITING_SERVER, Stdio
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


@pytest.fixture
async def session(served: tuple[Server, InProcess], wire_2025: WireChecker) -> AsyncIterator[Session]:
    """A 2025-11-25 session opened on ``served``, over an HTTP client of its own."""
    _, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        await session.open()
        yield session


@pytest.fixture(scope="module")
async def _shared_conformance(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stdio]:
    async with stdio_process(log_dir=tmp_path_factory.mktemp("stdio")) as proc:
        yield Stdio(proc, WireChecker.load("2026-07-28"))
        assert "Traceback" not in proc.stderr(), proc.stderr()


@pytest.fixture(scope="module")
async def _shared_waiting(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stdio]:
    async with stdio_process(WAITING_SERVER, log_dir=tmp_path_factory.mktemp("stdio")) as proc:
        yield Stdio(proc, WireChecker.load("2026-07-28"))
        assert "Traceback" not in proc.stderr(), proc.stderr()


@pytest.fixture
def conformance(_shared_conformance: Stdio) -> Iterator[Stdio]:
    """The conformance server over stdio, shared by the tests that leave it as they found it."""
    yield _shared_conformance
    assert _shared_conformance.proc.proc.returncode is None


@pytest.fixture
def waiting(_shared_waiting: Stdio) -> Iterator[Stdio]:
    """The waiting server over stdio, shared likewise."""
    yield _shared_waiting
    assert _shared_waiting.proc.proc.returncode is None


@pytest.fixture
async def own_conformance(tmp_path: Path, wire: WireChecker) -> AsyncIterator[Stdio]:
    """A conformance server process of this test's own (for tests that end it)."""
    async with stdio_process(log_dir=tmp_path) as proc:
        yield Stdio(proc, wire)


@pytest.fixture
async def own_waiting(tmp_path: Path, wire: WireChecker) -> AsyncIterator[Stdio]:
    async with stdio_process(WAITING_SERVER, log_dir=tmp_path) as proc:
        yield Stdio(proc, wire)


@pytest.fixture
async def site() -> AsyncIterator[McpAuthorization]:
    async with serving(whoami_server()) as site:
        yield site
