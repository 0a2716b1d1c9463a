"""Scopes of prompts and resources (``app.prompt(scopes=...)``, ``app.resource(...,
scopes=...)``, templates too) on the Streamable HTTP server: refused exactly as a scoped
tool's call is (tests/transports/test_http_tool_scopes.py): 403 ``insufficient_scope``
naming the scopes before the handler runs, on both revisions; completing a scoped prompt's
or template's arguments needs them too; a resource ``readable`` hides stays "not found";
mcp-elicit's client steps up. Real servers on 127.0.0.1 (raw HTTP, and the authlib
authorization server of ``support.mcp_authorization``), and stdio pipes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcp_elicit import Principal, Server, StaticTokens
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.auth import ResourceMetadata
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import McpHttp
from support.http_auth_flow import REVISIONS, Recording
from support.mcp_authorization import serving, whoami_server
from support.procs import uvicorn_server
from support.sessions import open_session
from support.stdio_pipes import stdio_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def scoped_server(runs: list[str]) -> Server:
    """``whoami`` for anyone the endpoint lets in; the prompt ``plan``, the resource
    ``vault://keys`` and the template ``repo://{name}`` need the scope ``repo`` (each run
    appended to ``runs``); ``vault://ann`` also needs it, and only ann may read it."""
    app = whoami_server()

    @app.prompt(scopes=["repo"])
    def plan(goal: str) -> str:
        runs.append("plan")
        return f"Plan {goal}"

    @app.prompt()
    def open_plan() -> str:
        return "Plan anything"

    @app.resource("vault://keys", scopes=["repo"])
    def keys() -> str:
        runs.append("keys")
        return "the keys"

    @app.resource("repo://{name}", scopes=["repo"])
    def repo(name: str) -> str:
        runs.append(f"repo {name}")
        return f"repo {name}"

    @app.resource("vault://ann", scopes=["repo"], readable=lambda p: p is not None and p.subject == "ann")
    def anns() -> str:
        return "ann's"

    app.completion()(lambda ref, argument, context: ["secret-name"])
    return app


TOKENS = {
    "tok-profile": Principal("bob", scopes="profile"),
    "tok-ann": Principal("ann", scopes="profile"),
    "tok-repo": Principal("bob", scopes="profile repo"),
    "tok-admin": Principal("bob", scopes="profile admin"),  # admin implies repo
}
#: Each scoped request, and the name its refusal gives what it asked for.
SCOPED = [
    ("prompts/get", {"name": "plan", "arguments": {"goal": "x"}}, "prompt 'plan'"),
    ("resources/read", {"uri": "vault://keys"}, "resource 'vault://keys'"),
    ("resources/read", {"uri": "repo://mcp-elicit"}, "resource 'repo://{name}'"),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "plan"}, "argument": {"name": "goal", "value": "s"}},
        "prompt 'plan'",
    ),
    (
        "completion/complete",
        {"ref": {"type": "ref/resource", "uri": "repo://{name}"}, "argument": {"name": "name", "value": "s"}},
        "resource 'repo://{name}'",
    ),
]


def bearer(token: str) -> dict[str, object]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def raw(wire: WireChecker) -> AsyncIterator[tuple[McpHttp, httpx.AsyncClient, list[str], str]]:
    runs: list[str] = []
    metadata = ResourceMetadata(
        ["https://as.example"], required_scopes=["profile"], implied_scopes={"admin": ["repo"]}
    )
    app = StreamableHTTP(scoped_server(runs), auth=StaticTokens(TOKENS), resource_metadata=metadata)
    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=10) as http:
        yield McpHttp(http, running.url, wire), http, runs, running.url


@pytest.mark.parametrize(("method", "params", "what"), SCOPED, ids=lambda x: x if isinstance(x, str) else "")
async def test_without_the_scope_the_request_gets_403_and_the_challenge(
    raw: tuple[McpHttp, httpx.AsyncClient, list[str], str], method: str, params: dict[str, Any], what: str
) -> None:
    mcp, _, runs, _ = raw
    unauthorized = await mcp.request(method, params, refused=True)
    assert unauthorized.status == 401
    document = unauthorized.headers["www-authenticate"].split("resource_metadata=")[1]
    reply = await mcp.request(method, params, headers=bearer("tok-profile"), refused=True)
    assert reply.status == 403
    assert reply.headers["www-authenticate"] == (
        f'Bearer error="insufficient_scope", error_description="{what} needs scope repo", '
        f'scope="profile repo", resource_metadata={document}'
    )
    assert runs == []  # refused before the handler ran
    for token in ("tok-repo", "tok-admin"):  # held, or implied
        done = await mcp.request(method, params, headers=bearer(token))
        assert done.status == 200 and "result" in done.message, done.message
    assert len(runs) == (2 if method != "completion/complete" else 0)


async def test_what_has_no_scopes_and_the_lists_are_open(
    raw: tuple[McpHttp, httpx.AsyncClient, list[str], str],
) -> None:
    mcp, _, runs, _ = raw
    profile = bearer("tok-profile")
    assert (await mcp.request("prompts/get", {"name": "open_plan"}, headers=profile)).status == 200
    # the lists show what the caller cannot use yet (using it is how it steps up)
    prompts = await mcp.request("prompts/list", {}, headers=profile)
    assert [p["name"] for p in prompts.result["prompts"]] == ["plan", "open_plan"]
    resources = await mcp.request("resources/list", {}, headers=profile)
    assert "vault://keys" in [r["uri"] for r in resources.result["resources"]]
    templates = await mcp.request("resources/templates/list", {}, headers=profile)
    assert [t["uriTemplate"] for t in templates.result["resourceTemplates"]] == ["repo://{name}"]
    # nothing registered by that name: the handler's answer, not a 403
    unknown = await mcp.request("prompts/get", {"name": "nope"}, headers=profile)
    assert unknown.status == 200 and unknown.message["error"]["code"] == -32602
    missing = await mcp.request("resources/read", {"uri": "vault://nothing"}, headers=profile)
    assert missing.status == 200 and missing.message["error"]["code"] == -32602
    assert runs == []


async def test_a_resource_readable_hides_is_not_found_before_its_scopes(
    raw: tuple[McpHttp, httpx.AsyncClient, list[str], str],
) -> None:
    """A 403 would tell bob the resource is there; he is told what a URI nothing serves
    gets. Ann, whom ``readable`` lets read it, is asked for the scope."""
    mcp, _, _, _ = raw
    hidden = await mcp.request("resources/read", {"uri": "vault://ann"}, headers=bearer("tok-profile"))
    assert hidden.status == 200 and hidden.message["error"]["code"] == -32602
    assert (
        await mcp.request("resources/read", {"uri": "vault://ann"}, headers=bearer("tok-ann"))
    ).status == 403


@pytest.mark.parametrize(
    ("method", "params", "what"), SCOPED[:3], ids=lambda x: x if isinstance(x, str) else ""
)
async def test_a_2025_11_25_session_request_gets_the_same_403(
    raw: tuple[McpHttp, httpx.AsyncClient, list[str], str],
    wire_2025: WireChecker,
    method: str,
    params: dict[str, Any],
    what: str,
) -> None:
    _, http, runs, url = raw
    profile = {"authorization": "Bearer tok-profile"}
    session = await _session(http, url, wire_2025, profile)
    body = {"jsonrpc": "2.0", "id": 2, "method": method, "params": params}
    wire_2025.request(body)
    refused = await http.post(url, json=body, headers={**session, **profile})
    assert refused.status_code == 403
    assert f'error_description="{what} needs scope repo"' in refused.headers["www-authenticate"]
    assert 'scope="profile repo"' in refused.headers["www-authenticate"]
    assert runs == []
    answered = await http.post(url, json=body, headers={**session, "authorization": "Bearer tok-repo"})
    assert answered.status_code == 200, answered.text
    wire_2025.response(method, answered.json())
    assert "result" in answered.json()
    assert len(runs) == 1


async def _session(
    http: httpx.AsyncClient, url: str, wire: WireChecker, auth: dict[str, str]
) -> dict[str, str]:
    """A 2025-11-25 session opened with ``auth``; its later requests' headers, without it."""

    class Authed(httpx.Auth):
        def auth_flow(self, request: httpx.Request) -> Any:
            request.headers.update(auth)
            yield request

    previous, http.auth = http.auth, Authed()
    try:
        return await open_session(http, url, wire)
    finally:
        http.auth = previous


@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_client_steps_up_to_a_scoped_prompt_and_resource(revision: str) -> None:
    runs: list[str] = []
    async with serving(scoped_server(runs)) as site:
        site.mcp.resource_metadata = ResourceMetadata(
            [site.base], scopes_supported=["profile"], required_scopes=["profile"]
        )
        person = Recording()
        auth = OAuth(person)  # type: ignore[arg-type]
        async with connect_http(site.url, auth=auth, versions=[revision], timeout=10) as client:
            assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "hello"
            assert person.scopes == ["profile"]
            got = await client.get_prompt("plan", {"goal": "x"})
            assert got["messages"][0]["content"]["text"] == "Plan x"
            read = await client.read_resource("repo://mcp-elicit")
            assert read["contents"][0]["text"] == "repo mcp-elicit"
    assert person.scopes == ["profile", "profile repo"]  # one step up serves both
    assert runs == ["plan", "repo mcp-elicit"]


def test_a_scoped_prompt_or_resource_is_never_served_over_http_without_token_checks() -> None:
    for register in (
        lambda app: app.prompt(name="plan", scopes=["repo"])(lambda: "p"),
        lambda app: app.resource("vault://x", scopes=["repo"])(lambda: "r"),
        lambda app: app.resource("repo://{name}", scopes=["repo"])(lambda name: name),
    ):
        app = whoami_server()
        register(app)
        with pytest.raises(ConfigError, match="needs scopes: serving it over HTTP needs auth="):
            StreamableHTTP(app)


async def test_registered_after_the_app_was_made_it_is_refused_then_open_once_removed(
    wire: WireChecker,
) -> None:
    server = whoami_server()
    app = StreamableHTTP(server)
    server.prompt(name="plan", scopes=["repo"])(lambda: "p")
    server.resource("repo://{name}", scopes=["repo"])(lambda name: name)
    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        assert (await mcp.request("prompts/get", {"name": "plan"}, refused=True)).status == 403
        assert (await mcp.request("resources/read", {"uri": "repo://a"}, refused=True)).status == 403
        server.remove_prompt("plan")
        server.remove_resource("repo://{name}")
        assert server.scoped == frozenset()
        server.prompt(name="plan")(lambda: "open")  # registered again without scopes
        got = await mcp.request("prompts/get", {"name": "plan"})
        assert got.result["messages"][0]["content"]["text"] == "open"


@pytest.mark.parametrize(
    "register",
    [
        lambda app, scopes: app.prompt(scopes=scopes),
        lambda app, scopes: app.resource("vault://x", scopes=scopes),
    ],
    ids=["prompt", "resource"],
)
@pytest.mark.parametrize("scopes", ["repo", ["repo read"], ['re"po'], [3], None], ids=lambda x: repr(x))
def test_scopes_must_be_a_list_of_scope_names(register: Any, scopes: object) -> None:
    with pytest.raises(ConfigError, match=r"app.(prompt|resource)\(\): scopes: a list of scope names"):
        register(Server("s"), scopes)


def test_a_scope_given_twice_is_kept_once() -> None:
    app = Server("s")
    app.prompt(name="p", scopes=["repo", "repo"])(lambda: "p")
    app.resource("a://b", scopes=["x", "repo", "x"])(lambda: "r")
    assert app.prompt_scopes == {"p": ("repo",)} and app.resource_scopes == {"a://b": ("x", "repo")}


async def test_a_uri_the_challenge_cannot_carry_is_encoded() -> None:
    """What a registered URI holds that a header's quoted string may not (a quote, a
    backslash, a non-ASCII letter) is %-encoded in the refusal's words."""
    app = Server("s")
    app.resource('note://caf\u00e9/"x"\\y', scopes=["repo"])(lambda: "r")
    needed = app.needed_scopes("resources/read", {"uri": 'note://caf\u00e9/"x"\\y'}, Principal("bob"))
    assert needed == ("resource 'note://caf%C3%A9/%22x%22%5Cy'", ("repo",))


async def test_on_stdio_scoped_prompts_and_resources_are_used_without_a_token() -> None:
    # As a scoped tool's: MCP authorization is HTTP's; over stdio the person who started the
    # server is the caller, so the scopes are not checked.
    runs: list[str] = []
    async with stdio_session(scoped_server(runs)) as pipes:
        pipes.write(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "prompts/get",
                "params": {"name": "plan", "arguments": {"goal": "x"}},
            }
        )
        got = (await pipes.until(2))[-1]
        pipes.write({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "repo://a"}})
        read = (await pipes.until(3))[-1]
    assert got["result"]["messages"][0]["content"]["text"] == "Plan x"
    assert read["result"]["contents"][0]["text"] == "repo a"
    assert runs == ["plan", "repo a"]


# ---- subscribing: what a caller cannot read, it does not hear of either --------------------


@pytest.fixture
async def subscribable(wire: WireChecker) -> AsyncIterator[tuple[McpHttp, httpx.AsyncClient, str, Server]]:
    metadata = ResourceMetadata(["https://as.example"], required_scopes=["profile"])
    server = scoped_server([])
    app = StreamableHTTP(server, auth=StaticTokens(TOKENS), resource_metadata=metadata)
    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=10) as http:
        yield McpHttp(http, running.url, wire), http, running.url, server


async def test_a_2025_11_25_subscription_to_a_scoped_resource_needs_its_scopes(
    subscribable: tuple[McpHttp, httpx.AsyncClient, str, Server], wire_2025: WireChecker
) -> None:
    """Subscribed without the scope, bob would hear whenever a repository he names (one he
    guesses) changes: what the scope guards. He gets the read's 403 instead, and is not
    subscribed; a resource ``readable`` hides from him stays "not found"."""
    _, http, url, server = subscribable
    session = await _session(http, url, wire_2025, {"authorization": "Bearer tok-profile"})

    async def subscribe(rid: int, uri: str, token: str) -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": rid, "method": "resources/subscribe", "params": {"uri": uri}}
        wire_2025.request(body)
        return await http.post(url, json=body, headers={**session, "authorization": f"Bearer {token}"})

    for rid, (uri, what) in enumerate(
        [("repo://alices-secret", "resource 'repo://{name}'"), ("vault://keys", "resource 'vault://keys'")], 2
    ):
        refused = await subscribe(rid, uri, "tok-profile")
        assert refused.status_code == 403, refused.text
        challenge = refused.headers["www-authenticate"]
        assert f'error="insufficient_scope", error_description="{what} needs scope repo"' in challenge
        assert 'scope="profile repo"' in challenge
    assert server.notify_resource_updated("repo://alices-secret") == 0  # no one heard
    hidden = await subscribe(4, "vault://ann", "tok-profile")
    assert hidden.status_code == 200 and hidden.json()["error"]["code"] == -32002
    done = await subscribe(5, "repo://alices-secret", "tok-repo")
    assert done.status_code == 200 and done.json()["result"] == {}, done.text
    wire_2025.response("resources/subscribe", done.json())
    assert server.notify_resource_updated("repo://alices-secret") == 1


async def test_listening_for_a_scoped_resource_needs_its_scopes(
    subscribable: tuple[McpHttp, httpx.AsyncClient, str, Server],
) -> None:
    """A 2026-07-28 listen naming a scoped resource's URI is refused as its read is (403
    before any stream), naming every scope the URIs need; one naming only what bob may
    use, or a resource ``readable`` hides (left out of the acknowledgement), is served."""
    mcp, _, _, _ = subscribable
    profile = bearer("tok-profile")
    for uris, what in (
        (["repo://alices-secret"], "resource 'repo://{name}'"),
        (["notes://open", "vault://keys", "repo://a", "repo://b"], "resource 'vault://keys' (and 1 more)"),
    ):
        refused = await mcp.request(
            "subscriptions/listen", {"notifications": {"resourceSubscriptions": uris}}, headers=profile
        )
        assert refused.status == 403
        assert f'error_description="{what} needs scope repo"' in refused.headers["www-authenticate"]
    for uris in (["vault://ann"], []):  # hidden by readable; nothing scoped
        async with connect_http(mcp.url, headers={"Authorization": "Bearer tok-profile"}) as client:
            async with client.listen(tools=True, resource_uris=uris) as changes:
                assert changes.agreed == {"toolsListChanged": True}


async def test_the_client_steps_up_to_listen_for_a_scoped_resource() -> None:
    async with serving(scoped_server([])) as site:
        site.mcp.resource_metadata = ResourceMetadata(
            [site.base], scopes_supported=["profile"], required_scopes=["profile"]
        )
        person = Recording()
        async with connect_http(site.url, auth=OAuth(person), timeout=10) as client:  # type: ignore[arg-type]
            async with client.listen(tools=True) as changes:
                assert changes.agreed == {"toolsListChanged": True}
            assert person.scopes == ["profile"]
            async with client.listen(resource_uris=["repo://mcp-elicit"]) as changes:
                assert changes.agreed == {"resourceSubscriptions": ["repo://mcp-elicit"]}
    assert person.scopes == ["profile", "profile repo"]
