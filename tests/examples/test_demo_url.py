"""The demo server's URL-mode tools over real HTTP, in process: `check_availability` (an
API key typed into the server's page) and `share_to_calendar` (a sign-in at the demo
calendar provider, examples/demo_provider.py, itself on 127.0.0.1). The browser is httpx.
Also what the demo provider refuses: it is an example people will copy."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import importlib.util
import re
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from integration.instances import Modern, claim, submit_secret

from mcp_elicit import Server
from mcp_elicit.cli.loader import load_server
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import ROOT, InProcess, uvicorn_server

pytestmark = pytest.mark.anyio
TOMORROW = dt.date.today() + dt.timedelta(days=1)


def provider_module() -> ModuleType:
    path = ROOT / "examples" / "demo_provider.py"
    spec = importlib.util.spec_from_file_location("demo_provider_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Demo:
    app: Server
    server: InProcess
    calendar: Any  # demo_provider.Calendar
    provider: str

    def modern(self, http: httpx.AsyncClient) -> Modern:
        return Modern(http, self.server.url)

    def book(self) -> int:
        return book(self.app)


def book(app: Server) -> int:
    """A booking made as book_table makes one (its own tests are in test_demo_server)."""
    names = app._tools["book_table"].fn.__globals__
    booking = names["Booking"](party_size=2, date=TOMORROW)
    stored = names["Stored"](next(names["_IDS"]), "Noma, Copenhagen", booking)
    names["BOOKINGS"][stored.id] = stored
    return int(stored.id)


@contextlib.asynccontextmanager
async def demo(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Demo]:
    provider = provider_module()
    calendar = provider.Calendar()
    store = MemoryStore()
    try:
        async with uvicorn_server(provider.build(calendar)) as idp:
            base = f"http://127.0.0.1:{idp.port}"
            monkeypatch.setenv("MCP_ELICIT_DEMO_CALENDAR", base)
            app = load_server(str(Path(ROOT / "examples" / "demo_server.py")))
            app.configure_url_mode(store=store)
            async with uvicorn_server(StreamableHTTP(app)) as running:
                yield Demo(app, running, calendar, base)
    finally:
        await store.close()


async def first_round(mcp: Modern, tool: str, arguments: dict[str, Any]) -> tuple[str, str, str]:
    """Round one of a URL-mode tool: the input key, the page link, the state."""
    first = (await mcp.call(tool, arguments))["result"]
    assert first["resultType"] == "input_required", first
    ((key, request),) = first["inputRequests"].items()
    assert request["params"]["mode"] == "url"
    return key, request["params"]["url"], first["requestState"]


async def retry(mcp: Modern, tool: str, arguments: dict[str, Any], key: str, state: str, action: str) -> str:
    final = (await mcp.call(tool, arguments, inputResponses={key: {"action": action}}, requestState=state))[
        "result"
    ]
    text: str = final["content"][0]["text"]
    return text


async def test_check_availability_asks_for_the_key_on_the_page_once(monkeypatch: pytest.MonkeyPatch) -> None:
    async with demo(monkeypatch) as d, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient() as browser:
        mcp = d.modern(http)
        args = {"restaurant": "noma"}
        key, link, state = await first_round(mcp, "check_availability", args)
        page_url, csrf = await claim(browser, link)
        await submit_secret(browser, page_url, csrf, "tb_test_key")
        text = await retry(mcp, "check_availability", args, key, state, "accept")
        assert text.startswith(f"Noma, Copenhagen has tables tomorrow ({TOMORROW.isoformat()}) at ")
        assert "tb_test_key" not in text
        again = (await mcp.call("check_availability", {"restaurant": "septime"}))["result"]
        assert again["content"][0]["text"].startswith("Septime, Paris has tables"), "the key is kept"


async def test_check_availability_declined_or_without_url_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    async with demo(monkeypatch) as d, httpx.AsyncClient(timeout=10) as http:
        mcp = d.modern(http)
        key, _, state = await first_round(mcp, "check_availability", {"restaurant": "noma"})
        declined = await retry(mcp, "check_availability", {"restaurant": "noma"}, key, state, "decline")
        assert declined == "Availability not checked (declined); no API key given."
        forms_only = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        }
        result = (await mcp.call("check_availability", {"restaurant": "noma"}, _meta=forms_only))["result"]
        assert "this client cannot open one" in result["content"][0]["text"]


async def test_share_to_calendar_signs_in_at_the_provider_and_adds_the_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with demo(monkeypatch) as d, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient() as browser:
        booking = d.book()
        mcp = d.modern(http)
        args = {"booking_id": booking}
        key, link, state = await first_round(mcp, "share_to_calendar", args)
        first = await browser.get(link)
        page = await browser.get(first.url.join(first.headers["location"]))
        start = re.search(r'href="([^"]+/start)"', page.text)
        assert start is not None, page.text
        to_provider = await browser.get(page.url.join(start.group(1)))
        assert to_provider.headers["location"].startswith(f"{d.provider}/authorize?")
        consent = await browser.get(to_provider.headers["location"])
        assert "asks to add events to your calendar" in consent.text
        ask = re.search(r'name="consent" value="([^"]+)"', consent.text)
        assert ask is not None
        back = await browser.post(
            f"{d.provider}/authorize/decide", data={"consent": ask.group(1), "decision": "allow"}
        )
        assert back.status_code == 303
        done = await browser.get(back.headers["location"])
        assert "Connected" in done.text
        text = await retry(mcp, "share_to_calendar", args, key, state, "accept")
        assert text == f"Added to Ada's calendar: Dinner at Noma, Copenhagen on {TOMORROW.isoformat()}."
        assert d.calendar.events == [
            {"id": 1, "title": "Dinner at Noma, Copenhagen", "date": TOMORROW.isoformat()}
        ]


async def test_denying_at_the_provider_shares_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    async with demo(monkeypatch) as d, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient() as browser:
        args = {"booking_id": d.book()}
        mcp = d.modern(http)
        key, link, state = await first_round(mcp, "share_to_calendar", args)
        first = await browser.get(link)
        page = await browser.get(first.url.join(first.headers["location"]))
        start = re.search(r'href="([^"]+/start)"', page.text)
        assert start is not None
        consent = await browser.get((await browser.get(page.url.join(start.group(1)))).headers["location"])
        ask = re.search(r'name="consent" value="([^"]+)"', consent.text)
        assert ask is not None
        back = await browser.post(
            f"{d.provider}/authorize/decide", data={"consent": ask.group(1), "decision": "deny"}
        )
        assert "error=access_denied" in back.headers["location"]
        await browser.get(back.headers["location"])
        text = await retry(mcp, "share_to_calendar", args, key, state, "accept")
        assert text == f"Booking #{args['booking_id']} not shared (declined)."
        assert d.calendar.events == []


async def test_share_to_calendar_says_so_when_the_provider_is_not_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`mcp-elicit serve examples/demo_server.py` alone (no demo provider): the tool says how
    to start the provider instead of sending the person to a page that cannot load."""
    with socket.socket() as closed:  # bound, never listening: a connection is refused
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv("MCP_ELICIT_DEMO_CALENDAR", f"http://127.0.0.1:{closed.getsockname()[1]}")
        app = load_server(str(Path(ROOT / "examples" / "demo_server.py")))
        store = MemoryStore()
        app.configure_url_mode(store=store)
        try:
            async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
                args = {"booking_id": book(app)}
                result = (await Modern(http, running.url).call("share_to_calendar", args))["result"]
        finally:
            await store.close()
    assert result.get("resultType") == "complete", result  # no page link that cannot load
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "does not answer" in text and "python examples/demo_provider.py" in text, text


async def test_the_demo_provider_refuses_what_a_provider_must_refuse() -> None:
    provider = provider_module()
    async with uvicorn_server(provider.build()) as idp, httpx.AsyncClient(timeout=10) as browser:
        base = f"http://127.0.0.1:{idp.port}"
        redirect = "http://127.0.0.1:9/mcp-elicit/oauth/callback"
        verifier = "v" * 50
        query = {
            "response_type": "code",
            "client_id": provider.CLIENT_ID,
            "redirect_uri": redirect,
            "state": "s1",
            "code_challenge": provider.s256(verifier),
            "code_challenge_method": "S256",
        }
        # an address that is not a local app's callback: refused on the page, never redirected to
        away = await browser.get(
            f"{base}/authorize", params={**query, "redirect_uri": "https://evil.example/cb"}
        )
        assert away.status_code == 400 and "location" not in away.headers
        plain = await browser.get(f"{base}/authorize", params={**query, "code_challenge_method": "plain"})
        assert "error=invalid_request" in plain.headers["location"]

        consent = await browser.get(f"{base}/authorize", params=query)
        ask = re.search(r'name="consent" value="([^"]+)"', consent.text)
        assert ask is not None
        back = await browser.post(
            f"{base}/authorize/decide", data={"consent": ask.group(1), "decision": "allow"}
        )
        code = httpx.URL(back.headers["location"]).params["code"]
        basic = (
            "Basic " + base64.b64encode(f"{provider.CLIENT_ID}:{provider.CLIENT_SECRET}".encode()).decode()
        )
        token = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect}

        wrong = await browser.post(
            f"{base}/token", data={**token, "code_verifier": "x" * 50}, headers={"authorization": basic}
        )
        assert wrong.json() == {"error": "invalid_grant"}
        spent = await browser.post(
            f"{base}/token", data={**token, "code_verifier": verifier}, headers={"authorization": basic}
        )
        assert spent.json() == {"error": "invalid_grant"}, "a code is used up by a wrong try too"
        unauthenticated = await browser.post(f"{base}/token", data={**token, "code_verifier": verifier})
        assert unauthenticated.status_code == 401
        assert (await browser.get(f"{base}/api/events")).status_code == 401
