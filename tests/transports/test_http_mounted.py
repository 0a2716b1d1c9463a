"""The HTTP app mounted under a path in another ASGI app (Starlette's ``Mount``, as
FastAPI does too) or served with ``uvicorn --root-path``: it routes from the mount point,
its links, metadata and DPoP checks carry the prefix, and ``StreamableHTTP.lifespan``
starts and stops it for a parent that does not pass lifespan events on. Real uvicorn on
127.0.0.1; the URL-mode pages under a mount are in ``test_url_mode``."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_elicit import Context, Form, KeyRing, Server, String
from mcp_elicit.client.answerers import Scripted
from mcp_elicit.core.authorization import read_protected_resource
from mcp_elicit.server.auth import Principal, ResourceMetadata, StaticTokens
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_auth import MemoryTokenStore, OAuth
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.mcp_authorization import FollowRedirect, bound_server, serving
from support.procs import uvicorn_server
from support.sessions import ACCEPT, initialize_body

pytestmark = pytest.mark.anyio

REVISIONS = ["2026-07-28", "2025-11-25"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def provisioning() -> Server:
    server = Server("mounted", state_keys=KeyRing([bytes(range(1, 33))]))

    @server.tool()
    async def provision(ctx: Context, name: str) -> str:
        answer = await ctx.elicit("Which region?", Form(region=String()))
        return f"Provisioned {name} in {answer.data['region']}" if answer.data else "not provisioned"

    return server


@pytest.mark.parametrize("revision", REVISIONS)
async def test_mounted_under_a_path_it_answers_there_and_its_lifespan_runs(revision: str) -> None:
    server = provisioning()
    store = MemoryStore()
    server.configure_url_mode(store=store)
    mcp = StreamableHTTP(server)
    outer = Starlette(routes=[Mount("/tools", app=mcp)], lifespan=mcp.lifespan)
    try:
        async with uvicorn_server(outer, lifespan="on") as running:
            # the parent's lifespan started this app: it hears the other instances
            assert server.relay.listening is not None
            await asyncio.wait_for(server.relay.listening.wait(), 5)
            base = f"http://127.0.0.1:{running.port}"
            answers = Scripted.from_script([{"fields": ["region"], "content": {"region": "eu-west-1"}}])
            async with connect_http(
                f"{base}/tools/mcp", answerer=answers, versions=[revision], timeout=10
            ) as client:
                assert [t["name"] for t in await client.list_tools()] == ["provision"]
                result = await client.call_tool("provision", {"name": "web-1"})
            assert result["content"][0]["text"] == "Provisioned web-1 in eu-west-1"
            async with httpx.AsyncClient(timeout=10) as http:
                elsewhere = await http.post(f"{base}/tools/other", json={})
                at_the_root = await http.post(f"{base}/mcp", json={})
            assert elsewhere.status_code == 404
            assert elsewhere.text == "Not Found: the MCP endpoint is /tools/mcp"
            assert at_the_root.status_code == 404  # the parent's: nothing is mounted there
        assert server.relay.listening is None  # stopped with the parent
    finally:
        await store.close()


@pytest.mark.parametrize("passed_on", [True, False])
async def test_a_mount_without_the_lifespan_is_warned_about_once(
    passed_on: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Mounted without ``lifespan=``, an app sharing a store cannot hear the other
    instances: the first request says so in the log, once; with it, nothing is said."""
    server = provisioning()
    store = MemoryStore()
    server.configure_url_mode(store=store)
    mcp = StreamableHTTP(server)
    outer = Starlette(routes=[Mount("/tools", app=mcp)], lifespan=mcp.lifespan if passed_on else None)
    try:
        async with uvicorn_server(outer, lifespan="on") as running:
            async with connect_http(f"http://127.0.0.1:{running.port}/tools/mcp", timeout=10) as client:
                await client.list_tools()
                await client.list_tools()
    finally:
        await store.close()
    warned = [r for r in caplog.records if "without a lifespan startup" in r.getMessage()]
    assert len(warned) == (0 if passed_on else 1)
    if warned:
        assert warned[0].levelname == "WARNING" and "lifespan=" in warned[0].getMessage()


async def test_behind_uvicorn_root_path_the_metadata_names_the_public_path() -> None:
    """``uvicorn --root-path /api`` behind a proxy that strips ``/api``: the endpoint is
    ``/api/mcp`` to the client, and its protected-resource metadata says so."""
    tokens = StaticTokens({"t": Principal("ann")})
    app = StreamableHTTP(
        Server("guarded"), auth=tokens, resource_metadata=ResourceMetadata(["https://as.example"])
    )
    async with uvicorn_server(app, root_path="/api") as running:
        origin = f"http://127.0.0.1:{running.port}"
        public = f"{origin}/api/mcp"
        async with httpx.AsyncClient(timeout=10) as http:
            # what the proxy forwards, the prefix stripped; uvicorn puts it back in the scope
            refused = await http.post(f"{origin}/mcp", json=initialize_body(), headers={"accept": ACCEPT})
            where = f"{origin}/api/.well-known/oauth-protected-resource/mcp"
            assert refused.status_code == 401
            assert f'resource_metadata="{where}"' in refused.headers["www-authenticate"]
            document = await http.get(f"{origin}/.well-known/oauth-protected-resource/mcp")
    assert document.status_code == 200
    assert document.json()["resource"] == public
    assert read_protected_resource(document.json(), public, "here").authorization_servers == (
        "https://as.example",
    )


async def test_mounted_a_client_signs_in_with_dpop_and_its_proofs_name_the_mounted_url() -> None:
    """The whole sign-in under a mount: the challenge names the mounted metadata, whose
    ``resource`` is the mounted endpoint, and the server checks each DPoP proof's ``htu``
    against that URL (``/tools/mcp``, not ``/tools/tools/mcp`` nor ``/mcp``)."""
    async with serving(bound_server(), mount="/tools") as site:
        site.dpop = True
        assert site.url.endswith("/tools/mcp")
        store = MemoryTokenStore()
        auth = OAuth(FollowRedirect(), store=store)  # type: ignore[arg-type]
        async with connect_http(site.url, auth=auth, timeout=10) as client:
            result = await client.call_tool("whoami", {})
        record = await store.load(site.url)
    assert record is not None and record["tokens"]["token_type"] == "DPoP"
    subject, thumbprint = result["content"][0]["text"].split()
    assert subject == "octocat" and thumbprint == next(iter(site.dpop_tokens.bound.values()))


async def test_behind_a_stripping_proxy_the_public_url_is_the_resource() -> None:
    """A proxy forwards ``/app/...`` as ``/...`` and the server's public URL says
    ``.../app``: the challenge, the metadata's ``resource`` and the URL DPoP proofs must
    name are the public ones, not the address the proxy forwarded to."""
    async with serving(bound_server(), strip="/app") as site:
        site.dpop = True
        async with httpx.AsyncClient(timeout=10) as http:
            refused = await http.post(site.url, json=initialize_body(), headers={"accept": ACCEPT})
            where = f"{site.base}/app/.well-known/oauth-protected-resource/mcp"
            assert f'resource_metadata="{where}"' in refused.headers["www-authenticate"]
            document = (await http.get(where)).json()
        assert document["resource"] == site.url == f"{site.base}/app/mcp"
        auth = OAuth(FollowRedirect(), store=MemoryTokenStore())  # type: ignore[arg-type]
        async with connect_http(site.url, auth=auth, timeout=10) as client:
            result = await client.call_tool("whoami", {})
    subject, thumbprint = result["content"][0]["text"].split()
    assert subject == "octocat" and thumbprint == next(iter(site.dpop_tokens.bound.values()))
