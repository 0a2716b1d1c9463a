"""What the client declares in ``initialize`` is what the revision it offers defines: at
2025-11-25 ``elicitation`` has ``form``/``url`` sub-objects, at 2025-06-18 it is a bare
``{}`` (form only; URL mode does not exist there), at 2025-03-26 there is no such
capability. The client declared the 2025-11-25 shape at every revision."""

from __future__ import annotations

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
