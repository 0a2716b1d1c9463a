"""The client against a scripted server function: era detection and revision 2026-07-28
(per-request ``_meta``, headers, the multi round-trip loop, limits, timeouts)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from client.fakes import META_VERSION, FakeTransport, discover, error, result
from mcp_elicit.client import Client, ElicitAnswer, NoAnswerer, RoundLimits, Scripted
from mcp_elicit.client.transport import Ended
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import (
    ConfigError,
    FormValidationError,
    InvalidParams,
    ProtocolViolation,
    RequestTimeout,
    RoundsExceeded,
    TransportError,
    UnsupportedProtocolVersion,
)

from support.wire import WireChecker

pytestmark = pytest.mark.anyio

FORM = {"type": "object", "properties": {"confirmed": {"type": "boolean"}}, "required": ["confirmed"]}


def ask(message: str = "Confirm?", schema: Any = FORM) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


def yes() -> Scripted:
    return Scripted.from_script([{"content": {"confirmed": True}}, {"action": "accept"}])


class Server:
    """A modern server function with tools and a multi round-trip tool call."""

    def __init__(self) -> None:
        self.tools: list[dict[str, Any]] = [{"name": "t", "inputSchema": {"type": "object"}}]
        self.calls: list[dict[str, Any]] = []

    def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        method = message["method"]
        params = message.get("params", {})
        if method == "server/discover":
            return [discover(message)]
        if method == "tools/list":
            return [
                result(
                    message,
                    {"resultType": "complete", "tools": self.tools, "ttlMs": 0, "cacheScope": "private"},
                )
            ]
        if method == "tools/call":
            self.calls.append(params)
            return self.call(message, params)
        return [error(message, -32601, "no")]

    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        return [result(message, {"resultType": "complete", "content": []})]


async def test_a_modern_server_is_found_by_the_probe_and_every_request_carries_meta(
    wire: WireChecker,
) -> None:
    server = Server()
    transport = FakeTransport(server)
    async with Client(transport, answerer=yes()) as client:
        assert client.revision == "2026-07-28"
        assert client.server_info.name == "fake"
        assert client.server_capabilities == {"tools": {}}
        assert client.capabilities == {"elicitation": {"form": {}, "url": {}}}
        await client.call_tool("t", {"x": 1})
    assert transport.methods() == ["server/discover", "tools/list", "tools/call"]
    for message, headers in transport.requests:
        wire.request(message)
        meta = message["params"]["_meta"]
        assert headers["MCP-Protocol-Version"] == meta[META_VERSION] == "2026-07-28"
        assert headers["Mcp-Method"] == message["method"]
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {"form": {}, "url": {}}}
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcp-elicit"
    assert transport.requests[-1][1]["Mcp-Name"] == "t"
    assert len({m["id"] for m, _ in transport.requests}) == 3
    assert transport.closed


async def test_without_an_answerer_no_elicitation_is_declared() -> None:
    transport = FakeTransport(Server())
    async with Client(transport) as client:
        assert client.capabilities == {}
    async with Client(FakeTransport(Server()), answerer=NoAnswerer()) as client:
        assert client.capabilities == {}
    form_only = Scripted.from_script([], modes=["form"])
    async with Client(FakeTransport(Server()), answerer=form_only, sampling=_sample, roots=_roots) as client:
        assert client.capabilities == {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}


async def _sample(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}


async def _roots() -> list[dict[str, Any]]:
    return [{"uri": "file:///work", "name": "work"}]


async def test_a_first_request_refused_with_32022_is_retried_with_a_supported_version() -> None:
    seen: list[str] = []

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        seen.append(headers["MCP-Protocol-Version"])
        if len(seen) == 1:
            return [
                error(message, -32022, "Unsupported", {"supported": ["2026-07-28"], "requested": "x"}),
                Ended(400),
            ]
        return [discover(message)]

    async with Client(FakeTransport(serve)) as client:
        assert client.revision == "2026-07-28"
    assert seen == ["2026-07-28", "2026-07-28"]


async def test_a_legacy_answer_falls_back_to_initialize() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            return [Ended(400, body="Bad Request: Server not initialized")]
        if message["method"] == "initialize":
            assert "_meta" not in message["params"]
            assert "MCP-Protocol-Version" not in headers
            return [
                result(
                    message,
                    {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "serverInfo": {"name": "old", "version": "1"},
                    },
                )
            ]
        assert headers["MCP-Protocol-Version"] == "2025-06-18"
        return [result(message, {"tools": []})]

    transport = FakeTransport(serve)
    async with Client(transport) as client:
        assert client.revision == "2025-06-18"
        assert client.server_info.name == "old"
        assert await client.list_tools() == []
        info = await client.discover()
        assert info["supportedVersions"] == ["2025-06-18"]
    assert transport.methods() == ["server/discover", "initialize", "tools/list"]
    assert [m["method"] for m, _ in transport.sent] == ["notifications/initialized"]


async def test_a_modern_only_client_does_not_fall_back() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        return [error(message, -32601, "Method not found")]

    with pytest.raises(UnsupportedProtocolVersion, match="allowed 2026-07-28 only"):
        async with Client(FakeTransport(serve), versions=["2026-07-28"]):
            pass


async def test_an_initialize_refused_with_32022_means_modern_after_all() -> None:
    probes: list[int] = []

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            probes.append(1)
            if len(probes) == 1:
                return [error(message, -32000, "starting up")]
            return [discover(message)]
        return [error(message, -32022, "modern only", {"supported": ["2026-07-28"]})]

    async with Client(FakeTransport(serve)) as client:
        assert client.revision == "2026-07-28"
    assert len(probes) == 2


async def test_an_unanswered_probe_on_stdio_means_legacy() -> None:
    class Silent(FakeTransport):
        async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
            exchange = await super().exchange(message, headers)
            exchange.hang = message["method"] == "server/discover"
            return exchange

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        return [
            result(
                message,
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            )
        ]

    silent = Silent(serve, http=False)
    async with Client(silent, probe_timeout=0.2) as client:
        assert client.revision == "2025-11-25"
    assert silent.methods() == ["server/discover", "initialize"]
    # Nothing but the handshake goes to a legacy server before it: no cancellation of the probe.
    assert [m["method"] for m, _ in silent.sent] == ["notifications/initialized"]


async def test_an_unanswered_probe_over_http_is_a_timeout_not_an_era() -> None:
    class Silent(FakeTransport):
        async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
            exchange = await super().exchange(message, headers)
            exchange.hang = True
            return exchange

    with pytest.raises(RequestTimeout):
        async with Client(Silent(Server()), timeout=0.2):
            pass


async def test_only_handshake_versions_means_no_probe() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        return [
            result(
                message,
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            )
        ]

    transport = FakeTransport(serve)
    async with Client(transport, versions=["2025-11-25"]) as client:
        assert client.revision == "2025-11-25"
    assert transport.methods() == ["initialize"]


async def test_a_server_choosing_an_unknown_handshake_version_is_refused() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        return [
            result(
                message,
                {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            )
        ]

    with pytest.raises(UnsupportedProtocolVersion, match="2024-11-05"):
        async with Client(FakeTransport(serve), versions=["2025-11-25"]):
            pass


async def test_a_dead_connection_is_a_transport_error_with_the_reason() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        return [Ended(reason="cannot connect to fake://server; is the server running there?")]

    with pytest.raises(TransportError, match="is the server running"):
        async with Client(FakeTransport(serve)):
            pass


def test_unknown_versions_are_refused_up_front() -> None:
    with pytest.raises(ValueError, match="versions must be"):
        Client(FakeTransport(Server()), versions=["1999-01-01"])


def test_versions_given_as_one_string_are_refused_saying_so() -> None:
    # The string was read as a list of its characters: "not ['2', '0', '6', '-', ...]".
    with pytest.raises(
        TypeError, match=r"versions is a list of revisions \(\['2026-07-28'\]\), not the string"
    ):
        Client(FakeTransport(Server()), versions="2026-07-28")


@pytest.mark.parametrize("option", ["timeout", "probe_timeout"])
@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), "30", True])
def test_a_timeout_that_is_no_duration_is_refused_naming_it(option: str, value: object) -> None:
    # It was taken: "30" failed at the first request, 0 or -1 timed every request out at
    # once, and nan or inf waited for good.
    with pytest.raises(
        ConfigError, match=rf"^{option} {value!r}: expected a finite number of seconds, above 0$"
    ):
        Client(FakeTransport(Server()), **{option: value})  # type: ignore[arg-type]


def test_limits_that_are_not_round_limits_are_refused() -> None:
    # A dict was taken, and failed at the first input_required with an AttributeError.
    with pytest.raises(ConfigError, match=r"^limits \{'max_rounds': 3\}: expected a RoundLimits"):
        Client(FakeTransport(Server()), limits={"max_rounds": 3})  # type: ignore[arg-type]


async def test_using_a_client_before_connecting_says_how() -> None:
    client = Client(FakeTransport(Server()))
    with pytest.raises(TransportError, match="not connected"):
        await client.list_tools()


# ---- multi round-trip -----------------------------------------------------------------


class Asking(Server):
    """``tools/call`` needs ``confirm`` first; the state is an odd string to echo exactly."""

    STATE = ' {"nonce": "é\\u00e9", "x": [1, 2]}  '

    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        if "inputResponses" not in params:
            return [
                result(
                    message,
                    {
                        "resultType": "input_required",
                        "inputRequests": {"confirm": ask()},
                        "requestState": self.STATE,
                    },
                )
            ]
        return [
            result(
                message,
                {
                    "resultType": "complete",
                    "content": [{"type": "text", "text": str(params["inputResponses"])}],
                },
            )
        ]


async def test_input_required_is_answered_and_retried_with_a_new_id_and_the_state_echoed(
    wire: WireChecker,
) -> None:
    server = Asking()
    transport = FakeTransport(server)
    async with Client(transport, answerer=yes()) as client:
        out = await client.call_tool("t", {"a": 1})
    assert out["content"][0]["text"] == "{'confirm': {'action': 'accept', 'content': {'confirmed': True}}}"
    first, retry = server.calls
    assert "requestState" not in first
    assert retry["requestState"] is not None
    assert retry["requestState"] == Asking.STATE
    assert retry["arguments"] == {"a": 1}
    calls = [m for m, _ in transport.requests if m["method"] == "tools/call"]
    assert calls[0]["id"] != calls[1]["id"]
    for message in calls:
        wire.request(message)


class WrittenBeforeGone:
    """A transport of someone else's written before ``Transport.gone`` existed: every
    other method, by delegation."""

    def __init__(self, inner: FakeTransport) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "gone":
            raise AttributeError(name)
        return getattr(self._inner, name)


async def test_a_transport_without_gone_still_answers_rounds() -> None:
    server = Asking()
    async with Client(WrittenBeforeGone(FakeTransport(server)), answerer=yes()) as client:  # type: ignore[arg-type]
        out = await client.call_tool("t", {"a": 1})
    assert out["content"][0]["text"] == "{'confirm': {'action': 'accept', 'content': {'confirmed': True}}}"
    assert len(server.calls) == 2


class NoState(Server):
    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        if "inputResponses" not in params:
            return [result(message, {"resultType": "input_required", "inputRequests": {"confirm": ask()}})]
        return [result(message, {"content": []})]


async def test_no_state_means_none_in_the_retry() -> None:
    server = NoState()
    async with Client(FakeTransport(server), answerer=yes()) as client:
        await client.call_tool("t")
    assert "requestState" not in server.calls[1]
    assert server.calls[1]["inputResponses"] == {
        "confirm": {"action": "accept", "content": {"confirmed": True}}
    }


class Slow(Server):
    """Two tools whose rounds interleave: a state must never reach the other tool."""

    async def slow_call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        await asyncio.sleep(0.01)
        name = params["name"]
        rounds = int(params.get("requestState", f"{name}:0").split(":")[1])
        if rounds < 3:
            return [
                result(
                    message,
                    {
                        "resultType": "input_required",
                        "inputRequests": {f"{name}-{rounds}": ask()},
                        "requestState": f"{name}:{rounds + 1}",
                    },
                )
            ]
        return [result(message, {"content": [{"type": "text", "text": name}]})]

    def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> Any:
        if message["method"] == "tools/call":
            self.calls.append(message["params"])
            return self.slow_call(message, message["params"])
        return super().__call__(message, headers)


async def test_concurrent_requests_never_share_state_or_answers() -> None:
    server = Slow()
    server.tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("a", "b", "c")]
    async with Client(FakeTransport(server), answerer=yes()) as client:
        outs = await asyncio.gather(*(client.call_tool(n) for n in ("a", "b", "c")))
    assert [o["content"][0]["text"] for o in outs] == ["a", "b", "c"]
    for params in server.calls:
        name = params["name"]
        state = params.get("requestState")
        assert state is None or state.startswith(f"{name}:")
        for key in params.get("inputResponses", {}):
            assert key.startswith(f"{name}-")


class Forever(Server):
    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        return [
            result(
                message,
                {"resultType": "input_required", "inputRequests": {"again": ask()}, "requestState": "s"},
            )
        ]


async def test_a_server_that_keeps_asking_is_stopped_by_the_round_limit() -> None:
    server = Forever()
    async with Client(FakeTransport(server), answerer=yes(), limits=RoundLimits(max_rounds=4)) as client:
        with pytest.raises(RoundsExceeded, match="after 4 rounds"):
            await client.call_tool("t")
    assert len(server.calls) == 4


class Polling(Server):
    def __init__(self, ready_after: int) -> None:
        super().__init__()
        self.ready_after = ready_after

    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        if len(self.calls) <= self.ready_after:
            return [
                result(message, {"resultType": "input_required", "requestState": f"poll-{len(self.calls)}"})
            ]
        return [result(message, {"content": [{"type": "text", "text": "done"}]})]


async def test_state_only_rounds_are_retried_after_the_backoff() -> None:
    server = Polling(ready_after=3)
    limits = RoundLimits(max_state_only=5, backoff=(0.0, 0.05, 0.1))
    loop = asyncio.get_running_loop()
    async with Client(FakeTransport(server), limits=limits) as client:
        start = loop.time()
        out = await client.call_tool("t")
        elapsed = loop.time() - start
    assert out["content"][0]["text"] == "done"
    assert elapsed >= 0.15
    assert [c.get("requestState") for c in server.calls] == [None, "poll-1", "poll-2", "poll-3"]
    assert all("inputResponses" not in c for c in server.calls)


async def test_state_only_rounds_are_bounded() -> None:
    limits = RoundLimits(max_rounds=50, max_state_only=2, backoff=(0.0,))
    async with Client(FakeTransport(Polling(ready_after=10)), limits=limits) as client:
        with pytest.raises(RoundsExceeded, match="only a requestState"):
            await client.call_tool("t")


async def test_an_unknown_result_type_is_a_violation() -> None:
    class Odd(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            return [result(message, {"resultType": "deferred", "content": []})]

    async with Client(FakeTransport(Odd())) as client:
        with pytest.raises(ProtocolViolation, match="resultType 'deferred'"):
            await client.call_tool("t")


async def test_a_task_the_client_did_not_ask_for_is_a_violation() -> None:
    """A server may answer with a task only a request that declared the tasks extension."""

    class Eager(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            task = {"taskId": "t-1", "status": "working", "ttlMs": None}
            return [result(message, {"resultType": "task", **task})]

    async with Client(FakeTransport(Eager())) as client:
        with pytest.raises(ProtocolViolation, match="did not declare the tasks extension"):
            await client.call_tool("t")


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


async def test_a_32022_later_on_switches_version_and_retries() -> None:
    versions: list[str] = []

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        versions.append(message["params"]["_meta"][META_VERSION])
        if message["method"] == "server/discover":
            return [discover(message)]
        if len(versions) == 2:
            return [error(message, -32022, "changed", {"supported": ["2026-07-28"]})]
        return [result(message, {"tools": []})]

    async with Client(FakeTransport(serve)) as client:
        assert await client.list_tools() == []
    assert versions == ["2026-07-28"] * 3


async def test_a_header_mismatch_on_a_tool_call_refreshes_the_tools_and_retries() -> None:
    class Changing(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            if len(self.calls) == 1:
                self.tools = [
                    {
                        "name": "t",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"r": {"type": "string", "x-mcp-header": "R"}},
                        },
                    }
                ]
                return [error(message, -32020, "Header mismatch: Mcp-Param-R is required"), Ended(400)]
            return [result(message, {"content": []})]

    server = Changing()
    transport = FakeTransport(server)
    async with Client(transport) as client:
        await client.call_tool("t", {"r": "eu"})
    calls = [h for m, h in transport.requests if m["method"] == "tools/call"]
    assert "Mcp-Param-R" not in calls[0]
    assert calls[1]["Mcp-Param-R"] == "eu"
    assert transport.methods().count("tools/list") == 2


async def test_a_tool_with_invalid_header_annotations_is_not_listed_nor_called() -> None:
    server = Server()
    server.tools = [
        {
            "name": "good",
            "inputSchema": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}},
        },
        {
            "name": "bad",
            "inputSchema": {"type": "object", "properties": {"r": {"type": "array", "x-mcp-header": "R"}}},
        },
    ]
    async with Client(FakeTransport(server)) as client:
        assert [t["name"] for t in await client.list_tools()] == ["good"]
        assert "bad" in client.rejected_tools
        with pytest.raises(ProtocolViolation, match=r"'bad'.*rejected"):
            await client.call_tool("bad", {"r": []})
    assert [c["name"] for c in server.calls] == []


async def test_over_stdio_header_annotations_are_ignored() -> None:
    server = Server()
    server.tools = [
        {
            "name": "odd",
            "inputSchema": {"type": "object", "properties": {"r": {"type": "array", "x-mcp-header": "R"}}},
        }
    ]
    transport = FakeTransport(server, http=False)
    async with Client(transport) as client:
        assert [t["name"] for t in await client.list_tools()] == ["odd"]
        await client.call_tool("odd")
    assert transport.methods() == ["server/discover", "tools/list", "tools/call"]


async def test_lists_follow_every_page_and_stop_on_a_repeated_cursor() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            return [discover(message)]
        cursor = message["params"].get("cursor")
        pages = {None: (["a", "b"], "c1"), "c1": (["c"], "c2"), "c2": (["d"], "c1")}
        names, nxt = pages[cursor]
        return [result(message, {"prompts": [{"name": n} for n in names], "nextCursor": nxt})]

    async with Client(FakeTransport(serve)) as client:
        prompts = await client.list_prompts()
    assert [p["name"] for p in prompts] == ["a", "b", "c", "d"]


async def test_errors_from_the_server_raise_the_matching_class() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            return [discover(message)]
        return [error(message, -32602, "Invalid params: unknown prompt 'x'")]

    async with Client(FakeTransport(serve)) as client:
        with pytest.raises(InvalidParams, match="unknown prompt"):
            await client.get_prompt("x", {"a": "1"})
        with pytest.raises(InvalidParams):
            await client.read_resource("x://y")
        with pytest.raises(InvalidParams):
            await client.complete(
                {"type": "ref/prompt", "name": "x"}, {"name": "a", "value": ""}, {"arguments": {}}
            )


async def test_a_silent_server_times_out_on_network_time() -> None:
    class Hanging(FakeTransport):
        async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
            exchange = await super().exchange(message, headers)
            exchange.hang = message["method"] == "tools/call"
            return exchange

    async with Client(Hanging(Server()), timeout=0.2) as client:
        with pytest.raises(RequestTimeout, match=r"within 0\.2 s"):
            await client.call_tool("t")


async def test_think_time_between_rounds_never_counts() -> None:
    class Thinker:
        modes = frozenset({"form"})

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            await asyncio.sleep(0.4)
            return ElicitAnswer.accept(confirmed=True)

        async def url_done(self, request: ElicitationRequest) -> None:
            return None

    async with Client(FakeTransport(Asking()), answerer=Thinker(), timeout=0.2) as client:
        out = await client.call_tool("t")
    assert out["content"]


async def test_notifications_reach_the_callback_and_a_failing_callback_is_not_fatal() -> None:
    seen: list[tuple[str, Mapping[str, Any]]] = []

    class Progress(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            return [
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": 1, "progress": 5},
                },
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": "x"},
                },
                {"jsonrpc": "2.0", "id": "s-1", "method": "elicitation/create", "params": {}},
                result(message, {"content": []}),
            ]

    def record(method: str, params: Mapping[str, Any]) -> None:
        seen.append((method, params))
        if method == "notifications/message":
            raise RuntimeError("callback bug")

    async with Client(FakeTransport(Progress()), on_notification=record) as client:
        await client.call_tool("t")
    assert [m for m, _ in seen] == ["notifications/progress", "notifications/message"]


@pytest.mark.parametrize("http", [False, True])
async def test_an_abandoned_request_is_cancelled_where_that_is_how_it_is_done(
    http: bool, wire: WireChecker
) -> None:
    class Hanging(FakeTransport):
        async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
            exchange = await super().exchange(message, headers)
            exchange.hang = message["method"] == "tools/call"
            return exchange

    transport = Hanging(Server(), http=http)
    async with Client(transport, timeout=0.1) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("t")
        call_id = transport.requests[-1][0]["id"]
        task = asyncio.ensure_future(client.call_tool("t"))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.01)
    notes = [m for m, _ in transport.sent if m.get("method") == "notifications/cancelled"]
    if http:
        assert notes == []  # closing the response stream is the cancellation
    else:
        assert [n["params"]["requestId"] for n in notes] == [call_id, transport.requests[-1][0]["id"]]
        assert notes[0]["params"]["reason"] == "timed out"
        for note in notes:
            wire.notification(note)
