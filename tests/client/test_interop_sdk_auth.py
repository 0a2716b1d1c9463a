"""Authorization across implementations, with the official Python SDK (``mcp`` 2.3.0, its
own virtualenv) and an authorization server neither side is (authlib, in this process):

* the mcp-elicit client gets a token for a server built with the SDK
  (tests/peers/sdk_auth_server.py): the SDK publishes the protected resource metadata and
  the challenges, the client discovers, registers, authorizes with PKCE and calls the tool;
* the SDK's client (tests/peers/sdk_oauth_client.py) does the same with an mcp-elicit
  server whose ``ResourceMetadata`` and challenges it reads.

Both at both revisions. Real processes and sockets on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http

from support.mcp_authorization import FollowRedirect, McpAuthorization, serving, whoami_server
from support.peers import peer_http, sdk_python
from support.procs import ROOT
from support.sessions import ACCEPT

__all__ = ["sdk_python"]  # a fixture

pytestmark = pytest.mark.anyio

SERVER = ROOT / "tests" / "peers" / "sdk_auth_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def issuer() -> AsyncIterator[McpAuthorization]:
    async with serving(Server("unused")) as site:  # only its authorization server is used
        yield site


@pytest.fixture
def sdk_guarded(sdk_python: Path, issuer: McpAuthorization, tmp_path: Path) -> Iterator[str]:
    with peer_http(
        lambda port: [str(sdk_python), str(SERVER), str(port), issuer.base], tmp_path / "sdk.log"
    ) as url:
        yield url


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_the_client_signs_in_to_an_sdk_server(
    sdk_guarded: str, issuer: McpAuthorization, revision: str
) -> None:
    async with httpx.AsyncClient() as http:
        refused = await http.post(sdk_guarded, json={}, headers={"accept": ACCEPT})
    assert refused.status_code == 401  # the SDK guards it
    auth = OAuth(FollowRedirect())
    async with connect_http(sdk_guarded, auth=auth, versions=[revision], timeout=20) as client:
        result = await client.call_tool("whoami", {})
    assert result["content"][0]["text"] == "the SDK says hello"
    assert issuer.registrations == 1
    assert issuer.provider.exchanges == 1
    token = next(iter(issuer.provider.tokens.values()))
    assert "repo" in token.scope.split()  # the SDK's required scope, from its challenge


SDK_CLIENT = ROOT / "tests" / "peers" / "sdk_oauth_client.py"


@pytest.fixture
async def guarded() -> AsyncIterator[McpAuthorization]:
    async with serving(whoami_server("mcp-elicit says hello", "guarded by mcp-elicit")) as site:
        yield site


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_signs_in_to_an_mcp_elicit_server(
    sdk_python: Path, guarded: McpAuthorization, mode: str
) -> None:
    """The other way round: our ResourceMetadata and challenges, read by the SDK's client."""
    done = await asyncio.create_subprocess_exec(
        str(sdk_python),
        str(SDK_CLIENT),
        guarded.url,
        mode,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    out, err = await asyncio.wait_for(done.communicate(), 60)
    assert done.returncode == 0, err.decode(errors="replace")[-3000:]
    assert json.loads(out) == {"text": "mcp-elicit says hello"}
    assert guarded.registrations == 1
    assert guarded.provider.exchanges == 1
