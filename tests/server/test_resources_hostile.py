"""Resource templates facing a hostile client: URIs built to make matching slow or wrong,
on both revisions; every message is checked against the schema of its revision."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit import Server
from mcp_elicit.core.subscriptions import MAX_URI
from mcp_elicit.server.resources import _compile, _Shape

from support.deadline import within
from support.memory import MemoryClient, SessionClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def dashed() -> Server:
    app = Server("dashed")

    @app.resource("test://parts/{a}-{b}-{c}")
    def parts(a: str, b: str, c: str) -> str:
        return f"{a}|{b}|{c}"

    @app.resource("test://spans/{+a}-{+b}-{+c}")
    def spans(a: str, b: str, c: str) -> str:
        return f"{a}|{b}|{c}"

    @app.resource("test://files/{name}.{ext}")
    def file(name: str, ext: str) -> str:
        return f"{name}|{ext}"

    return app


@pytest.mark.parametrize(
    "uri",
    [
        "test://parts/" + "-" * 8_000 + "/",
        "test://spans/" + "-" * 8_000 + "\n",
        "test://files/" + "a." * 4_000 + "/",
    ],
    ids=["simple variables", "reserved variables", "name and extension"],
)
async def test_a_long_uri_no_template_serves_is_not_found_in_linear_time(
    wire: WireChecker, wire_2025: WireChecker, uri: str
) -> None:
    # several variables in one segment, within the length served: a backtracking match
    # would take minutes on these
    session = SessionClient(dashed(), checker=wire_2025)
    await session.open()
    for client, code in ((MemoryClient(dashed(), checker=wire), -32602), (session, -32002)):
        with within(60, "matching a long URI against the templates"):
            response = await client.request("resources/read", {"uri": uri})
        assert response["error"]["code"] == code
        assert response["error"]["data"] == {"uri": uri}


@pytest.mark.parametrize(
    ("uri", "text"),
    [
        ("test://parts/x-y-z", "x|y|z"),
        ("test://parts/x-y-z-w", "x-y|z|w"),  # each variable takes as much as it can, in order
        ("test://spans/a/b-c/d-e", "a/b|c/d|e"),
        ("test://files/archive.tar.gz", "archive.tar|gz"),
    ],
)
async def test_variables_in_one_segment_take_as_much_as_they_can_in_order(
    wire: WireChecker, uri: str, text: str
) -> None:
    got = await MemoryClient(dashed(), checker=wire).result("resources/read", {"uri": uri})
    assert got["contents"] == [{"uri": uri, "mimeType": "text/plain", "text": text}]


@given(
    template=st.sampled_from(
        ["t:/{a}-{b}-{c}", "t:/{+a}/{b}", "t:/{a}{b}", "t:/{+a}{+b}x", "x{+a}", "t:/{a}/{+b}-{c}?q"]
    ),
    rest=st.text(alphabet="ab-./?#\nx", max_size=12),
)
def test_matching_splits_a_uri_as_the_greedy_expression_would(template: str, rest: str) -> None:
    uri = template.split("{")[0] + rest
    expected = _compile(template).match(uri)  # the reference, fine on URIs this short
    assert _Shape.of(template).split(uri) == (expected.groupdict() if expected else None)


async def test_a_template_serves_no_uri_longer_than_one_can_subscribe_to(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    # matching is linear, but a request body of megabytes would still hold the event loop
    session = SessionClient(dashed(), checker=wire_2025)
    await session.open()
    longest = "test://spans/" + "a" * (MAX_URI - len("test://spans/-b-c")) + "-b-c"
    too_long = longest[:13] + "a" + longest[13:]
    for client, code in ((MemoryClient(dashed(), checker=wire), -32602), (session, -32002)):
        served = await client.result("resources/read", {"uri": longest})
        assert served["contents"][0]["text"].endswith("a|b|c")
        response = await client.request("resources/read", {"uri": too_long})
        assert response["error"]["code"] == code
        assert response["error"]["data"] == {"uri": too_long}
        assert f"{MAX_URI + 1} characters long" in response["error"]["message"]
        assert f"at most {MAX_URI}" in response["error"]["message"]
        assert len(response["error"]["message"]) < 600, "the message quotes the URI cut short"


@pytest.mark.parametrize(
    ("template", "ambiguous"),
    [
        ("test://items/{id}", False),
        ("t:/{a}/{b}", False),
        ("t:/{a}?{b}", False),
        ("t:/{a}/{+b}", False),
        ("x{+a}", False),
        ("t:/{a}-{b}", True),
        ("t:/{a}{b}", True),
        ("t:/{+a}/{b}", True),
    ],
)
def test_only_templates_a_greedy_expression_could_backtrack_on_are_split_by_hand(
    template: str, ambiguous: bool
) -> None:
    """One variable per segment (each but the last followed by ``/``, ``?`` or ``#``) is
    matched by the compiled expression, which cannot backtrack there and is some 40 times
    faster; anything else by ``_Shape``."""
    assert _Shape.ambiguous(template) is ambiguous
