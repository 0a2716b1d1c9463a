"""Third-party sign-in: configuration. Provider settings are checked, a missing extra is named,
an unknown provider fails the tool before asking, stdio installs the token exchange, and the
sign-in keeps its path behind a proxy that strips it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.oauth_client import HttpTokenExchange

from support.oauth_provider import OAuthTestProvider
from support.oauth_rig import CALLBACK, Mcp, build, consent, continue_to_provider, open_link, url_of
from support.procs import uvicorn_server
from support.proxy import stripping
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def test_provider_configuration_is_checked() -> None:
    app = Server("config")
    good: dict[str, Any] = {
        "authorize_url": "https://id.example.com/a",
        "token_url": "https://id.example.com/t",
        "client_id": "c",
    }
    app.oauth_provider("example", **good)
    with pytest.raises(ConfigError, match="already registered"):
        app.oauth_provider("example", **good)
    with pytest.raises(ConfigError, match="https"):
        app.oauth_provider("plain", **{**good, "token_url": "http://id.example.com/t"})
    with pytest.raises(ConfigError, match="state"):
        app.oauth_provider("extra", **good, extra_params={"state": "fixed"})
    with pytest.raises(ConfigError, match="name"):
        app.oauth_provider("two words", **good)
    # the callback reads the code from its query, with the flow cookie a cross-site POST
    # (form_post) would not carry: a provider told to answer another way never comes back
    for mode in ("form_post", "fragment", "query.jwt"):
        with pytest.raises(ConfigError, match="response_mode") as refused:
            app.oauth_provider(f"mode-{mode.replace('.', '-')}", **good, extra_params={"response_mode": mode})
        assert "query" in str(refused.value)
    app.oauth_provider(
        "mode-query", **good, extra_params={"response_mode": "query", "access_type": "offline"}
    )
    loopback = app.oauth_provider("local", **{**good, "token_url": "http://127.0.0.1:9/t"})
    assert "client_secret" not in repr(app.oauth_provider("secret", **good, client_secret="s3cr3t"))
    assert loopback.scopes == ()


def test_without_authlib_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "authlib.oauth2.rfc7636", None)
    with pytest.raises(ConfigError, match=r"mcp-elicit\[oauth\]"):
        Server("no-authlib").oauth_provider(
            "example", authorize_url="https://a.example/a", token_url="https://a.example/t", client_id="c"
        )


async def test_an_unknown_provider_fails_the_tool_before_asking(wire: WireChecker) -> None:
    from support.memory import MemoryClient

    app = Server("unknown", store=MemoryStore())

    @app.tool()
    async def use(ctx: Context) -> str:
        await ctx.connect("nowhere")
        return "unreachable"

    client = MemoryClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire)
    result = await client.result("tools/call", {"name": "use"})
    assert result["isError"] is True
    assert "no OAuth provider named 'nowhere'" in result["content"][0]["text"]
    await app.url_mode.store.close()


async def test_stdio_installs_the_token_exchange(tmp_path: Path) -> None:
    from mcp_elicit.transports.stdio_server import StdioServer

    app = Server("stdio", store=MemoryStore())
    (tmp_path / "in").write_bytes(b"")
    with (tmp_path / "in").open("rb") as stdin, (tmp_path / "out").open("wb") as stdout:
        await StdioServer(app, grace=0.1).run(stdin, stdout)
    assert isinstance(app.url_mode.token_exchange, HttpTokenExchange)
    await app.url_mode.store.close()


async def test_behind_a_proxy_that_strips_a_path_the_sign_in_keeps_it(wire: WireChecker) -> None:
    """``--public-url .../mcp-app`` behind a proxy that strips it: the connect page's link,
    the redirect URI and the callback's cookie all carry the path, so the sign-in ends."""
    provider = OAuthTestProvider()
    store = MemoryStore()
    try:
        async with uvicorn_server(provider.app) as idp:
            provider.base = f"http://127.0.0.1:{idp.port}"
            app = build(store, provider.base)
            async with uvicorn_server(stripping("/mcp-app", StreamableHTTP(app))) as running:
                base = f"http://127.0.0.1:{running.port}/mcp-app"
                app.url_mode.public_url = base
                provider.register(base + CALLBACK)
                async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
                    mcp = Mcp(http, f"{base}/mcp", wire)
                    first = await mcp.call()
                    key, url = url_of(first)
                    assert url.startswith(f"{base}/mcp-elicit/flows/")
                    page = await open_link(browser, url)
                    assert 'href="/mcp-app/mcp-elicit/flows/' in page.text
                    authorize = await continue_to_provider(browser, page)
                    assert dict(authorize.params)["redirect_uri"] == base + CALLBACK
                    done = await browser.get(await consent(browser, authorize))
                    assert done.status_code == 200 and "Connected" in done.text, done.text
                    final = await mcp.call(
                        inputResponses={key: {"action": "accept"}}, requestState=first["requestState"]
                    )
                    assert final["content"][0]["text"] == "hello octocat (profile repo)"
    finally:
        await store.close()
