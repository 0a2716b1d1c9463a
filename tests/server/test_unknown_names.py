"""An unknown prompt or resource URI is repeated in its -32602 as an unknown tool's name
is (``test_unknown_tool``): cut at 200 characters (its length said) and inert (a control
character, an escape or a line break written as Python writes it, ``\\x1b``), since a
client prints the message; an unknown prompt's names a few of the prompts there are. A
resource's ``data.uri`` still carries the URI whole (it is JSON, not printed text)."""

from __future__ import annotations

import pytest

from mcp_elicit import Server
from mcp_elicit.errors import ResourceNotFound

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
FORGED = "pay\x1b[2J\r\nforged line\u202e"


def build(prompts: int = 1) -> Server:
    app = Server("names")
    for n in range(prompts):
        app.prompt(name=f"prompt_{n:02d}")(lambda: "x")
    app.resource("test://known")(lambda: "known")
    return app


async def test_an_unknown_prompt_is_repeated_inert(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    error = (await client.request("prompts/get", {"name": FORGED}))["error"]
    assert error == {
        "code": -32602,
        "message": "Unknown prompt: pay\\x1b[2J\\r\\nforged line\\u202e (its prompts: prompt_00)",
    }


async def test_an_unknown_prompt_is_bounded(wire: WireChecker) -> None:
    client = MemoryClient(build(prompts=30), checker=wire)
    error = (await client.request("prompts/get", {"name": "x" * 100_000}))["error"]
    assert error == {
        "code": -32602,
        "message": f"Unknown prompt: {'x' * 200}… (100000 characters) "
        "(its prompts: prompt_00, prompt_01, prompt_02, prompt_03, prompt_04 and 25 more)",
    }


async def test_an_unknown_uri_is_repeated_inert(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    uri = f"test://{FORGED}"
    error = (await client.request("resources/read", {"uri": uri}))["error"]
    assert error == {
        "code": -32602,
        "message": "Resource not found: test://pay\\x1b[2J\\r\\nforged line\\u202e",
        "data": {"uri": uri},
    }


async def test_an_unknown_uri_is_bounded(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    uri = "test://" + "\x07" * 100_000
    error = (await client.request("resources/read", {"uri": uri}))["error"]
    bell = "\\x07"  # as the message writes the bell
    assert error["message"] == f"Resource not found: test://{bell * 193}… (100007 characters)"
    assert error["data"] == {"uri": uri}


async def test_a_uri_a_handler_refuses_is_repeated_inert(wire: WireChecker) -> None:
    """A handler that refuses a reader raises ``ResourceNotFound`` itself (as the README
    says), with the URI the request gave: the message repeats it inert, as the server's
    own "not found" does."""
    app = Server("refusing")

    @app.resource("test://items/{item}")
    def item(item: str) -> str:
        raise ResourceNotFound(f"test://items/{item}")

    client = MemoryClient(app, checker=wire)
    uri = f"test://items/{FORGED}"
    error = (await client.request("resources/read", {"uri": uri}))["error"]
    assert error == {
        "code": -32602,
        "message": "Resource not found: test://items/pay\\x1b[2J\\r\\nforged line\\u202e",
        "data": {"uri": uri},
    }
