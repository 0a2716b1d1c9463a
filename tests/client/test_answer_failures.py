"""An answerer (or callback) that fails with its own exception while it answers the
server's question: the caller of ``call_tool`` gets that exception at both revisions.
At 2025-11-25 the server is first told -32603 (every server request is answered), never
the failure's text, which may quote what the person typed; the call is then abandoned.
Before, 2026-07-28 raised the exception while 2025-11-25 only logged it and returned
whatever the server made of the -32603."""

from __future__ import annotations

import asyncio
import gc
import logging
import textwrap
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.recorder import Recorder
from mcp_elicit.client import Client
from mcp_elicit.client.answerers import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import FormValidationError
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.transports.stdio_client import StdioTransport

from support.procs import cli, http_process
from support.waiting import hang_guard

pytestmark = pytest.mark.anyio

TYPED = "forty-two, my name is Ada Lovelace"

SERVER = textwrap.dedent(
    """
    from mcp_elicit import Context, Form, MultiChoice, Server, String

    app = Server("answer-failures")

    @app.tool()
    async def ask(ctx: Context) -> str:
        '''Ask one question.'''
        answer = await ctx.elicit("Your age?", Form(age=String()))
        return answer.action

    @app.tool()
    async def toppings(ctx: Context) -> str:
        '''Ask for toppings.'''
        return (await ctx.elicit("Toppings?", Form(toppings=MultiChoice(["ham", "olives"])))).action

    @app.tool()
    async def ask_on(ctx: Context) -> str:
        '''Ask three questions, the next one even when the last failed.'''
        actions = []
        for n in range(3):
            try:
                actions.append((await ctx.elicit(f"Question {n}?", Form(age=String()))).action)
            except Exception as exc:
                actions.append(type(exc).__name__)
        return " ".join(actions)
    """
)


class Parsing:
    """An answerer whose own parsing of what the person typed fails."""

    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.accept({"age": int(TYPED)})  # ValueError quoting the text

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "failures_server.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


@pytest.fixture
def http_url(server_file: Path, tmp_path: Path) -> Iterator[str]:
    with http_process(server_file, log_dir=tmp_path) as server:
        yield server.url


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_answerers_own_exception_reaches_the_caller(
    revision: str,
    transport: str,
    server_file: Path,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = Recorder()
    if transport == "stdio":
        made: StdioTransport | HttpTransport = StdioTransport(
            [*cli(), "serve", str(server_file)], trace=recorder
        )
    else:
        made = HttpTransport(request.getfixturevalue("http_url"), trace=recorder)
    with caplog.at_level(logging.WARNING, "mcp_elicit"):
        async with Client(made, answerer=Parsing(), versions=[revision], timeout=30) as client:
            async with hang_guard("the call to fail with the answerer's exception"):
                with pytest.raises(ValueError, match="invalid literal for int") as raised:
                    await client.call_tool("ask")
            assert raised.value.__traceback__ is not None
            # the session goes on
            assert [t["name"] for t in await client.list_tools()] == ["ask", "toppings", "ask_on"]
    errors = [m["error"] for m in recorder.sent if "error" in m]
    if revision == "2025-11-25":  # the server's question is answered, without the text
        assert [e["code"] for e in errors] == [-32603]
        assert "failed to answer elicitation/create" in errors[0]["message"]
        (call,) = [m for m in recorder.sent if m.get("method") == "tools/call"]
        cancelled = [m for m in recorder.sent if m.get("method") == "notifications/cancelled"]
        # the call, which nobody waits for any more, is cancelled (unless its response was
        # read first: the server's reply to the -32603 races the cancellation)
        assert [m["params"]["requestId"] for m in cancelled] in ([], [call["id"]])
    else:  # one input request cannot be answered with an error: the call is not retried
        assert errors == []
        assert len([m for m in recorder.sent if m.get("method") == "tools/call"]) == 1
    assert TYPED not in str(recorder.sent)
    assert "never retrieved" not in caplog.text


class Chained:
    """An answerer that fails with ``raised``, chained to the error it met parsing."""

    modes = frozenset({"form"})

    def __init__(self, raised: BaseException) -> None:
        self.raised = raised
        self.asked = 0

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked += 1
        if self.asked != 1:  # the next call is answered
            return ElicitAnswer.accept({"age": "42"})
        try:
            int(TYPED)
        except ValueError as exc:
            raise self.raised from exc  # the answerer's line
        return ElicitAnswer.decline()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("raised", [LookupError("no such person"), KeyboardInterrupt(), SystemExit(3)])
async def test_the_caller_gets_the_answerers_exception_as_it_was_raised(
    revision: str, raised: BaseException, server_file: Path
) -> None:
    """Its cause and traceback are the answerer's (not cut by carrying it to the caller),
    and the next call is answered."""
    answerer = Chained(raised)
    transport = StdioTransport([*cli(), "serve", str(server_file)])
    async with Client(transport, answerer=answerer, versions=[revision], timeout=30) as client:
        async with hang_guard("the call to fail with the answerer's exception"):
            with pytest.raises(type(raised)) as caught:
                await client.call_tool("ask")
        assert caught.value is raised
        assert isinstance(raised.__cause__, ValueError), raised.__cause__
        assert "invalid literal for int" in str(raised.__cause__)
        frames = traceback.extract_tb(raised.__traceback__)
        assert any(f.line == "raise self.raised from exc  # the answerer's line" for f in frames), frames
        async with hang_guard("the next call"):
            result = await client.call_tool("ask")
        assert result["content"][0]["text"] == "accept"


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_a_cancelled_error_the_answerer_raises_itself_reaches_the_caller(
    revision: str, server_file: Path
) -> None:
    """Nobody cancelled its question: the answerer raised ``CancelledError`` of its own (as
    some UI toolkits say a closed window). The caller gets it at both revisions; at
    2025-11-25 the server is told -32603 rather than left waiting for an answer (the call
    hung until its timeout, the question taken as withdrawn)."""
    recorder = Recorder()
    answerer = Chained(asyncio.CancelledError())
    transport = StdioTransport([*cli(), "serve", str(server_file)], trace=recorder)
    async with Client(transport, answerer=answerer, versions=[revision], timeout=30) as client:
        with pytest.raises(asyncio.CancelledError):
            async with hang_guard("the call to end with the answerer's CancelledError"):
                await client.call_tool("ask")
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0  # nobody cancelled the caller
        async with hang_guard("the next call"):
            result = await client.call_tool("ask")
        assert result["content"][0]["text"] == "accept"
    errors = [m["error"]["code"] for m in recorder.sent if "error" in m]
    assert errors == ([-32603] if revision == "2025-11-25" else [])


async def test_a_question_asked_as_the_call_is_abandoned_leaves_no_coroutine_behind(
    server_file: Path,
) -> None:
    """The second answer fails at 2025-11-25; the server, told -32603, asks its third
    question at once, which arrives as the call is abandoned: its answering task is
    cancelled before it starts. The coroutine made for it was never awaited (a
    RuntimeWarning when it was collected); made inside the task, it is never made."""
    answerer = Chained(LookupError("no such person"))
    answerer.asked = -1  # the second question fails
    transport = StdioTransport([*cli(), "serve", str(server_file)])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        async with Client(transport, answerer=answerer, versions=["2025-11-25"], timeout=30) as client:
            for _ in range(3):  # the third question does not always arrive in time
                answerer.asked = -1
                async with hang_guard("the call to fail with the answerer's exception"):
                    with pytest.raises(LookupError):
                        await client.call_tool("ask_on")
                gc.collect()
            answerer.asked = 1
            async with hang_guard("the next call"):
                result = await client.call_tool("ask_on")
            assert result["content"][0]["text"] == "accept accept accept"
        gc.collect()
    assert [str(w.message) for w in seen if "never awaited" in str(w.message)] == []


class FailsWhenWithdrawn:
    """An answerer that fails as its question is withdrawn (its cleanup raising)."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.set()
        try:
            await asyncio.Event().wait()
        finally:
            raise LookupError("the window was already gone")
        return ElicitAnswer.decline()  # pragma: no cover

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_a_call_the_caller_cancelled_ends_cancelled_though_its_answerer_then_fails(
    revision: str, server_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The caller's own cancellation (its timeout) wins over the failure of the answerer it
    withdraws, which is logged: the caller's asyncio.timeout got that LookupError instead
    of its TimeoutError."""
    answerer = FailsWhenWithdrawn()
    transport = StdioTransport([*cli(), "serve", str(server_file)])
    async with Client(transport, answerer=answerer, versions=[revision], timeout=30) as client:
        call = asyncio.ensure_future(client.call_tool("ask"))
        async with hang_guard("the question"):
            await answerer.asked.wait()
        call.cancel()
        with caplog.at_level(logging.ERROR, "mcp_elicit"):
            async with hang_guard("the call to end"):
                with pytest.raises(asyncio.CancelledError):
                    await call
        assert "the window was already gone" in caplog.text


async def test_an_answer_that_never_fits_is_not_quoted_to_the_server(server_file: Path) -> None:
    """After three tries the caller gets the FormValidationError, which quotes the value
    the answer gave; the server's -32603 names the field only (it said the whole error)."""

    class Typing:
        modes = frozenset({"form"})

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            return ElicitAnswer.accept({"toppings": [TYPED]})

        async def url_done(self, request: ElicitationRequest) -> None:
            return None

    recorder = Recorder()
    transport = StdioTransport([*cli(), "serve", str(server_file)], trace=recorder)
    async with Client(transport, answerer=Typing(), versions=["2025-11-25"], timeout=30) as client:
        async with hang_guard("the call to fail with the FormValidationError"):
            with pytest.raises(FormValidationError, match="after 3 tries") as raised:
                await client.call_tool("toppings")
        assert TYPED in str(raised.value)
    (error,) = [m["error"] for m in recorder.sent if "error" in m]
    assert error["code"] == -32603
    assert "toppings" in error["message"]
    assert TYPED not in str(recorder.sent)


async def test_calls_at_once_each_raise_their_own_answerers_exception(
    http_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Over HTTP each call's question comes on its own stream: several calls at once whose
    answers all fail each raise the exception met answering its own question, none
    another's, and the session goes on."""

    class Numbered:
        modes = frozenset({"form"})

        def __init__(self) -> None:
            self.asked = 0

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            self.asked += 1
            raise LookupError(f"answer {self.asked} failed")

        async def url_done(self, request: ElicitationRequest) -> None:
            return None

    answerer = Numbered()
    recorder = Recorder()
    with caplog.at_level(logging.WARNING, "mcp_elicit"):
        async with Client(
            HttpTransport(http_url, trace=recorder), answerer=answerer, versions=["2025-11-25"], timeout=30
        ) as client:
            async with hang_guard("the calls to fail with their answerers' exceptions"):
                ended = await asyncio.gather(
                    *(client.call_tool("ask") for _ in range(4)), return_exceptions=True
                )
            assert all(isinstance(e, LookupError) for e in ended), ended
            assert sorted(str(e) for e in ended) == [f"answer {n} failed" for n in range(1, 5)]
            assert [t["name"] for t in await client.list_tools()] == ["ask", "toppings", "ask_on"]
    assert [m["error"]["code"] for m in recorder.sent if "error" in m] == [-32603] * 4
    assert "answering the server's question failed" not in caplog.text
    assert "never retrieved" not in caplog.text
