"""A handler asking with pydantic's URL and email types gets them back as it declared them,
and a person whose answer the type refuses is asked again with the reason, on both revisions."""

from __future__ import annotations

import pydantic
import pytest
from pydantic import EmailStr, HttpUrl

from mcp_elicit import Context, Server
from mcp_elicit.sealing import KeyRing

from support.memory import MemoryClient, SessionClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


class Contact(pydantic.BaseModel):
    site: HttpUrl
    email: EmailStr


def contact_app() -> Server:
    app = Server("contacts", state_keys=KeyRing([b"k" * 16 + b"u" * 16]))

    @app.tool()
    async def add_contact(ctx: Context) -> str:
        answer = await ctx.elicit("Where can we find you?", Contact)
        assert answer.data is not None
        return f"{type(answer.data.site).__name__} {answer.data.site} {answer.data.email}"

    return app


FTP = {"site": "ftp://example.com", "email": "Ada@Example.COM"}
WEB = {"site": "https://example.com", "email": "Ada@Example.COM"}


async def test_the_handler_gets_an_http_url_and_the_normalised_address(wire: WireChecker) -> None:
    client = MemoryClient(contact_app(), checker=wire)
    first = await client.result("tools/call", {"name": "add_contact"})
    asked = first["inputRequests"]["elicit-1"]["params"]["requestedSchema"]["properties"]
    assert asked == {
        "site": {"type": "string", "format": "uri", "maxLength": 2083},
        "email": {"type": "string", "format": "email"},
    }
    again = await client.result(
        "tools/call",
        {
            "name": "add_contact",
            "inputResponses": {"elicit-1": {"action": "accept", "content": FTP}},
            "requestState": first["requestState"],
        },
    )
    assert again["resultType"] == "input_required", again
    assert "must use the scheme 'http' or 'https'" in again["inputRequests"]["elicit-1"]["params"]["message"]
    final = await client.result(
        "tools/call",
        {
            "name": "add_contact",
            "inputResponses": {"elicit-1": {"action": "accept", "content": WEB}},
            "requestState": again["requestState"],
        },
    )
    assert final["content"][0]["text"] == "HttpUrl https://example.com/ Ada@example.com"


async def test_on_a_session_too(wire_2025: WireChecker) -> None:
    answers = iter([FTP, WEB])
    client = SessionClient(contact_app(), capabilities={"elicitation": {}}, checker=wire_2025)
    await client.open()
    client.answer = lambda _k, _request: {"action": "accept", "content": next(answers)}
    result = await client.result("tools/call", {"name": "add_contact"})
    assert result["content"][0]["text"] == "HttpUrl https://example.com/ Ada@example.com"
    second = [m for m in client.asked if m.get("method") == "elicitation/create"][1]
    assert "must use the scheme 'http' or 'https'" in second["params"]["message"]
