"""DPoP-bound tokens end to end: mcp-elicit's client (``OAuth``) gets a token bound to its
key from a real authorization server (authlib, with a DPoP token endpoint judged by
joserfc: ``support.dpop_tokens``) and presents it to a real mcp-elicit server, which checks
every proof (``transports.http_bearer``), at both revisions, on 127.0.0.1 under uvicorn.

The official conformance suite's ``auth/dpop`` and ``auth/dpop-nonce`` judge the client
against servers nobody here wrote (tests/conformance); these cover the rest: the key kept
with the tokens for the next process, a server that wants a nonce, the choice between
DPoP and Bearer, and stolen or replayed tokens and proofs refused by the server.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_elicit.core.dpop import DpopKey
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.server.auth import Principal, ResourceMetadata, StaticTokens
from mcp_elicit.stores import open_store
from mcp_elicit.stores.base import Store
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.transports.http_auth import FileTokenStore, MemoryTokenStore, OAuth
from mcp_elicit.transports.http_bearer import new_nonce
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.mcp_authorization import SCOPES, FollowRedirect, McpAuthorization, bound_server, serving

pytestmark = pytest.mark.anyio

REVISIONS = ["2026-07-28", "2025-11-25"]


@pytest.fixture
async def site() -> AsyncIterator[McpAuthorization]:
    async with serving(bound_server()) as site:
        site.dpop = True
        yield site


async def whoami(site: McpAuthorization, auth: OAuth, revision: str = "2026-07-28") -> str:
    async with connect_http(site.url, auth=auth, versions=[revision], timeout=10) as client:
        result = await client.call_tool("whoami", {})
    return str(result["content"][0]["text"])


async def stored_key(store: MemoryTokenStore, site: McpAuthorization) -> DpopKey:
    record = await store.load(site.url)
    assert record is not None and record["tokens"]["token_type"] == "DPoP"
    return DpopKey.from_pem(record["dpop_key"])


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_token_bound_to_the_clients_key_reaches_the_tool(
    site: McpAuthorization, revision: str
) -> None:
    store = MemoryTokenStore()
    auth = OAuth(FollowRedirect(), store=store)  # type: ignore[arg-type]
    text = await whoami(site, auth, revision)
    key = await stored_key(store, site)
    assert text == f"octocat {key.thumbprint}"  # the server checked a proof signed by that key
    assert set(site.dpop_tokens.bound.values()) == {key.thumbprint}
    (proof,) = site.dpop_tokens.proofs  # the token request carried one, without ath or digest
    assert not {"ath", "content_digest", "nonce"} & proof.keys()


async def test_an_authorization_server_that_wants_a_nonce_gets_it(site: McpAuthorization) -> None:
    site.dpop_tokens.nonce = "as-nonce-1"
    store = MemoryTokenStore()
    text = await whoami(site, OAuth(FollowRedirect(), store=store))  # type: ignore[arg-type]
    assert text == f"octocat {(await stored_key(store, site)).thumbprint}"
    assert site.dpop_tokens.challenged == 1
    assert [p.get("nonce") for p in site.dpop_tokens.proofs] == ["as-nonce-1"]


async def test_the_key_is_stored_with_the_tokens_for_the_next_process(
    site: McpAuthorization, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    person = FollowRedirect()
    first = await whoami(site, OAuth(person, store=FileTokenStore(path)))  # type: ignore[arg-type]
    second = await whoami(site, OAuth(person, store=FileTokenStore(path)))  # type: ignore[arg-type]
    assert first == second
    assert len(person.asked) == 1  # the second process signed with the stored key: no sign-in
    assert site.provider.exchanges == 1


async def test_a_refreshed_token_is_bound_again(site: McpAuthorization) -> None:
    store = MemoryTokenStore()
    person = FollowRedirect()
    auth = OAuth(person, store=store)  # type: ignore[arg-type]
    first = await whoami(site, auth)
    site.provider.expire_all()
    second = await whoami(site, auth)
    assert first == second
    assert site.provider.refreshes == 1 and len(person.asked) == 1
    assert len(site.dpop_tokens.proofs) == 2  # the refresh carried a proof too


async def test_dpop_false_asks_for_a_bearer_token(site: McpAuthorization) -> None:
    store = MemoryTokenStore()
    assert await whoami(site, OAuth(FollowRedirect(), store=store, dpop=False)) == "octocat None"  # type: ignore[arg-type]
    assert site.dpop_tokens.proofs == []
    record = await store.load(site.url)
    assert record is not None and record["tokens"]["token_type"] == "Bearer" and record["dpop_key"] is None


async def test_dpop_true_refuses_a_bearer_token(site: McpAuthorization) -> None:
    site.dpop = False  # the authorization server ignores proofs
    with pytest.raises(AuthorizationError, match="gave a Bearer token where DPoP was required"):
        await whoami(site, OAuth(FollowRedirect(), dpop=True))  # type: ignore[arg-type]


async def test_without_dpop_offered_a_bearer_token_is_used(site: McpAuthorization) -> None:
    site.dpop = False
    assert await whoami(site, OAuth(FollowRedirect())) == "octocat None"  # type: ignore[arg-type]


# ---- the server's side: what it refuses --------------------------------------------------


CALL = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "whoami",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            },
        },
    }
)
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "whoami",
}


async def bound_token(site: McpAuthorization) -> tuple[str, DpopKey]:
    store = MemoryTokenStore()
    await whoami(site, OAuth(FollowRedirect(), store=store))  # type: ignore[arg-type]
    record = await store.load(site.url)
    assert record is not None
    return record["tokens"]["access_token"], DpopKey.from_pem(record["dpop_key"])


async def post(site: McpAuthorization, headers: dict[str, str], body: bytes = CALL) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(site.url, content=body, headers={**HEADERS, **headers})


def challenge(response: httpx.Response) -> str:
    assert response.status_code == 401, response.text
    return response.headers["www-authenticate"]


async def test_the_server_takes_a_good_proof(site: McpAuthorization) -> None:
    token, key = await bound_token(site)
    proof = key.proof("POST", site.url, now=time.time(), access_token=token, body=CALL)
    response = await post(site, {"authorization": f"DPoP {token}", "dpop": proof})
    assert response.status_code == 200, response.text
    assert key.thumbprint in response.text


async def test_a_stolen_bound_token_sent_as_bearer_is_refused(site: McpAuthorization) -> None:
    token, _ = await bound_token(site)
    value = challenge(await post(site, {"authorization": f"Bearer {token}"}))
    assert value.startswith("Bearer ") and 'error="invalid_token"' in value
    assert "must be sent with the DPoP scheme" in value


async def test_a_stolen_bound_token_with_the_thiefs_own_proof_is_refused(site: McpAuthorization) -> None:
    token, _ = await bound_token(site)
    thief = DpopKey.generate()
    proof = thief.proof("POST", site.url, now=time.time(), access_token=token, body=CALL)
    value = challenge(await post(site, {"authorization": f"DPoP {token}", "dpop": proof}))
    assert value.startswith("DPoP ") and 'error="invalid_dpop_proof"' in value
    assert "not signed by the key the token is bound to" in value
    assert 'algs="ES256' in value and "resource_metadata=" in value


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"body": CALL.replace(b'"id":1', b'"id":2')}, "content_digest"),  # a proof replayed on another body
        ({"url": "http://127.0.0.1:1/mcp"}, "htu"),
        ({"method": "GET"}, "htm"),
        ({"now": 0.0}, "iat"),
        ({"access_token": "another"}, "ath"),
    ],
)
async def test_a_proof_for_something_else_is_refused(
    site: McpAuthorization, change: dict[str, object], reason: str
) -> None:
    token, key = await bound_token(site)
    options: dict[str, object] = {
        "method": "POST",
        "url": site.url,
        "now": time.time(),
        "access_token": token,
        "body": CALL,
    }
    options.update(change)
    proof = key.proof(**options)  # type: ignore[arg-type]
    value = challenge(await post(site, {"authorization": f"DPoP {token}", "dpop": proof}))
    assert 'error="invalid_dpop_proof"' in value and reason in value


async def test_a_replayed_proof_is_refused(site: McpAuthorization) -> None:
    token, key = await bound_token(site)
    proof = key.proof("POST", site.url, now=time.time(), access_token=token, body=CALL)
    headers = {"authorization": f"DPoP {token}", "dpop": proof}
    assert (await post(site, headers)).status_code == 200
    value = challenge(await post(site, headers))  # the same request, captured and sent again
    assert 'error="invalid_dpop_proof"' in value and "already used" in value
    fresh = key.proof("POST", site.url, now=time.time(), access_token=token, body=CALL)
    assert (await post(site, {**headers, "dpop": fresh})).status_code == 200


async def test_a_dpop_request_without_a_proof_is_refused(site: McpAuthorization) -> None:
    token, _ = await bound_token(site)
    value = challenge(await post(site, {"authorization": f"DPoP {token}"}))
    assert "no DPoP proof" in value


async def test_an_unbound_token_sent_as_dpop_is_refused(site: McpAuthorization) -> None:
    site.dpop = False
    store = MemoryTokenStore()
    await whoami(site, OAuth(FollowRedirect(), store=store, dpop=False))  # type: ignore[arg-type]
    record = await store.load(site.url)
    assert record is not None
    token = record["tokens"]["access_token"]
    key = DpopKey.generate()
    proof = key.proof("POST", site.url, now=time.time(), access_token=token, body=CALL)
    value = challenge(await post(site, {"authorization": f"DPoP {token}", "dpop": proof}))
    assert "not bound to a DPoP key" in value


async def test_two_proofs_are_refused(site: McpAuthorization) -> None:
    token, key = await bound_token(site)
    proof = key.proof("POST", site.url, now=time.time(), access_token=token, body=CALL)
    async with httpx.AsyncClient(timeout=10) as http:
        headers = [*HEADERS.items(), ("authorization", f"DPoP {token}"), ("dpop", proof), ("dpop", proof)]
        response = await http.post(site.url, content=CALL, headers=headers)
    assert "more than one DPoP header" in challenge(response)


async def test_a_server_that_requires_dpop_refuses_bearer_tokens(site: McpAuthorization) -> None:
    site.mcp.resource_metadata = ResourceMetadata(
        [site.base], scopes_supported=SCOPES.split(), dpop_required=True
    )
    async with httpx.AsyncClient() as http:
        document = (await http.get(f"{site.base}/.well-known/oauth-protected-resource/mcp")).json()
    assert document["dpop_bound_access_tokens_required"] is True
    value = challenge(await post(site, {"authorization": "Bearer whatever"}))
    assert value.startswith("DPoP ")
    # and the client, told so, still gets a bound token
    store = MemoryTokenStore()
    text = await whoami(site, OAuth(FollowRedirect(), store=store))  # type: ignore[arg-type]
    assert text == f"octocat {(await stored_key(store, site)).thumbprint}"


async def test_behind_a_proxy_proofs_name_the_public_url(site: McpAuthorization) -> None:
    """With ResourceMetadata.resource set (the endpoint's public URL), a proof's htu must
    name it, not the address the proxy forwarded to."""
    token, key = await bound_token(site)
    public = "https://mcp.example.com/mcp"
    site.mcp.resource_metadata = ResourceMetadata(
        [site.base], scopes_supported=SCOPES.split(), resource=public
    )
    proof = key.proof("POST", public, now=time.time(), access_token=token, body=CALL)
    response = await post(site, {"authorization": f"DPoP {token}", "dpop": proof})
    assert response.status_code == 200, response.text
    local = key.proof("POST", site.url, now=time.time(), access_token=token, body=CALL)
    assert "htu" in challenge(await post(site, {"authorization": f"DPoP {token}", "dpop": local}))


@pytest.mark.parametrize("parent", ["", "/"])
async def test_with_a_parent_resource_proofs_name_the_url_requested(
    site: McpAuthorization, parent: str
) -> None:
    """A resource identifier may be a parent of the endpoint (the origin, say): the proof's
    htu is still the URL the request went to (RFC 9449, section 4.3), not the resource."""
    site.mcp.resource_metadata = ResourceMetadata(
        [site.base], scopes_supported=SCOPES.split(), resource=site.base + parent
    )
    store = MemoryTokenStore()
    text = await whoami(site, OAuth(FollowRedirect(), store=store))  # type: ignore[arg-type]
    assert text == f"octocat {(await stored_key(store, site)).thumbprint}"
    token, key = await bound_token(site)
    at_resource = key.proof("POST", site.base + parent, now=time.time(), access_token=token, body=CALL)
    assert "htu" in challenge(await post(site, {"authorization": f"DPoP {token}", "dpop": at_resource}))


# ---- server nonces (RFC 9449 §9) ----------------------------------------------------------


def wants_nonces(site: McpAuthorization) -> None:
    site.mcp.resource_metadata = ResourceMetadata(
        [site.base], scopes_supported=SCOPES.split(), dpop_nonces=True
    )


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_server_that_wants_its_nonce_gets_it_from_the_client(
    site: McpAuthorization, revision: str
) -> None:
    wants_nonces(site)
    store = MemoryTokenStore()
    auth = OAuth(FollowRedirect(), store=store)  # type: ignore[arg-type]
    first = await whoami(site, auth, revision)
    assert first == f"octocat {(await stored_key(store, site)).thumbprint}"
    assert await whoami(site, auth, revision) == first  # the nonce it keeps serves the next requests


async def test_a_proof_without_the_servers_nonce_gets_one(site: McpAuthorization) -> None:
    token, key = await bound_token(site)
    wants_nonces(site)

    def proof(nonce: str | None) -> str:
        return key.proof("POST", site.url, now=time.time(), nonce=nonce, access_token=token, body=CALL)

    refused = await post(site, {"authorization": f"DPoP {token}", "dpop": proof(None)})
    assert 'error="use_dpop_nonce"' in challenge(refused)
    nonce = refused.headers["dpop-nonce"]
    assert re.fullmatch(r"[\x21\x23-\x5b\x5d-\x7e]+", nonce)  # RFC 9449's NQCHAR
    taken = await post(site, {"authorization": f"DPoP {token}", "dpop": proof(nonce)})
    assert taken.status_code == 200, taken.text
    other = new_nonce(site.server.sealer, "http://elsewhere.example")  # another server's
    for bad in (other, nonce[:-2] + "AA", "made-up"):
        again = await post(site, {"authorization": f"DPoP {token}", "dpop": proof(bad)})
        assert 'error="use_dpop_nonce"' in challenge(again)
        assert again.headers["dpop-nonce"] != bad


# ---- whatever a client sends, the answer is 200 or 401 with a challenge -------------------

THIEF = DpopKey.generate()
OWNER = DpopKey.generate()
BOUND = "bound-token"


def guarded(store: Store | str | None = None) -> StreamableHTTP:
    """An in-process server whose one token is bound to OWNER's key."""
    principal = Principal("ann", claims={"cnf": {"jkt": OWNER.thumbprint}})
    server = bound_server()
    if store is not None:
        server.configure_url_mode(store=store)
    return StreamableHTTP(server, auth=StaticTokens({BOUND: principal}))


async def send_to(app: StreamableHTTP, proof: str) -> httpx.Response:
    headers = {**HEADERS, "authorization": f"DPoP {BOUND}", "dpop": proof}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        return await http.post("/mcp", content=CALL, headers=headers)


@pytest.mark.parametrize("backend", ["memory", "redis"])
async def test_a_proof_replayed_to_another_instance_is_refused(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """Instances sharing a store share what they remember: a proof one of them took is a
    replay at the other, and is forgotten once it would be refused for its age anyway."""
    shared: Store = (
        RecordingStore() if backend == "memory" else open_store(request.getfixturevalue("redis_url"))
    )
    try:
        first, second = guarded(shared), guarded(shared)
        now = time.time()
        proof = OWNER.proof("POST", "http://127.0.0.1:8000/mcp", now=now, access_token=BOUND, body=CALL)
        assert (await send_to(first, proof)).status_code == 200
        value = challenge(await send_to(second, proof))
        assert 'error="invalid_dpop_proof"' in value and "already used" in value
        assert "already used" in challenge(await send_to(first, proof))  # and at the first one again
        if isinstance(shared, RecordingStore):  # remembered for the 300 s the proof holds, no longer
            assert len(shared.ttls) == 3
            assert all(int(now) + 300 - time.time() <= ttl <= int(now) + 300 - now for ttl in shared.ttls)
    finally:
        await shared.close()


class RecordingStore(MemoryStore):
    """A memory store that also notes the time to live of every marker added."""

    def __init__(self) -> None:
        super().__init__()
        self.ttls: list[float] = []

    async def add(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> bool:
        assert ttl is not None
        self.ttls.append(ttl)
        return await super().add(namespace, key, value, ttl=ttl)


async def test_a_store_that_fails_gets_503_not_a_crash_nor_a_pass(caplog: pytest.LogCaptureFixture) -> None:
    class Down(MemoryStore):
        async def add(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> bool:
            raise ConnectionError("redis is down")

    proof = OWNER.proof("POST", "http://127.0.0.1:8000/mcp", now=time.time(), access_token=BOUND, body=CALL)
    response = await send_to(guarded(Down()), proof)
    assert response.status_code == 503 and response.headers["retry-after"] == "1"
    assert "cannot check DPoP proofs" in response.text
    assert "redis is down" in caplog.text and "redis is down" not in response.text


async def test_without_a_store_each_process_remembers_its_own_proofs() -> None:
    proof = OWNER.proof("POST", "http://127.0.0.1:8000/mcp", now=time.time(), access_token=BOUND, body=CALL)
    app = guarded()
    assert (await send_to(app, proof)).status_code == 200
    assert "already used" in challenge(await send_to(app, proof))
    assert app.server.url_mode._store is None  # the default SQLite file was not opened for it


def _proofs() -> st.SearchStrategy[str]:
    url = "http://127.0.0.1:8000/mcp"
    now = time.time()
    return st.one_of(
        st.text(max_size=200),
        st.sampled_from(["", "a.b.c", "e30.e30.e30", "x" * 9000]),
        st.builds(
            lambda k: k.proof("POST", url, now=now, access_token=BOUND, body=CALL),
            st.sampled_from([OWNER, THIEF]),
        ),
        st.builds(
            lambda b: OWNER.proof("POST", url, now=now, access_token=BOUND, body=b), st.binary(max_size=50)
        ),
    )


@settings(max_examples=80, deadline=None)
@given(
    scheme=st.sampled_from(["Bearer", "DPoP", "dpop", "Basic", ""]),
    token=st.sampled_from([BOUND, "unknown", ""])
    | st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=30),
    proof=st.none() | _proofs(),
)
async def test_any_authorization_gets_200_or_a_challenge(scheme: str, token: str, proof: str | None) -> None:
    headers = {**HEADERS, "authorization": f"{scheme} {token}".strip()}
    if proof is not None and proof.isascii() and "\n" not in proof and "\r" not in proof:
        headers["dpop"] = proof
    transport = httpx.ASGITransport(app=guarded())
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        response = await http.post("/mcp", content=CALL, headers=headers)
    assert response.status_code in (200, 400, 401), (response.status_code, response.text)
    if response.status_code in (400, 401):
        assert response.headers["www-authenticate"].split(" ", 1)[0] in ("Bearer", "DPoP")
    if response.status_code == 400:  # RFC 6750 §3.1: a malformed token is invalid_request
        assert 'error="invalid_request"' in response.headers["www-authenticate"]
        assert scheme.lower() in ("bearer", "dpop") and not re.fullmatch(r"[A-Za-z0-9._~+/-]+=*", token)
    if response.status_code == 200:  # only the owner's proof for this very request opens it
        assert scheme.lower() == "dpop" and token == BOUND
        assert headers.get("dpop") == proof and OWNER.thumbprint in response.text


async def test_a_proof_with_bytes_beyond_ascii_is_refused_not_a_crash() -> None:
    head, _, signature = OWNER.proof(
        "POST", "http://127.0.0.1:8000/mcp", now=time.time(), access_token=BOUND, body=CALL
    ).split(".")
    headers = {
        **HEADERS,
        "authorization": f"DPoP {BOUND}",
        "dpop": f"{head}.".encode() + b"\xe9." + signature.encode(),
    }
    transport = httpx.ASGITransport(app=guarded())
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        response = await http.post("/mcp", content=CALL, headers=headers)
    assert response.status_code == 401
    assert 'error="invalid_dpop_proof"' in challenge(response)
