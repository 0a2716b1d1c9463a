"""2025-11-25 sessions over real HTTP and the protocol version: a handshake revision without a
session is told to initialize, an unknown version header is unsupported, GET and DELETE check
it too, and a session before 2025-11-25 is asked forms and never URL mode."""

from __future__ import annotations

import asyncio

import httpx
import orjson
import pytest

from mcp_elicit import Server

from support.http_sessions import Session, _events, accepting
from support.procs import InProcess
from support.sessions import ACCEPT, open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_a_handshake_revision_without_a_session_is_told_to_initialize(
    served: tuple[Server, InProcess],
) -> None:
    _, running = served
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2025-11-25",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {"accept": ACCEPT, "mcp-protocol-version": "2025-11-25", "mcp-method": "tools/list"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(running.url, json=body, headers=headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32600, "not -32022, whose supported list would name 2025-11-25 again"
    assert "initialize" in error["message"]


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26"])
@pytest.mark.parametrize("method", ["notifications/initialized", "notifications/cancelled"])
async def test_a_handshake_notification_without_a_session_is_told_to_initialize(
    served: tuple[Server, InProcess], version: str, method: str
) -> None:
    """A notification of a handshake revision names a session as its requests do: without
    one it is refused (400), not taken and dropped, so a client that lost its session id
    (a proxy dropping the header) is told so rather than believing its cancel arrived."""
    _, running = served
    body = {"jsonrpc": "2.0", "method": method, "params": {"requestId": 1}}
    if method == "notifications/initialized":
        body.pop("params")
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(
            running.url, json=body, headers={"accept": ACCEPT, "mcp-protocol-version": version}
        )
        modern = await http.post(running.url, json=body, headers={"accept": ACCEPT})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == -32600
    assert "initialize" in error["message"]
    assert modern.status_code == 202  # no version header: a 2026-07-28 notification, taken


async def test_an_unknown_version_header_in_a_session_is_unsupported(session: Session) -> None:
    response = await session.http.post(
        session.url,
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers={**session.headers(), "mcp-protocol-version": "1999-01-01"},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022
    assert error["message"].startswith("Unsupported protocol version '1999-01-01'")
    assert error["data"]["requested"] == "1999-01-01"


@pytest.mark.parametrize(
    "version", ["1999-01-01", "2025-06-18", "2026-07-28", "x" * 2000, "2025-11-25\xa0", "\x852025-11-25"]
)
async def test_get_and_delete_check_the_version_header(
    session: Session, wire_2025: WireChecker, version: str
) -> None:
    """A GET or DELETE whose MCP-Protocol-Version is not the session's is 400, as a POST
    is (the GET opened the session's stream and the DELETE ended the session, whatever
    version the header named). Only HTTP's white space (spaces, tabs) around the value is
    trimmed: not a no-break space or a NEL (bytes 0xA0, 0x85), as for a 2026-07-28 request."""
    wrong = {**session.headers(), "mcp-protocol-version": version.encode("latin-1")}
    async with session.http.stream("GET", session.url, headers=wrong) as listened:
        assert listened.status_code == 400
        assert listened.headers["content-type"] == "application/json"
        refusal = orjson.loads(await listened.aread())
    deleted = await session.http.delete(session.url, headers=wrong)
    assert deleted.status_code == 400
    for error in (refusal, deleted.json()):
        wire_2025.response("ping", error)
        assert error["error"]["code"] == -32600 and "id" not in error
        assert (
            "MCP-Protocol-Version" in error["error"]["message"] and "2025-11-25" in error["error"]["message"]
        )
        assert len(error["error"]["message"]) < 300
    pong = await session.post({"jsonrpc": "2.0", "id": 4, "method": "ping"})
    assert pong.json() == {"jsonrpc": "2.0", "id": 4, "result": {}}  # the session lives on


async def test_a_session_before_2025_11_25_is_asked_forms_and_never_url_mode(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    """2025-06-18 has one kind of elicitation, a form, and declaring ``elicitation`` at all
    (whatever is inside) says the client takes it; URL mode, its -32042 and elicitationId
    came with 2025-11-25. A 2025-06-18 session whose capabilities read
    ``{"elicitation": {"url": {}}}`` is asked its form, and a URL step is refused as a
    capability the session does not have, never sent as mode url or as -32042."""
    _, running = served
    caps = {"elicitation": {"url": {}}}
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025, version="2025-06-18", capabilities=caps)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask_name"}}
        async with http.stream("POST", running.url, json=call, headers=headers) as stream:
            events = _events(stream)
            question = await asyncio.wait_for(anext(events), 10)
            assert question.get("method") == "elicitation/create", question
            assert question["params"]["requestedSchema"]["properties"] == {"name": {"type": "string"}}
            answer = accepting(question, name="Ada")
            assert (await http.post(running.url, json=answer, headers=headers)).status_code == 202
            final = await asyncio.wait_for(anext(events), 10)
            assert final["result"]["content"][0]["text"] == "hello Ada"
        step = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "connect"}}
        refused = (await http.post(running.url, json=step, headers=headers)).json()
        assert refused["error"]["code"] == -32021, refused
        assert refused["error"]["data"] == {  # the capability, and the revision that has it
            "requiredCapabilities": {"elicitation": {"url": {}}},
            "requiredProtocolVersion": "2025-11-25",
        }


@pytest.mark.parametrize(("said", "header"), [("2026-07-28", "2025-11-25"), ("2025-11-25", "2026-07-28")])
async def test_a_notification_whose_meta_and_version_header_disagree_is_a_header_mismatch(
    served: tuple[Server, InProcess], wire: WireChecker, said: str, header: str
) -> None:
    """A notification outside a session whose ``_meta`` names one revision and whose
    MCP-Protocol-Version header names another gets the header mismatch a request with the
    same disagreement gets (-32020, the same message), not "no session" nor a 202."""
    _, running = served
    meta = {"io.modelcontextprotocol/protocolVersion": said, "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {"accept": ACCEPT, "mcp-protocol-version": header}
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "_meta": meta}}
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    async with httpx.AsyncClient(timeout=10) as http:
        noted = await http.post(running.url, json=note, headers=headers)
        asked = await http.post(running.url, json=request, headers={**headers, "mcp-method": "tools/list"})
    assert (asked.status_code, asked.json()["error"]["code"]) == (400, -32020), asked.text
    assert noted.status_code == 400, noted.text
    wire.response("", noted.json())
    assert noted.json()["error"] == asked.json()["error"]
    assert "id" not in noted.json() or noted.json()["id"] is None
