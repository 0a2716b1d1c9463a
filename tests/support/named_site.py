"""An MCP server behind OAuth under names of the test's own, for the tests of the client's
sign-in to a server "elsewhere" (on the internet): the real protected server and
authorization server of ``support.mcp_authorization`` speak https on 127.0.0.1 with a
certificate for ``NAMES`` (``trust_names``: trusted through ``SSL_CERT_FILE``), and the
test's DNS (``Dns``) says where each name is.

``named_site(certificate)`` serves one until the block ends (a ``Site``: which Host and
path each request over the network came to); ``call`` calls its ``whoami`` tool with an
``OAuth``, the MCP requests going over the transport given (``in_process``: an answer
that does not say where it came from, so the server's URL alone says where it is);
``Browser`` is the person's part, finding the names through the test's DNS.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_pinned import PinnedBackend, PinnedTransport

from support.mcp_authorization import FollowRedirect, McpAuthorization, whoami_server
from support.procs import uvicorn_server
from support.tls import self_signed

__all__ = [
    "NAMES",
    "Browser",
    "Dns",
    "Site",
    "allow_all",
    "call",
    "in_process",
    "named_site",
    "reaching",
    "trust_names",
]

NAMES = ("mcp.example.com", "auth.example.net", "mcp.corp.internal")


class Dns:
    """The test's resolver: ``answers`` maps a name to its addresses, each answer in turn
    for a name with several (the last one for good); ``asked`` lists the names looked up."""

    def __init__(self, **answers: list[list[str]] | list[str]) -> None:
        self.answers = {
            name.replace("_", "."): ([value] if isinstance(value[0], str) else value)
            for name, value in answers.items()
        }
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        turns = self.answers.get(host)
        if turns is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return turns.pop(0) if len(turns) > 1 else turns[0]  # type: ignore[return-value]


def allow_all(host: str, addresses: Sequence[str]) -> str | None:
    return None


def reaching(dns: Dns) -> PinnedTransport:
    """A transport that finds the test's names through ``dns``, nothing refused."""
    return PinnedTransport(PinnedBackend(allow_all, dns))


class Browser(FollowRedirect):
    """The person's part: the provider approves at once; the browser knows the test's names."""

    def __init__(self, dns: Dns) -> None:
        super().__init__()
        self.dns = dns

    async def authorize(self, url: str, *, issuer: str) -> str:
        self.asked.append(issuer)
        async with httpx.AsyncClient(transport=reaching(self.dns)) as http:
            response = await http.get(url)
        assert response.is_redirect, response.text
        return str(response.headers["location"])


@dataclass
class Site:
    """``auth`` (the authorization server and protected resource) served on ``port``;
    ``arrived`` lists the (Host, path) of each request that came over the network."""

    auth: McpAuthorization
    port: int
    arrived: list[tuple[str, str]] = field(default_factory=list)

    def url(self, host: str) -> str:
        return f"https://{host}:{self.port}/mcp"

    def hosts(self) -> set[str]:
        return {host.rsplit(":", 1)[0] for host, _ in self.arrived}


def trust_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The files of a certificate for ``NAMES`` (not 127.0.0.1: TLS must be checked against
    the name) and its key, the certificate trusted through ``SSL_CERT_FILE``."""
    cert, key = self_signed(*NAMES)
    (tmp_path / "cert.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "cert.pem"))
    return str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")


@contextlib.asynccontextmanager
async def named_site(certificate: tuple[str, str]) -> AsyncIterator[Site]:
    """The site on a fresh 127.0.0.1 port, speaking https with ``certificate``."""
    auth = McpAuthorization(whoami_server(), allowed_hosts=("*",))
    arrived: list[tuple[str, str]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            arrived.append((dict(scope["headers"]).get(b"host", b"").decode(), scope["path"]))
        await auth.app(scope, receive, send)

    async with uvicorn_server(app, tls=certificate) as running:
        yield Site(auth, running.port, arrived)


async def call(url: str, auth: OAuth, transport: httpx.AsyncBaseTransport | None = None) -> str:
    """The text ``whoami`` answers at ``url``, signed in with ``auth``; the MCP requests go
    over ``transport`` (None: httpx's own, a proxy from the environment included)."""
    try:
        async with httpx.AsyncClient(transport=transport, auth=auth, timeout=10) as http:
            async with connect_http(url, http_client=http, versions=["2026-07-28"], timeout=10) as client:
                result = await client.call_tool("whoami", {})
    finally:
        await auth.aclose()  # the flow's own HTTP client
    return str(result["content"][0]["text"])


def in_process(site: Site) -> httpx.AsyncBaseTransport:
    return httpx.ASGITransport(app=site.auth.app)
