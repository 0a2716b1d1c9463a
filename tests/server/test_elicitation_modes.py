"""Elicitation over multi round-trip requests (2026-07-28), in memory: what a client declared.
No capability means no elicitation, form-only clients get no URL mode, secrets are never
asked in form mode, and URLs must be safe web addresses the server sent."""

from __future__ import annotations

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.forms import FormSchema
from mcp_elicit.sealing import KeyRing
from mcp_elicit.server.outgoing import check_url

from support.elicitation import build
from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_no_capability_no_elicitation(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire, capabilities={})
    response = await client.request("tools/call", {"name": "book", "arguments": {"restaurant": "N"}})
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert client.statuses[-1] == 400


async def test_form_only_client_gets_no_url_mode(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire, capabilities={"elicitation": {}})
    assert (await client.result("tools/call", {"name": "url_step"}))["content"][0][
        "text"
    ] == "fallback: no URL mode"
    response = await client.request("tools/call", {"name": "needs_url"})
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    url_client = MemoryClient(build(), checker=wire, capabilities={"elicitation": {"form": {}, "url": {}}})
    first = await url_client.result("tools/call", {"name": "url_step"})
    params = first["inputRequests"]["url-1"]["params"]
    assert params == {"mode": "url", "message": "Sign in to continue", "url": "https://example.com/connect"}
    final, _ = await url_client.rounds("tools/call", {"name": "url_step"}, lambda k, r: {"action": "accept"})
    assert final["result"]["content"][0]["text"] == "url answer accept"


async def test_a_url_answer_counts_only_for_a_url_the_server_sent(wire: WireChecker) -> None:
    """Accepting a URL step is consent to open a page the client was shown: an answer that
    comes without the state of the round that asked it (or whose state did not ask it)
    answers nothing, and the step is asked. Form answers without state stay accepted."""
    app = build()

    @app.tool()
    async def name_then_url(ctx: Context) -> str:
        name = await ctx.elicit("Name?", Form(name=String()), key="name")
        step = await ctx.elicit_url("Sign in to continue", "https://example.com/connect")
        return f"{name.action}/{step.action}"

    client = MemoryClient(app, checker=wire, capabilities={"elicitation": {"form": {}, "url": {}}})
    accepted = {"url-1": {"action": "accept"}}
    params = {"name": "url_step", "inputResponses": accepted}
    first = (await client.request("tools/call", params, malformed=True))["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["url-1"]["params"]["url"] == "https://example.com/connect"
    bound = {**params, "requestState": first["requestState"]}
    done = (await client.request("tools/call", bound, malformed=True))["result"]
    assert done["content"][0]["text"] == "url answer accept"
    # answered ahead of its question, with a state that asked only the form
    asked = await client.result("tools/call", {"name": "name_then_url"})
    assert set(asked["inputRequests"]) == {"name"}
    ahead = {"name": {"action": "accept", "content": {"name": "Ada"}}, **accepted}
    retry = {"name": "name_then_url", "inputResponses": ahead, "requestState": asked["requestState"]}
    second = (await client.request("tools/call", retry, malformed=True))["result"]
    assert second["resultType"] == "input_required"
    assert set(second["inputRequests"]) == {"url-1"}
    # a form answered without state is still taken, as before
    form_only = {"name": "name_then_url", "inputResponses": {"name": ahead["name"]}}
    third = (await client.request("tools/call", form_only, malformed=True))["result"]
    assert set(third["inputRequests"]) == {"url-1"}


async def test_secrets_are_never_asked_in_form_mode(client: MemoryClient) -> None:
    response = await client.request("tools/call", {"name": "greedy"})
    assert response["error"]["code"] == -32603
    assert "URL mode" in response["error"]["message"] or "url" in response["error"]["message"].lower()


async def test_a_form_read_without_the_secret_guard_is_still_never_asked(wire: WireChecker) -> None:
    """``FormSchema.parse(..., check_secrets=False)`` is how a client reads what a server
    sent; a handler that asks such a form still never sends a password field (Security,
    form mode): the request fails as for ``Form(password=String())``, naming the field."""
    app = Server("elicit", state_keys=KeyRing([b"k" * 16 + b"e" * 16]))
    read = FormSchema.parse(
        {"type": "object", "properties": {"password": {"type": "string"}}}, check_secrets=False
    )
    allowed = FormSchema.parse(
        {"type": "object", "properties": {"password": {"type": "string"}}},
        not_secret={"password"},
        check_secrets=False,
    )

    @app.tool()
    async def sign_in(ctx: Context) -> str:
        return (await ctx.elicit("Sign in", read)).action

    @app.tool()
    async def named(ctx: Context) -> str:
        return (await ctx.elicit("Which password manager entry?", allowed, key="entry")).action

    client = MemoryClient(app, checker=wire)
    response = await client.request("tools/call", {"name": "sign_in"})
    assert response["error"]["code"] == -32603
    assert "password" in response["error"]["message"] and "URL" in response["error"]["message"]
    asked = (await client.result("tools/call", {"name": "named"}))["inputRequests"]
    assert set(asked) == {"entry"}


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("javascript:alert(1)", "http(s)"),
        ("data:text/html,hi", "http(s)"),
        ("https://", "no host"),
        ("https:///path", "no host"),
        ("https:example.com/x", "http(s)"),
        ("https://user:pw@example.com/x", "user name or password"),
        ("https://example.com@evil.example/x", "user name or password"),
        ("https://exa mple.com/", "U+0020"),
        ("https://example.com/\nnext", "U+000A"),
        ("https://example.com/\x00", "U+0000"),
        ("https://exam\u202eple.com/", "U+202E"),
        ("https://bücher.example/", "U+00FC"),
        ("https://example.com\\@evil.example/", "U+005C"),
        ("https://example.com/%zz", "%-escape"),
        ("https://example.com:99999/", "port"),
        ("https://example.com/" + "a" * 2100, "2048"),
    ],
)
async def test_a_url_that_is_no_safe_web_address_is_refused(url: str, fragment: str) -> None:
    """The URL goes to a person's browser as given: only an absolute http(s) URI (RFC 3986,
    what the schema's ``format: uri`` means) with a host and no credentials, of a sane length."""
    app = Server("urls", state_keys=KeyRing([bytes(range(32))]))
    seen: list[str] = []

    @app.tool()
    async def open_page(ctx: Context, url: str) -> str:
        try:
            ctx.elicit_url("Open this page", url)
        except ValueError as exc:
            seen.append(str(exc))
            return "refused"
        return "asked"

    client = MemoryClient(app, capabilities={"elicitation": {"url": {}}})
    result = await client.result("tools/call", {"name": "open_page", "arguments": {"url": url}})
    assert result["content"][0]["text"] == "refused"
    assert fragment in seen[0]


@pytest.mark.parametrize(
    "url",
    [
        "https://me:PASSWORD" + "x" * 70 + "@example.com/x",  # the cut at 80 falls in the password
        "https://example.com/" + "p" * 45 + "?token=SECRET SECRET",
        "https://me:PASSWORD@exa mple.com/?token=SECRET",
        "https://example.com:99999/?token=SECRET",
        "javascript:x?token=SECRET",
    ],
)
def test_a_refused_url_is_quoted_without_its_password_or_key(url: str) -> None:
    """The refusal reaches the server's log, a span and (unless tool errors are redacted)
    the client: the URL it quotes is redacted whole, then cut to 80 characters, so no
    part of a password or key is in it."""
    with pytest.raises(ValueError, match="URL") as caught:
        check_url(url)
    assert "PASSWORD" not in str(caught.value) and "SECR" not in str(caught.value), str(caught.value)
    assert "REDACTED" in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/connect?state=a%20b#frag",
        "HTTPS://Example.COM:8443/x",
        "http://127.0.0.1:8000/mcp-elicit/flows/abc?t=xyz",
        "https://[::1]:8443/",
        "https://xn--bcher-kva.example/",
    ],
)
async def test_a_web_address_is_sent_as_given(url: str) -> None:
    app = Server("urls", state_keys=KeyRing([bytes(range(32))]))

    @app.tool()
    async def open_page(ctx: Context, url: str) -> str:
        return (await ctx.elicit_url("Open this page", url)).action

    client = MemoryClient(app, capabilities={"elicitation": {"url": {}}})
    first = await client.result("tools/call", {"name": "open_page", "arguments": {"url": url}})
    assert first["inputRequests"]["url-1"]["params"]["url"] == url
