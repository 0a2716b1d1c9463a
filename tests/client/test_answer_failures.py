"""What the server is told when the client's own answerer or callback fails while it
answers the server's question (2025-11-25, where the client answers with a JSON-RPC
error): never the failure's text, which may quote what the person typed."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from client.recorder import Recorder
from mcp_elicit import Context, Form, Server, String
from mcp_elicit.client.answerers import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.transports.memory import connect_memory

pytestmark = pytest.mark.anyio

TYPED = "forty-two, my name is Ada Lovelace"

app = Server("answer-failures")


@app.tool()
async def ask(ctx: Context) -> str:
    """Ask one question."""
    answer = await ctx.elicit("Your age?", Form(age=String()))
    return answer.action


class Parsing:
    """An answerer whose own parsing of what the person typed fails."""

    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.accept({"age": int(TYPED)})  # ValueError quoting the text

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def test_an_answerers_value_error_is_not_sent_to_the_server(caplog: pytest.LogCaptureFixture) -> None:
    recorder = Recorder()
    with caplog.at_level(logging.ERROR, "mcp_elicit"):
        async with connect_memory(app, answerer=Parsing(), versions=["2025-11-25"], trace=recorder) as client:
            out: Any = await client.call_tool("ask")
    errors = [m["error"] for m in recorder.sent if "error" in m]
    assert [e["code"] for e in errors] == [-32603]
    assert TYPED not in str(recorder.sent)
    assert TYPED not in str(out)
    assert "failed to answer elicitation/create" in errors[0]["message"]
    assert "ValueError" in caplog.text  # the client's own log keeps the traceback
