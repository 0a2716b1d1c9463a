"""What the interop tests of the client against the official TypeScript SDK's servers share
(tests/client/test_interop_ts*.py): which server, over which transport, at which revision
(``Peer``); a tape of every message both ways, checked against the official schema of its
revision; the connected client; and the fixtures that start each server over HTTP, one per
test module."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from client.recorder import Recorder
from mcp_elicit.client import Answerer, Client, ElicitAnswer, ElicitationRequest, Scripted
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.transports.stdio_client import StdioTransport

from support.peers import TS_PEERS, peer_http
from support.procs import ROOT
from support.wire import WireChecker

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SERVERS = {"v1": TS_PEERS / "server_v1.mjs", "v2": TS_PEERS / "server_v2.mjs"}
TOOLS = {
    "v1": {"plan_trip", "profile", "connect_calendar", "connect_bank"},
    "v2": {"plan_trip", "profile", "pick_dish", "connect_calendar"},
}

#: The answer to the profile form (tests/peers/ts/trip.mjs): nickname, guests, newsletter,
#: size and diet are left out, so the client sends their defaults.
PROFILE = {
    "email": "ann@example.com",
    "site": "https://ann.example.com/",
    "born": "1990-02-28",
    "meeting": "2026-12-24T18:30:00Z",
    "budget": 120.5,
    "seat": "out",
    "extras": ["cake", "music"],
}
PROFILE_SENT = {
    **PROFILE,
    "nickname": "friend",
    "guests": 2,
    "newsletter": False,
    "size": "M",
    "diet": ["veg"],
}

#: How long an answerer waits for the server to say a URL step is finished.
FINISH_WAIT = 3.0


@dataclass(frozen=True)
class Peer:
    sdk: Literal["v1", "v2"]
    kind: Literal["stdio", "http"]
    revision: str

    @property
    def modern(self) -> bool:
        return self.revision == MODERN


V2 = [Peer("v2", kind, revision) for kind in ("stdio", "http") for revision in (MODERN, LEGACY)]
V1 = [Peer("v1", kind, LEGACY) for kind in ("stdio", "http")]


def peer_id(peer: Peer) -> str:
    return f"{peer.sdk}-{peer.kind}-{peer.revision}"


class Tape(Recorder):
    """A ``Recorder`` that also keeps everything in the order it happened, both ways."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, direction: Literal["send", "receive"], message: Mapping[str, Any]) -> None:
        super().__call__(direction, message)
        self.log.append((direction, dict(message)))

    def requests(self, method: str) -> list[dict[str, Any]]:
        """The client's requests of ``method``, in order."""
        return [m for m in self.sent if m.get("method") == method and "id" in m]

    def asked(self, method: str = "elicitation/create") -> list[dict[str, Any]]:
        """The server's own requests of ``method`` (2025-11-25), in order."""
        return [m for m in self.received if m.get("method") == method and "id" in m]

    def answer_to(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The response that came back for one of the client's requests."""
        (reply,) = [m for m in self.received if "method" not in m and m.get("id") == request["id"]]
        return reply

    def answers(self) -> list[dict[str, Any]]:
        """What the client answered the server's elicitation/create requests (2025-11-25)."""
        ids = {m["id"] for m in self.asked()}
        return [m["result"] for m in self.sent if "method" not in m and m.get("id") in ids]

    def notices(self) -> list[str]:
        """The elicitationIds of the completion notices received."""
        return [
            m["params"]["elicitationId"]
            for m in self.received
            if m.get("method") == "notifications/elicitation/complete"
        ]

    def validate(self, revision: str) -> int:
        """Check every message, both ways, against the schema of its revision: the era probe
        (``server/discover`` and its answer) is 2026-07-28 whatever the outcome, the rest
        ``revision``. The number checked."""
        checkers = {r: WireChecker.load(r) for r in {revision, MODERN}}
        by_client = {m["id"]: m["method"] for d, m in self.log if d == "send" and "method" in m and "id" in m}
        by_server = {
            m["id"]: m["method"] for d, m in self.log if d == "receive" and "method" in m and "id" in m
        }
        for direction, message in self.log:
            asked = by_client if direction == "receive" else by_server
            # An error answering no request in particular (HTTP 400 to the probe) has no id.
            method = message.get("method") or asked.get(message.get("id"), "")
            checkers[MODERN if method == "server/discover" else revision].outgoing(message, method)
        return len(self.log)


class Patient:
    """Answers from a script, but first, for a URL step the server will say is finished
    (``request.finished``), waits up to ``FINISH_WAIT`` for it to say so, as a person's
    client would while they are on the page."""

    def __init__(self, script: Scripted) -> None:
        self.script = script
        self.heard: list[str | None] = []

    @property
    def modes(self) -> frozenset[str]:
        return self.script.modes

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        if request.mode == "url" and request.finished is not None:
            try:
                async with asyncio.timeout(FINISH_WAIT):
                    await request.finished()
                self.heard.append(request.elicitation_id)
            except TimeoutError:
                pass
        return await self.script.elicit(request)

    async def url_done(self, request: ElicitationRequest) -> None:
        await self.script.url_done(request)


def _quiet(output: str) -> None:
    """Node said nothing about an error (the servers log their errors to stderr)."""
    assert "error" not in output.lower(), output


def _node_http(node: Path, sdk: str, log: Path) -> Iterator[str]:
    with peer_http(lambda port: [str(node), str(SERVERS[sdk]), "--http", str(port)], log) as url:
        yield url
    _quiet(log.read_text(errors="replace"))


@pytest.fixture(scope="module")
def v2_http(ts_node: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The v2 server over Streamable HTTP on a free loopback port, both eras."""
    yield from _node_http(ts_node, "v2", tmp_path_factory.mktemp("ts") / "v2-http.log")


@pytest.fixture(scope="module")
def v1_http(ts_node: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The v1 server over Streamable HTTP on a free loopback port, sessionful."""
    yield from _node_http(ts_node, "v1", tmp_path_factory.mktemp("ts") / "v1-http.log")


@dataclass
class Session:
    client: Client
    tape: Tape
    notes: list[tuple[str, dict[str, Any]]]


@asynccontextmanager
async def connected(
    request: pytest.FixtureRequest, node: Path, peer: Peer, answerer: Answerer, *, auto: bool = False
) -> AsyncIterator[Session]:
    """A client connected to ``peer`` (at ``peer.revision``, or settling it itself when
    ``auto``); on the way out, every message is checked and node's output must be clean."""
    tape = Tape()
    notes: list[tuple[str, dict[str, Any]]] = []
    transport: HttpTransport | StdioTransport
    if peer.kind == "http":
        transport = HttpTransport(request.getfixturevalue(f"{peer.sdk}_http"), trace=tape)
    else:
        transport = StdioTransport([str(node), str(SERVERS[peer.sdk])], cwd=str(ROOT), trace=tape)
    options: dict[str, Any] = {} if auto else {"versions": [peer.revision]}
    async with Client(
        transport, answerer=answerer, on_notification=lambda m, p: notes.append((m, dict(p))), **options
    ) as client:
        assert client.revision == peer.revision
        yield Session(client, tape, notes)
    if isinstance(transport, StdioTransport):
        _quiet(transport.stderr_tail())
    assert tape.validate(peer.revision) > 0


def position_of(tape: Tape, direction: str, method: str | None, rid: object = None) -> int:
    """Where in the tape the first message going ``direction`` with this method (None: a
    response) and, when given, this id is."""
    for i, (way, message) in enumerate(tape.log):
        if way == direction and message.get("method") == method and rid in (None, message.get("id")):
            return i
    raise AssertionError(f"no {direction} {method or 'response'} {rid!r} in the tape")


def tool_text(result: Mapping[str, Any]) -> str:
    assert not result.get("isError"), result
    (block,) = result["content"]
    return str(block["text"])


def scripted(*entries: Mapping[str, Any]) -> Scripted:
    return Scripted.from_script(list(entries))


@pytest.fixture(params=[*V2, *V1], ids=peer_id)
def peer(request: pytest.FixtureRequest) -> Peer:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=V2, ids=peer_id)
def v2_peer(request: pytest.FixtureRequest) -> Peer:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=V1, ids=peer_id)
def v1_peer(request: pytest.FixtureRequest) -> Peer:
    return request.param  # type: ignore[no-any-return]
