"""The browser answerer's answer server over plain HTTP (httpx, no browser): who it
refuses, the single-use link, the headers, the page as HTML, and answers checked by the
form's own rules."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import re
import sys
import time
import webbrowser
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.errors import FormValidationError, UsageError
from mcp_elicit.forms import Boolean, Form, Integer, MultiChoice, String
from mcp_elicit.ui import web, web_round
from mcp_elicit.ui.web import WebAnswerer
from mcp_elicit.ui.web_pages import check_form, page
from ui.web_rounds import DEFAULTS, EVERY_KIND, LEGACY, SERVER, Opened, form_request, open_round, url_request

pytestmark = pytest.mark.anyio


async def claim(client: httpx.AsyncClient, opened: Opened) -> str:
    """Open the link as a browser would; the page's CSRF token."""
    first = await client.get(opened.url, headers={"Sec-Fetch-Site": "none"})
    assert first.status_code == 303
    assert first.headers["location"] == "/form"
    assert "httponly" in first.headers["set-cookie"].lower()
    assert "samesite=strict" in first.headers["set-cookie"].lower()
    form = await client.get(f"{opened.base}/form")
    assert form.status_code == 200
    found = re.search(r'data-csrf="([^"]+)"', form.text)
    assert found is not None
    return found.group(1)


def api(csrf: str, **headers: str) -> dict[str, str]:
    return {"X-MCP-Elicit-CSRF": csrf, "Content-Type": "application/json", **headers}


SMALL = Form(guests=Integer(title="Guests", minimum=1, maximum=20), note=String(required=False))


# ---- refusals ---------------------------------------------------------------------------


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
    page (a screen reader may land on it before the step), the server's text made inert."""
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
    assert re.search(r"<h1>Opening the question from .*bookings.*</h1>", main.group(1)), stop
    assert '<a href="/form">Continue to the question</a>' in main.group(1)


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
            assert response.headers["cache-control"] == "no-store"
        assert (await client.get(f"{opened.base}/api/nothing")).status_code == 404
        assert not opened.task.done()


async def test_every_response_carries_the_security_headers() -> None:
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        responses = [
            await client.get(opened.url),
            await client.get(f"{opened.base}/form"),
            await client.get(f"{opened.base}/static/app.js"),
            await client.get(f"{opened.base}/nothing"),
            await client.get(opened.url, headers={"Host": "evil.example"}),
        ]
        for response in responses:
            csp = response.headers["content-security-policy"]
            assert "default-src 'none'" in csp
            assert "script-src 'self'" in csp
            assert "frame-ancestors 'none'" in csp
            assert response.headers["x-frame-options"] == "DENY"
            assert response.headers["cache-control"] == "no-store"
            assert response.headers["referrer-policy"] == "no-referrer"
        assert responses[2].headers["content-type"].startswith("text/javascript")
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


# ---- answering over HTTP ----------------------------------------------------------------


async def test_answers_are_checked_by_the_form_and_returned_as_the_terminal_would() -> None:
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        check = await client.post(
            f"{opened.base}/api/check",
            json={"questions": [{"action": "accept", "values": ["25", "  "]}]},
            headers=api(csrf),
        )
        assert check.json() == {
            "ok": False,
            "questions": [{"problems": {"0": "Guests must be at most 20"}, "form": None, "rows": []}],
        }
        sent = await client.post(
            f"{opened.base}/api/answer",
            json={"action": "accept", "questions": [{"action": "accept", "values": ["2.5", None]}]},
            headers=api(csrf),
        )
        assert sent.status_code == 422
        assert sent.json()["questions"][0]["problems"] == {"0": "Guests must be a whole number"}
        assert not opened.task.done()
        sent = await client.post(
            f"{opened.base}/api/answer",
            json={
                "action": "accept",
                "questions": [{"action": "accept", "values": [" 4 ", "by the window"]}],
            },
            headers=api(csrf),
        )
        assert sent.json() == {"ok": True}
        assert await opened.answers() == [ElicitAnswer.accept(guests=4, note="by the window")]
    with pytest.raises(httpx.ConnectError):  # the server is gone with its round
        async with httpx.AsyncClient() as client:
            await client.get(opened.url)


async def test_a_multi_choice_of_many_options_all_ticked_is_checked_at_once() -> None:
    """A server may offer tens of thousands of options, and the page checks the answer as
    the person types: every option ticked is reviewed in time linear in the options, not
    quadratic (which held the answer server, and the client's whole event loop, for
    many seconds on every keystroke)."""
    values = [f"o{n}" for n in range(40_000)]
    form = Form(many=MultiChoice({v: f"Option {v}" for v in values}, title="Many"))
    async with open_round([form_request(form)]) as opened, httpx.AsyncClient(timeout=120) as client:
        csrf = await claim(client, opened)
        started = time.monotonic()
        check = await client.post(
            f"{opened.base}/api/check",
            json={"questions": [{"action": "accept", "values": [values]}]},
            headers=api(csrf),
        )
        took = time.monotonic() - started
        assert check.status_code == 200 and check.json()["ok"] is True
        [[name, shown]] = check.json()["questions"][0]["rows"]
        assert (
            name == "Many"
            and shown.startswith("Option o0, Option o1, ")
            and shown.endswith(", Option o39999")
        )
        assert took < 5, f"checking took {took:.1f} s"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_answer_every_question(action: str) -> None:
    requests = [form_request(SMALL), form_request(SMALL, key="again"), url_request("https://example.com/")]
    async with open_round(requests) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        await client.post(f"{opened.base}/api/answer", json={"action": action}, headers=api(csrf))
        assert await opened.answers() == [ElicitAnswer(action)] * 3  # type: ignore[arg-type]


async def test_a_round_that_times_out_is_cancelled() -> None:
    async with open_round([form_request(SMALL)], timeout=0.3) as opened:
        assert await opened.answers() == [ElicitAnswer.cancel()]
        assert any("no answer within 0.3 s" in line for line in opened.said)


async def test_a_page_whose_event_stream_goes_away_is_cancelled_after_the_grace() -> None:
    async with open_round([form_request(SMALL)], grace=0.3) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        async with client.stream("GET", f"{opened.base}/api/events") as events:
            assert events.headers["content-type"].startswith("text/event-stream")
            await asyncio.sleep(0.5)  # connected: no cancel, however long
            assert not opened.task.done()
        assert await opened.answers(2) == [ElicitAnswer.cancel()]
        assert any("the page was closed" in line for line in opened.said)


async def test_a_page_opened_whose_event_stream_never_comes_is_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(web_round, "FIRST_STREAM_SECONDS", 0.2)
    async with open_round([form_request(SMALL)], grace=0.1) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        assert await opened.answers(2) == [ElicitAnswer.cancel()]


async def test_the_event_stream_says_how_the_round_ended() -> None:
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        async with client.stream("GET", f"{opened.base}/api/events") as events:
            await client.post(f"{opened.base}/api/answer", json={"action": "decline"}, headers=api(csrf))
            text = ""
            async for chunk in events.aiter_text():
                text += chunk
        assert 'event: end\ndata: {"reason": "decline"}' in text
        assert await opened.answers() == [ElicitAnswer.decline()]


async def test_the_link_is_announced_and_a_missing_browser_is_said() -> None:
    said: list[str] = []
    answerer = WebAnswerer(open_url=lambda url: False, announce=said.append, timeout=0.2)
    assert await answerer.elicit(form_request(SMALL)) == ElicitAnswer.cancel()
    assert said[0].startswith("mcp-elicit: Table bookings asks; answer in your browser: http://127.0.0.1:")
    assert "open the address above yourself" in said[1]


@pytest.mark.parametrize("answered", [True, False], ids=["answered", "timed-out"])
async def test_a_browser_command_that_runs_until_the_browser_exits_holds_nothing_up(
    tmp_path: Path, answered: bool
) -> None:
    """``webbrowser`` runs a ``$BROWSER`` command it does not know (a script, say) and waits
    for it to exit: the answer (or the timeout) must not wait for the person to quit the
    browser. Here the "browser" is a real process that runs until the test ends."""
    stop = tmp_path / "stop"
    wait = "import os, sys, time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.05)"
    browser = webbrowser.GenericBrowser([sys.executable, "-c", wait, str(stop), "%s"])
    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()

    def opener(url: str) -> bool:
        loop.call_soon_threadsafe(links.put_nowait, url)
        return browser.open(url)

    answerer = WebAnswerer(open_url=opener, announce=lambda _: None, timeout=10 if answered else 0.5)
    task = asyncio.ensure_future(answerer.elicit(form_request(SMALL)))
    try:
        opened = Opened(await asyncio.wait_for(links.get(), 10), asyncio.ensure_future(asyncio.sleep(0)))
        if answered:
            async with httpx.AsyncClient() as client:
                csrf = await claim(client, opened)
                sent = await client.post(
                    f"{opened.base}/api/answer",
                    json={"action": "accept", "questions": [{"action": "accept", "values": ["3", None]}]},
                    headers=api(csrf),
                )
                assert sent.status_code == 200
        expected = ElicitAnswer.accept(guests=3) if answered else ElicitAnswer.cancel()
        assert await asyncio.wait_for(asyncio.shield(task), 3) == expected
    finally:
        stop.touch()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def test_unknown_modes_are_refused() -> None:
    with pytest.raises(UsageError, match="unknown elicitation modes"):
        WebAnswerer(modes=["form", "voice"])


# ---- the page as HTML, and the one source of truth --------------------------------------


def test_server_text_is_escaped_and_made_inert() -> None:
    hostile = Form(
        x=String(title='<img src=x onerror="alert(1)">', description="a\u202eb <script>alert(2)</script>")
    )
    request = form_request(hostile, message="</p><script>alert(3)</script>\x1b[31m red")
    html = page([request], csrf="c")
    assert "<script>alert" not in html
    assert "<img" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "\u202e" not in html and "&lt;U+202E&gt;" in html
    assert "\x1b" not in html and "\\x1b[31m" in html
    assert '<script src="/static/app.js" defer></script>' in html
    assert html.count("<script") == 1  # nothing inline


async def test_text_no_page_can_carry_is_shown_made_inert() -> None:
    # JSON can say "\u0000", which no page may carry.
    schema = json.loads(
        '{"type": "object", "properties": {"c": {"type": "string", "enum": ["a", "b\\u0000"]}}}'
    )
    async with open_round([form_request(schema)]) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        shown = await client.get(f"{opened.base}/form")
        assert shown.status_code == 200
        assert 'value="a"' in shown.text and 'value="b\\x00"' in shown.text and "\x00" not in shown.text


def test_a_form_with_text_no_message_can_carry_never_reaches_a_page() -> None:
    # JSON can say "\ud800" (a lone surrogate, which UTF-8 cannot encode): the form is
    # refused as it is read (the connection declines it), naming the character.
    schema = json.loads('{"type": "object", "properties": {"c": {"type": "string", "enum": ["a\\ud800"]}}}')
    request = form_request(schema)
    assert request.schema is None and request.schema_problem is not None
    assert "U+D800" in request.schema_problem


async def test_a_url_no_page_can_carry_is_refused_not_a_server_error() -> None:
    async with (
        open_round([url_request("https://example.com/\ud800")]) as opened,
        httpx.AsyncClient() as client,
    ):
        await claim(client, opened)
        shown = await client.get(f"{opened.base}/form")
        assert shown.status_code == 200
        assert "This address will not be opened." in shown.text and "U+D800" in shown.text


def test_only_an_optional_boolean_without_a_default_is_three_way() -> None:
    form = Form(
        a=Boolean(title="A"), b=Boolean(title="B", required=False), c=Boolean(title="C", default=False)
    )
    html = page([form_request(form)], csrf="c")
    assert html.count('type="checkbox"') == 2  # required, or defaulted: an answer either way
    assert html.count('type="radio"') == 3 and 'value="true"' in html and 'value="false"' in html
    assert check_form(form, [True, None, False]).content == {"a": True, "c": False}
    assert check_form(form, [False, False, True]).content == {"a": False, "b": False, "c": True}


def test_the_page_speaks_of_required_marks_only_when_it_shows_one() -> None:
    # A required yes-or-no is a checkbox, always an answer, without a mark.
    marks = Form(a=Boolean(title="A"), b=String(title="B", required=False))
    html = page([form_request(marks)], csrf="c")
    assert 'class="req"' not in html and "are required" not in html
    html = page([form_request(Form(a=Boolean(title="A"), b=String(title="B")))], csrf="c")
    assert html.count('class="req"') == 2 and "are required" in html  # the note's own star, and B's


def test_the_page_has_a_labelled_native_control_for_every_variant() -> None:
    html = page(
        [form_request(), form_request(LEGACY, key="legacy"), form_request(DEFAULTS, key="defaults")], csrf="c"
    )
    assert 'type="email"' in html and 'type="url"' in html and 'type="date"' in html
    assert 'type="datetime-local"' in html
    assert 'type="number"' in html and 'min="1"' in html and 'max="20"' in html and 'step="1"' in html
    assert 'step="any"' in html
    assert 'role="radiogroup"' in html and "<select" in html and 'role="group"' in html
    assert ">Medium</label>" in html  # enumNames
    assert 'value="2"' in html and 'value="window seat"' in html  # defaults
    assert 'data-rfc3339="2026-12-24T18:30:00Z"' in html
    assert 'value="out" checked' in html and 'value="c" selected' in html and 'value="vegan" checked' in html
    for control in re.findall(
        r'<input type="(?:text|email|url|date|datetime-local|number)" id="([^"]+)"', html
    ):
        assert f'<label for="{control}">' in html
    assert html.count('aria-describedby="') >= len(EVERY_KIND.fields)


@pytest.mark.parametrize(
    ("values", "problems"),
    [
        (
            [
                "Al",
                "al@example.com",
                None,
                "2026-12-24",
                "2026-12-24T18:30:00+01:00",
                "2",
                None,
                True,
                "mains",
                "in",
                "t2",
                [],
                ["wine"],
            ],
            {},
        ),
        (
            ["A", "nope", "x", "24/12", "?", "0", "1000", "yes", "soup", None, None, ["vegan", "vegan"], []],
            None,
        ),
    ],
    ids=["fine", "everything-wrong"],
)
def test_check_form_says_what_validate_says(values: list[Any], problems: dict[int, str] | None) -> None:
    checked = check_form(EVERY_KIND, values)
    if problems is not None:
        assert checked.problems == problems
        EVERY_KIND.validate(EVERY_KIND.apply_defaults(checked.content))
        return
    # Every field is wrong, and each message is the form's own with the field's label in front.
    assert set(checked.problems) == set(range(len(EVERY_KIND.fields)))
    for index, message in checked.problems.items():
        spec = EVERY_KIND.fields[index]
        assert message.startswith((spec.title or spec.name) + " ")
    with pytest.raises(FormValidationError) as raised:
        EVERY_KIND.validate(EVERY_KIND.apply_defaults(checked.content))
    told = {p.field: p.message for p in raised.value.problems}
    for index, message in checked.problems.items():
        assert message.endswith(" " + told[EVERY_KIND.fields[index].name])


def test_text_is_read_as_typed_as_in_the_terminal() -> None:
    form = Form(note=String(title="Note"), size=Integer(required=False))
    assert check_form(form, ["  by the window ", " 4 "]).content == {"note": "  by the window ", "size": 4}
    assert check_form(form, ["   ", None]).problems == {0: "Note is required"}
    # JSON from the page can say "\ud800"; the client could not send it back.
    assert check_form(form, ["x\ud800", None]).problems == {
        0: "Note has a character that is not text (<U+D800>); type it again"
    }


def test_the_command_line_offers_ui_web_but_not_with_a_script(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from mcp_elicit.cli.main import main

    script = tmp_path / "answers.json"
    script.write_text("[]")
    code = main(["call", "book_table", "--ui", "web", "--answers", str(script), "--", "true"])
    assert code == 2
    assert "give --answers or --ui web, not both" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["call", "--help"])
    assert "{auto,terminal,web,none}" in capsys.readouterr().out


async def test_an_answer_whose_body_stalls_is_408_and_a_later_one_is_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A POST that sends its headers and part of its body, then nothing, is answered 408
    once the answer server's body time is up (30 s; here 0.3 s) and its connection is
    closed; the round stays open for the answer sent again."""
    monkeypatch.setattr(web, "_BODY_TIMEOUT", 0.3)
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        body = json.dumps({"action": "accept", "questions": [{"action": "accept", "values": ["3", None]}]})
        cookies = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
        head = (
            f"POST /api/answer HTTP/1.1\r\nHost: {opened.host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nX-MCP-Elicit-CSRF: {csrf}\r\nCookie: {cookies}\r\n\r\n"
        )
        host, port = opened.host.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            writer.write(head.encode() + body[:10].encode())
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 10)  # up to the server's close
        finally:
            writer.close()
            await writer.wait_closed()
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b"connection: close" in answer.lower()
        assert answer.endswith(b"\r\n\r\nToo slow: the answer did not arrive within 0.3 s. Send it again.\n")
        assert not opened.task.done()
        ok = await client.post(f"{opened.base}/api/answer", content=body, headers=api(csrf))
        assert ok.status_code == 200, ok.text
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]


async def test_marks_stacked_on_a_letter_are_shown_not_piled_over_the_page() -> None:
    # Hundreds of combining marks on one letter paint far above and below its line, over
    # the address and its site; past a few (no script stacks more), each is shown by code.
    zalgo = "a" + "\u0363\u0364" * 200
    request = url_request("https://evil.example/pay", message=f"Pay {zalgo} here")
    async with open_round([request]) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        shown = (await client.get(f"{opened.base}/form")).text
    assert re.search("[\u0300-\u036f]{6}", shown) is None
    assert "a\u0363\u0364\u0363\u0364\u0363&lt;U+0364&gt;&lt;U+0363&gt;" in shown


def test_an_integer_field_with_fractional_bounds_takes_whole_numbers_in_the_browser() -> None:
    # min="0.5" with step="1" made the browser take 0.5, 1.5... and refuse 1, 2 and 3.
    html = page([form_request(Form(n=Integer(minimum=0.5, maximum=3.7)))], csrf="c")
    assert 'min="1"' in html and 'max="3"' in html and 'step="1"' in html
