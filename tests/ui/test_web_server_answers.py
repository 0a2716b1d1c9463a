"""The browser answerer's answer server over plain HTTP (httpx, no browser): answers checked
by the form and returned as the terminal would, decline and cancel, rounds that time out or
whose page goes away, the announced link and the browser command, and the command line's
--ui web."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import webbrowser
from pathlib import Path

import httpx
import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.errors import UsageError
from mcp_elicit.forms import Form, MultiChoice
from mcp_elicit.ui import web, web_round
from mcp_elicit.ui.web import WebAnswerer
from ui.web_rounds import Opened, form_request, open_round, url_request

from support.web_answers import SMALL, api, claim

pytestmark = pytest.mark.anyio


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
        check = await client.post(
            f"{opened.base}/api/check",
            json={"questions": [{"action": "accept", "values": [values]}]},
            headers=api(csrf),
        )
        assert check.status_code == 200 and check.json()["ok"] is True
        [[name, shown]] = check.json()["questions"][0]["rows"]
        assert (
            name == "Many"
            and shown.startswith("Option o0, Option o1, ")
            and shown.endswith(", Option o39999")
        )


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
