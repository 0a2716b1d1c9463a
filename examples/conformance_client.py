"""The mcp-elicit client under the official MCP conformance harness (client mode), pinned
in tools/conformance and run from the repository root (``make install`` installs it and the
Node 22 it needs)::

    PATH=$PWD/tools/node22/node_modules/node/bin:$PATH tools/conformance/node_modules/.bin/conformance client --command "python examples/conformance_client.py" --requirements 2026-07-28

The harness appends the server URL as the last argument and says what to do in the
environment: ``MCP_CONFORMANCE_SCENARIO`` (the scenario), ``MCP_CONFORMANCE_PROTOCOL_VERSION``
(the revision its mock speaks: 2026-07-28 means stateless requests with ``_meta``, an older
one the ``initialize`` handshake) and, for some scenarios, ``MCP_CONFORMANCE_CONTEXT``
(JSON). Every scenario runs the library as an application would; answers come from a
``Scripted`` answerer; the authorization (``auth/*``) scenarios authorize with
:class:`~mcp_elicit.transports.http_auth.OAuth` and a redirect followed without a browser.
The library is imported inside each scenario: the harness starts every scenario's client
at once, and dozens of interpreters importing at the same time on a small machine is what a
run costs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_elicit.client import Client, Scripted

log = logging.getLogger("conformance_client")

Scenario = Callable[[str], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        SCENARIOS[name] = fn
        return fn

    return register


def versions() -> tuple[str, ...]:
    """The revisions to offer: the one the harness runs at (it pins its mock to it), or all."""
    from mcp_elicit.wire.versions import SUPPORTED, is_modern

    wanted = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    if wanted is None:
        return SUPPORTED
    if is_modern(wanted):
        return (wanted,)
    return tuple(v for v in SUPPORTED if not is_modern(v))


def context() -> dict[str, Any]:
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    return json.loads(raw) if raw else {}


def _trace(direction: str, message: Mapping[str, Any]) -> None:
    log.debug("%s %s", ">>" if direction == "send" else "<<", json.dumps(message)[:2000])


def client(url: str, *, auth: Any = None, **options: Any) -> Client:
    from mcp_elicit.client import Client
    from mcp_elicit.transports.http_client import HttpTransport

    return Client(HttpTransport(url, trace=_trace, auth=auth), versions=versions(), **options)


def scripted(script: object) -> Scripted:
    from mcp_elicit.client import Scripted

    return Scripted.from_script(script)


async def _stub_sampling(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": ""}, "model": "conformance-stub"}


async def _stub_roots() -> list[dict[str, Any]]:
    return []


#: Accept every form with its defaults (what sep1034 checks) and consent to every URL.
ACCEPT_DEFAULTS: list[dict[str, Any]] = [{"action": "accept"}]


@scenario("initialize")
async def initialize(url: str) -> None:
    async with client(url) as c:
        await c.list_tools()


@scenario("tools_call")
async def tools_call(url: str) -> None:
    async with client(url) as c:
        await c.list_tools()
        await c.call_tool("add_numbers", {"a": 5, "b": 3})


@scenario("request-metadata")
async def request_metadata(url: str) -> None:
    async with client(
        url, answerer=scripted(ACCEPT_DEFAULTS), sampling=_stub_sampling, roots=_stub_roots
    ) as c:
        await c.list_tools()
        await c.call_tool("add_numbers", {"a": 5, "b": 3})


@scenario("http-standard-headers")
async def http_standard_headers(url: str) -> None:
    async with client(url) as c:
        tools = await c.list_tools()
        for tool in tools:
            await _tolerant(c.call_tool(tool["name"], _stub_arguments(tool.get("inputSchema"))))
        for resource in await _tolerant_list(c.list_resources()):
            await _tolerant(c.read_resource(resource["uri"]))
        for prompt in await _tolerant_list(c.list_prompts()):
            await _tolerant(c.get_prompt(prompt["name"], _prompt_arguments(prompt)))


@scenario("http-custom-headers")
async def http_custom_headers(url: str) -> None:
    calls = context().get("toolCalls", [])
    async with client(url) as c:
        listed = {tool["name"] for tool in await c.list_tools()}
        for call in calls:
            if call["name"] in listed:
                await _tolerant(c.call_tool(call["name"], call.get("arguments") or {}))


@scenario("http-invalid-tool-headers")
async def http_invalid_tool_headers(url: str) -> None:
    async with client(url) as c:
        for tool in await c.list_tools():
            await _tolerant(c.call_tool(tool["name"], _stub_arguments(tool.get("inputSchema"))))
        for name, reason in sorted(c.rejected_tools.items()):
            log.info("rejected %s: %s", name, reason)


@scenario("json-schema-ref-no-deref")
async def json_schema_ref_no_deref(url: str) -> None:
    async with client(url) as c:
        await c.list_tools()


@scenario("json-schema-2020-12-preservation")
async def json_schema_2020_12(url: str) -> None:
    async with client(url) as c:
        tools = {tool["name"]: tool for tool in await c.list_tools()}
        focal = tools["json_schema_2020_12_tool"]
        await c.call_tool("json_schema_echo", {"schema": focal["inputSchema"]})


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults(url: str) -> None:
    async with client(url, answerer=scripted(ACCEPT_DEFAULTS)) as c:
        await c.list_tools()
        await c.call_tool("test_client_elicitation_defaults", {})


@scenario("sse-retry")
async def sse_retry(url: str) -> None:
    async with client(url) as c:
        await c.list_tools()
        await c.call_tool("test_reconnection", {})


@scenario("sep-2322-client-request-state")
async def mrtr_request_state(url: str) -> None:
    answers = scripted([{"fields": ["confirmed"], "content": {"confirmed": True}}, {"action": "accept"}])
    async with client(url, answerer=answers) as c:
        await c.list_tools()
        await c.call_tool("test_mrtr_echo_state", {})
        await c.call_tool("test_mrtr_unrelated", {})
        await c.call_tool("test_mrtr_no_state", {})
        await c.call_tool("test_mrtr_no_result_type", {})


#: The client ID metadata document URL the harness expects (auth/basic-cimd).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


class FollowRedirect:
    """The person's part of the authorization, without a person: the harness's
    authorization server approves at once, so fetching the authorization URL answers with
    the redirect to ``redirect_uri`` (where nothing needs to listen)."""

    redirect_uri = "http://127.0.0.1:3000/callback"

    async def authorize(self, url: str, *, issuer: str) -> str:
        import httpx

        from mcp_elicit.errors import AuthorizationError

        async with httpx.AsyncClient(follow_redirects=False, timeout=15.0) as http:
            response = await http.get(url)
        location = response.headers.get("location")
        if not response.is_redirect or not location:
            raise AuthorizationError(f"{issuer} answered HTTP {response.status_code} without a redirect")
        return location


async def authorized(url: str) -> None:
    """Every auth/* scenario: list the tools and call the harness's tool, authorizing as
    the server asks (pre-registered credentials when the harness gives them; the
    client-credentials scenarios act as a machine, with the secret or key they give, the
    workload identity one with the workload JWT it gives, and the enterprise-managed one
    with the ID-JAG its identity provider trades for the ID token it gives)."""
    from mcp_elicit.transports.http_auth import OAuth
    from mcp_elicit.transports.http_grants import AssertionSource, EnterpriseIdp

    given = context()
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    grant: AssertionSource | None = None  # what stands for the person's sign-in, if anything
    if scenario == "auth/wif-jwt-bearer":  # a workload's own JWT
        grant = given["valid_jwt"]
    elif scenario == "auth/enterprise-managed-authorization":  # an ID-JAG from the person's IdP
        grant = EnterpriseIdp(given["idp_token_endpoint"], given["idp_id_token"], given["idp_client_id"])
    machine = grant is not None or scenario.startswith("auth/client-credentials")
    auth = OAuth(
        None if machine else FollowRedirect(),  # no person, no redirect
        client_id=given.get("client_id"),
        client_secret=given.get("client_secret"),
        private_key=given.get("private_key_pem"),
        assertion=grant,
        client_metadata_url=CLIENT_METADATA_URL,
        client_name="mcp-elicit conformance client",
    )
    async with client(url, auth=auth) as c:
        await c.list_tools()
        await c.call_tool("test-tool", {})


async def _tolerant(call: Awaitable[Any]) -> None:
    from mcp_elicit.errors import MCPElicitError

    try:
        await call
    except MCPElicitError as exc:
        log.warning("%s", exc)


async def _tolerant_list(call: Awaitable[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    from mcp_elicit.errors import MCPElicitError

    try:
        return await call
    except MCPElicitError as exc:
        log.warning("%s", exc)
        return []


def _stub_arguments(schema: object) -> dict[str, Any]:
    """Minimal arguments for a tool's required properties."""
    if not isinstance(schema, Mapping):
        return {}
    props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    by_type = {"string": "x", "integer": 0, "number": 0, "boolean": False, "object": {}, "array": []}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = props.get(name) if isinstance(props, Mapping) else None
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        out[name] = by_type.get(kind, "x") if isinstance(kind, str) else "x"
    return out


def _prompt_arguments(prompt: Mapping[str, Any]) -> dict[str, str]:
    args = prompt.get("arguments")
    return {a["name"]: "x" for a in args or [] if isinstance(a, Mapping) and a.get("required")}


def main(argv: list[str]) -> int:
    level = logging.DEBUG if os.environ.get("CONFORMANCE_CLIENT_DEBUG") else logging.INFO
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    if len(argv) < 2:
        print(f"usage: {argv[0]} SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)", file=sys.stderr)
        return 2
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    run = SCENARIOS.get(name) or (authorized if name.startswith("auth/") else None)
    if run is None:
        print(f"conformance_client: scenario {name!r} is not supported", file=sys.stderr)
        return 2
    from mcp_elicit.errors import MCPElicitError

    try:
        asyncio.run(run(argv[-1]))
    except MCPElicitError as exc:
        print(f"conformance_client: {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
