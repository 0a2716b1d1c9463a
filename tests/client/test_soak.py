"""A long-lived ``Client`` keeps nothing per call: thousands of calls of a tool that asks a
form question, at both revisions, with the memory the process holds afterwards compared
with what it held before (``tracemalloc``, after a collection). In memory, no sockets."""

from __future__ import annotations

import pytest

from mcp_elicit import Context, Form, KeyRing, Server, String
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.transports.memory import connect_memory

from support.soak import growth

pytestmark = pytest.mark.anyio


class Person:
    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.accept(region=f"eu-{request.server.name}")


def regions() -> Server:
    app = Server("soak", state_keys=KeyRing([bytes(range(32))]))

    @app.tool()
    async def provision(ctx: Context, name: str) -> str:
        answer = await ctx.elicit("Which region?", Form(region=String()))
        assert answer.data is not None
        return f"Provisioned {name} in {answer.data['region']}"

    return app


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_a_client_keeps_nothing_per_call(revision: str) -> None:
    """1,000 calls, each answering one question (as over HTTP: the mirrored headers too):
    under 128 KiB more held after them. At 2025-11-25 the transport kept every answer the
    client sent, about 650 bytes a call."""
    async with connect_memory(regions(), answerer=Person(), versions=[revision], http=True) as client:

        async def provision(i: int) -> None:
            out = await client.call_tool("provision", {"name": f"web-{i}"})
            assert out["content"][0]["text"] == f"Provisioned web-{i} in eu-soak", out

        grew = await growth(provision, 50, 1000)
    assert grew < 128 * 1024, f"{grew} bytes more after 1,000 calls"
