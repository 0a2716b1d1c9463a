"""The request sent again after an authorization, on a server that drops kept-alive
connections it has let sit idle (transports/http_auth.py).

A server closes an idle kept-alive connection after its own timeout (Node's: 5 s plus a
1 s margin). A client must not send on a connection the server may be closing: httpx drops
its idle connections sooner (``keepalive_expiry``, 5 s by default). But the 401 that starts
an authorization used to stay unread while the whole authorization ran, and a connection
whose answer is unread is not idle: when the authorization took about the server's
timeout, the request went out again on that connection as the server closed it, and
failed with the connection "broken" (seen under load in the conformance suite's
``auth/dpop`` and ``auth/authorization-server-migration`` scenarios).

Here the server is a real MCP server behind OAuth (``support.mcp_authorization``) reached
through a TCP relay that closes, without an answer, a connection whose next request comes
after more than ``IDLE`` seconds of silence: what the server's closing looks like to a
request that meets it. The client's pool keeps idle connections ``EXPIRY`` seconds, less.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest

from support.http_auth_flow import oauth
from support.mcp_authorization import FollowRedirect, serving, whoami_server

pytestmark = pytest.mark.anyio

EXPIRY = 0.2  # the client's pool: idle connections kept this long
IDLE = 1.0  # the server: a connection silent longer than this is closed when it is used (well
# past EXPIRY, so a connection the client still holds fresh is never one it drops)
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "keepalive-test", "version": "1"},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class SlowPerson(FollowRedirect):
    """Signs in after a while: longer than the server keeps a silent connection."""

    async def authorize(self, url: str, *, issuer: str) -> str:
        await asyncio.sleep(3 * IDLE)
        return await super().authorize(url, issuer=issuer)


@contextlib.asynccontextmanager
async def closing_idle(upstream_port: int) -> AsyncIterator[tuple[int, list[str]]]:
    """A relay on 127.0.0.1 to ``upstream_port``; yields its port and what it dropped."""
    dropped: list[str] = []
    relays: set[asyncio.Task[None]] = set()

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        relays.add(task)
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
        loop = asyncio.get_running_loop()
        answered: list[float] = []  # when the server last sent on this connection

        async def down() -> None:
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()
                answered[:] = [loop.time()]

        copier = asyncio.create_task(down())
        try:
            while data := await reader.read(65536):
                if answered and loop.time() - answered[0] > IDLE:
                    dropped.append(data.split(b"\r\n", 1)[0].decode())
                    break  # the server closed it as the request came
                up_writer.write(data)
                await up_writer.drain()
        except OSError:
            pass  # a side went away: the relay ends
        finally:
            copier.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await copier
            for w in (writer, up_writer):
                w.close()
                with contextlib.suppress(OSError):
                    await w.wait_closed()

    server = await asyncio.start_server(relay, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], dropped
    finally:
        server.close()
        for task in relays:
            task.cancel()
        await asyncio.gather(*relays, return_exceptions=True)
        await server.wait_closed()


async def test_the_request_after_a_long_authorization_is_not_sent_on_the_connection_of_its_401() -> None:
    limits = httpx.Limits(keepalive_expiry=EXPIRY)
    async with serving(whoami_server()) as site:
        port = int(site.base.rsplit(":", 1)[1])
        async with closing_idle(port) as (relay_port, dropped):
            site.base = f"http://127.0.0.1:{relay_port}"  # what the metadata names: the relay
            auth = oauth(SlowPerson(), transport=httpx.AsyncHTTPTransport(limits=limits))
            async with (
                httpx.AsyncClient(auth=auth, transport=httpx.AsyncHTTPTransport(limits=limits)) as http,
                contextlib.aclosing(auth),
                asyncio.timeout(30),
            ):
                response = await http.post(
                    f"{site.base}/mcp",
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
                    headers={
                        "Accept": "application/json, text/event-stream",
                        "MCP-Protocol-Version": "2026-07-28",
                        "Mcp-Method": "tools/list",
                    },
                )
    assert response.status_code == 200, response.text
    assert "whoami" in response.text
    assert auth.issuer == site.base
    assert dropped == [], dropped
