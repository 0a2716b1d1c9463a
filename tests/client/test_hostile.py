"""The client against a hostile server process (``hostile_server.py`` over stdio, raw JSON):
what it refuses, how it stops, and that what it sent still fits the revision's schema."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from client.answerers import NeverAnswering
from client.hostile import NAME, SERVER, hostile
from client.recorder import Recorder
from mcp_elicit.client import Client, Scripted
from mcp_elicit.client.answerers import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import (
    InvalidAnswer,
    ProtocolError,
    ProtocolViolation,
    RequestTimeout,
    RoundsExceeded,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.transports.stdio_client import StdioTransport

from support.procs import _stop
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

HTTP_SERVER = Path(__file__).with_name("hostile_http_server.py")


@contextmanager
def hostile_http(shape: str, *when: str) -> Iterator[int]:
    """The hostile Streamable HTTP server (``hostile_http_server.py``) on 127.0.0.1, sending
    the malformed request ``shape`` (``when``: ``"during-initialize"`` to send it on
    ``initialize``'s stream); its port. Stopped on the way out."""
    proc = subprocess.Popen(
        [sys.executable, str(HTTP_SERVER), shape, *when],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        yield int(proc.stdout.readline())
    finally:
        _stop(proc)
        if proc.stdout is not None:
            proc.stdout.close()


def sizes(recorder: Recorder, method: str) -> list[int]:
    return [len(str(m)) for m in recorder.sent if m.get("method") == method]


@pytest.mark.parametrize(
    ("scenario", "error", "match", "calls"),
    [
        ("ask-forever", RoundsExceeded, r"after 10 rounds \(the limit is 10\)", 10),
        ("state-forever", RoundsExceeded, r"6 times in a row with only a requestState.*the limit is 5", 6),
        ("many-requests", ProtocolViolation, r"500 input requests in one round.*at most 32", 1),
        ("unknown-input-method", ProtocolViolation, r"asks for 'tools/call'; a server may only ask for", 1),
        (
            "unknown-result-type",
            ProtocolViolation,
            r"resultType 'partial', which this client does not know",
            1,
        ),
    ],
)
async def test_a_broken_multi_round_trip_server_is_stopped(
    scenario: str, error: type[Exception], match: str, calls: int
) -> None:
    """2026-07-28: each way of never finishing ends with a clear error naming the limit or
    the fault, after a bounded number of requests; the person is asked at most once a round."""
    answerer = Scripted.from_script(NAME)
    started = asyncio.get_running_loop().time()
    async with hostile([scenario], "2026-07-28", answerer) as (client, recorder):
        with pytest.raises(error, match=match):
            await client.call_tool("t")
    assert len(sizes(recorder, "tools/call")) == calls
    assert len(answerer.used) == (calls - 1 if scenario == "ask-forever" else 0)
    if scenario == "state-forever":  # the backoff: 0, 0.1, 0.25, 0.5, 1 s, not a busy loop
        assert asyncio.get_running_loop().time() - started >= 1.85


async def test_input_required_on_a_method_that_cannot_carry_it_is_refused() -> None:
    async with hostile(["input-required-anywhere"], "2026-07-28") as (client, _):
        with pytest.raises(ProtocolViolation, match="tools/list with input_required, which only tools/call"):
            await client.list_tools()
        with pytest.raises(ProtocolViolation, match="completion/complete with input_required"):
            await client.complete({"type": "ref/prompt", "name": "p"}, {"name": "a", "value": ""})


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_responses_to_other_ids_and_a_second_response_are_ignored(revision: str) -> None:
    scenario = "stray-responses" if revision == "2026-07-28" else "legacy-stray-responses"
    async with hostile([scenario], revision) as (client, _):
        first = await client.call_tool("t")
        again = await client.call_tool("t")
    assert first["content"][0]["text"] == again["content"][0]["text"] == '"first"'


async def test_a_huge_request_state_is_refused_not_echoed() -> None:
    async with hostile(["huge-state"], "2026-07-28") as (client, recorder):
        with pytest.raises(ProtocolViolation, match=r"requestState of 8000000 bytes.*at most 1048576"):
            await client.call_tool("t")
    assert len(sizes(recorder, "tools/call")) == 1  # never sent back


async def test_a_request_state_within_the_limit_is_echoed() -> None:
    async with hostile(["huge-state", "100000"], "2026-07-28") as (client, _):
        out = await client.call_tool("t")
    assert out["content"][0]["text"] == "100000"


FORM_WITHOUT_MODE = {
    "method": "elicitation/create",
    "params": {
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


@pytest.mark.parametrize(
    ("first", "retried"),
    [
        pytest.param(  # an empty state is still a state: echoed, not dropped
            {"resultType": "input_required", "requestState": ""}, {"requestState": ""}, id="empty-state"
        ),
        pytest.param(  # exactly the string: escapes, NUL, U+2028, astral, edge spaces
            {"resultType": "input_required", "requestState": ' \u2028\u00e9\U0001d11e"\\\x00 '},
            {"requestState": ' \u2028\u00e9\U0001d11e"\\\x00 '},
            id="odd-state",
        ),
        pytest.param(  # keys as asked, an empty one too; a form without mode is a form
            {
                "resultType": "input_required",
                "inputRequests": {"": FORM_WITHOUT_MODE, "ключ 1": FORM_WITHOUT_MODE},
            },
            {"inputResponses": {k: {"action": "accept", "content": {"name": "Ann"}} for k in ("", "ключ 1")}},
            id="odd-keys",
        ),
    ],
)
async def test_a_retry_echoes_the_state_and_keys_exactly(
    first: dict[str, Any], retried: dict[str, Any]
) -> None:
    """2026-07-28: the retry carries the ``requestState`` as the very string received
    (whatever it holds, empty included) and answers under exactly the keys asked."""
    async with hostile(["first-round", json.dumps(first)], "2026-07-28", Scripted.from_script(NAME * 2)) as (
        client,
        _,
    ):
        out = await client.call_tool("t")
    assert json.loads(out["content"][0]["text"]) == {"name": "t", **retried}


async def test_a_question_of_a_cancelled_request_is_withdrawn_over_stdio() -> None:
    """2025-11-25 over stdio: the server's question arrives outside the request's exchange.
    When the caller cancels the request (Ctrl-C), the server is told
    (notifications/cancelled), the person is no longer asked, and the question is answered
    ``cancel`` (it may not have been the call's: nothing on the wire says so)."""
    answerer = NeverAnswering()
    async with hostile(["legacy-ask"], "2025-11-25", answerer) as (client, recorder):
        call = asyncio.ensure_future(client.call_tool("t"))
        await asyncio.wait_for(answerer.asked.wait(), 5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(answerer.withdrawn.wait(), 5)
    cancels = [m["params"] for m in recorder.sent if m.get("method") == "notifications/cancelled"]
    assert [c["requestId"] for c in cancels] == [2]
    # Nothing on the wire ties the question to the call: the server is told it was dismissed.
    assert [m for m in recorder.sent if m.get("id") == "s-1"] == [
        {"jsonrpc": "2.0", "id": "s-1", "result": {"action": "cancel"}}
    ]


async def test_a_url_elicitation_required_error_with_too_many_urls_asks_nobody() -> None:
    """2025-11-25: a -32042 listing more URLs than a round may ask (RoundLimits.max_requests)
    fails at once, like an inputRequests map that large; no URL is put to the person."""
    answerer = Scripted.from_script([{"mode": "url", "action": "accept"}], modes=["url"])
    async with hostile(["legacy-url-required", "500"], "2025-11-25", answerer) as (client, recorder):
        with pytest.raises(ProtocolViolation, match=r"500 URL-mode elicitations.*at most 32"):
            await client.call_tool("t")
    assert answerer.used == []
    assert len([m for m in recorder.sent if m.get("method") == "tools/call"]) == 1


async def test_a_url_elicitation_required_error_carrying_a_form_asks_nobody() -> None:
    """2025-11-25: -32042 may only carry URL-mode elicitations; one that also carries a form
    is refused whole, before the person is shown any of its URLs."""
    answerer = Scripted.from_script([{"mode": "url", "action": "accept"}], modes=["form", "url"])
    async with hostile(["legacy-url-required", "1", "and-a-form"], "2025-11-25", answerer) as (client, _):
        with pytest.raises(ProtocolViolation, match="-32042 may only carry URL-mode elicitations"):
            await client.call_tool("t")
    assert answerer.used == []


async def test_a_url_elicitation_required_error_without_elicitation_ids_asks_nobody() -> None:
    """2025-11-25: each URL-mode elicitation in -32042 must carry its elicitationId, the
    only name its completion notice can give. Without them the error is refused whole,
    before the person is shown any URL: a client waiting for the notice (a script's
    ``await_completion``) waited for ever, and the URLs shared one name ("url None")."""
    answerer = Scripted.from_script([{"mode": "url", "action": "accept", "await_completion": True}])
    async with hostile(["legacy-url-required", "2", "without-ids"], "2025-11-25", answerer) as (client, _):
        with pytest.raises(
            ProtocolViolation, match="-32042 listing a URL-mode elicitation without an elicitationId"
        ) as refused:
            await asyncio.wait_for(client.call_tool("t"), 10)
    assert answerer.used == []
    assert "('https://example.com/0?REDACTED')" in str(refused.value)  # its one-time code not quoted
    assert "SECRET-CODE" not in str(refused.value)


async def test_a_url_elicitation_required_error_naming_one_id_twice_asks_nobody() -> None:
    """2025-11-25: two URL steps of one -32042 under one elicitationId were both put to the
    person, though one completion notice names both: the first notice finished the two.
    Refused whole, naming the id, as other malformed -32042 data is."""
    answerer = Scripted.from_script([{"mode": "url", "action": "accept"}], modes=["url"])
    async with hostile(["legacy-url-steps", "error:e7,e7"], "2025-11-25", answerer) as (client, recorder):
        with pytest.raises(ProtocolViolation, match=r"-32042 listing elicitationId 'e7' twice"):
            await asyncio.wait_for(client.call_tool("t"), 10)
    assert answerer.used == []
    assert len([m for m in recorder.sent if m.get("method") == "tools/call"]) == 1


@pytest.mark.parametrize("what", ["sampling", "roots", "url"])
async def test_a_round_asking_for_something_undeclared_asks_nobody(what: str) -> None:
    """2026-07-28: a round that also asks for what the client did not declare (sampling or
    roots without a callback, a URL without URL mode) fails whole, before the person is
    asked the round's other questions."""
    answerer = Scripted.from_script(NAME, modes=["form"])
    async with hostile(["undeclared-after-form", what], "2026-07-28", answerer) as (client, recorder):
        with pytest.raises(
            ProtocolViolation, match=r"declares no (sampling|roots) capability|declared no url-mode"
        ):
            await client.call_tool("t")
    assert answerer.used == []
    assert len([m for m in recorder.sent if m.get("method") == "tools/call"]) == 1


async def test_a_failing_sampling_callback_still_answers_the_server() -> None:
    """2025-11-25: when the client's own callback fails (here: no valid CreateMessageResult),
    the server's request still gets an answer, -32603 saying why, rather than none (the
    server's tool would wait for ever); the call raises the failure, as at 2026-07-28."""

    async def sampling(params: Mapping[str, Any]) -> Mapping[str, Any]:
        return {"model": "m"}

    recorder = Recorder()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    transport = StdioTransport([sys.executable, str(SERVER), "legacy-sample"], env=env, trace=recorder)
    async with Client(transport, sampling=sampling, versions=["2025-11-25"], timeout=10) as client:
        with pytest.raises(InvalidAnswer, match="no valid CreateMessageResult"):
            await asyncio.wait_for(client.call_tool("t"), 10)
    (told,) = [m for m in recorder.sent if m.get("id") == "q-0"]
    assert told["error"]["code"] == -32603
    # Why is the caller's to read; the server is told which request failed, nothing the answer said.
    assert told["error"]["message"] == "The client could not produce a valid answer to sampling/createMessage"
    assert recorder.check(WireChecker.load("2025-11-25")) > 0


@pytest.mark.parametrize(
    ("shape", "why"),
    [
        ("params-not-object", '"params" must be an object'),
        ("method-not-string", '"method" must be a non-empty string'),
        ("method-empty", '"method" must be a non-empty string'),
        ("jsonrpc-1.0", '"jsonrpc" must be "2.0"'),
    ],
)
async def test_a_request_that_is_not_json_rpc_is_answered_invalid_request(shape: str, why: str) -> None:
    """A server's request the client cannot read, but whose id it can, is answered -32600
    saying what is wrong (it was logged and dropped, and the server waited for ever, and the
    call with it). The server here makes the call's result the answer it got; nobody is asked."""
    answerer = Scripted.from_script(NAME)
    async with hostile(["legacy-malformed", shape], "2025-11-25", answerer) as (client, recorder):
        out = await asyncio.wait_for(client.call_tool("t"), 10)
    told = json.loads(out["content"][0]["text"])
    assert told["id"] == "q-0" and told["error"]["code"] == -32600
    assert why in told["error"]["message"]
    assert answerer.used == []
    assert [m for m in recorder.sent if m.get("id") == "q-0"] == [told]


@pytest.mark.parametrize("shape", ["params-not-object", "method-not-string", "well-formed"])
async def test_a_request_that_is_not_json_rpc_gets_no_answer_from_a_modern_client(shape: str) -> None:
    """2026-07-28 over stdio: the client writes requests and notifications only, never a
    response (a server of that revision sends no requests at all). A malformed request is
    skipped as a well-formed one (an ``elicitation/create`` on stdout) is, with no -32600
    written back; nobody is asked."""
    answerer = Scripted.from_script(NAME)
    async with hostile(["malformed", shape], "2026-07-28", answerer) as (client, recorder):
        out = await asyncio.wait_for(client.call_tool("t"), 10)
    assert out["content"][0]["text"] == '"done"'
    assert [m for m in recorder.sent if "method" not in m] == []
    assert answerer.used == []


@pytest.mark.parametrize(
    ("shape", "why"),
    [
        ("params-not-object", '"params" must be an object'),
        ("method-not-string", '"method" must be a non-empty string'),
    ],
)
async def test_a_request_that_is_not_json_rpc_is_answered_invalid_request_over_http(
    shape: str, why: str
) -> None:
    """Over Streamable HTTP too: the -32600 is POSTed back as any answer to the server's
    request is, with the session's headers (Mcp-Session-Id, MCP-Protocol-Version)."""
    with hostile_http(shape) as port:
        recorder = Recorder()
        transport = HttpTransport(f"http://127.0.0.1:{port}/mcp", trace=recorder)
        answerer = Scripted.from_script(NAME)
        async with Client(transport, answerer=answerer, versions=["2025-11-25"], timeout=10) as client:
            out = await asyncio.wait_for(client.call_tool("t"), 10)
    got = json.loads(out["content"][0]["text"])
    assert got is not None, "the server's malformed request got no answer"
    assert got["headers"] == {"mcp-session-id": "hostile-1", "mcp-protocol-version": "2025-11-25"}
    told = got["message"]
    assert told["id"] == "q-0" and told["error"]["code"] == -32600
    assert why in told["error"]["message"]
    assert answerer.used == []
    assert recorder.check(WireChecker.load("2025-11-25")) > 0


async def test_a_request_that_is_not_json_rpc_during_initialize_is_answered_in_the_session() -> None:
    """Over Streamable HTTP, a malformed request on ``initialize``'s own event stream (the
    session not yet open on the client's side) is answered -32600 in the session the
    response's headers assign (its ``Mcp-Session-Id`` came with them, before any event): it
    was POSTed without one, which a server routing by session cannot place. No
    ``MCP-Protocol-Version`` goes with it: none is negotiated until the result is read."""
    with hostile_http("params-not-object", "during-initialize") as port:
        recorder = Recorder()
        transport = HttpTransport(f"http://127.0.0.1:{port}/mcp", trace=recorder)
        answerer = Scripted.from_script(NAME)
        async with Client(transport, answerer=answerer, versions=["2025-11-25"], timeout=10) as client:
            out = await asyncio.wait_for(client.call_tool("t"), 10)
    got = json.loads(out["content"][0]["text"])
    assert got is not None, "the server's malformed request got no answer"
    assert got["headers"] == {"mcp-session-id": "hostile-1", "mcp-protocol-version": None}
    told = got["message"]
    assert told["id"] == "q-0" and told["error"]["code"] == -32600
    assert '"params" must be an object' in told["error"]["message"]
    assert answerer.used == []
    assert recorder.check(WireChecker.load("2025-11-25")) > 0


async def test_a_ping_during_initialize_is_answered_in_the_session() -> None:
    """A well-formed request on ``initialize``'s own event stream (a ``ping``, which a server
    may send before the handshake is over) is answered in the session the response's
    headers assign too: it went without ``Mcp-Session-Id``, the client's own copy of the id
    being set only once the ``InitializeResult`` was read."""
    with hostile_http("ping", "during-initialize") as port:
        recorder = Recorder()
        transport = HttpTransport(f"http://127.0.0.1:{port}/mcp", trace=recorder)
        async with Client(transport, versions=["2025-11-25"], timeout=10) as client:
            out = await asyncio.wait_for(client.call_tool("t"), 10)
    got = json.loads(out["content"][0]["text"])
    assert got is not None, "the server's ping got no answer"
    assert got["headers"] == {"mcp-session-id": "hostile-1", "mcp-protocol-version": None}
    assert got["message"] == {"jsonrpc": "2.0", "id": "q-0", "result": {}}
    assert recorder.check(WireChecker.load("2025-11-25")) > 0


async def test_a_question_before_the_session_is_initialized_is_refused_over_stdio() -> None:
    """2025-11-25: a server may send nothing but ``ping`` before ``notifications/initialized``.
    An elicitation it sends while ``initialize`` is still unanswered (when the client does
    not yet know which server it is, or what it agreed to) is refused -32600, saying so,
    and never reaches the person."""
    answerer = Scripted.from_script(NAME)
    async with hostile(["legacy-ask-during-initialize"], "2025-11-25", answerer) as (client, _):
        out = await asyncio.wait_for(client.call_tool("t"), 10)
    told = json.loads(out["content"][0]["text"])
    assert told["id"] == "q-0" and told["error"]["code"] == -32600
    assert "before the session was initialized" in told["error"]["message"]
    assert answerer.used == []


async def test_a_multi_round_trip_call_cancelled_while_the_person_answers_stops() -> None:
    """2026-07-28: Ctrl-C while the person is asked ends the call: the question is taken
    down and no retry is sent."""
    answerer = NeverAnswering()
    async with hostile(["ask-forever"], "2026-07-28", answerer) as (client, recorder):
        call = asyncio.ensure_future(client.call_tool("t"))
        await asyncio.wait_for(answerer.asked.wait(), 5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(answerer.withdrawn.wait(), 5)
        await asyncio.sleep(0.2)
    assert len(sizes(recorder, "tools/call")) == 1
    # the round's request was answered (input_required): nothing is in flight to cancel
    assert [m for m in recorder.sent if m.get("method") == "notifications/cancelled"] == []


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_a_list_that_never_ends_is_stopped(revision: str) -> None:
    """A server whose every page names a next one (never the same cursor twice) is read no
    further than the page limit, and the caller is told why."""
    scenario = "endless-pages" if revision == "2026-07-28" else "legacy-endless-pages"
    async with hostile([scenario], revision) as (client, recorder):
        with pytest.raises(ProtocolViolation, match=r"tools/list.*more than 1000 pages"):
            await asyncio.wait_for(client.list_tools(), 60)
    assert len([m for m in recorder.sent if m.get("method") == "tools/list"]) == 1000


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize(
    ("scenario", "said", "pages"),
    [
        ("looping-pages", r"tools/list never ends: page 2 gives the cursor 'again' again", 2),
        ("number-cursor", r"page 1 of tools/list gives a nextCursor that is not a string: 2", 1),
        ("tools-not-a-list", r"page 2 of tools/list has no tools list: \{'inputSchema'", 2),
    ],
)
async def test_a_list_whose_cursor_repeats_or_is_no_string_is_refused(
    revision: str, scenario: str, said: str, pages: int
) -> None:
    """A server loop (a cursor given again), a cursor of another type or a page without its
    list (its tools left out, as not a list) is an error naming the list and the page, never
    a list cut short as if it were whole."""
    name = scenario if revision == "2026-07-28" else f"legacy-{scenario}"
    async with hostile([name], revision) as (client, recorder):
        with pytest.raises(ProtocolViolation, match=said):
            await asyncio.wait_for(client.list_tools(), 10)
    assert len([m for m in recorder.sent if m.get("method") == "tools/list"]) == pages


async def test_an_error_without_an_id_fails_the_one_request_in_flight_at_once() -> None:
    """JSON-RPC answers a request whose id could not be read with an error whose id is
    null: with one request in flight, it is that request's (it waited out its timeout)."""
    async with hostile(["null-id-error"], "2026-07-28") as (client, _):
        with pytest.raises(ProtocolError, match="Parse error: a test") as caught:
            await asyncio.wait_for(client.call_tool("t"), 5)
    assert caught.value.to_error()["code"] == -32700


async def test_a_protocol_version_nested_too_deeply_to_quote_is_refused_as_unsupported() -> None:
    # 1000 levels (a JSON reader takes 1024): quoting it with repr raised RecursionError
    transport = StdioTransport([sys.executable, str(SERVER), "legacy-deep-version"])
    with pytest.raises(
        UnsupportedProtocolVersion, match=r"protocol version \[\[\[\[\.\.\.\]\]\]\] in initialize"
    ):
        async with Client(transport, versions=["2025-11-25"], timeout=10):
            pass


async def test_a_server_that_exits_while_the_person_answers_withdraws_the_question() -> None:
    """2026-07-28 over stdio: the server process ends after asking (input_required). No
    request is in flight while the person answers, yet the server cannot take the answer
    any more: the question is withdrawn and the call fails saying the process exited,
    rather than waiting for an answer that can only fail."""
    answerer = NeverAnswering()
    async with hostile(["ask-then-exit"], "2026-07-28", answerer) as (client, _):
        with pytest.raises(TransportError, match=r"exited with code 3"):
            await asyncio.wait_for(client.call_tool("t"), 20)
        assert answerer.withdrawn.is_set()


async def test_a_script_waiting_for_a_completion_that_never_comes_fails_in_time() -> None:
    """2025-11-25: a script that waits for the server to say the URL step is complete
    (``await_completion``) against a server that never says so fails with RequestTimeout
    after ``Scripted.completion_timeout``, naming the step: it waited for ever (a job in
    CI hung), since time an answerer spends never counts against the request timeout."""
    answerer = Scripted.from_script([{"mode": "url", "action": "accept", "await_completion": True}])
    answerer.completion_timeout = 0.5
    async with hostile(["legacy-url-required", "1"], "2025-11-25", answerer) as (client, _):
        with pytest.raises(RequestTimeout, match=r"said the URL step 'e0'.*complete.*0.5 s"):
            await asyncio.wait_for(client.call_tool("t"), 30)


class GivingUp:
    """An answerer whose own wait is cancelled (its prompt stopped, as on Ctrl-C in a
    prompt library): ``elicit`` raises ``CancelledError`` though no one cancelled the call."""

    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        raise asyncio.CancelledError

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def test_an_answerer_that_cancels_its_question_stops_the_call() -> None:
    """2026-07-28 over stdio: the answerer cancelling mid-round stops the call as cancelled,
    sending no retry (the server, still running, is not taken for gone). The call failed with asyncio's
    InvalidStateError ('Result is not set'): the cancelled answer was taken for the server
    gone, whose reason was then read before it existed."""
    async with hostile(["ask-forever"], "2026-07-28", GivingUp()) as (client, recorder):
        call = asyncio.ensure_future(client.call_tool("t"))
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(call, 10)
        assert call.cancelled()
    assert len(sizes(recorder, "tools/call")) == 1
