"""The client against a scripted server function at revision 2026-07-28: finding the revision (the probe, falling back to
``initialize``, refusals with -32022), and the options checked before connecting."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from client.fakes import META_VERSION, FakeTransport, discover, error, result
from mcp_elicit.client import Client, NoAnswerer, Scripted
from mcp_elicit.client.transport import Ended
from mcp_elicit.errors import (
    ConfigError,
    RequestTimeout,
    TransportError,
    UnsupportedProtocolVersion,
)

from support.modern_server import Server, _roots, _sample, yes
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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
