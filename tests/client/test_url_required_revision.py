"""A -32042 (URL elicitation required) at a revision without URL mode (2025-06-18): the
client takes it as the server's error, as it is, and puts no URL to the person; the
server is a real process over stdio (``asking_server.py``)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from client.recorder import Recorder
from mcp_elicit.client import Client
from mcp_elicit.client.answerers import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import ProtocolError, URLElicitationRequired
from mcp_elicit.transports.stdio_client import StdioTransport

pytestmark = pytest.mark.anyio

ASKING = Path(__file__).with_name("asking_server.py")
STEP = {"mode": "url", "message": "Sign in", "url": "https://example.com/sign-in", "elicitationId": "e1"}
ERROR = {"code": -32042, "message": "Sign in first", "data": {"elicitations": [STEP]}}


class Person:
    """Takes both modes; declines every URL it is shown, and keeps it."""

    modes = frozenset({"form", "url"})

    def __init__(self) -> None:
        self.shown: list[ElicitationRequest] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.shown.append(request)
        return ElicitAnswer.decline()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def _call(
    tmp_path: Path, offered: list[str], revision: str, person: Person
) -> tuple[ProtocolError, Recorder]:
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps({"ask": [], "init": {"protocolVersion": revision}, "call_error": ERROR}), "utf-8"
    )
    recorder = Recorder()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    transport = StdioTransport([sys.executable, str(ASKING), str(plan)], env=env, trace=recorder)
    async with Client(transport, answerer=person, versions=offered, timeout=20) as client:
        assert client.revision == revision
        with pytest.raises(ProtocolError) as raised:
            await client.call_tool("connect")
    return raised.value, recorder


@pytest.mark.parametrize(
    "offered",
    [["2025-06-18"], ["2025-11-25", "2025-06-18"]],
    ids=["offered-2025-06-18", "2025-06-18-chosen-over-2025-11-25"],
)
async def test_url_required_at_a_revision_without_url_mode_is_the_servers_error(
    tmp_path: Path, offered: list[str]
) -> None:
    """2025-06-18 has no URL mode, whatever initialize declared (offering 2025-11-25, it
    declared elicitation.url): the error's URLs were put to the person and the call sent
    again. Now it is the server's error as it sent it, not a URL elicitation to follow
    (``URLElicitationRequired``, whose steps the CLI offers to open), and sent once."""
    person = Person()
    error, recorder = await _call(tmp_path, offered, "2025-06-18", person)
    assert type(error) is ProtocolError
    assert (error.code, error.message, error.data) == (-32042, "Sign in first", ERROR["data"])
    assert person.shown == []
    assert recorder.methods().count("tools/call") == 1


async def test_url_required_at_2025_11_25_is_put_to_the_person(tmp_path: Path) -> None:
    """The same server at 2025-11-25, where URL mode exists: the URL is put to the person
    (who declines it, which ends the call with the error)."""
    person = Person()
    error, recorder = await _call(tmp_path, ["2025-11-25"], "2025-11-25", person)
    assert isinstance(error, URLElicitationRequired)
    assert error.message == "Sign in first (the user answered decline)"
    assert [request.url for request in person.shown] == [STEP["url"]]
    assert recorder.methods().count("tools/call") == 1
