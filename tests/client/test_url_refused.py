"""A URL-mode question whose URL the client refuses (``client.url_consent``), against the
hostile server process over stdio: the library answers ``decline`` itself before any
answerer, bundled or a user's own, sees the URL, tells the answerer through its optional
``refused`` hook, and logs it; plain http still reaches the answerer, with a warning."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence

import pytest

from client.hostile import hostile
from mcp_elicit.client.answerers import ElicitAnswer
from mcp_elicit.client.url_consent import UrlVerdict
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import ProtocolError
from mcp_elicit.telemetry_attributes import redact_urls

pytestmark = pytest.mark.anyio

#: URLs the client refuses before any answerer sees them, with what the refusal names.
REFUSED = [
    ("javascript:alert(1)", "javascript:"),
    ("file:///etc/passwd", "file:"),
    ("data:text/html,<script>alert(1)</script>", "data:"),
    ("ftp://example.com/file", "ftp:"),
    ("/sign-in", "no scheme"),
    ("example.com/sign-in", "no scheme"),
    ("https://user:pw@example.com/", "user name or password"),
    ("https://bank.example@evil.example/", "user name or password"),
    ("https://example.com/\x07sign-in", "U+0007"),
    ("https://example.com/\u202esign-in", "U+202E"),
]


class Custom:
    """A user's own answerer, without the ``refused`` hook: accepts every URL it is shown."""

    modes = frozenset({"form", "url"})

    def __init__(self) -> None:
        self.urls: list[str | None] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.urls.append(request.url)
        return ElicitAnswer.accept()


class Told(Custom):
    """As ``Custom``, with the ``refused`` hook (and ``elicit_many``): keeps what it was told."""

    def __init__(self) -> None:
        super().__init__()
        self.refusals: list[tuple[str | None, tuple[str, ...]]] = []
        self.batches: list[list[str | None]] = []

    async def elicit_many(self, requests: Sequence[ElicitationRequest]) -> list[ElicitAnswer]:
        self.batches.append([r.url for r in requests])
        return [ElicitAnswer.accept() for _ in requests]

    async def refused(self, request: ElicitationRequest, verdict: UrlVerdict) -> None:
        self.refusals.append((request.url, verdict.codes))


@pytest.mark.parametrize(("url", "why"), REFUSED)
async def test_a_refused_url_is_declined_before_a_custom_answerer_sees_it(
    url: str, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    """2025-11-25: a URL the bundled answerers refuse reached a user's own answerer as it
    was. The library answers decline itself (the server's decline path), logs why with
    the URL escaped, and the answerer never sees it."""
    answerer = Custom()
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.client"):
        async with hostile(["legacy-ask-url", url], "2025-11-25", answerer) as (client, _):
            out = await asyncio.wait_for(client.call_tool("t"), 10)
    told = json.loads(out["content"][0]["text"])
    assert told == {"jsonrpc": "2.0", "id": "q-0", "result": {"action": "decline"}}
    assert answerer.urls == []
    logged = [r.getMessage() for r in caplog.records if "refuses to show" in r.getMessage()]
    assert len(logged) == 1 and why in logged[0] and "Answering decline" in logged[0]
    # control characters inert (the server's name is its command here, which holds the URL),
    # and a URL's user name and password never in a log line, as in every other one
    shown = redact_urls(f" to open {url!r}, a URL")
    assert shown in logged[0] and logged[0].split(" to open ")[1].isascii(), logged[0]
    if "@" in url:
        assert "REDACTED@" in shown and "pw@" not in logged[0] and "bank.example@" not in logged[0]


@pytest.mark.parametrize(("url", "why"), REFUSED[:3] + REFUSED[-1:])
async def test_a_refused_url_in_a_round_is_declined_and_the_answerer_told(url: str, why: str) -> None:
    """2026-07-28: the round is answered (no failure): the refused question ``decline``,
    the answerer's ``refused`` hook given the verdict, its ``elicit`` never called."""
    answerer = Told()
    async with hostile(["ask-url", url], "2026-07-28", answerer) as (client, _):
        out = await asyncio.wait_for(client.call_tool("t"), 10)
    assert json.loads(out["content"][0]["text"]) == {"k": {"action": "decline"}}
    assert answerer.urls == [] and answerer.batches == []
    assert [u for u, _ in answerer.refusals] == [url]
    assert answerer.refusals[0][1]  # the codes of what refuses it


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_url_too_long_to_be_shown_whole_is_declined(revision: str) -> None:
    """A person must see the whole URL before consenting to open it; what the answerers
    show of one is bounded (2048 characters, the host aside), so a longer one was shown cut
    short and opened whole on consent. It is now refused as the others are; one of 2048
    characters still reaches the answerer."""
    answerer = Told()
    longest = "https://example.com/?next=" + "a" * (2048 - 26)
    scenario = "legacy-ask-url" if revision == "2025-11-25" else "ask-url"
    for url, action in [(longest + "a", "decline"), (longest, "accept")]:
        async with hostile([scenario, url], revision, answerer) as (client, _):
            out = await asyncio.wait_for(client.call_tool("t"), 10)
        told = json.loads(out["content"][0]["text"])
        assert (told["result"] if revision == "2025-11-25" else told["k"]) == {"action": action}
    assert answerer.urls == [longest]
    assert answerer.refusals == [(longest + "a", ("too-long",))]


async def test_a_round_shows_the_answerer_only_what_is_not_refused() -> None:
    """Every URL of a round is judged before any is shown: ``elicit_many`` gets the good
    ones, the refused one is declined and told."""
    answerer = Told()
    urls = ["https://example.com/a", "javascript:alert(1)", "https://example.com/b"]
    async with hostile(["ask-url", *urls], "2026-07-28", answerer) as (client, _):
        out = await asyncio.wait_for(client.call_tool("t"), 10)
    answers = json.loads(out["content"][0]["text"])
    assert answers == {"k": {"action": "accept"}, "k1": {"action": "decline"}, "k2": {"action": "accept"}}
    assert answerer.batches == [["https://example.com/a", "https://example.com/b"]]
    assert answerer.refusals == [("javascript:alert(1)", ("scheme",))]


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_plain_http_url_is_put_to_the_answerer_with_a_warning(
    revision: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Plain http to a host on the network is not refused (the bundled answerers show it,
    warned): the answerer gets it, and a warning is logged saying it is not encrypted."""
    answerer = Told()
    scenario = "legacy-ask-url" if revision == "2025-11-25" else "ask-url"
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.client"):
        async with hostile([scenario, "http://example.com/sign-in"], revision, answerer) as (client, _):
            out = await asyncio.wait_for(client.call_tool("t"), 10)
    told = json.loads(out["content"][0]["text"])
    assert (told["result"] if revision == "2025-11-25" else told["k"]) == {"action": "accept"}
    assert answerer.urls == ["http://example.com/sign-in"] and answerer.refusals == []
    assert any("not encrypted" in r.getMessage() for r in caplog.records)


async def test_a_url_elicitation_required_error_with_a_refused_url_shows_none() -> None:
    """2025-11-25: a -32042 listing a URL the client refuses is declined before the person
    is shown any of its URLs (the first here is a good one): the request ends with the
    error, saying the URL was refused."""
    answerer = Told()
    async with hostile(["legacy-url-required", "2", "refused-url"], "2025-11-25", answerer) as (client, _):
        with pytest.raises(ProtocolError, match=r"refused") as raised:
            await asyncio.wait_for(client.call_tool("t"), 10)
    assert raised.value.code == -32042
    assert answerer.urls == []
    assert answerer.refusals == [("javascript:alert(1)", ("scheme",))]


class Says(Told):
    """As ``Told``, its ``refused`` hook answering ``said`` (a person's cancel, or an
    answerer trying to accept)."""

    def __init__(self, said: ElicitAnswer) -> None:
        super().__init__()
        self.said = said

    async def refused(self, request: ElicitationRequest, verdict: UrlVerdict) -> ElicitAnswer:
        await super().refused(request, verdict)
        return self.said


@pytest.mark.parametrize(
    ("said", "answered"),
    [
        (ElicitAnswer.cancel(), "cancel"),
        (ElicitAnswer.accept(), "decline"),
        (ElicitAnswer.decline(), "decline"),
    ],
)
async def test_the_hook_may_cancel_a_refused_url_but_never_accept_it(
    said: ElicitAnswer, answered: str
) -> None:
    answerer = Says(said)
    async with hostile(["legacy-ask-url", "javascript:alert(1)"], "2025-11-25", answerer) as (client, _):
        out = await asyncio.wait_for(client.call_tool("t"), 10)
    assert json.loads(out["content"][0]["text"])["result"] == {"action": answered}
    assert answerer.urls == [] and len(answerer.refusals) == 1
