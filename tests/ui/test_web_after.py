"""An ended round's answer server over plain HTTP (httpx, no browser): kept for a page whose
event stream was down at the end, until it asks how the round ended, for a bounded time, and
a bounded number of them; stopped at once when every page heard."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

import httpx
import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.ui import web, web_after, web_round
from mcp_elicit.ui.web import WebAnswerer
from ui.web_rounds import Opened, form_request, open_round, rounds_seen, until_streams

from support.web_answers import SMALL, api, claim

pytestmark = pytest.mark.anyio

_PAGE = "X-MCP-Elicit-Page"
#: The wait of a round these tests let time out once its link is claimed: long enough for
#: the claim on a machine busy with other tests (1 s was not, once), short for the suite.
_SHORT = 3.0


async def _stopped(opened: Opened, seconds: float = 5.0) -> bool:
    """Whether the round's answer server stops listening within ``seconds``."""
    async with httpx.AsyncClient() as client:
        for _ in range(int(seconds / 0.05)):
            try:
                await client.get(f"{opened.base}/favicon.ico")
            except httpx.ConnectError:
                return True
            except (httpx.ReadError, httpx.RemoteProtocolError):
                pass  # a kept-alive connection the stopping server closed: ask again
            await asyncio.sleep(0.05)
    return False


@contextlib.asynccontextmanager
async def _stream(
    client: httpx.AsyncClient, opened: Opened, round_: web_round.Round, page: str = ""
) -> AsyncIterator[AsyncIterator[str]]:
    """The event stream of page ``page`` (none named: as a page that says none), open until
    the block ends (and seen open, then closed, by the answer server): what it says after
    its ``retry``."""
    left = round_.streams
    async with client.stream(
        "GET", f"{opened.base}/api/events", params={"page": page} if page else None
    ) as events:
        said = events.aiter_text()
        await anext(said)  # the server's retry: it counts the stream by now
        yield said
    await until_streams(round_, left)


async def test_a_page_whose_stream_was_down_at_the_end_asks_and_then_the_server_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The answer server stopped with its round, so a page whose stream was down then found
    nobody to ask how it ended; it now answers that page, then stops."""
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        [round_] = rounds
        async with _stream(client, opened, round_):
            pass  # the stream went away, within the grace
        opened.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await opened.task
        check = await client.post(f"{opened.base}/api/check", json={}, headers=api(csrf))
        assert (check.status_code, check.json()) == (409, {"ok": False, "ended": "cancelled"})
        assert await _stopped(opened)


async def test_a_stream_asked_for_after_the_end_is_told_the_end_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)], timeout=_SHORT) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        [round_] = rounds
        async with _stream(client, opened, round_):
            pass
        assert await opened.answers() == [ElicitAnswer.cancel()]
        async with client.stream("GET", f"{opened.base}/api/events") as events:
            text = "".join([chunk async for chunk in events.aiter_text()])
        assert 'event: end\ndata: {"reason": "timeout"}' in text
        assert await _stopped(opened)


async def test_a_round_whose_page_heard_the_end_stops_its_server_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        [round_] = rounds
        async with _stream(client, opened, round_) as events:
            await client.post(f"{opened.base}/api/answer", json={"action": "decline"}, headers=api(csrf))
            assert "event: end" in "".join([chunk async for chunk in events])
        assert await opened.answers() == [ElicitAnswer.decline()]
    with pytest.raises(httpx.ConnectError):  # stopped with its round: nothing waited for
        async with httpx.AsyncClient() as client:
            await client.get(f"{opened.base}/favicon.ico")


async def test_a_page_that_never_asks_is_waited_for_a_bounded_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web_after, "AFTER_SECONDS", 0.3)
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)], grace=0.1) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        [round_] = rounds
        async with _stream(client, opened, round_):
            pass
        assert await opened.answers() == [ElicitAnswer.cancel()]  # the page was closed
        assert await _stopped(opened)


async def test_an_answerer_keeps_a_bounded_number_of_ended_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """One more ended round kept than ``MOST_KEPT`` stops the oldest kept."""
    monkeypatch.setattr(web_after, "MOST_KEPT", 1)
    rounds = rounds_seen(monkeypatch)
    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()
    answerer = WebAnswerer(
        open_url=lambda url: loop.call_soon_threadsafe(links.put_nowait, url) is None,
        announce=lambda _: None,
        grace=0.1,
    )
    ended: list[Opened] = []
    async with httpx.AsyncClient() as client:
        for _ in range(2):
            task = asyncio.ensure_future(answerer.elicit(form_request(SMALL)))
            opened = Opened(await asyncio.wait_for(links.get(), 10), task)  # type: ignore[arg-type]
            await claim(client, opened)
            round_ = rounds[-1]
            async with _stream(client, opened, round_):
                pass
            assert await asyncio.wait_for(task, 5) == ElicitAnswer.cancel()
            ended.append(opened)
            client.cookies.clear()
        first, second = ended
        assert await _stopped(first)
        assert (await client.get(f"{second.base}/favicon.ico")).status_code == 204  # still kept
        csrf_less = await client.post(f"{second.base}/api/check", json={})
        assert csrf_less.status_code == 403  # kept, yet as guarded as before


async def test_a_page_told_twice_is_one_page_told(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two pages of one round (a second tab): the one whose stream was live hears the end on
    it and again as a 409 to a check it had sent; the other, whose stream was down, still
    finds the answer server to ask (a page told twice counted as two let it stop)."""
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        [round_] = rounds
        async with _stream(client, opened, round_, "a1") as events:
            async with _stream(client, opened, round_, "b2"):
                pass  # the second tab's stream went down
            declined = await client.post(
                f"{opened.base}/api/answer", json={"action": "decline"}, headers=api(csrf, **{_PAGE: "a1"})
            )
            assert declined.status_code == 200
            assert "event: end" in "".join([chunk async for chunk in events])
        check = await client.post(f"{opened.base}/api/check", json={}, headers=api(csrf, **{_PAGE: "a1"}))
        assert check.status_code == 409
        assert not await _stopped(opened, seconds=0.5)  # the second tab has not asked
        check = await client.post(f"{opened.base}/api/check", json={}, headers=api(csrf, **{_PAGE: "b2"}))
        assert (check.status_code, check.json()) == (409, {"ok": False, "ended": "decline"})
        assert await _stopped(opened)


async def test_a_page_that_ended_the_round_while_another_was_down_leaves_the_server_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The page that declined has heard (it asked); the other tab's stream was down, so the
    answer server waits for it, though one stream (the decliner's) was still live."""
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        [round_] = rounds
        async with _stream(client, opened, round_, "a1") as events:
            async with _stream(client, opened, round_, "b2"):
                pass
            await client.post(
                f"{opened.base}/api/answer", json={"action": "cancel"}, headers=api(csrf, **{_PAGE: "a1"})
            )
            assert "event: end" in "".join([chunk async for chunk in events])
        assert not await _stopped(opened, seconds=0.5)
        async with client.stream("GET", f"{opened.base}/api/events", params={"page": "b2"}) as late:
            assert 'event: end\ndata: {"reason": "cancel"}' in "".join([c async for c in late.aiter_text()])
        assert await _stopped(opened)


async def test_the_link_opened_again_after_the_end_says_the_question_is_no_longer_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not "already opened; answer in the tab it opened in": there is nothing left to answer."""
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)], timeout=_SHORT) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        [round_] = rounds
        async with _stream(client, opened, round_):
            pass
        assert await opened.answers() == [ElicitAnswer.cancel()]
        again = await client.get(opened.url, headers={"Sec-Fetch-Site": "none"})
        assert again.status_code == 410
        assert "<h1>This question is no longer open</h1>" in again.text
        assert "already opened" not in again.text


async def test_a_page_reloaded_after_the_end_says_how_the_round_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page whose stream was down at the end, reloaded (as a person does when a page
    seems stuck): its new load got "This question is no longer open." whatever happened, and
    the answer server waited its whole time for the old load. The reload now says how the
    round ended, which tells that page."""
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)], timeout=_SHORT) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        [round_] = rounds
        async with _stream(client, opened, round_):
            pass
        assert await opened.answers() == [ElicitAnswer.cancel()]
        reloaded = await client.get(f"{opened.base}/form")
        assert reloaded.status_code == 410
        assert "<p>Nobody answered in time, so it was cancelled.</p>" in reloaded.text, reloaded.text
        assert reloaded.text.count("no longer open") == 2, reloaded.text  # the tab's title and heading only
        assert await _stopped(opened)


#: A program whose event loop ends (``asyncio.run`` returning) while a round waits, its
#: page's stream down: the loop's end cancels the round, which ends then.
_ROOT = Path(__file__).resolve().parents[2]
_LOOP_ENDS = """
import asyncio, gc, httpx
from mcp_elicit.ui.web import WebAnswerer
from support.web_answers import SMALL
from ui.web_rounds import form_request

async def main():
    loop = asyncio.get_running_loop()
    links = asyncio.Queue()
    answerer = WebAnswerer(
        open_url=lambda url: loop.call_soon_threadsafe(links.put_nowait, url) is not None,
        announce=lambda _: None,
    )
    asyncio.ensure_future(answerer.elicit(form_request(SMALL)))
    url = await asyncio.wait_for(links.get(), 10)
    base = url.split("/r/")[0]
    async with httpx.AsyncClient() as client:
        await client.get(url, headers={"Sec-Fetch-Site": "none"})
        async with client.stream("GET", base + "/api/events") as events:
            await anext(events.aiter_text())

asyncio.run(main())
gc.collect()
print("exited")
"""


#: The same, the page's stream still live when the loop ends (read in a task of its own).
_LOOP_ENDS_STREAMING = _LOOP_ENDS.replace(
    """    async with httpx.AsyncClient() as client:
        await client.get(url, headers={"Sec-Fetch-Site": "none"})
        async with client.stream("GET", base + "/api/events") as events:
            await anext(events.aiter_text())
""",
    """    streaming = asyncio.Event()

    async def page():
        async with httpx.AsyncClient() as client:
            await client.get(url, headers={"Sec-Fetch-Site": "none"})
            async with client.stream("GET", base + "/api/events") as events:
                async for _ in events.aiter_text():
                    streaming.set()

    asyncio.ensure_future(page())
    await asyncio.wait_for(streaming.wait(), 10)
""",
)


async def _run_to_its_end(program: str) -> str:
    """What ``program`` (Python, in dev mode) says on stderr; it must print "exited"."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_ROOT), str(_ROOT / "tests")])}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-X",
        "dev",
        "-c",
        program,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert out.decode().rstrip().endswith("exited"), (out, err)
    return err.decode()


async def test_an_event_loop_that_ends_while_a_round_waits_leaves_nothing_behind() -> None:
    """The loop's end cancels every task, then closes: a round it cancelled kept its answer
    server in a task started after that, never cancelled, so the loop closed with it
    pending ("Task was destroyed but it is pending!", its socket left open)."""
    said = await _run_to_its_end(_LOOP_ENDS)
    assert "Task was destroyed" not in said and "Exception ignored" not in said, said
    assert "ResourceWarning" not in said, said


async def test_an_event_loop_that_ends_while_a_page_streams_says_nothing() -> None:
    """A program that simply finishes while the page is open: the loop's end cancels the
    page's event stream too, which the ASGI server reported as a crash ("Exception in
    ASGI application", a CancelledError traceback)."""
    said = await _run_to_its_end(_LOOP_ENDS_STREAMING)
    assert _LOOP_ENDS_STREAMING != _LOOP_ENDS
    assert "Traceback" not in said and "Exception in ASGI" not in said, said
    assert "Task was destroyed" not in said and "Exception ignored" not in said, said
    assert "ResourceWarning" not in said, said


async def test_a_stream_cancelled_in_a_loop_that_goes_on_ends_its_response_and_stays_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cancelled, the event stream ends its response (so the ASGI server has nothing to
    report) but its task still ends cancelled, as uvicorn runs it: the cancellation is not
    swallowed."""
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        (round_,) = rounds
        app = web._App(round_, int(opened.host.rsplit(":", 1)[1]))
        cookie = f"{round_.cookie_name}={round_.cookie}"
        headers = [(b"host", opened.host.encode()), (b"cookie", cookie.encode())]
        scope = {"type": "http", "method": "GET", "path": "/api/events", "query_string": b""}
        sent: list[dict[str, object]] = []
        connected = asyncio.Event()

        async def receive() -> dict[str, object]:
            await connected.wait()  # never set: the page stays
            return {"type": "http.disconnect"}

        async def send(message: dict[str, object]) -> None:
            sent.append(message)

        task = asyncio.ensure_future(app({**scope, "headers": headers}, receive, send))
        await until_streams(round_, 1)
        assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
        task.cancel()
        await asyncio.wait({task}, timeout=5)
        assert task.cancelled(), task
        assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}, sent
        assert round_.streams == 0


@pytest.mark.parametrize(
    ("sent_with", "said"),
    [
        ("", "The answers were sent."),
        ("retry", "The answers were given, and go to the server with the retry of tools/call book_table."),
    ],
)
async def test_a_page_reloaded_after_its_answers_says_how_they_travel(
    monkeypatch: pytest.MonkeyPatch, sent_with: Literal["", "retry"], said: str
) -> None:
    """At 2026-07-28 the answers go with the retried request once the round is answered:
    a page loaded after the end said they "were sent" before that request had gone."""
    rounds = rounds_seen(monkeypatch)
    request = dataclasses.replace(form_request(SMALL), sent_with=sent_with)
    async with open_round([request]) as opened, httpx.AsyncClient() as client:
        csrf = await claim(client, opened)
        [round_] = rounds
        async with _stream(client, opened, round_, "a1") as events:
            async with _stream(client, opened, round_, "b2"):
                pass  # the second tab's stream went down: the server is kept for it
            body = {"action": "accept", "questions": [{"action": "accept", "values": ["3", None]}]}
            sent = await client.post(
                f"{opened.base}/api/answer", json=body, headers=api(csrf, **{_PAGE: "a1"})
            )
            assert sent.status_code == 200
            assert "event: end" in "".join([chunk async for chunk in events])
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]
        reloaded = await client.get(f"{opened.base}/form", headers={_PAGE: "b2"})
        assert reloaded.status_code == 410
        assert f"<p>{said}</p>" in reloaded.text, reloaded.text
