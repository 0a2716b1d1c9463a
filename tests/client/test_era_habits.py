"""A server that asks in 2025-11-25's ways, met from Python: the error ``call_tool`` (and
``get_prompt``, ``read_resource``) raises says what ``Client`` option would follow it.

The server is built with the official Python SDK (tests/peers/sdk_era_server.py, over
stdio): its ``ctx.elicit`` sends ``elicitation/create`` whatever the revision, and ``link``
answers -32042 whatever the revision. Without the peer, the peer tests skip. The hint's
words on their own are tested without a peer, below them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_elicit.client import Client, ElicitAnswer, ElicitationRequest
from mcp_elicit.client.era_habits import follow_hint
from mcp_elicit.errors import InternalError, InvalidRequest, ProtocolError, URLElicitationRequired
from mcp_elicit.transports.stdio_client import StdioTransport

from support.peers import sdk_python
from support.procs import ROOT

__all__ = ["sdk_python"]  # a fixture

SERVER = ROOT / "tests" / "peers" / "sdk_era_server.py"
VERSIONS_HINT = "pass Client versions=['2025-11-25']"


class Yes:
    """An app's own answerer: confirms every form, consents to every page."""

    def __init__(self, modes: frozenset[str] = frozenset({"form", "url"})) -> None:
        self.modes = modes

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.accept(ok=True) if request.mode == "form" else ElicitAnswer.accept()


def client(python: Path, answerer: Yes, *versions: str) -> Client:
    transport = StdioTransport([str(python), str(SERVER)])
    return Client(transport, answerer=answerer, **({"versions": versions} if versions else {}))


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_server_initiated_question_refused_at_2026_says_which_versions_follow_it(
    sdk_python: Path,
) -> None:
    async with client(sdk_python, Yes()) as app:  # every revision offered: 2026-07-28 is agreed
        assert app.revision == "2026-07-28"
        with pytest.raises(ProtocolError, match="no back-channel") as raised:
            await app.call_tool("confirm", {"name": "Al"})
        with pytest.raises(ProtocolError, match="no back-channel") as raised_by_prompt:
            await app.get_prompt("greeting", {"name": "Al"})
    for error in (raised.value, raised_by_prompt.value):
        assert VERSIONS_HINT in str(error)
        assert "elicitation/create" in str(error) and "2026-07-28" in str(error)
    # what it says works as written
    async with client(sdk_python, Yes(), "2025-11-25") as app:
        out = await app.call_tool("confirm", {"name": "Al"})
    assert out["content"][0]["text"] == "Al: accept"


@pytest.mark.anyio
@pytest.mark.slow
async def test_url_elicitation_required_at_2026_says_which_versions_follow_it(sdk_python: Path) -> None:
    async with client(sdk_python, Yes(frozenset({"form"}))) as app:
        with pytest.raises(URLElicitationRequired) as raised:
            await app.call_tool("link", {"provider": "gh"})
    said = str(raised.value)
    assert VERSIONS_HINT in said and "-32042" in said
    assert "an answerer= whose modes include url" in said  # this one takes forms only
    assert raised.value.data["elicitations"][0]["url"] == "https://example.com/oauth/start"


@pytest.mark.anyio
@pytest.mark.slow
async def test_url_elicitation_required_to_a_client_without_url_mode_says_what_to_pass(
    sdk_python: Path,
) -> None:
    async with client(sdk_python, Yes(frozenset({"form"})), "2025-11-25") as app:
        with pytest.raises(URLElicitationRequired) as raised:
            await app.call_tool("link", {"provider": "gh"})
    said = str(raised.value)
    assert said.startswith("URL elicitation required (")
    assert "declared no url-mode elicitation" in said
    assert "pass Client an answerer= whose modes include url" in said
    assert "versions" not in said  # the revision is not what is missing


@pytest.mark.parametrize(
    "words",
    [
        "Cannot send 'elicitation/create': this transport context has no back-channel",  # the SDK's
        "elicitation via server-initiated requests is unavailable on 2026-07-28 connections.",  # FastMCP's
    ],
)
def test_words_saying_the_server_cannot_send_its_requests_get_the_hint(words: str) -> None:
    hint = follow_hint(InvalidRequest(words), "2026-07-28", frozenset({"form"}))
    assert VERSIONS_HINT in hint
    assert follow_hint(InvalidRequest(words), "2025-11-25", frozenset({"form"})) == ""  # not the cause there


@pytest.mark.parametrize(
    "words",
    [
        "No results for 'how do I send elicitation/create'",  # the caller's words, echoed
        "Invalid params: 'elicitation/create' is not a tool; did you mean call?",
    ],
)
def test_words_merely_naming_them_get_no_hint(words: str) -> None:
    assert follow_hint(InternalError(words), "2026-07-28", frozenset({"form", "url"})) == ""


def test_a_url_elicitation_required_the_client_could_follow_gets_no_hint() -> None:
    # at 2025-11-25 with URL mode declared, a -32042 that reaches the caller was declined,
    # refused or never finished: what the client did is said already, no option would help
    error = URLElicitationRequired("URL elicitation required (the user answered decline)")
    assert follow_hint(error, "2025-11-25", frozenset({"form", "url"})) == ""


NO_BACK_CHANNEL = (
    "Cannot send {!r}: this transport context has no back-channel for server-initiated requests."
)


@pytest.mark.parametrize(
    ("method", "callbacks", "option"),
    [
        ("elicitation/create", frozenset(), ""),
        ("sampling/createMessage", frozenset({"sampling"}), ""),
        ("sampling/createMessage", frozenset(), " and a sampling= callback"),
        ("roots/list", frozenset({"roots"}), ""),
        ("roots/list", frozenset({"sampling"}), " and a roots= callback"),
    ],
)
def test_the_hint_names_the_request_the_server_could_not_send_and_what_answers_it(
    method: str, callbacks: frozenset[str], option: str
) -> None:
    # the SDK says the same of sampling and roots: the hint called each elicitation/create,
    # and told a client without the callback that versions= alone would answer it
    error = InvalidRequest(NO_BACK_CHANNEL.format(method))
    hint = follow_hint(error, "2026-07-28", frozenset({"form"}), callbacks=callbacks)
    assert f"requests of its own, {method}, which a 2026-07-28 connection" in hint
    assert hint.endswith(f"; {VERSIONS_HINT}{option} to answer them")
    others = {"elicitation/create", "sampling/createMessage", "roots/list"} - {method}
    assert not any(other in hint for other in others)


def test_an_elicitation_refused_to_a_client_without_an_answerer_names_one_too() -> None:
    words = "elicitation via server-initiated requests is unavailable on 2026-07-28 connections."  # FastMCP's
    hint = follow_hint(InvalidRequest(words), "2026-07-28", frozenset())
    assert "requests of its own, elicitation/create," in hint
    assert hint.endswith(f"; {VERSIONS_HINT} and an answerer= to answer them")


def test_a_request_the_hint_cannot_name_is_not_named() -> None:
    hint = follow_hint(InvalidRequest(NO_BACK_CHANNEL.format("ping")), "2026-07-28", frozenset({"form"}))
    assert "requests of its own, which a 2026-07-28 connection does not carry" in hint
    assert "elicitation/create" not in hint
