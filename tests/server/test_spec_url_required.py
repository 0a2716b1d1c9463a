"""-32042 (``URLElicitationRequired``) on a 2025-11-25 session when a handler raises it
itself: sent as ``ctx.require_url`` sends it. Its elicitations are URL-mode steps, each
with an ``elicitationId`` the session waits on (so ``notifications/elicitation/complete``
reaches it), and only to a client that declared URL mode (-32021 otherwise, as on
2026-07-28); a raise naming no URL step is the tool's fault (its ``isError``), never a -32042.
What else the handler gave that the schema admits (a step's ``_meta``, other ``data``
keys) is sent as given."""

from __future__ import annotations

import logging
from typing import Any

import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import URLElicitationRequired

from support.memory import SessionClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

STEP = {"mode": "url", "message": "Link your account", "url": "https://example.com/link"}
URL_CAPS = {"elicitation": {"url": {}}}


def raising(data: Any) -> Server:
    """A server whose tool ``link`` raises ``URLElicitationRequired`` with ``data``."""
    app = Server("raises")

    @app.tool()
    async def link(ctx: Context) -> str:
        raise URLElicitationRequired("Link your account first", data)

    return app


async def call_link(app: Server, wire: WireChecker, caps: dict[str, Any]) -> tuple[SessionClient, Any]:
    session = SessionClient(app, capabilities=caps, checker=wire)
    await session.open()
    return session, await session.request("tools/call", {"name": "link"})


async def test_a_client_without_url_mode_gets_32021_not_a_url_elicitation(wire_2025: WireChecker) -> None:
    app = raising({"elicitations": [{**STEP, "elicitationId": "l-1"}]})
    _, answer = await call_link(app, wire_2025, {"elicitation": {"form": {}}})
    assert answer["error"]["code"] == -32021, answer
    assert answer["error"]["data"]["requiredCapabilities"] == {"elicitation": {"url": {}}}


async def test_each_step_gets_an_elicitation_id(wire_2025: WireChecker) -> None:
    app = raising({"elicitations": [STEP]})
    _, answer = await call_link(app, wire_2025, URL_CAPS)
    error = answer["error"]
    assert error["code"] == -32042 and error["message"] == "Link your account first"
    (step,) = error["data"]["elicitations"]
    assert isinstance(step.get("elicitationId"), str) and step["elicitationId"], step
    assert {k: v for k, v in step.items() if k != "elicitationId"} == STEP


async def test_the_completion_of_a_raised_step_reaches_its_session(wire_2025: WireChecker) -> None:
    app = raising({"elicitations": [{**STEP, "elicitationId": "l-1"}]})
    session, answer = await call_link(app, wire_2025, URL_CAPS)
    assert answer["error"]["data"]["elicitations"] == [{**STEP, "elicitationId": "l-1"}]
    assert app.complete_elicitation("l-1"), "the session that was sent l-1 does not wait on it"
    pushed = orjson.loads(await session.session.next_pushed(0.1))
    wire_2025.notification(pushed)
    assert pushed["params"] == {"elicitationId": "l-1"}


async def test_a_raised_steps_meta_and_the_other_data_keys_are_sent_as_given(wire_2025: WireChecker) -> None:
    meta = {"example.com/reason": "link", "progressToken": "p-1"}
    app = raising({"elicitations": [{**STEP, "_meta": meta}], "retryAfter": 5, "example.com/why": ["x"]})
    _, answer = await call_link(app, wire_2025, URL_CAPS)
    wire_2025._validate(answer, "URLElicitationRequiredError")  # what the schema admits, and no less
    data = answer["error"]["data"]
    assert {k: v for k, v in data.items() if k != "elicitations"} == {
        "retryAfter": 5,
        "example.com/why": ["x"],
    }
    (step,) = data["elicitations"]
    assert step["_meta"] == meta, step
    assert {k: v for k, v in step.items() if k not in ("elicitationId", "_meta")} == STEP


@pytest.mark.parametrize(
    "data",
    [
        None,
        {"elicitations": []},
        {"elicitations": [{"mode": "form", "message": "x", "requestedSchema": {"type": "object"}}]},
        {"elicitations": [{**STEP, "mode": "form"}]},  # a valid URL, but not a URL step
        {"elicitations": [{**STEP, "url": "not a url"}]},
        {"elicitations": [{**STEP, "_meta": "not an object"}]},
        {"elicitations": [{**STEP, "_meta": {"progressToken": None}}]},  # a string or an integer
        {"elicitations": [{**STEP, "_meta": {"progressToken": True}}]},
    ],
    ids=[
        "no-data",
        "no-steps",
        "form-step",
        "form-mode-url",
        "bad-url",
        "bad-meta",
        "null-token",
        "bool-token",
    ],
)
async def test_a_raise_naming_no_valid_url_step_is_never_sent_as_32042(
    wire_2025: WireChecker, caplog: pytest.LogCaptureFixture, data: Any
) -> None:
    """The tool's own fault: its ``isError`` result naming the tool (as at 2026-07-28, and
    as ``ctx.require_url`` given the same step answers), logged; never a -32042."""
    caplog.set_level(logging.ERROR, "mcp_elicit")
    _, answer = await call_link(raising(data), wire_2025, URL_CAPS)
    assert "error" not in answer, answer
    assert answer["result"]["isError"] is True, answer
    assert answer["result"]["content"][0]["text"].startswith("Error executing tool link: "), answer
    assert any(r.levelno >= logging.ERROR for r in caplog.records), "the handler's fault is logged"


@pytest.mark.parametrize(
    "data",
    [
        {"elicitations": [STEP], "example.com/ids": {1, 2}},
        {"elicitations": [{**STEP, "_meta": {"example.com/at": object()}}]},
    ],
    ids=["data-key", "step-meta"],
)
async def test_a_raise_with_a_value_json_cannot_carry_is_answered_32603(
    wire_2025: WireChecker, caplog: pytest.LogCaptureFixture, data: Any
) -> None:
    """What the handler gave is sent as given, so it may hold a value JSON cannot carry:
    the request is answered (-32603, logged) rather than left without a response."""
    caplog.set_level(logging.ERROR, "mcp_elicit")
    session, answer = await call_link(raising(data), wire_2025, URL_CAPS)
    assert answer["error"]["code"] == -32603, answer
    assert any(r.levelno >= logging.ERROR for r in caplog.records), "the handler's fault is logged"
    assert await session.result("ping") == {}
