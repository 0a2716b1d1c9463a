"""The client against a scripted server function at a handshake revision (2025-11-25): URL elicitation required (-32042): the URL
shown, the retry when the user is done or the completion notice arrives, refusals, and
notices that overtake or repeat."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from client.fakes import FakeTransport, error, result
from mcp_elicit.client import Client, ElicitAnswer, Scripted
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import URLElicitationRequired

from support.handshake import URL_ELICITATION, V2025, init

pytestmark = pytest.mark.anyio


class Connector:
    """A server whose tool needs a URL step first (-32042), then works."""

    def __init__(self) -> None:
        self.done = False
        self.calls = 0

    def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        self.calls += 1
        if not self.done:
            return [error(message, -32042, "Authorization required", {"elicitations": [URL_ELICITATION]})]
        return [result(message, {"content": [{"type": "text", "text": "connected"}]})]


class UrlUser:
    modes = frozenset({"form", "url"})

    def __init__(self, server: Connector, action: str = "accept", *, says_done: bool = True) -> None:
        self.server = server
        self.action = action
        self.says_done = says_done
        self.shown: list[ElicitationRequest] = []
        self.asked = asyncio.Event()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.shown.append(request)
        self.asked.set()
        return ElicitAnswer(self.action)  # type: ignore[arg-type]

    async def url_done(self, request: ElicitationRequest) -> None:
        if not self.says_done:
            await asyncio.Event().wait()
        self.server.done = True


async def test_url_required_shows_the_url_then_retries_when_the_user_is_done() -> None:
    server = Connector()
    user = UrlUser(server)
    async with Client(FakeTransport(server), versions=V2025, answerer=user) as client:
        out = await client.call_tool("connect")
    assert out["content"][0]["text"] == "connected"
    assert server.calls == 2
    (shown,) = user.shown
    assert (shown.mode, shown.url, shown.elicitation_id) == ("url", URL_ELICITATION["url"], "e-1")
    assert shown.origin.target == "connect"


async def test_url_required_retries_when_the_completion_notice_arrives() -> None:
    server = Connector()
    user = UrlUser(server, says_done=False)
    transport = FakeTransport(server, http=False)
    async with Client(transport, versions=V2025, answerer=user) as client:
        task = asyncio.ensure_future(client.call_tool("connect"))
        await asyncio.wait_for(user.asked.wait(), 2)
        await transport.push(
            {
                "jsonrpc": "2.0",
                "method": "notifications/elicitation/complete",
                "params": {"elicitationId": "other"},
            }
        )
        await asyncio.sleep(0.05)
        assert not task.done()
        server.done = True
        await transport.push(
            {
                "jsonrpc": "2.0",
                "method": "notifications/elicitation/complete",
                "params": {"elicitationId": "e-1"},
            }
        )
        out = await asyncio.wait_for(task, 2)
    assert out["content"][0]["text"] == "connected"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_refused_url_ends_the_request_with_the_error(action: str) -> None:
    server = Connector()
    async with Client(FakeTransport(server), versions=V2025, answerer=UrlUser(server, action)) as client:
        with pytest.raises(URLElicitationRequired, match=f"the user answered {action}"):
            await client.call_tool("connect")
    assert server.calls == 1


async def test_without_url_mode_the_error_is_raised_as_is() -> None:
    server = Connector()
    answerer = Scripted.from_script([], modes=["form"])
    async with Client(FakeTransport(server), versions=V2025, answerer=answerer) as client:
        with pytest.raises(URLElicitationRequired) as caught:
            await client.call_tool("connect")
    assert caught.value.data["elicitations"][0]["elicitationId"] == "e-1"


async def test_a_completion_notice_that_overtakes_the_error_is_kept() -> None:
    """The step was finished so fast that the server's notice came before its -32042 (on
    the same stream here; on the event stream it can overtake it too): the retry goes
    out at once, without waiting for the person to say they are done."""

    class Fast(Connector):
        def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
            out = super().__call__(message, headers)
            if self.calls == 1:
                self.done = True
                notice = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete"}
                return [{**notice, "params": {"elicitationId": "e-1"}}, *out]
            return out

    server = Fast()
    user = UrlUser(server, says_done=False)
    async with Client(FakeTransport(server), versions=V2025, answerer=user) as client:
        out = await asyncio.wait_for(client.call_tool("connect"), 5)
    assert out["content"][0]["text"] == "connected"
    assert server.calls == 2 and len(user.shown) == 1


async def test_a_late_duplicate_notice_does_not_finish_the_next_step_of_the_same_id() -> None:
    """A server may use one elicitationId for every request that needs the same step
    ("github", say), and a notice can come twice (from two instances, or after a retry).
    One that comes after its step is over is not kept for the next step of that id: the
    next -32042 waits for the person again, rather than being taken as finished at once
    (a needless retry, and the URL shown twice)."""
    server = Connector()
    user = UrlUser(server, says_done=False)
    transport = FakeTransport(server, http=False)
    notice = {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "e-1"},
    }
    async with Client(transport, versions=V2025, answerer=user) as client:
        first = asyncio.ensure_future(client.call_tool("connect"))
        await asyncio.wait_for(user.asked.wait(), 2)
        server.done = True
        await transport.push(notice)
        assert (await asyncio.wait_for(first, 2))["content"][0]["text"] == "connected"
        await transport.push(notice)  # the same notice again, late
        await asyncio.sleep(0.05)
        server.done, user.asked = False, asyncio.Event()  # the step is needed again
        second = asyncio.ensure_future(client.call_tool("connect"))
        await asyncio.wait_for(user.asked.wait(), 2)
        await asyncio.sleep(0.1)
        assert not second.done()
        assert (server.calls, len(user.shown)) == (3, 2)
        second.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await second


async def test_a_notice_that_came_first_is_not_kept_past_the_reply_it_came_before() -> None:
    """A notice that came before a reply needing no URL step (the server had the step
    done already) is kept only while that reply is handled: a later call that needs the
    step of that id again waits for the person, not finished by that old notice."""

    class DoneAlready(Connector):
        def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
            out = super().__call__(message, headers)
            if self.calls == 1:
                notice = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete"}
                return [{**notice, "params": {"elicitationId": "e-1"}}, *out]
            return out

    class Waits(UrlUser):
        """Says when the client first waits for the person: the call, and URLs shown by then."""

        def __init__(self, server: Connector) -> None:
            super().__init__(server, says_done=False)
            self.waiting = asyncio.Event()
            self.waited: tuple[int, int] | None = None

        async def url_done(self, request: ElicitationRequest) -> None:
            if self.waited is None:
                self.waited = (self.server.calls, len(self.shown))
            self.waiting.set()
            await super().url_done(request)

    server = DoneAlready()
    server.done = True
    user = Waits(server)
    async with Client(FakeTransport(server, http=False), versions=V2025, answerer=user) as client:
        assert (await asyncio.wait_for(client.call_tool("connect"), 5))["content"][0]["text"] == "connected"
        server.done = False  # the step is needed again
        second = asyncio.ensure_future(client.call_tool("connect"))
        await asyncio.wait_for(user.waiting.wait(), 10)
        assert user.waited == (2, 1)  # at the first -32042 of the second call
        second.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await second


async def test_a_notice_for_a_later_url_of_the_error_while_the_first_is_shown_is_kept() -> None:
    """A -32042 listing two steps: while the person is shown the first, the server says the
    second is complete (finished elsewhere). The second is then shown, and the client does
    not wait for the person to say it is done: the server said so already."""
    second = {**URL_ELICITATION, "url": "https://example.com/connect?e=e-2", "elicitationId": "e-2"}

    class TwoSteps(Connector):
        def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
            if message["method"] == "initialize" or self.done:
                return super().__call__(message, headers)
            self.calls += 1
            urls = {"elicitations": [URL_ELICITATION, second]}
            return [error(message, -32042, "Authorization required", urls)]

    class FirstByHand(UrlUser):
        """Is told on the first page that the second is finished; says done for the first only."""

        def __init__(self, server: Connector, transport: FakeTransport) -> None:
            super().__init__(server, says_done=False)
            self.transport = transport

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            if request.elicitation_id == "e-1":
                notice = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete"}
                await self.transport.push({**notice, "params": {"elicitationId": "e-2"}})
            return await super().elicit(request)

        async def url_done(self, request: ElicitationRequest) -> None:
            if request.elicitation_id == "e-1":
                self.server.done = True
                return
            await super().url_done(request)  # never: nobody says the second is done

    server = TwoSteps()
    transport = FakeTransport(server, http=False)
    user = FirstByHand(server, transport)
    async with Client(transport, versions=V2025, answerer=user) as client:
        out = await asyncio.wait_for(client.call_tool("connect"), 10)
    assert out["content"][0]["text"] == "connected"
    assert [r.elicitation_id for r in user.shown] == ["e-1", "e-2"]
