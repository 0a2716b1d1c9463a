"""URL mode's own pages when connections break, through the TCP proxy (``support.proxy``)
that the MCP connection and the person's browser both go through: the page's link (its
claim), the page, its form (the secret sent), the 2026-07-28 retry that waits for the
page, the 2025-11-25 request stream while the page is open, and the server restarted on
its SQLite store and key file between the page's Save and the retry. Each case says what
the person's browser and the caller get, and how many times the tool's side effect ran;
the secret is never in the log, an error or the MCP connection."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import TransportError
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.pages import browser, form_of
from support.procs import uvicorn_server
from support.proxy import Fault, breaking, fresh
from support.url_mode import SECRET, build

pytestmark = pytest.mark.anyio

NEW, OLD = "2026-07-28", "2025-11-25"
CLAIM, PAGE, PAGE_FORM = b"?t=", b"GET /mcp-elicit/flows/", b"POST /mcp-elicit/flows/"
ASKED, DONE, ACCEPTED = (
    "200 url-mode asks for your example_api_key",
    "200 Done",
    "key accepted (30 characters)",
)


def _said(response: httpx.Response) -> str:
    title = re.search(r"<title>([^<]*)</title>", response.text)
    return f"{response.status_code} {title.group(1).split(' · ')[0] if title else ''}".strip()


@dataclass
class Person:
    """Agrees to open each page (accept), then, once ``ready`` returns, opens it in
    ``browser`` and saves the secret; a step whose connection broke is done once more (a
    reload, Save pressed again). ``seen`` is what the browser showed, step by step."""

    web: httpx.AsyncClient
    ready: Callable[[], Awaitable[object]] | None = None
    modes: frozenset[str] = frozenset({"url"})
    seen: list[str] = field(default_factory=list)
    #: The text of the last page the browser showed.
    last: str = ""
    pages: list[asyncio.Future[None]] = field(default_factory=list)

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        assert request.url is not None
        self.pages.append(asyncio.ensure_future(self.fill(request.url)))
        return ElicitAnswer("accept")

    async def fill(self, link: str) -> None:
        if self.ready is not None:
            await self.ready()
        claimed = await self._step(lambda: self.web.get(link))
        if claimed is None or claimed.status_code != 303:
            return
        here = claimed.url.join(claimed.headers["location"])
        page = await self._step(lambda: self.web.get(here))
        if page is not None and page.status_code == 200:
            form = form_of(page, SECRET)
            await self._step(lambda: self.web.post(here, data=form))

    async def _step(self, send: Callable[[], Awaitable[httpx.Response]]) -> httpx.Response | None:
        for _ in range(2):
            try:
                response = await send()
            except httpx.TransportError as exc:
                self.seen.append(type(exc).__name__)
                continue
            self.seen.append(_said(response))
            self.last = response.text
            return response
        return None


@dataclass
class Outcome:
    """What a call through a break came to: its result's text (or what it raised), what
    the person's browser showed, how many times the tool acted, and the same for a second
    call the caller made afterwards."""

    out: str | BaseException
    seen: list[str]
    last_page: str
    acted: int
    again: str | BaseException
    asked_again: list[str]
    acted_in_all: int
    heard: bytes


async def _call(
    url: str,
    person: Person,
    revision: str,
    *,
    heard: Callable[[], bool] | None = None,
    within: float = 30,
) -> str | BaseException:
    """The call's result text, or what it raised (``TimeoutError`` past ``within`` s); with
    ``heard``, the session stays open (at most 10 s) until it holds."""
    try:
        async with (
            asyncio.timeout(within),
            connect_http(url, answerer=person, versions=[revision], timeout=20) as client,
        ):
            result = await client.call_tool("use_key")
            for _ in range(100):
                if heard is None or heard():
                    break
                await asyncio.sleep(0.1)
        return str(result["content"][0]["text"])
    except Exception as exc:
        return exc


async def run(
    revision: str, fault: Fault, *, after_fault: bool = False, flow_wait: float = 0.3, within: float = 30
) -> Outcome:
    """``use_key`` called through a proxy applying ``fault``, its page filled through the
    same proxy (once ``fault`` fired, with ``after_fault``); then called once more."""
    fault = fresh(fault)
    done = {"use_key": 0}
    store = MemoryStore()
    app = build(store, done=done, flow_wait=flow_wait)
    async with (
        uvicorn_server(StreamableHTTP(app)) as running,
        breaking(running.port, [fault]) as proxy,
        browser() as web,
    ):
        app.url_mode.configure(public_url=proxy.url(""))  # the page's links go through it too
        person = Person(web, ready=fault.fired.wait if after_fault else None)
        completed = b"notifications/elicitation/complete"  # 2025-11-25 only: 2026-07-28 has none
        waits = (lambda: completed in proxy.heard) if revision == OLD else None
        out = await _call(proxy.url(), person, revision, heard=waits, within=within)
        await asyncio.gather(*person.pages, return_exceptions=True)
        acted = done["use_key"]
        later = Person(web)
        again = await _call(proxy.url(), later, revision)
    await store.close()
    assert fault.fired.is_set(), "the fault never met its request"
    return Outcome(
        out, person.seen, person.last, acted, again, later.seen, done["use_key"], bytes(proxy.heard)
    )


def _no_secret_shown(outcome: Outcome, caplog: pytest.LogCaptureFixture) -> None:
    assert SECRET.encode() not in outcome.heard, "the secret came back from the server"
    assert SECRET not in caplog.text
    assert all(SECRET not in str(x) for x in (outcome.out, outcome.again, outcome.last_page))


PAGE_BREAKS = {
    "link dropped before the claim": (Fault(CLAIM, "drop"), ["RemoteProtocolError", "303", ASKED, DONE]),
    "page closed unanswered": (Fault(PAGE, unless=CLAIM), ["303", "RemoteProtocolError", ASKED, DONE]),
    "form dropped before the server": (Fault(PAGE_FORM, "drop"), ["303", ASKED, "RemoteProtocolError", DONE]),
    "form closed once saved": (Fault(PAGE_FORM), ["303", ASKED, "RemoteProtocolError", "409 Already done"]),
    "form reset once saved": (Fault(PAGE_FORM, "reset"), ["303", ASKED, "ReadError", "409 Already done"]),
}


@pytest.mark.parametrize("revision", [NEW, OLD])
@pytest.mark.parametrize(("fault", "seen"), list(PAGE_BREAKS.values()), ids=list(PAGE_BREAKS))
async def test_a_page_whose_connection_broke_is_done_again_and_saves_once(
    revision: str, fault: Fault, seen: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    """The link, the page or its form broke and the person did it again (a reload, Save
    pressed again): the secret is saved once. A form the server had saved before its
    answer was lost is answered 409 saying it had already been saved; the call finishes
    once, and a later call finds the key without asking."""
    outcome = await run(revision, fault)
    assert outcome.seen == seen
    if seen[-1] == "409 Already done":
        assert "had already been saved" in outcome.last_page
    assert (outcome.out, outcome.acted) == (ACCEPTED, 1)
    assert (outcome.again, outcome.asked_again, outcome.acted_in_all) == (ACCEPTED, [], 2)
    _no_secret_shown(outcome, caplog)


@pytest.mark.parametrize("revision", [NEW, OLD])
async def test_a_link_whose_claim_was_lost_still_leads_to_the_page(revision: str) -> None:
    """The server answered the link with a 303 and a cookie (a pending claim), but the
    answer never reached the browser. The link is not used up until a browser comes back
    with such a cookie: reloading it leads that person to the page, and the secret is
    saved once."""
    outcome = await run(revision, Fault(CLAIM), within=5)
    assert outcome.seen == ["RemoteProtocolError", "303", ASKED, DONE]
    assert (outcome.out, outcome.acted) == (ACCEPTED, 1)


WAITING = {
    "closed unanswered": Fault(b"inputResponses"),
    "closed after its headers": Fault(b"inputResponses", marker=b"\r\n\r\n"),
    "reset": Fault(b"inputResponses", "reset"),
}


@pytest.mark.parametrize("fault", list(WAITING.values()), ids=list(WAITING))
async def test_a_2026_retry_cut_while_it_waits_for_the_page(
    fault: Fault, caplog: pytest.LogCaptureFixture
) -> None:
    """The retry that waits for the page lost its connection; the person then saved the
    secret. The server's handler, woken by the page, finished that round (the tool acted
    once) with nobody to tell: the call fails saying the connection broke and the tool may
    have acted, and is not sent again. The caller calling again is not asked: the saved
    key is used, and the tool acts once more."""
    outcome = await run(NEW, fault, after_fault=True, flow_wait=10)
    assert isinstance(outcome.out, TransportError), outcome.out
    assert "broke" in str(outcome.out) and "the tool may have acted" in str(outcome.out)
    assert (outcome.seen, outcome.acted) == (["303", ASKED, DONE], 1)
    assert (outcome.again, outcome.asked_again, outcome.acted_in_all) == (ACCEPTED, [], 2)
    _no_secret_shown(outcome, caplog)


OPEN = {
    "call closed after the question": Fault(b'"tools/call"', marker=b"\n\n"),
    "call reset after the question": Fault(b'"tools/call"', "reset", marker=b"\n\n"),
    "call stalled after the question": Fault(b'"tools/call"', "stall", marker=b"\n\n", seconds=2),
    "answer's POST closed unanswered": Fault(b'"result"'),
    "event stream cut": Fault(b"GET /mcp", marker=b"\r\n\r\n"),
}


@pytest.mark.parametrize("fault", list(OPEN.values()), ids=list(OPEN))
async def test_a_2025_stream_cut_while_the_page_is_open_resumes(
    fault: Fault, caplog: pytest.LogCaptureFixture
) -> None:
    """At 2025-11-25 the call's stream broke while the page was open: the client resumes
    it from the last event id, the page's completion notice reaches it, and the call
    finishes once with the saved key."""
    outcome = await run(OLD, fault, after_fault=True)
    assert (outcome.out, outcome.acted, outcome.seen) == (ACCEPTED, 1, ["303", ASKED, DONE])
    assert b"notifications/elicitation/complete" in outcome.heard
    assert (outcome.asked_again, outcome.acted_in_all) == ([], 2)
    _no_secret_shown(outcome, caplog)


@pytest.mark.parametrize(("revision", "recovers"), [(NEW, True), (OLD, False)])
async def test_a_restart_between_the_save_and_the_retry(
    revision: str, recovers: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person saved the secret, then the server restarted on its default SQLite store
    and key file before the client came back. At 2026-07-28 the retry, to the new process,
    finds the page done and the key: the tool acts once. At 2025-11-25 the call waited in
    the old process, whose stream ended: it fails saying so, the tool never acted, and
    calling again uses the saved key without asking."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    done = {"use_key": 0}
    async with contextlib.AsyncExitStack() as stack, browser() as web:
        first = build(None, default_keys=True, done=done)
        stack.push_async_callback(first.stop)  # closes the default store it opened (no lifespan here)
        running = await stack.enter_async_context(uvicorn_server(StreamableHTTP(first)))
        async with breaking(running.port, []) as proxy:
            first.url_mode.configure(public_url=proxy.url(""))

            class Restarting(Person):
                async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
                    assert request.url is not None
                    await self.fill(request.url)
                    # not cancelled with the call (2025-11-25: its stream ends with the process)
                    await asyncio.shield(restarted.setdefault("task", asyncio.ensure_future(restart())))
                    return ElicitAnswer("accept")

            async def restart() -> None:
                await stack.aclose()
                again = build(None, default_keys=True, done=done)
                stack.push_async_callback(again.stop)
                again.url_mode.configure(public_url=proxy.url(""))
                proxy.upstream = (await stack.enter_async_context(uvicorn_server(StreamableHTTP(again)))).port

            restarted: dict[str, asyncio.Future[None]] = {}

            person = Restarting(web)
            out = await _call(proxy.url(), person, revision)
            await restarted["task"]
            assert person.seen == ["303", ASKED, DONE]
            if recovers:
                assert (out, done["use_key"]) == (ACCEPTED, 1)
            else:
                assert isinstance(out, TransportError) and "not sent again" in str(out), out
                assert done["use_key"] == 0
            later = Person(web)
            assert await _call(proxy.url(), later, revision) == ACCEPTED
            assert later.seen == []
    assert (tmp_path / "mcp-elicit" / "state.keys").exists()


@dataclass
class Connecting(Person):
    """Agrees to open the sign-in page, then goes to the provider, consents, and is sent
    back to the callback; a step whose connection broke is done once more (a reload)."""

    async def fill(self, link: str) -> None:
        from support.oauth_rig import consent, continue_to_provider

        claimed = await self._step(lambda: self.web.get(link))
        assert claimed is not None and claimed.status_code == 303
        page = await self.web.get(claimed.url.join(claimed.headers["location"]))
        callback = await consent(self.web, await continue_to_provider(self.web, page))
        await self._step(lambda: self.web.get(callback))


@pytest.mark.parametrize("revision", [NEW, OLD])
async def test_a_sign_in_whose_callback_answer_was_lost_says_connected_on_reload(
    revision: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``ctx.connect``: the provider sent the browser back, the server kept the tokens and
    ended the flow, but its answer never reached the browser. The person reloads the
    callback: they are told they are connected (the flow's usual done page), not that the
    sign-in "cannot be used" and to try again; the call finishes once, connected."""
    from support.oauth_rig import CALLBACK, rig

    fault = Fault(b"GET " + CALLBACK.encode())
    async with rig() as r, breaking(r.running.port, [fault]) as proxy, browser() as web:
        r.app.url_mode.public_url = proxy.url("")
        r.provider.register(proxy.url(CALLBACK))
        person = Connecting(web)
        async with (
            asyncio.timeout(30),
            connect_http(proxy.url(), answerer=person, versions=[revision], timeout=20) as client,
        ):
            out = (await client.call_tool("whoami"))["content"][0]["text"]
        await asyncio.gather(*person.pages)
    assert out == "hello octocat (profile repo)"
    assert person.seen == ["303", "RemoteProtocolError", "200 Done"]
    assert "Connected" in person.last or "connected" in person.last, person.last
