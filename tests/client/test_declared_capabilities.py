"""What the client declares in ``initialize`` is what the revision it offers defines: at
2025-11-25 ``elicitation`` has ``form``/``url`` sub-objects, at 2025-06-18 it is a bare
``{}`` (form only; URL mode does not exist there), at 2025-03-26 there is no such
capability. The client declared the 2025-11-25 shape at every revision."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from client.recorder import Recorder
from mcp_elicit.client import Client, ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.transports.stdio_client import StdioTransport

from support.procs import cli

ASKING = Path(__file__).with_name("asking_server.py")

pytestmark = pytest.mark.anyio

SERVER = textwrap.dedent(
    """
    from mcp_elicit import Server

    app = Server("declared")

    @app.tool()
    def hello() -> str:
        '''Says hello.'''
        return "hello"
    """
)


class Person:
    """Answers nothing here: only its modes matter."""

    def __init__(self, *modes: str) -> None:
        self.modes = frozenset(modes)

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.cancel()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def _sample(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "-"}, "model": "stub"}


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "declared_server.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("revision", "modes", "elicitation"),
    [
        ("2025-11-25", ("form", "url"), {"form": {}, "url": {}}),
        ("2025-11-25", ("url",), {"url": {}}),
        ("2025-06-18", ("form", "url"), {}),
        ("2025-06-18", ("form",), {}),
        ("2025-06-18", ("url",), None),  # URL mode only: nothing 2025-06-18 can say
        ("2025-03-26", ("form", "url"), None),
    ],
)
async def test_initialize_declares_what_the_offered_revision_defines(
    server_file: Path, revision: str, modes: tuple[str, ...], elicitation: dict[str, Any] | None
) -> None:
    recorder = Recorder()
    transport = StdioTransport([*cli(), "serve", str(server_file)], trace=recorder)
    async with Client(
        transport, answerer=Person(*modes), sampling=_sample, versions=[revision], tasks=True, timeout=30
    ) as client:
        assert client.revision == revision
        assert (await client.call_tool("hello"))["content"][0]["text"] == "hello"
        declared = client.capabilities
    (initialize,) = [m for m in recorder.sent if m.get("method") == "initialize"]
    sent = initialize["params"]["capabilities"]
    expected: dict[str, Any] = {"sampling": {}}
    if elicitation is not None:
        expected["elicitation"] = elicitation
    assert sent == expected
    assert declared == expected


URL_ASK = {"mode": "url", "message": "Sign in", "url": "https://example.com/", "elicitationId": "e1"}
FORM_ASK = {
    "message": "Name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}


@pytest.mark.parametrize(
    ("offered", "revision", "params", "code", "said"),
    [
        (["2025-03-26"], "2025-03-26", FORM_ASK, -32601, "no elicitation capability"),
        (["2025-06-18"], "2025-06-18", URL_ASK, -32602, "no url-mode elicitation"),
        (["2025-11-25", "2025-03-26"], "2025-03-26", FORM_ASK, -32601, "no elicitation capability"),
        (["2025-11-25", "2025-06-18"], "2025-06-18", URL_ASK, -32602, "no url-mode elicitation"),
    ],
    ids=[
        "no-elicitation-at-2025-03-26",
        "no-url-mode-at-2025-06-18",
        "no-elicitation-at-2025-03-26-chosen-over-2025-11-25",
        "no-url-mode-at-2025-06-18-chosen-over-2025-11-25",
    ],
)
async def test_a_question_the_revision_did_not_declare_is_refused(
    tmp_path: Path, offered: list[str], revision: str, params: dict[str, Any], code: int, said: str
) -> None:
    """What the session did not declare is refused as for an undeclared capability, and
    nobody is asked: the client answered it as the answerer's modes allowed. So too when
    the server chose an older revision than the one offered: initialize declared the
    offered revision's capabilities, but the session speaks the chosen one, which has no
    URL mode (2025-06-18) or no elicitation (2025-03-26); it answered them."""
    path = tmp_path / "plan.json"
    ask = {"jsonrpc": "2.0", "id": "q-1", "method": "elicitation/create", "params": params}
    path.write_text(json.dumps({"ask": [ask], "init": {"protocolVersion": revision}}), encoding="utf-8")
    person = Person("form", "url")
    asked: list[ElicitationRequest] = []

    async def elicit(request: ElicitationRequest) -> ElicitAnswer:
        asked.append(request)
        return ElicitAnswer.decline()

    person.elicit = elicit  # type: ignore[method-assign]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    transport = StdioTransport([sys.executable, str(ASKING), str(path)], env=env)
    async with Client(transport, answerer=person, versions=offered, timeout=20) as client:
        assert client.revision == revision
        result = await client.call_tool("t")
    (answer,) = json.loads(result["content"][0]["text"])
    assert answer["error"]["code"] == code, answer
    assert said in answer["error"]["message"]
    assert asked == []
