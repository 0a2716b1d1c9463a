"""A URL-mode question at a revision that has no URL mode says so.

Before 2025-11-25 elicitation had no modes, so a session at 2025-06-18 or 2025-03-26
takes forms at most, whatever the client declared. A handler asking for a page there failed
with -32021 saying the client "did not declare" ``elicitation.url``, though it had: the
error now names the revision as what lacks it, in its message and in its data
(``requiredProtocolVersion``: the data named only the capability). A client at 2025-11-25 that declared forms
only is still told it did not declare URL mode.
"""

from __future__ import annotations

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import Scripted
from mcp_elicit.errors import MissingClientCapability
from mcp_elicit.transports.memory import connect_memory

pytestmark = pytest.mark.anyio


def build() -> Server:
    app = Server("pages")

    @app.tool()
    async def pay(ctx: Context) -> str:
        answer = await ctx.elicit_url("Confirm the payment on our page", "https://pay.example.com/confirm/1")
        return answer.action

    return app


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
async def test_a_revision_without_url_mode_is_named_as_what_lacks_it(version: str) -> None:
    answers = Scripted.from_script([{"mode": "url", "action": "accept"}])  # declares form and url
    async with connect_memory(build(), answerer=answers, versions=[version]) as client:
        with pytest.raises(MissingClientCapability) as caught:
            await client.call_tool("pay", {})
    message = str(caught.value)
    assert f"MCP {version} does not have" in message
    assert "did not declare" not in message
    assert caught.value.required == {"elicitation": {"url": {}}}
    # the client declared URL mode: the data names the revision it needs, too
    assert caught.value.data == {
        "requiredCapabilities": {"elicitation": {"url": {}}},
        "requiredProtocolVersion": "2025-11-25",
    }


async def test_a_client_that_declared_forms_only_is_told_so() -> None:
    answers = Scripted.from_script([{"mode": "url", "action": "accept"}], modes=["form"])
    async with connect_memory(build(), answerer=answers, versions=["2025-11-25"]) as client:
        with pytest.raises(MissingClientCapability) as caught:
            await client.call_tool("pay", {})
    assert "which the client did not declare" in str(caught.value)
    assert caught.value.data == {"requiredCapabilities": {"elicitation": {"url": {}}}}  # the revision has it


async def test_a_client_that_declared_no_elicitation_is_not_told_it_takes_forms() -> None:
    # no answerer: the client declared no elicitation at all, so the session takes no forms
    # either; what the error says of the revision holds whatever the client declared
    async with connect_memory(build(), versions=["2025-06-18"]) as client:
        with pytest.raises(MissingClientCapability) as caught:
            await client.call_tool("pay", {})
    message = str(caught.value)
    assert "MCP 2025-06-18 does not have" in message
    assert "this session takes forms" not in message
