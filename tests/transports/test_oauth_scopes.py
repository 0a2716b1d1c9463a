"""The scopes a provider writes in its token answer, against the short names the server's
configuration asks for: a real authorization server (authlib, on 127.0.0.1) answering in
the names real providers use (Google's URLs, Microsoft's resource-prefixed names without
``offline_access``, GitHub's commas), and the matching rule itself without sockets."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.errors import OAuthError
from mcp_elicit.server.oauth import Tokens
from mcp_elicit.server.oauth_scopes import missing_scopes
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.oauth_client import HttpTokenExchange

from support.oauth_provider import CLIENT_ID, CLIENT_SECRET, OAuthTestProvider
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio
#: Where the provider sends the browser back; never opened here (the test reads the code
#: from the redirect), and a loopback redirect URI matches on any port.
CALLBACK = "http://127.0.0.1:9/mcp-elicit/oauth/callback"
GOOGLE = (
    "openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile"
)


@contextlib.asynccontextmanager
async def provider_and_server(
    scopes: Sequence[str], **options: Any
) -> AsyncIterator[tuple[OAuthTestProvider, Server]]:
    """The provider on its own 127.0.0.1 port (stopped after) and a server asking it for
    ``scopes`` (``options``: more of ``Server.oauth_provider``'s arguments)."""
    provider = OAuthTestProvider()
    store = MemoryStore()
    try:
        async with uvicorn_server(provider.app) as idp:
            provider.base = f"http://127.0.0.1:{idp.port}"
            app = Server("scopes-test", state_keys=KeyRing([bytes(range(40, 72))]), store=store)
            app.oauth_provider(
                "example",
                authorize_url=f"{provider.base}/authorize",
                token_url=f"{provider.base}/token",
                client_id=CLIENT_ID,
                client_secret=CLIENT_SECRET,
                scopes=list(scopes),
                **options,
            )
            app.url_mode.token_exchange = HttpTokenExchange(timeout=10)
            yield provider, app
    finally:
        await store.close()


async def sign_in(app: Server) -> Tokens:
    """One authorization request to the provider, consented; its code redeemed (the
    server's callback page does the same, ``test_oauth.py`` goes through it)."""
    flow, _ = await app.url_mode.flows.start("oauth", "example", "ann")
    oauth = app.url_mode.oauth
    async with httpx.AsyncClient(timeout=10) as browser:
        answer = await browser.get(await oauth.authorization_url(flow, CALLBACK))
    assert answer.status_code == 302, answer.text
    back = httpx.URL(answer.headers["location"])
    assert "code" in back.params, back
    pending = await oauth.take(back.params["state"])
    assert pending is not None
    return await oauth.redeem(flow, pending, back.params["code"])


async def connects(app: Server, tokens: Tokens) -> bool:
    """Whether the tokens, kept, are a connection ``ctx.connect`` would use."""
    await app.url_mode.oauth.save("example", "ann", tokens)
    return await app.url_mode.oauth.usable("example", "ann") is not None


async def test_google_writes_email_and_profile_as_urls() -> None:
    """Asked ``openid email profile``, Google grants them and writes ``openid
    https://www.googleapis.com/auth/userinfo.email .../userinfo.profile``: a connection."""
    async with provider_and_server(["openid", "email", "profile"]) as (provider, app):
        provider.register(CALLBACK, scope="openid email profile", writes_scope=GOOGLE)
        tokens = await sign_in(app)
        assert tokens.scope == GOOGLE  # kept as the provider wrote it
        assert await connects(app, tokens)


async def test_microsoft_leaves_out_offline_access_and_prefixes_its_resource() -> None:
    """Asked ``offline_access User.Read``, Microsoft's answer carries a refresh token (that
    is what ``offline_access`` grants, OpenID Connect Core section 11), leaves the scope out
    of ``scope``, prefixes ``User.Read`` with its resource and adds ``openid profile email``:
    a connection."""
    async with provider_and_server(["offline_access", "User.Read"]) as (provider, app):
        written = "https://graph.microsoft.com/User.Read openid profile email"
        provider.register(CALLBACK, scope="offline_access User.Read", writes_scope=written)
        tokens = await sign_in(app)
        assert tokens.refresh_token is not None and tokens.scope == written
        assert await connects(app, tokens)
        # refreshed (the API refused the token), the answer written the same way: still one
        fresh = await app.url_mode.oauth.refused("example", "ann", tokens.access_token)
        assert fresh is not None and fresh.access_token != tokens.access_token
        assert provider.refreshes == 1 and fresh.scope == written
        assert await app.url_mode.oauth.stored("example", "ann") == fresh


async def test_scopes_written_with_commas_are_granted() -> None:
    async with provider_and_server(["profile", "repo"]) as (provider, app):
        provider.register(CALLBACK, writes_scope="profile,repo")
        assert await connects(app, await sign_in(app))


async def test_a_refused_grant_says_what_was_asked_what_was_granted_and_how_to_stop_checking() -> None:
    """``userinfo.email`` is no ``mail``: refused, and the error (what the tool hears) says
    what was asked, what the provider wrote, and the switch that turns the check off."""
    async with provider_and_server(["openid", "mail"]) as (provider, app):
        provider.register(CALLBACK, scope="openid email", writes_scope=GOOGLE)
        with pytest.raises(OAuthError) as refused:
            await sign_in(app)
        assert refused.value.error == "insufficient_scope"
        said = str(refused.value)
        assert "missing: mail" in said
        assert "asked: openid mail" in said
        assert f"granted: {GOOGLE!r}" in said
        assert "check_granted_scopes=False" in said
        assert await app.url_mode.oauth.stored("example", "ann") is None


async def test_with_the_check_off_a_narrower_grant_is_kept_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_elicit")
    async with provider_and_server(["profile", "repo"], check_granted_scopes=False) as (provider, app):
        provider.register(CALLBACK, scope="profile")
        tokens = await sign_in(app)
        assert tokens.scope == "profile"
        assert await connects(app, tokens)
    (line,) = [r for r in caplog.records if "check_granted_scopes is off" in r.getMessage()]
    assert line.levelno == logging.INFO
    assert "repo" in line.getMessage() and "'profile'" in line.getMessage()


# ---- the rule, without sockets ------------------------------------------------------------


@pytest.mark.parametrize(
    ("asked", "granted", "refresh", "missing"),
    [
        # a URL's (or a resource-prefixed name's) last segment is the name, or ends in "." + it
        (["email", "profile"], GOOGLE, False, ()),
        (["User.Read"], "https://graph.microsoft.com/User.Read", False, ()),
        (["User.Read"], "api://1234/User.Read", False, ()),
        # ... not a name it merely ends with, nor one inside it, nor one before it
        (["mail"], GOOGLE, False, ("mail",)),
        (["userinfo"], GOOGLE, False, ("userinfo",)),
        (["googleapis.com"], GOOGLE, False, ("googleapis.com",)),
        (["Read"], "User.Read", False, ("Read",)),  # no URL: names compare as they are
        (["email"], "userinfo.email", False, ("email",)),
        # a URL asked is compared as it is
        ([GOOGLE.split()[1]], GOOGLE, False, ()),
        ([GOOGLE.split()[1]], "email", False, (GOOGLE.split()[1],)),
        # offline_access: written, or shown by a refresh token
        (["offline_access", "User.Read"], "User.Read", True, ()),
        (["offline_access", "User.Read"], "User.Read", False, ("offline_access",)),
        (["offline_access"], "offline_access", False, ()),
        # Microsoft asked with its resource writes Graph's names bare, and never writes
        # .default (all the permissions configured for the resource): what it wrote is them
        (["https://graph.microsoft.com/User.Read"], "User.Read openid profile email", False, ()),
        (["https://graph.microsoft.com/.default"], "User.Read Mail.Read", False, ()),
        (["api://1234/.default"], "api://1234/Files.Read", False, ()),
        # ... the bare name is the asked one's whole last segment, and .default needs a scope
        (
            ["https://graph.microsoft.com/User.Read"],
            "Read",
            False,
            ("https://graph.microsoft.com/User.Read",),
        ),
        (["https://graph.microsoft.com/.default"], "", False, ("https://graph.microsoft.com/.default",)),
        # case does not count: Microsoft's docs ask for user.read, Entra writes User.Read
        (["user.read"], "https://graph.microsoft.com/User.Read", False, ()),
        (["user.read", "Mail.Send"], "User.Read mail.send", False, ()),
        (["user.read"], "User.Write", False, ("user.read",)),
    ],
)
def test_the_matching_rule(asked: list[str], granted: str, refresh: bool, missing: tuple[str, ...]) -> None:
    assert missing_scopes(asked, granted, refresh_token=refresh) == missing
