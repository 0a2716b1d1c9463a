"""Any body at all to the Streamable HTTP server never gets a 500: a property test over
generated JSON-RPC messages, JSON values and bytes, in memory through ASGI."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from support.bad_input import AsgiClient
from support.http import (
    ACCEPT_BOTH,
    VERSION,
    answered_revision,
    check_messages,
    meta,
    mirrored_headers,
    parse_sse,
)
from support.wire import REQUESTS, RESULTS, WireChecker

pytestmark = pytest.mark.anyio
TOOLS = [
    "test_simple_text",
    "test_error_handling",
    "test_image_content",
    "test_x_mcp_header",
    "test_missing_capability",
    "test_input_required_result_elicitation",
    "test_input_required_result_multiple_inputs",
    "json_schema_2020_12_tool",
    "no_such_tool",
]
METHODS = [
    *sorted(REQUESTS),
    "server/discover",
    "notifications/cancelled",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "tasks/result",
    "no/such",
    "",
]
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
metas = st.one_of(
    st.just(meta()),
    st.builds(
        meta,
        capabilities=st.dictionaries(st.sampled_from(["elicitation", "sampling", "roots"]), st.just({}))
        | st.just({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
        progressToken=st.integers(0, 9) | st.text(max_size=4),
    ),
    json_values,
)
params = st.one_of(
    st.fixed_dictionaries(
        {"_meta": metas},
        optional={
            "name": st.sampled_from(TOOLS) | json_values,
            "arguments": st.dictionaries(st.sampled_from(["region", "text", "name", "address"]), json_values)
            | json_values,
            "uri": st.sampled_from(["test://static-text", "test://template/1/data", "test://nope"])
            | json_values,
            "cursor": json_values,
            "requestState": st.text(max_size=30) | json_values,
            "inputResponses": st.dictionaries(st.sampled_from(["user_name", "greeting"]), json_values),
            "taskId": st.text(max_size=8) | json_values,
            "ref": st.fixed_dictionaries({"type": st.sampled_from(["ref/prompt", "ref/resource"])})
            | json_values,
            "argument": st.fixed_dictionaries({"name": st.text(max_size=4), "value": st.text(max_size=4)})
            | json_values,
        },
    ),
    json_values,
)
messages = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0") | json_values, "method": st.sampled_from(METHODS) | json_values},
    optional={
        "id": st.integers(-(2**63), 2**63 - 1) | st.text(max_size=6) | json_values,
        "params": params,
        "result": json_values,
        "error": json_values,
    },
)
bodies = st.one_of(messages.map(orjson.dumps), json_values.map(orjson.dumps), st.binary(max_size=64))


def _valid_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # its fixtures are constants
)
@given(body=bodies, mirror=st.booleans(), content_type=st.sampled_from(["application/json", "text/plain"]))
# a ping with no _meta and no version header is a 2025-11-25 client's, allowed before
# initialize, and answered at that revision: {} is all it gets (2026-07-28 has no ping)
@example(body=b'{"jsonrpc":"2.0","method":"ping","id":0}', mirror=False, content_type="application/json")
# the same ping sent as 2026-07-28 (its _meta, the mirrored headers): a method it lacks
@example(
    body=orjson.dumps({"jsonrpc": "2.0", "method": "ping", "id": 0, "params": {"_meta": meta()}}),
    mirror=True,
    content_type="application/json",
)
async def test_no_body_gets_a_500(
    wire: WireChecker, wire_2025: WireChecker, body: bytes, mirror: bool, content_type: str
) -> None:
    try:
        sent: object = orjson.loads(body)
    except orjson.JSONDecodeError:
        sent = None
    method = sent.get("method") if isinstance(sent, dict) else None
    headers = {"Content-Type": content_type, "Accept": ACCEPT_BOTH}
    if mirror and isinstance(method, str) and method.isprintable() and method.isascii():
        p = sent.get("params") if isinstance(sent, dict) else None
        headers.update(mirrored_headers(method, p if isinstance(p, dict) else None))
        headers["Content-Type"] = content_type
    async with AsgiClient(wire) as mcp:
        response = await mcp.client.post(mcp.url, content=body, headers=headers)
    assert response.status_code in {200, 202, 400, 404, 406, 413, 415}, (response.status_code, response.text)
    ctype = response.headers.get("content-type", "")
    if response.status_code == 202:
        assert response.content == b""
        assert isinstance(sent, dict) and "id" not in sent and isinstance(method, str)
        return
    if ctype.startswith("text/event-stream"):
        received = [orjson.loads(event) for event in parse_sse(response.text)]
    else:
        assert ctype == "application/json", ctype
        received = [orjson.loads(response.content)]
    known = method if isinstance(method, str) and method in RESULTS else None
    checkers = {wire.revision: wire, wire_2025.revision: wire_2025}
    check_messages(checkers[answered_revision(sent, headers)], known, received)
    last = received[-1]
    if (
        response.status_code not in (406, 413, 415)
        and isinstance(sent, dict)
        and "method" in sent
        and _valid_id(sent.get("id"))
    ):
        assert last.get("id") == sent["id"], (sent, last)
    else:
        assert "id" not in last or (isinstance(sent, dict) and last["id"] == sent.get("id")), (sent, last)


async def test_the_property_harness_reaches_the_handlers(wire: WireChecker) -> None:
    async with AsgiClient(wire) as mcp:
        reply = await mcp.request("server/discover")
    assert reply.result["supportedVersions"][0] == VERSION


async def test_a_ping_is_answered_at_the_revision_it_was_sent_in(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    """A ping with no ``_meta`` and no version header is a 2025-11-25 client's, which that
    revision allows before ``initialize``: an empty result, no session needed (and not a
    2026-07-28 result, which would need ``resultType``). Sent as 2026-07-28, it is a method
    that revision removed: -32601."""
    legacy = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
    modern = {**legacy, "params": {"_meta": meta()}}
    async with AsgiClient(wire) as mcp:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH}
        pong = await mcp.client.post(mcp.url, content=orjson.dumps(legacy), headers=headers)
        refused = await mcp.client.post(
            mcp.url, content=orjson.dumps(modern), headers=mirrored_headers("ping", modern["params"])
        )
    assert answered_revision(legacy, headers) == "2025-11-25"
    assert (pong.status_code, pong.json()) == (200, {"jsonrpc": "2.0", "id": 0, "result": {}})
    assert "mcp-session-id" not in pong.headers
    wire_2025.response("ping", pong.json())
    with pytest.raises(AssertionError, match="resultType"):
        wire.response("ping", pong.json())
    assert answered_revision(modern, mirrored_headers("ping", modern["params"])) == VERSION
    assert (refused.status_code, refused.json()["error"]["code"]) == (404, -32601)
    check_messages(wire, "ping", [refused.json()])
