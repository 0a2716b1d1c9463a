"""The client against a scripted server function at revision 2026-07-28: what the server asks of the client.
Sampling and roots go to their callbacks, malformed or undeclared requests are refused, and
forms or answers that do not fit are reported."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from client.fakes import FakeTransport, result
from mcp_elicit.client import Client, ElicitAnswer, Scripted
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import (
    FormValidationError,
    ProtocolViolation,
)

from support.modern_server import Asking, Server, _roots, _sample, ask

pytestmark = pytest.mark.anyio


async def test_sampling_and_roots_go_to_their_callbacks() -> None:
    class Both(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            if "inputResponses" not in params:
                requests = {
                    "llm": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
                    "where": {"method": "roots/list", "params": {}},
                }
                return [result(message, {"resultType": "input_required", "inputRequests": requests})]
            return [result(message, {"content": []})]

    server = Both()
    async with Client(FakeTransport(server), sampling=_sample, roots=_roots) as client:
        await client.call_tool("t")
    answers = server.calls[1]["inputResponses"]
    assert answers["llm"]["model"] == "m"
    assert answers["where"] == {"roots": [{"uri": "file:///work", "name": "work"}]}


async def test_a_malformed_sampling_request_never_reaches_the_callback() -> None:
    """A sampling request whose params are no CreateMessageRequestParams (``messages`` not
    a list, no ``maxTokens``) is the server's violation, named as such before the sampling
    callback sees it: the call failed with whatever the callback raised reading it (a
    TypeError), and a callback that did not check might have sent the garbage to a model."""
    seen: list[Mapping[str, Any]] = []

    async def sampling(params: Mapping[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return await _sample(params)

    class Garbled(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            llm = {"method": "sampling/createMessage", "params": {"messages": "Hello", "maxTokens": 5}}
            return [result(message, {"resultType": "input_required", "inputRequests": {"llm": llm}})]

    server = Garbled()
    async with Client(FakeTransport(server), sampling=sampling) as client:
        with pytest.raises(
            ProtocolViolation, match=r"sampling/createMessage 'llm'.*messages: Input should be a valid list"
        ):
            await client.call_tool("t")
    assert seen == [] and len(server.calls) == 1


@pytest.mark.parametrize(
    "extra",
    [
        {"tools": [{"name": "lookup", "inputSchema": {"type": "object"}}]},
        {"tools": [], "toolChoice": {"mode": "none"}},
        {"toolChoice": {"mode": "auto"}},
    ],
)
async def test_a_tool_enabled_sampling_request_needs_the_sampling_tools_capability(
    extra: dict[str, Any],
) -> None:
    """client/sampling.mdx: a client receives tool-enabled sampling requests (``tools``,
    ``toolChoice``) only when it declares ``sampling.tools``, which this one does not
    (``sampling: {}``). Such a request is the server's violation, before the callback sees
    it: it went to the callback, which knows nothing of tools, and a model might have
    been asked to use tools the client never said it could run."""
    seen: list[Mapping[str, Any]] = []

    async def sampling(params: Mapping[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return await _sample(params)

    class WithTools(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            llm = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5, **extra}}
            return [result(message, {"resultType": "input_required", "inputRequests": {"llm": llm}})]

    server = WithTools()
    async with Client(FakeTransport(server), sampling=sampling) as client:
        assert client.capabilities["sampling"] == {}
        with pytest.raises(
            ProtocolViolation, match=r"sampling/createMessage 'llm'.*no sampling\.tools capability"
        ):
            await client.call_tool("t")
    assert seen == [] and len(server.calls) == 1


@pytest.mark.parametrize(
    ("request_", "modes", "message"),
    [
        (
            {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
            ["form"],
            r"asked for sampling/createMessage \('k' during tools/call t\); this client declares no sampling",
        ),
        (
            {"method": "roots/list", "params": {}},
            ["form"],
            r"asked for roots/list \('k' during tools/call t\); this client declares no roots",
        ),
        (
            {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "m", "url": "https://x.example"},
            },
            ["form"],
            r"\], but this client declared no url-mode elicitation \(elicitation/create in url mode; "
            r"it answers form mode only\)$",
        ),
        (
            ask(),
            [],
            r"\], but this client declared no form-mode elicitation \(elicitation/create in form mode; "
            r"it declares no elicitation capability\)$",
        ),
    ],
)
async def test_asking_for_what_the_client_did_not_declare_is_a_violation_naming_the_method(
    request_: dict[str, Any], modes: list[str], message: str
) -> None:
    """The error said 'declared no url-mode elicitation' (or form-mode, for a client with
    no elicitation capability at all) without naming elicitation/create."""

    class Rude(Server):
        def call(self, message_: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            return [result(message_, {"resultType": "input_required", "inputRequests": {"k": request_}})]

    answerer = Scripted.from_script([{"action": "accept"}], modes=modes)
    async with Client(FakeTransport(Rude()), answerer=answerer) as client:
        with pytest.raises(ProtocolViolation, match=message):
            await client.call_tool("t")


async def test_a_form_the_client_cannot_show_is_reported_and_cancelled() -> None:
    bad = {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}

    class Nested(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            if "inputResponses" not in params:
                return [
                    result(
                        message,
                        {"resultType": "input_required", "inputRequests": {"addr": ask("Where?", bad)}},
                    )
                ]
            return [result(message, {"content": []})]

    server = Nested()
    reports: list[str] = []
    answerer = Scripted.from_script([{"action": "accept"}])
    async with Client(FakeTransport(server), answerer=answerer, report=reports.append) as client:
        await client.call_tool("t")
    assert server.calls[1]["inputResponses"] == {"addr": {"action": "cancel"}}
    assert len(reports) == 1
    assert "cannot show" in reports[0]
    assert "address" in reports[0]
    assert "question 'addr'" in reports[0]
    assert answerer.used == []


async def test_an_answer_that_never_fits_fails_the_request_naming_the_field() -> None:
    class Stubborn:
        modes = frozenset({"form"})

        def __init__(self) -> None:
            self.tries: list[ElicitationRequest] = []

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            self.tries.append(request)
            return ElicitAnswer.accept(confirmed="yes")

        async def url_done(self, request: ElicitationRequest) -> None:
            return None

    stubborn = Stubborn()
    async with Client(FakeTransport(Asking()), answerer=stubborn) as client:
        with pytest.raises(FormValidationError, match="confirmed"):
            await client.call_tool("t")
    assert len(stubborn.tries) == 3
    assert stubborn.tries[0].problems == ()
    assert stubborn.tries[1].problems[0].field == "confirmed"


async def test_a_scripted_answer_that_does_not_fit_is_cancelled_and_reported() -> None:
    server = Asking()
    answerer = Scripted.from_script([{"content": {"confirmed": "yes"}}])
    async with Client(FakeTransport(server), answerer=answerer) as client:
        await client.call_tool("t")
    assert server.calls[1]["inputResponses"] == {"confirm": {"action": "cancel"}}
    assert "does not fit" in answerer.reports[0]
    assert "confirmed" in answerer.reports[0]
