"""A server behind OAuth describes itself (RFC 9728, MCP authorization): the metadata
document next to the endpoint, challenges that point at it, and 403 ``insufficient_scope``
for a token without a required scope. Real uvicorn on 127.0.0.1."""

from __future__ import annotations

import httpx
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.core.authorization import bearer_challenge, read_protected_resource
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.auth import Principal, ResourceMetadata, StaticTokens
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import build_request
from support.procs import uvicorn_server
from support.sessions import ACCEPT, initialize_body

pytestmark = pytest.mark.anyio

ISSUER = "https://auth.example.com"
TOKENS = StaticTokens(
    {
        "reader": Principal("ann", scopes=frozenset({"mcp:read"})),
        "writer": Principal("bob", scopes=frozenset({"mcp:read", "mcp:write"})),
    }
)
BODY = initialize_body()
HEADERS = {"accept": ACCEPT}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def app(**metadata: object) -> StreamableHTTP:
    return StreamableHTTP(
        Server("guarded"),
        auth=TOKENS,
        resource_metadata=ResourceMetadata([ISSUER], **metadata),  # type: ignore[arg-type]
    )


async def test_the_metadata_document_is_published_next_to_the_endpoint() -> None:
    async with uvicorn_server(app(required_scopes=["mcp:write"], resource_name="Guarded")) as running:
        base = f"http://127.0.0.1:{running.port}"
        async with httpx.AsyncClient() as http:
            got = await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")
            post = await http.post(f"{base}/.well-known/oauth-protected-resource/mcp")
            elsewhere = await http.get(f"{base}/.well-known/oauth-protected-resource")
            evil = await http.get(
                f"{base}/.well-known/oauth-protected-resource/mcp", headers={"host": "evil.example"}
            )
    assert got.status_code == 200
    assert got.headers["access-control-allow-origin"] == "*"
    assert got.json() == {
        "resource": f"{base}/mcp",
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp:write"],
        "resource_name": "Guarded",
        "dpop_signing_alg_values_supported": [
            *("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
        ],
    }
    # the client side accepts it for the endpoint
    checked = read_protected_resource(got.json(), f"{base}/mcp", "here")
    assert checked.authorization_servers == (ISSUER,)
    assert post.status_code == 405
    assert elsewhere.status_code == 404
    assert evil.status_code == 421


async def test_challenges_point_at_the_metadata() -> None:
    async with uvicorn_server(app(required_scopes=["mcp:read"])) as running:
        base = f"http://127.0.0.1:{running.port}"
        async with httpx.AsyncClient() as http:
            none = await http.post(f"{base}/mcp", json=BODY, headers=HEADERS)
            bad = await http.post(
                f"{base}/mcp", json=BODY, headers={**HEADERS, "authorization": "Bearer nope"}
            )
    for response, error in ((none, None), (bad, "invalid_token")):
        assert response.status_code == 401
        challenge = bearer_challenge(response.headers.get_list("www-authenticate"))
        assert challenge is not None
        assert challenge.resource_metadata == f"{base}/.well-known/oauth-protected-resource/mcp"
        assert challenge.scope == "mcp:read"
        assert challenge.error == error


async def test_a_token_without_a_required_scope_is_refused_with_403() -> None:
    async with uvicorn_server(app(required_scopes=["mcp:read", "mcp:write"])) as running:
        base = f"http://127.0.0.1:{running.port}"
        async with httpx.AsyncClient() as http:
            reader = await http.post(
                f"{base}/mcp", json=BODY, headers={**HEADERS, "authorization": "Bearer reader"}
            )
            writer = await http.post(
                f"{base}/mcp", json=BODY, headers={**HEADERS, "authorization": "Bearer writer"}
            )
    assert reader.status_code == 403
    challenge = bearer_challenge(reader.headers.get_list("www-authenticate"))
    assert challenge is not None and challenge.error == "insufficient_scope"
    assert challenge.scope == "mcp:read mcp:write"
    # as in a 401: where to get a token with them (2026-07-28, scope challenge handling)
    assert challenge.resource_metadata == f"{base}/.well-known/oauth-protected-resource/mcp"
    assert writer.status_code == 200, writer.text


async def test_a_token_in_the_query_string_is_not_taken() -> None:
    """MCP authorization: access tokens go in the Authorization header and never in the
    URI (OAuth 2.1 section 5.1); a server that took one from the query would invite clients
    to leave them in logs and referrers."""
    async with uvicorn_server(app(required_scopes=["mcp:read"])) as running:
        base = f"http://127.0.0.1:{running.port}"
        async with httpx.AsyncClient() as http:
            answer = await http.post(f"{base}/mcp?access_token=writer", json=BODY, headers=HEADERS)
    assert answer.status_code == 401
    challenge = bearer_challenge(answer.headers.get_list("www-authenticate"))
    assert challenge is not None and challenge.error is None  # as if no token came at all


async def test_a_broader_scope_covers_the_narrower_ones_it_implies() -> None:
    # 2026-07-28 basic/authorization, Step-Up Authorization Flow: servers account for scope
    # hierarchies, a broader scope implying narrower ones, when deciding whether a token
    # suffices. An admin token carries mcp:admin alone; admin implies write, write read.
    tokens = StaticTokens(
        {
            "admin": Principal("ann", scopes="mcp:admin"),
            "writer": Principal("bob", scopes="mcp:write"),
            "reader": Principal("cid", scopes="mcp:read"),
        }
    )
    metadata = ResourceMetadata(
        [ISSUER],
        required_scopes=["mcp:read", "mcp:write"],
        implied_scopes={"mcp:admin": ["mcp:write"], "mcp:write": ["mcp:read"]},
    )
    async with uvicorn_server(
        StreamableHTTP(Server("h"), auth=tokens, resource_metadata=metadata)
    ) as running:
        base = f"http://127.0.0.1:{running.port}"
        async with httpx.AsyncClient() as http:
            answers = {
                token: await http.post(
                    f"{base}/mcp", json=BODY, headers={**HEADERS, "authorization": f"Bearer {token}"}
                )
                for token in ("admin", "writer", "reader")
            }
            document = (await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
    assert answers["admin"].status_code == 200, answers["admin"].text
    assert answers["writer"].status_code == 200, answers["writer"].text
    assert answers["reader"].status_code == 403  # read implies nothing
    challenge = bearer_challenge(answers["reader"].headers.get_list("www-authenticate"))
    assert challenge is not None and challenge.error == "insufficient_scope"
    assert challenge.scope == "mcp:read mcp:write"
    assert "needs scope mcp:write" in (challenge.params.get("error_description") or "")
    assert document["scopes_supported"] == ["mcp:read", "mcp:write"]  # the hierarchy stays the server's


def test_implied_scopes_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"ResourceMetadata\.implied_scopes"):
        ResourceMetadata([ISSUER], implied_scopes={"a": "b"})  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match=r"ResourceMetadata\.implied_scopes"):
        ResourceMetadata([ISSUER], implied_scopes={"a b": ["c"]})
    with pytest.raises(ConfigError, match=r"ResourceMetadata\.implied_scopes"):
        ResourceMetadata([ISSUER], implied_scopes={"a": ["c d"]})
    with pytest.raises(ConfigError, match=r"ResourceMetadata\.implied_scopes"):
        ResourceMetadata([ISSUER], implied_scopes=[("a", ["b"])])  # type: ignore[arg-type]
    # a cycle is only two names for one grant; the closure is transitive
    looped = ResourceMetadata([ISSUER], required_scopes=["c"], implied_scopes={"a": ["b"], "b": ["a", "c"]})
    assert looped.missing(Principal("x", scopes="a")) == []
    assert looped.missing(Principal("x", scopes="c")) == []
    assert looped.missing(Principal("x", scopes="d")) == ["c"]
    # still a value: hashable, and equal when built alike
    assert hash(looped) == hash(
        ResourceMetadata([ISSUER], required_scopes=["c"], implied_scopes={"a": ["b"], "b": ["a", "c"]})
    )
    assert looped == ResourceMetadata(
        [ISSUER], required_scopes=["c"], implied_scopes={"a": ("b",), "b": ("a", "c")}
    )
    assert looped != ResourceMetadata([ISSUER], required_scopes=["c"])


def test_metadata_needs_a_verifier_and_sound_values() -> None:
    with pytest.raises(ConfigError, match="needs auth"):
        StreamableHTTP(Server("x"), resource_metadata=ResourceMetadata([ISSUER]))
    with pytest.raises(ConfigError, match="authorization_servers"):
        ResourceMetadata(ISSUER)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="authorization_servers"):
        ResourceMetadata([])
    with pytest.raises(ConfigError, match="scope names"):
        ResourceMetadata([ISSUER], required_scopes=["a b"])
    with pytest.raises(ConfigError, match="scope names"):
        ResourceMetadata([ISSUER], scopes_supported="mcp:read")  # type: ignore[arg-type]
    # RFC 8707 section 2: a resource indicator has no fragment; clients refuse such metadata
    for resource in ("https://h.example/mcp#x", "https://h.example/mcp#", "h.example/mcp", "ftp://h/mcp"):
        with pytest.raises(ConfigError, match=r"ResourceMetadata\.resource"):
            ResourceMetadata([ISSUER], resource=resource)
    assert ResourceMetadata([ISSUER], resource="https://h.example/mcp").resource == "https://h.example/mcp"


def test_offline_access_in_the_resource_metadata_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    ResourceMetadata([ISSUER], scopes_supported=["mcp:read"])
    assert "offline_access" not in caplog.text
    ResourceMetadata([ISSUER], scopes_supported=["mcp:read", "offline_access"])
    assert "should not" in caplog.text


def test_offline_access_required_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    # MCP basic/authorization, Refresh Tokens: a server should not put offline_access in its
    # challenges' scope either, which is where required scopes go (and, unless
    # scopes_supported is given, in the document)
    ResourceMetadata([ISSUER], required_scopes=["mcp:read"])
    assert "offline_access" not in caplog.text
    ResourceMetadata([ISSUER], scopes_supported=["mcp:read"], required_scopes=["mcp:read", "offline_access"])
    assert "offline_access in required_scopes" in caplog.text


def test_the_server_carries_metadata_to_the_transport() -> None:
    metadata = ResourceMetadata([ISSUER])
    server = Server("x", auth=TOKENS, resource_metadata=metadata)
    assert StreamableHTTP(server).resource_metadata is metadata
    assert StreamableHTTP(server, path="/").metadata_path == "/.well-known/oauth-protected-resource"


async def test_a_handler_sees_the_scopes_a_granted_one_implies() -> None:
    # A handler deciding on ctx.principal.scopes must judge as the transport did: a token
    # holding mcp:admin alone passed the mcp:read requirement, so its handler sees mcp:read.
    tokens = StaticTokens(
        {"admin": Principal("ann", scopes="mcp:admin"), "reader": Principal("cid", scopes="mcp:read")}
    )
    metadata = ResourceMetadata(
        [ISSUER],
        required_scopes=["mcp:read"],
        implied_scopes={"mcp:admin": ["mcp:write"], "mcp:write": ["mcp:read"]},
    )
    server = Server("h")

    @server.tool()
    async def whoami(ctx: Context) -> str:
        assert ctx.principal is not None
        return " ".join(sorted(ctx.principal.scopes))

    async with uvicorn_server(StreamableHTTP(server, auth=tokens, resource_metadata=metadata)) as running:
        seen = {}
        async with httpx.AsyncClient() as http:
            for rid, token in enumerate(("admin", "reader")):
                body, headers = build_request(
                    "tools/call",
                    {"name": "whoami", "arguments": {}},
                    rid=rid,
                    headers={"Authorization": f"Bearer {token}"},
                )
                reply = await http.post(f"http://127.0.0.1:{running.port}/mcp", json=body, headers=headers)
                assert reply.status_code == 200, reply.text
                seen[token] = reply.json()["result"]["content"][0]["text"]
    assert seen == {"admin": "mcp:admin mcp:read mcp:write", "reader": "mcp:read"}


def test_effective_scopes_follow_the_hierarchy_and_leave_the_principal_as_is() -> None:
    metadata = ResourceMetadata([ISSUER], implied_scopes={"a": ["b"], "b": ["c"], "x": ["y"]})
    granted = Principal("ann", scopes="a", claims={"scope": "a"})
    effective = metadata.effective(granted)
    assert effective.scopes == {"a", "b", "c"}
    assert (effective.subject, effective.claims) == ("ann", {"scope": "a"})
    assert granted.scopes == {"a"}
    plain = Principal("bob", scopes="z")
    assert metadata.effective(plain) is plain  # nothing implied: the same principal
