"""Interop: the mcp-elicit client completes elicitation flows against a server built with the
official Python SDK (``mcp`` 2.3.0, tests/peers/sdk_server.py), over Streamable HTTP and
stdio, at both revisions.

The SDK lives in its own virtualenv (tests/.peers/mcp, pinned by
tests/peers/requirements-mcp.txt; ``make peers`` builds it, and so does this module when it
is missing). The project's venv never gets ``mcp``. Without the peer (offline, say), these
tests skip, saying why.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from client.recorder import Recorder, peer_client
from mcp_elicit.client import Client, Scripted
from mcp_elicit.errors import ProtocolError
from mcp_elicit.transports.http_client import HttpTransport

from support.peers import peer_http, sdk_python
from support.procs import ROOT

__all__ = ["sdk_python"]  # a fixture

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SERVER = ROOT / "tests" / "peers" / "sdk_server.py"
REVISIONS = ["2026-07-28", "2025-11-25"]


@pytest.fixture(scope="module")
def sdk_http(sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The SDK server over Streamable HTTP on a free loopback port."""
    log = tmp_path_factory.mktemp("sdk") / "sdk-http.log"
    with peer_http(lambda port: [str(sdk_python), str(SERVER), "--http", str(port)], log) as url:
        yield url


def answers() -> Scripted:
    return Scripted.from_script(
        [
            {"fields": ["party_size", "date"], "content": {"party_size": 2, "date": "2026-12-24"}},
            {"fields": ["ok"], "content": {"ok": True}},
            {
                "fields": ["nickname", "code", "seats"],
                "content": {"nickname": "ann", "code": "ANN", "seats": 9},
            },
            {"mode": "url", "action": "accept"},
            {"action": "accept"},
        ]
    )


@asynccontextmanager
async def connected(
    kind: str, revision: str, sdk_python: Path, url: str | None
) -> AsyncIterator[tuple[Client, Recorder, Scripted]]:
    script = answers()
    where = url if kind == "http" and url is not None else [str(sdk_python), str(SERVER)]
    async with peer_client(where, script, revision) as (client, recorder):
        yield client, recorder, script


@pytest.fixture(params=["http", "stdio"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def url(kind: str, request: pytest.FixtureRequest) -> str | None:
    return request.getfixturevalue("sdk_http") if kind == "http" else None


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_form_through_the_sdks_resolver(
    kind: str, revision: str, sdk_python: Path, url: str | None
) -> None:
    async with connected(kind, revision, sdk_python, url) as (client, recorder, _):
        assert client.server_info.name == "sdk-peer"
        names = [t["name"] for t in await client.list_tools()]
        assert {"book_table", "preferences", "confirm_name", "link_account"} <= set(names)
        out = await client.call_tool("book_table", {"restaurant": "noma"})
    assert out["content"][0]["text"] == "Booked noma for 2 on 2026-12-24"
    calls = [m for m in recorder.sent if m.get("method") == "tools/call"]
    if revision == "2026-07-28":
        assert len(calls) == 2  # input_required, then the retry with the answer
        assert "inputResponses" in calls[1]["params"]
        assert calls[0]["id"] != calls[1]["id"]
    else:
        assert len(calls) == 1
        assert any(m.get("result", {}).get("action") == "accept" for m in recorder.sent)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_defaults_are_filled_in_before_the_answer_leaves(
    kind: str, revision: str, sdk_python: Path, url: str | None
) -> None:
    async with connected(kind, revision, sdk_python, url) as (client, _, _):
        out = await client.call_tool("preferences")
    assert out["content"][0]["text"] == '{"name":"John Doe","age":30,"verified":true}'


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_pydantic_form_beyond_the_flat_subset_is_answered(
    kind: str, revision: str, sdk_python: Path, url: str | None
) -> None:
    # Field("", min_length=1), Field(pattern=...) and Field(gt=0, lt=10): what the SDK sends
    # for them is outside the subset, and the client still shows the form and answers it.
    async with connected(kind, revision, sdk_python, url) as (client, _, script):
        out = await client.call_tool("sign_up")
    assert out["content"][0]["text"] == '{"nickname":"ann","code":"ANN","seats":9}'
    assert script.reports == []


async def test_push_style_questions_and_url_mode_at_2025(
    kind: str, sdk_python: Path, url: str | None
) -> None:
    async with connected(kind, "2025-11-25", sdk_python, url) as (client, _, script):
        confirmed = await client.call_tool("confirm_name", {"name": "Ann"})
        linked = await client.call_tool("link_account", {"provider": "github"})
    assert confirmed["content"][0]["text"] == "Ann: confirmed"
    assert linked["content"][0]["text"] == "link accept"
    modes = [entry.mode for _, entry in script.used]
    assert "url" in modes


async def test_auto_detection_finds_the_modern_era(sdk_http: str) -> None:
    async with Client(HttpTransport(sdk_http), answerer=answers()) as client:
        assert client.revision == "2026-07-28"
        out = await client.call_tool("book_table", {"restaurant": "septime"})
    assert out["content"][0]["text"] == "Booked septime for 2 on 2026-12-24"


async def test_a_push_style_tool_at_2026_fails_with_the_servers_error(sdk_http: str) -> None:
    async with Client(HttpTransport(sdk_http), answerer=answers(), versions=["2026-07-28"]) as client:
        with pytest.raises(ProtocolError, match="back-channel"):
            await client.call_tool("confirm_name", {"name": "Ann"})


async def test_a_session_the_sdk_ended_is_renewed_at_2025(sdk_http: str) -> None:
    """The SDK answers a request of a session it ended with 404 and a JSON-RPC error
    without an id, which the client raised as the request's answer; it opens a new session
    and sends the request again there."""
    async with Client(HttpTransport(sdk_http), answerer=answers(), versions=["2025-11-25"]) as client:
        ended = client.session.session_id  # type: ignore[union-attr]
        assert ended is not None
        async with httpx.AsyncClient() as raw:
            deleted = await raw.delete(
                sdk_http, headers={"Mcp-Session-Id": ended, "MCP-Protocol-Version": "2025-11-25"}
            )
        assert deleted.status_code == 200
        out = await client.call_tool("book_table", {"restaurant": "noma"})
        assert out["content"][0]["text"] == "Booked noma for 2 on 2026-12-24"
        assert client.session.session_id not in (None, ended)  # type: ignore[union-attr]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_asking_for_logs_keeps_the_sdk_server_usable(sdk_http: str, revision: str) -> None:
    """``log_level`` at both revisions against the SDK (a ``_meta`` level at 2026-07-28,
    ``logging/setLevel`` at 2025-11-25 if it declares ``logging``): the client connects and
    calls as without it, whatever the SDK makes of the request, and nothing is reported."""
    reports: list[str] = []
    client = Client(HttpTransport(sdk_http), versions=[revision], log_level="debug", report=reports.append)
    async with client:
        assert await client.list_tools()
    assert reports == []


PROFILE = {
    "email": "ann@example.com",
    "site": "https://ann.example.com/",
    "born": "1990-02-28",
    "meeting": "2026-12-24T18:30:00Z",
    "budget": 120.5,
    "seat": "out",
}


@asynccontextmanager
async def scripted(
    kind: str, revision: str, sdk_python: Path, url: str | None, *entries: dict[str, object]
) -> AsyncIterator[tuple[Client, Recorder, Scripted]]:
    script = Scripted.from_script(list(entries))
    where = url if kind == "http" and url is not None else [str(sdk_python), str(SERVER)]
    async with peer_client(where, script, revision) as (client, recorder):
        yield client, recorder, script


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_form_of_every_field_kind_pydantic_renders(
    kind: str, revision: str, sdk_python: Path, url: str | None
) -> None:
    """Strings of each format, a number, an integer, a boolean, a titled and an untitled
    choice, a multiple choice: the SDK validates the answer with its pydantic model, so the
    values must arrive with their JSON types, the defaults filled in."""
    entries = (
        {"fields": ["email"], "content": PROFILE, "once": True},
        {"fields": ["email"], "action": "decline"},
    )
    async with scripted(kind, revision, sdk_python, url, *entries) as (client, _, script):
        accepted = await client.call_tool("profile")
        declined = await client.call_tool("profile")
    assert script.reports == []
    assert json.loads(accepted["content"][0]["text"]) == {
        **PROFILE,
        "guests": 2,
        "newsletter": False,
        "size": "M",
        "diet": ["veg"],
    }
    assert declined["content"][0]["text"] == "profile: decline"


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_prompt_that_asks_first(kind: str, revision: str, sdk_python: Path, url: str | None) -> None:
    entries = (
        {"fields": ["audience"], "content": {"audience": "board"}, "once": True},
        {"fields": ["audience"], "action": "cancel", "once": True},
    )
    async with scripted(kind, revision, sdk_python, url, *entries) as (client, recorder, _):
        asked = await client.get_prompt("briefing", {"topic": "budget"})
        cancelled = await client.get_prompt("briefing", {"topic": "hiring"})
    assert asked["messages"][0]["content"]["text"] == "Brief board on budget."
    assert cancelled["messages"][0]["content"]["text"] == "Brief nobody (cancel) on hiring."
    gets = [m for m in recorder.sent if m.get("method") == "prompts/get"]
    assert len(gets) == (4 if revision == "2026-07-28" else 2)


async def test_a_resource_and_a_url_step_asked_the_2026_way(
    kind: str, sdk_python: Path, url: str | None
) -> None:
    entries = (
        {"fields": ["passphrase"], "content": {"passphrase": "open sesame"}},
        {"mode": "url", "action": "accept", "once": True},
        {"mode": "url", "action": "decline", "once": True},
    )
    async with scripted(kind, "2026-07-28", sdk_python, url, *entries) as (client, recorder, script):
        memo = await client.read_resource("memo://shopping")
        granted = await client.call_tool("consent", {"scope": "calendar"})
        refused = await client.call_tool("consent", {"scope": "mail"})
    assert memo["contents"][0]["text"] == "the shopping memo: buy milk"
    assert granted["content"][0]["text"] == "consent calendar: accept"
    assert refused["content"][0]["text"] == "consent mail: decline"
    assert [(e.mode, e.action) for _, e in script.used][1:] == [("url", "accept"), ("url", "decline")]
    retries = [m["params"].get("inputResponses") for m in recorder.sent if m.get("method") == "tools/call"]
    assert retries == [None, {"consent": {"action": "accept"}}, None, {"consent": {"action": "decline"}}]
