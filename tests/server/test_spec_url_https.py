"""A URL-mode elicitation SHOULD send the person to an https URL outside development: one
in plain http to a host that is not loopback is sent as given (a test server often is
one) but warned about in the server's log, once per site, on both revisions. The sites
warned about are forgotten before each test, so that none passes because an earlier one
already warned (the tests share a site on purpose)."""

from __future__ import annotations

import logging

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import URLElicitationRequired
from mcp_elicit.sealing import KeyRing
from mcp_elicit.server import outgoing

from support.memory import MemoryClient, SessionClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}
SITE = "http://plain-site.example:8080"


@pytest.fixture(autouse=True)
def no_site_warned_yet() -> None:
    """The once-per-site memory is the process's: each test starts from none warned."""
    outgoing._warn_site.cache_clear()


def opening() -> Server:
    app = Server("urls", state_keys=KeyRing([bytes(range(32))]))

    @app.tool()
    async def open_page(ctx: Context, url: str) -> str:
        return (await ctx.elicit_url("Open this page", url)).action

    return app


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


async def test_a_cleartext_url_is_sent_and_warned_about_once_per_site(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcp_elicit")
    client = MemoryClient(opening(), capabilities=URL_CAPS, checker=wire)
    for path in ("a", "b?x=1"):  # two pages of one site: one warning
        url = f"http://Plain-Site.example:8080/{path}"  # SITE, written otherwise
        first = await client.result("tools/call", {"name": "open_page", "arguments": {"url": url}})
        assert first["inputRequests"]["url-1"]["params"]["url"] == url, "sent as given"
    (said,) = warnings(caplog)
    assert SITE in said and "https" in said, said
    assert "/a" not in said, "a path (which may carry a token) is not logged"


@pytest.mark.parametrize(
    "url",
    [
        "https://secure-site.example/a",
        "http://127.0.0.1:8000/mcp-elicit/flows/abc",
        "http://localhost:8000/x",
        "http://[::1]:8000/x",
    ],
)
async def test_https_and_loopback_urls_are_not_warned_about(
    wire: WireChecker, caplog: pytest.LogCaptureFixture, url: str
) -> None:
    caplog.set_level(logging.WARNING, "mcp_elicit")
    client = MemoryClient(opening(), capabilities=URL_CAPS, checker=wire)
    await client.result("tools/call", {"name": "open_page", "arguments": {"url": url}})
    assert warnings(caplog) == []


async def test_a_cleartext_url_on_a_2025_session_is_warned_about(
    wire_2025: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcp_elicit")
    client = SessionClient(opening(), capabilities=URL_CAPS, checker=wire_2025)
    client.answer = lambda _k, _r: {"action": "decline"}
    await client.open()
    result = await client.result("tools/call", {"name": "open_page", "arguments": {"url": f"{SITE}/page"}})
    assert result["content"][0]["text"] == "decline"
    assert any(SITE in said for said in warnings(caplog)), (
        "the site another test warned about is warned here too"
    )


async def test_a_handlers_own_url_elicitation_required_in_cleartext_is_warned_about(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """A raised -32042 is asked through ``ctx.elicit_url`` (``ctx.url_steps``): the same check."""
    app = Server("raising", state_keys=KeyRing([bytes(range(32))]))

    @app.tool()
    async def raise_step(ctx: Context) -> str:
        step = {"mode": "url", "message": "Open this page", "url": f"{SITE}/own", "elicitationId": "s-1"}
        raise URLElicitationRequired("Open the page first", {"elicitations": [step]})

    caplog.set_level(logging.WARNING, "mcp_elicit")
    client = MemoryClient(app, capabilities=URL_CAPS, checker=wire)
    try:
        first = await client.result("tools/call", {"name": "raise_step", "arguments": {}})
    finally:
        await app.stop()  # the step's marker opened the default store, which a stop closes
    (request,) = first["inputRequests"].values()
    assert request["params"]["url"] == f"{SITE}/own", "sent as given"
    assert any(SITE in said and "https" in said for said in warnings(caplog)), warnings(caplog)
