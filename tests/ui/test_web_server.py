"""The browser answerer's answer server over plain HTTP (httpx, no browser): who it
refuses, the single-use link, the cookie and CSRF token every post needs, and the headers
every response carries."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import re
from typing import Any

import httpx
import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.ui import web, web_round
from mcp_elicit.ui.web import WebAnswerer
from ui.web_rounds import SERVER, Opened, form_request, open_round, url_request

from support.web_answers import SMALL, api, claim

pytestmark = pytest.mark.anyio


async def test_another_host_is_refused_and_localhost_is_not() -> None:
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        evil = await client.get(opened.url, headers={"Host": "evil.example"})
        assert evil.status_code == 421
        rebound = await client.get(opened.url, headers={"Host": f"evil.example:{opened.host.split(':')[1]}"})
        assert rebound.status_code == 421
        static = await client.get(
            f"{opened.base}/static/app.css", headers={"Host": opened.host.replace("127.0.0.1", "localhost")}
        )
        assert static.status_code == 200
        # the refusals used nothing up
        assert (await client.get(opened.url)).status_code == 303


async def test_the_link_opened_in_a_tab_from_another_site_steps_to_the_form_itself() -> None:
    """A redirect would keep the other site as the initiator, and the SameSite cookie would
    not go with it: the link answers a page that steps to the form (Refresh)."""
    tab = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        for mode, dest in (("no-cors", "image"), ("navigate", "iframe"), ("cors", "empty")):
            fetched = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": mode, "Sec-Fetch-Dest": dest}
            assert (await client.get(opened.url, headers=fetched)).status_code == 403
        wrong = await client.get(opened.url[:-1], headers={"Sec-Fetch-Site": "cross-site", **tab})
        assert wrong.status_code == 404
        first = await client.get(opened.url, headers={"Sec-Fetch-Site": "cross-site", **tab})
        assert first.status_code == 200
        assert first.headers["refresh"] == "0; url=/form"
        assert 'href="/form"' in first.text
        assert "samesite=strict" in first.headers["set-cookie"].lower()
        assert first.headers["content-security-policy"].startswith("default-src 'none'")
        assert (await client.get(f"{opened.base}/form")).status_code == 200
        again = await client.get(opened.url, headers={"Sec-Fetch-Site": "same-site", **tab})
        assert again.status_code == 410


async def test_the_step_to_the_form_is_a_page_like_the_others() -> None:
    """WCAG 2.4.2 and 1.3.1: the page the link answers when followed from another site
    names the server asking in its title and has the landmark and heading of every other
    page (a screen reader may land on it before the step), the server's text made inert
    and, in the heading, given its own direction (right-to-left names read whole)."""
    tab = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    server = dataclasses.replace(SERVER, title="Table <b>bookings</b>\u202e")
    request = dataclasses.replace(form_request(SMALL), server=server)
    async with open_round([request]) as opened, httpx.AsyncClient() as client:
        stop = (await client.get(opened.url, headers=tab)).text
    assert (
        "<title>Opening the question from Table &lt;b&gt;bookings&lt;/b&gt;&lt;U+202E&gt; · mcp-elicit</title>"
        in stop
    )
    assert '<html lang="en">' in stop and '<meta name="viewport"' in stop
    assert '<link rel="stylesheet" href="/static/app.css">' in stop
    main = re.search(r"<main>(.*)</main>", stop, re.S)
    assert main is not None, stop
    # The name set apart as the form's heading sets it: its own direction, its own span.
    assert re.search(
        r'<h1>Opening the question from <span dir="auto">[^<]*bookings[^<]*</span>…</h1>',
        main.group(1),
    ), stop
    assert '<a href="/form">Continue to the question</a>' in main.group(1)


async def test_the_step_to_the_forms_title_treats_server_text_as_the_forms_title_does() -> None:
    """Short, and right-to-left text isolated: a 200-character name filled the tab's label."""
    tab = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    for name, shown in [("מסעדה 2", "\u2068מסעדה 2\u2069"), ("T" * 300, "T" * 79 + "…")]:
        request = dataclasses.replace(form_request(SMALL), server=dataclasses.replace(SERVER, title=name))
        async with open_round([request]) as opened, httpx.AsyncClient() as client:
            stop = (await client.get(opened.url, headers=tab)).text
        assert f"<title>Opening the question from {shown} · mcp-elicit</title>" in stop, stop


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
    ids=["foreign-origin", "null-origin", "other-port-origin", "cross-site", "same-site"],
)
async def test_requests_from_other_sites_are_refused(headers: dict[str, str]) -> None:
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        assert (await client.get(opened.url, headers=headers)).status_code == 403
        csrf = await claim(client, opened)
        body = {"action": "decline"}
        refused = await client.post(f"{opened.base}/api/answer", json=body, headers=api(csrf, **headers))
        assert refused.status_code == 403
        assert not opened.task.done()
        same = await client.post(
            f"{opened.base}/api/answer",
            json=body,
            headers=api(csrf, Origin=opened.base, **{"Sec-Fetch-Site": "same-origin"}),
        )
        assert same.status_code == 200
        assert await opened.answers() == [ElicitAnswer.decline()]


async def test_a_link_cut_short_gets_a_page_saying_so() -> None:
    """A link missing its last characters (copied across a terminal's line break) answered
    bare "Not found.", tiny on a phone, as the link opened again did: it is a page too,
    still 404 and never stored, saying to copy the whole link."""
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        cut = await client.get(opened.url[:-1], headers={"Sec-Fetch-Site": "none"})
        assert cut.status_code == 404
        assert cut.headers["content-type"].startswith("text/html")
        assert cut.headers["cache-control"] == "no-store"
        assert "<h1>No question has this link</h1>" in cut.text
        assert "the whole link" in cut.text
        assert (
            "<h1>Nothing here</h1>" in (await client.get(f"{opened.base}/nothing")).text
        )  # no page's address
        csrf = await claim(client, opened)  # the link itself still works
        declined = await client.post(
            f"{opened.base}/api/answer", json={"action": "decline"}, headers=api(csrf)
        )
        assert declined.status_code == 200
        assert await opened.answers() == [ElicitAnswer.decline()]


async def test_the_link_works_once_and_only_with_its_token() -> None:
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        assert (await client.get(f"{opened.base}/r/")).status_code == 404
        assert (await client.get(f"{opened.base}/r/{'x' * 43}")).status_code == 404
        assert (await client.get(opened.url[:-1])).status_code == 404
        assert (await client.get(f"{opened.base}/form")).status_code == 403  # no cookie yet
        await claim(client, opened)
        assert (await client.get(f"{opened.base}/form")).status_code == 200  # a reload
        async with httpx.AsyncClient() as other:
            again = await other.get(opened.url)
            assert again.status_code == 410
            assert (await other.get(f"{opened.base}/form")).status_code == 403
            assert (await other.get(f"{opened.base}/api/events")).status_code == 403
        again_here = await client.get(opened.url)
        assert again_here.status_code == 410


async def test_posts_need_the_cookie_the_csrf_token_and_json() -> None:
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        url = f"{opened.base}/api/check"
        body = {"questions": [{"action": "accept", "values": ["3", None]}]}
        assert (await client.post(url, json=body)).status_code == 403
        assert (await client.post(url, json=body, headers=api("wrong"))).status_code == 403
        text = await client.post(
            url, content=b"{}", headers={"X-MCP-Elicit-CSRF": csrf, "Content-Type": "text/plain"}
        )
        assert text.status_code == 415
        async with httpx.AsyncClient() as stranger:
            assert (await stranger.post(url, json=body, headers=api(csrf))).status_code == 403
        bad = await client.post(url, content=b"{nope", headers=api(csrf))
        assert bad.status_code == 400
        big = await client.post(url, content=b" " * (16 * 1024 * 1024 + 1), headers=api(csrf))
        assert big.status_code == 413
        assert big.text == "Too large: an answer is at most 16 MiB.\n"
        ok = await client.post(url, json=body, headers=api(csrf))
        assert ok.status_code == 200
        assert ok.json()["ok"] is True


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"questions": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"])
async def test_json_nested_too_deeply_is_refused_not_a_server_error(body: bytes) -> None:
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        refused = await client.post(f"{opened.base}/api/answer", content=body, headers=api(csrf))
        assert refused.status_code == 400
        assert refused.text == "Not JSON: nested too deeply.\n"
        ok = await client.post(
            f"{opened.base}/api/answer",
            json={"action": "accept", "questions": [{"action": "accept", "values": ["3", None]}]},
            headers=api(csrf),
        )
        assert ok.status_code == 200
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]


@pytest.mark.parametrize(
    ("framing", "read"),
    [
        pytest.param(("transfer-encoding", "chunked"), 17, id="chunked"),
        # "²" passes str.isdigit, but int() cannot read it: a length no one can use
        pytest.param(("content-length", "\xb2"), 17, id="unreadable length"),
        # nor 5000 digits (int() reads at most about 4300): over the limit, read no further
        pytest.param(("content-length", "9" * 5000), 0, id="5000 digits"),
    ],
)
async def test_a_body_without_a_length_is_read_no_further_than_the_limit(
    framing: tuple[str, str], read: int
) -> None:
    """The answer server as the ASGI app it is, fed a body with no usable Content-Length
    that never ends: it answers 413 once 16 MiB are past (at once for a length past the
    limit), and reads no more."""
    round_ = web_round.Round([form_request(SMALL)], grace=5, lifetime=60)
    round_.claimed = True
    app = web._App(round_, 1234)
    pulled = 0

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        assert pulled <= 32, "the body was read past twice the limit"
        return {"type": "http.request", "body": b" " * 1024 * 1024, "more_body": True}

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    headers = {
        "host": "127.0.0.1:1234",
        "cookie": f"{round_.cookie_name}={round_.cookie}",
        "x-mcp-elicit-csrf": round_.csrf,
        "content-type": "application/json",
        framing[0]: framing[1],
    }
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/answer",
        "headers": [(k.encode(), v.encode("latin-1")) for k, v in headers.items()],
        "query_string": b"",
    }
    await asyncio.wait_for(app(scope, receive, send), 10)
    assert sent[0]["status"] == 413
    assert pulled == read
    assert not round_.answers.done()


async def test_opened_needs_the_cookie_and_the_csrf_token_too() -> None:
    """A foreign page cannot fake the person's "Open" (which lets the server's own
    "finished" answer accept)."""
    said_done = asyncio.Event()
    request = dataclasses.replace(url_request("https://example.com/connect"), finished=said_done.wait)
    async with open_round([request]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        url = f"{opened.base}/api/opened"
        said_done.set()
        assert (await client.post(url, json={"question": 0})).status_code == 403
        async with httpx.AsyncClient() as stranger:
            assert (await stranger.post(url, json={"question": 0}, headers=api(csrf))).status_code == 403
        foreign = api(csrf, Origin="http://evil.example")
        assert (await client.post(url, json={"question": 0}, headers=foreign)).status_code == 403
        await asyncio.sleep(0.1)
        assert not opened.task.done()
        assert (await client.post(url, json={"question": 0}, headers=api(csrf))).status_code == 200
        assert await opened.answers() == [ElicitAnswer.accept()]


async def test_more_time_needs_the_cookie_and_the_csrf_token_and_renews_the_cookie() -> None:
    """Only the page itself can keep its round waiting: another page, or a request without
    the cookie or the CSRF token, cannot, and the round ends at its time."""
    wait = 4.5
    async with open_round([form_request(SMALL)], timeout=wait) as opened, httpx.AsyncClient() as client:
        loop = asyncio.get_running_loop()
        first_end = loop.time() + wait  # at the latest: the round's wait began before this
        csrf = await claim(client, opened)
        url = f"{opened.base}/api/more-time"
        assert (await client.post(url, json={})).status_code == 403
        async with httpx.AsyncClient() as stranger:
            assert (await stranger.post(url, json={}, headers=api(csrf))).status_code == 403
        foreign = api(csrf, Origin="http://evil.example")
        assert (await client.post(url, json={}, headers=foreign)).status_code == 403
        # far from either end: the more time is asked 1.5 s in, and looked at 0.2 s after
        # the first end, which leaves the new end (1.5 s + the whole wait) 1.3 s away
        await asyncio.sleep(max(0.0, first_end - wait + 1.5 - loop.time()))
        granted = await client.post(url, json={}, headers=api(csrf))
        assert granted.status_code == 200
        # the whole wait again: what was left of the first one was at most wait - 1.5
        assert wait - 1.5 < granted.json()["left"] <= wait
        assert "max-age=64" in granted.headers["set-cookie"].lower()  # int(left) + 60
        await asyncio.sleep(max(0.0, first_end + 0.2 - loop.time()))  # past the first end
        assert not opened.task.done()
        assert await opened.answers(wait + 5) == [ElicitAnswer.cancel()]
        assert any("no answer within" in line for line in opened.said)


async def test_a_refused_url_cannot_be_opened_so_the_servers_finished_cannot_accept_it() -> None:
    """A refused address has no Open on the page; a post saying it was opened anyway is
    refused, and the server's own "finished" does not turn it into an accept."""
    said_done = asyncio.Event()
    request = dataclasses.replace(url_request("javascript:alert(1)"), finished=said_done.wait)
    async with open_round([request]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        said_done.set()
        refused = await client.post(f"{opened.base}/api/opened", json={"question": 0}, headers=api(csrf))
        assert refused.status_code == 400
        assert refused.text == "This address is refused; it can only be declined.\n"
        await asyncio.sleep(0.1)
        assert not opened.task.done()
        declined = await client.post(
            f"{opened.base}/api/answer", json={"action": "decline"}, headers=api(csrf)
        )
        assert declined.status_code == 200
        assert await opened.answers() == [ElicitAnswer.decline()]


async def test_the_clients_refusal_of_a_url_gets_a_page_saying_why() -> None:
    """A URL the client refuses never reaches ``elicit``: the client calls ``refused``,
    whose page shows why, with no link to it, and takes Decline."""
    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()

    def opener(url: str) -> bool:
        loop.call_soon_threadsafe(links.put_nowait, url)
        return True

    url = "https://bank.example.com@evil.example/login"
    answerer = WebAnswerer(open_url=opener, announce=lambda _: None)
    task = asyncio.ensure_future(answerer.refused(url_request(url), judge_url(url)))
    try:
        opened = Opened(await asyncio.wait_for(links.get(), 10), asyncio.ensure_future(asyncio.sleep(0)))
        async with httpx.AsyncClient() as client:
            csrf = await claim(client, opened)
            shown = (await client.get(f"{opened.base}/form")).text
            assert "This address will not be opened." in shown and 'href="https://bank' not in shown
            declined = await client.post(
                f"{opened.base}/api/answer", json={"action": "decline"}, headers=api(csrf)
            )
            assert declined.status_code == 200
        assert await asyncio.wait_for(task, 5) == ElicitAnswer.decline()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_known_address_asked_with_the_wrong_method_is_405_saying_which() -> None:
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        for method, path, allowed in [
            ("GET", "/api/answer", "POST"),
            ("PUT", "/api/check", "POST"),
            ("DELETE", "/api/opened", "POST"),
            ("POST", "/form", "GET"),
            ("POST", "/api/events", "GET"),
            ("POST", "/static/app.js", "GET"),
            ("POST", opened.url.removeprefix(opened.base), "GET"),
        ]:
            response = await client.request(method, f"{opened.base}{path}", headers=api(csrf), json={})
            assert (response.status_code, response.headers.get("allow")) == (405, allowed), (method, path)
            assert response.headers["content-type"].startswith("text/html"), (method, path)
            assert "<h1>Not a page</h1>" in response.text, (method, path)
            assert response.headers["cache-control"] == "no-store"
        nothing = await client.get(f"{opened.base}/api/nothing")
        assert (nothing.status_code, nothing.headers["content-type"].split(";")[0]) == (404, "text/html")
        assert "<h1>Nothing here</h1>" in nothing.text
        assert not opened.task.done()


async def test_the_browsers_own_request_for_the_tabs_icon_is_not_an_error() -> None:
    """A browser asks every page's server for ``/favicon.ico`` by itself; a 404 there is an
    error in the page's console, which a person who opens the developer tools reads as
    the page being broken. There is no icon: "no content", with the usual headers."""
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        icon = await client.get(f"{opened.base}/favicon.ico")
        assert icon.status_code == 204
        assert icon.content == b""
        assert icon.headers["cache-control"] == "no-store"
        assert "default-src 'none'" in icon.headers["content-security-policy"]
        refused = await client.get(f"{opened.base}/favicon.ico", headers={"Host": "evil.example"})
        assert refused.status_code == 421
        assert not opened.task.done()


async def test_every_response_carries_the_security_headers() -> None:
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        responses = [
            await client.get(opened.url),
            await client.get(f"{opened.base}/form"),
            await client.get(f"{opened.base}/static/app.js"),
            await client.get(f"{opened.base}/nothing"),
            await client.get(opened.url, headers={"Host": "evil.example"}),
            await client.get(f"{opened.base}/static/values.js"),
            await client.get(f"{opened.base}/static/draft.js"),
            await client.get(f"{opened.base}/static/spin.js"),
            await client.get(f"{opened.base}/static/events.js"),
        ]
        for response in responses:
            csp = response.headers["content-security-policy"]
            assert "default-src 'none'" in csp
            assert "script-src 'self'" in csp
            assert "frame-ancestors 'none'" in csp
            assert response.headers["x-frame-options"] == "DENY"
            assert response.headers["cache-control"] == "no-store"
            assert response.headers["referrer-policy"] == "no-referrer"
        for script in (responses[2], responses[5], responses[6], responses[7]):
            assert script.status_code == 200
            assert script.headers["content-type"].startswith("text/javascript")
        assert responses[3].status_code == 404


async def test_the_page_with_a_url_lets_the_browser_look_nothing_up_before_consent() -> None:
    """The page is plain http on 127.0.0.1, where browsers resolve the host of every link
    on a page ahead of a click unless told not to: the server asking would learn from its
    name server that the person saw its URL before they chose to open it (Safe URL
    Handling: no pre-fetch of the URL or its metadata)."""
    url = "https://seen-before-consent.example.com/connect"
    async with open_round([url_request(url)]) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        shown = await client.get(f"{opened.base}/form")
        assert url.split("/")[2] in shown.text
        assert shown.headers["x-dns-prefetch-control"] == "off"
        assert (await client.get(f"{opened.base}/static/app.js")).headers["x-dns-prefetch-control"] == "off"


async def test_refusals_are_pages_laid_out_as_the_others_with_no_referrer() -> None:
    """The 421 (another host name) and the 403s (another site, no cookie) were bare text,
    unlike every other page a person may land on here: each is now one of those pages,
    styled, with the no-referrer policy in its head, saying what was refused."""
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        port = opened.host.split(":")[1]
        refused = {
            "host": await client.get(opened.url, headers={"Host": f"evil.example:{port}"}),
            "origin": await client.get(f"{opened.base}/form", headers={"Origin": "http://evil.example"}),
            "site": await client.get(f"{opened.base}/form", headers={"Sec-Fetch-Site": "cross-site"}),
            "events": await client.get(f"{opened.base}/api/events"),
            "post": await client.post(f"{opened.base}/api/check", json={}),
        }
        headings = {name: re.search(r"<h1>(.*)</h1>", r.text) for name, r in refused.items()}
        assert {name: r.status_code for name, r in refused.items()} == {
            "host": 421,
            "origin": 403,
            "site": 403,
            "events": 403,
            "post": 403,
        }
        for name, response in refused.items():
            assert response.headers["content-type"].startswith("text/html"), name
            assert '<meta name="referrer" content="no-referrer">' in response.text, name
            assert "<link" not in response.text and "src=" not in response.text, name  # nothing more to ask
            style = re.search(r"<style>(.*)</style>", response.text, re.S)
            assert style is not None, name
            digest = base64.b64encode(hashlib.sha256(style.group(1).encode()).digest()).decode()
            assert f"'sha256-{digest}'" in response.headers["content-security-policy"], name
            assert (
                "<main>" in response.text and "mcp-elicit · a question from an MCP server" in response.text
            ), name
            assert response.headers["referrer-policy"] == "no-referrer", name
            assert headings[name] is not None, name
        assert "127.0.0.1" in refused["host"].text
        assert "another site" in refused["site"].text
        assert not opened.task.done()  # refusals end nothing
