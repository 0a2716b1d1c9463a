"""``Server``: what a tool author builds. Register tools, prompts, resources and completions
with decorators; a transport hands it checked requests and gets results back.

Rules: list results come in registration order, paginated with an opaque cursor; an
unknown tool, prompt or resource is a JSON-RPC error (-32602; -32002 for a resource on
2025-11-25); handlers that may ask questions (tools, prompts, resource reads) run under
the asking strategy of the request's revision, so one handler serves every revision
unchanged. A handler that is a plain function runs in a worker thread (``server.threads``); what tells
clients of a change (registering, ``notify_*``) runs on the event loop even when such a
handler calls it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

from mcp_elicit.core.rev_2025_11_25 import initialize_result, parse_initialize
from mcp_elicit.core.server import ServerCore, ServerIdentity
from mcp_elicit.errors import ConfigError, ProtocolError
from mcp_elicit.sealing import MIN_SECRET_BYTES, KeyRing, StateSealer
from mcp_elicit.server.announcements import Announcements
from mcp_elicit.server.auth import Principal, ResourceMetadata, TokenVerifier
from mcp_elicit.server.dispatch import Dispatch
from mcp_elicit.server.lifecycle import Lifecycle
from mcp_elicit.server.lifespan import HasLifespan, Lifespan, LifespanFunction
from mcp_elicit.server.oauth_provider import OAuthProvider, require_authlib
from mcp_elicit.server.options import (
    MOST_MS,
    MOST_PER_MINUTE,
    expect,
    milliseconds,
    one_of,
    per_minute,
    seconds,
    text,
    whole,
)
from mcp_elicit.server.prompts import PromptDef
from mcp_elicit.server.rate_limits import ToolCallLimit, default_burst
from mcp_elicit.server.relay import Relay
from mcp_elicit.server.resources import ResourceDef
from mcp_elicit.server.rev_2025_11_25 import HandshakeChannel, respond_in_session
from mcp_elicit.server.sessions import Session, Sessions
from mcp_elicit.server.state_keys import StateKeys
from mcp_elicit.server.subscriptions import Subscriptions
from mcp_elicit.server.tasks import Tasks
from mcp_elicit.server.threads import on_loop
from mcp_elicit.server.tools import ToolDef
from mcp_elicit.server.url_mode import PageAuth, UrlMode
from mcp_elicit.stores.base import Store
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.telemetry import load as load_telemetry
from mcp_elicit.wire import jsonrpc

__all__ = ["Server"]

log = logging.getLogger("mcp_elicit.server")

F = TypeVar("F", bound=Callable[..., Any])


class Server(StateKeys, HasLifespan, Lifecycle, Announcements, Dispatch):
    """An MCP server. ``Server("bookings")``, then ``@app.tool`` on functions (``async def``
    on the event loop, a plain ``def`` in a worker thread). ``lifespan``: an async context
    manager function given the server, entered when it starts serving and exited when it
    stops, its value read as ``ctx.lifespan_context`` (the module ``server.lifespan``)."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        lifespan: LifespanFunction | None = None,
        state_keys: KeyRing | None = None,
        state_ttl: float = 600.0,
        page_size: int = 100,
        cache_ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "private",
        auth: TokenVerifier | None = None,
        resource_metadata: ResourceMetadata | None = None,
        ask_timeout: float = 600.0,
        max_sessions: int = 1000,
        max_sessions_per_principal: int | None = None,
        session_idle_timeout: float = 1800.0,
        store: str | Store | None = None,
        public_url: str | None = None,
        page_auth: PageAuth | None = None,
        flow_ttl: float = 600.0,
        flow_wait: float = 20.0,
        max_flows_per_principal: int = 100,
        task_ttl: float | None = 3600.0,
        task_poll: float = 1.0,
        telemetry: bool | Telemetry | None = None,
        redact_tool_errors: bool = False,
        max_calls_per_minute: float | None = None,
        call_burst: int | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        name, version = text("name", name), text("version", version)  # type: ignore[assignment]
        title, instructions = (
            text("title", title, nullable=True),
            text("instructions", instructions, nullable=True),
        )
        store_methods = ("get", "put", "add", "take")
        expect(
            "store",
            store,
            store is None or isinstance(store, str) or all(hasattr(store, m) for m in store_methods),
            "None, a store URL (sqlite:///path, redis://host) or a Store object",
        )
        expect(
            "public_url",
            public_url,
            public_url is None or isinstance(public_url, str),
            "None or an http(s) URL",
        )
        expect(
            "auth",
            auth,
            auth is None or callable(getattr(auth, "verify", None)),
            "None or a TokenVerifier (an object with async verify(token))",
        )
        expect(
            "page_auth",
            page_auth,
            page_auth is None or callable(getattr(page_auth, "subject", None)),
            "None or a PageAuth (an object with async subject(headers, cookies))",
        )
        expect(
            "telemetry",
            telemetry,
            telemetry is None or isinstance(telemetry, bool | Telemetry),
            "None, True, False or a Telemetry",
        )
        expect(
            "redact_tool_errors", redact_tool_errors, isinstance(redact_tool_errors, bool), "True or False"
        )
        expect("clock", clock, callable(clock), "a function returning the time in seconds (time.time)")
        state_ttl = seconds("state_ttl", state_ttl)
        page_size = whole("page_size", page_size)
        cache_ttl_ms = whole("cache_ttl_ms", cache_ttl_ms, least=0, most=MOST_MS)
        cache_scope = one_of("cache_scope", cache_scope, ("public", "private"))  # type: ignore[assignment]
        ask_timeout = seconds("ask_timeout", ask_timeout)
        max_sessions = whole("max_sessions", max_sessions)
        if max_sessions_per_principal is not None:  # None: a tenth of max_sessions
            max_sessions_per_principal = whole("max_sessions_per_principal", max_sessions_per_principal)
        session_idle_timeout = seconds("session_idle_timeout", session_idle_timeout)
        flow_ttl = seconds("flow_ttl", flow_ttl)
        flow_wait = seconds("flow_wait", flow_wait, zero=True)
        max_flows_per_principal = whole("max_flows_per_principal", max_flows_per_principal)
        self.limit_tool_calls(max_calls_per_minute, call_burst)
        self.name = name
        self._redact_tool_errors = redact_tool_errors  # the property below, once tools exist
        #: OpenTelemetry spans and metrics (``server.telemetry``): None when off. The
        #: default is on when ``opentelemetry-api`` is installed; True insists on it.
        self.telemetry = load_telemetry(telemetry, "server")
        if self.telemetry is not None:
            self.telemetry.offered = self._offers
        #: Bearer-token verification for Streamable HTTP (stdio has no principal).
        self.auth = auth
        #: Where clients get those tokens (OAuth): published over HTTP, named in challenges.
        self.resource_metadata = resource_metadata
        #: How long a handshake-era question waits for its answer (a person is answering),
        #: counted from when it is sent: one asked before the client's
        #: ``notifications/initialized`` first waits for that, apart, and only
        #: ``sessions.INITIALIZED_WAIT`` (10 s) at most, so a client that never sends it
        #: has the question end soon (as unanswered) rather than after ``ask_timeout``.
        self.ask_timeout = ask_timeout
        #: Sessions of 2025-11-25 (and earlier) clients.
        ended = self.telemetry.session_ended if self.telemetry is not None else None
        self.sessions = Sessions(
            max_sessions=max_sessions,
            max_sessions_per_principal=max_sessions_per_principal,
            idle_timeout=session_idle_timeout,
            ended=ended,
        )
        #: Hosted URL mode: flows, the vault, third-party providers (store opened on first use).
        self.url_mode = UrlMode(
            store=store,
            sealer=lambda: self.sealer,
            public_url=public_url,
            page_auth=page_auth,
            flow_ttl=flow_ttl,
            flow_wait=flow_wait,
            ask_timeout=ask_timeout,
            max_flows_per_principal=max_flows_per_principal,
            clock=clock,
        )
        self.url_mode.on_finish = lambda flow, who: self.sessions.complete(flow, who, self.telemetry)
        self.url_mode.on_abandon = self._abandon_elicitation
        #: Open ``subscriptions/listen`` requests (2026-07-28).
        self.subscriptions = Subscriptions()
        #: Tool calls that went on as tasks (the tasks extension, 2026-07-28).
        self.tasks = Tasks(
            clock=clock,
            ttl_ms=None if task_ttl is None else milliseconds("task_ttl", task_ttl, nullable=True),
            poll_ms=milliseconds("task_poll", task_poll),
            ask_timeout=ask_timeout,
        )
        self.tasks.on_change = self._task_changed
        self.version = version
        self.title = title
        self.instructions = instructions
        self.page_size = page_size
        self.clock = clock
        self._lifespan = Lifespan(self, lifespan, name)
        self._starts: Counter[object] = Counter()  # by transport (``server.lifecycle``)
        self._begun: set[object] = set()  # holding a start, their begin_stop came
        self._releases: set[asyncio.Task[None]] = set()  # the stops' releases under way
        self._cache = (cache_ttl_ms, cache_scope)
        super().__init__()
        self._core: ServerCore | None = None
        self.ephemeral_state_key = state_keys is None
        self.state_key_file = None
        self._process_key = os.urandom(MIN_SECRET_BYTES)
        self.sealer = StateSealer(
            state_keys if state_keys is not None else KeyRing([self._process_key]),
            server_id=f"{name}/{os.environ.get('MCP_ELICIT_SERVER_ID', '')}",
            ttl=state_ttl,
        )
        self.url_mode.on_default_store = self._persist_state_key
        #: Resource updates and tasks, shared with the instances sharing the configured store.
        self.relay = Relay(
            self.sealer.server_id,
            self._resource_updated,
            self.tasks,
            lambda: self.sealer,
            clock,
            changed=lambda state: self.subscriptions.publish("notifications/tasks", state),
            completed=lambda step, principal: self.sessions.complete(step, principal, self.telemetry),
        )

    def limit_tool_calls(self, max_calls_per_minute: float | None, call_burst: int | None = None) -> None:
        """How often one caller may call tools (and get prompts, read resources, complete
        arguments), as the options of the same names (None: no limit; see
        ``server.rate_limits``); counting starts anew.
        ``ConfigError`` for a value that cannot work, or a ``call_burst`` without a rate."""
        if max_calls_per_minute is None:
            if call_burst is not None:
                raise ConfigError(
                    f"call_burst {call_burst!r}: give max_calls_per_minute too, or leave it out"
                )
            self.call_limit = None
            return
        rate = per_minute("max_calls_per_minute", max_calls_per_minute)
        burst = (
            default_burst(rate)
            if call_burst is None
            else whole("call_burst", call_burst, most=MOST_PER_MINUTE)
        )
        self.call_limit = ToolCallLimit(rate, burst)

    # ---- registration ------------------------------------------------------------

    def oauth_provider(
        self,
        name: str,
        *,
        authorize_url: str,
        token_url: str,
        client_id: str,
        client_secret: str | None = None,
        scopes: str | tuple[str, ...] | list[str] = (),
        extra_params: Mapping[str, str] | None = None,
        leeway: float = 30.0,
        check_granted_scopes: bool = True,
        revocation_url: str | None = None,
    ) -> OAuthProvider:
        """Register a third-party OAuth provider that handlers connect to with
        ``await ctx.connect(name)`` (authorization code + PKCE). Register the redirect URI
        ``{public URL}/mcp-elicit/oauth/callback`` with the provider. Needs the
        ``mcp-elicit[oauth]`` extra. Tokens that grant fewer than ``scopes`` are refused;
        ``check_granted_scopes=False`` keeps them (logged) for a provider whose scope names
        cannot be matched to the ones asked. ``revocation_url``: the provider's RFC 7009
        revocation endpoint (Google's is ``https://oauth2.googleapis.com/revoke``), where
        the tokens of a sign-in not kept, or of a connection forgotten, are revoked."""
        require_authlib()
        provider = OAuthProvider(
            name=name,
            authorize_url=authorize_url,
            token_url=token_url,
            client_id=client_id,
            client_secret=client_secret,
            scopes=(scopes,) if isinstance(scopes, str) else tuple(scopes),
            extra_params=dict(extra_params or {}),
            leeway=leeway,
            check_granted_scopes=check_granted_scopes,
            revocation_url=revocation_url,
        )
        self.url_mode.add_provider(provider)
        return provider

    # ---- protocol --------------------------------------------------------------

    @property
    def core(self) -> ServerCore:
        if self._core is None:
            self._core = ServerCore(
                ServerIdentity(
                    name=self.name,
                    version=self.version,
                    title=self.title,
                    instructions=self.instructions,
                    capabilities=self.capabilities(),
                    cache_ttl_ms=self._cache[0],
                    cache_scope=self._cache[1],
                )
            )
        return self._core

    # ---- handshake sessions (2025-11-25 and earlier) ---------------------------------

    def open_session(
        self, message: jsonrpc.Request, principal: Principal | None = None, *, transport: object = None
    ) -> tuple[bytes, Session | None, int]:
        """Answer ``initialize``: the encoded response, the new session when it worked, and
        the HTTP status for the response (503 when every session is in use). ``transport``:
        the one that opened it, whose stop ends it (``server.lifecycle``; an override
        should take it and pass it on, one that does not is still served, see
        ``lifecycle.open_session_for``)."""
        try:
            handshake = parse_initialize(message.params)
            session = self.sessions.create(handshake, principal.subject if principal else None)
        except ProtocolError as exc:
            return jsonrpc.encode_error(message.id, exc), None, exc.http_status
        session.transport = transport
        result = initialize_result(self.core.identity, handshake)
        session.offered = frozenset(result["capabilities"])
        return jsonrpc.encode_result(message.id, result), session, 200

    async def respond_in_session(
        self,
        message: jsonrpc.Request,
        session: Session,
        *,
        channel: HandshakeChannel,
        principal: Principal | None = None,
        network: Mapping[str, str | int] | None = None,
    ) -> bytes | None:
        """Answer a request of a handshake session; None when the client cancelled it.
        ``network``: the transport's attributes for telemetry (``Telemetry.request``)."""
        telemetry = self.telemetry
        if telemetry is None or not telemetry.active:
            return await respond_in_session(self, message, session, channel=channel, principal=principal)
        version, sid = session.version, session.id
        channel = telemetry.channel(channel, message.params, version=version, session=sid, network=network)
        answer = respond_in_session(self, message, session, channel=channel, principal=principal)
        return await telemetry.traced(message, answer, version=version, session=sid, network=network)

    def _offers(self, method: str, name: str) -> bool:
        return name in (self._tools if method == "tools/call" else self._prompts)

    @property
    def redact_tool_errors(self) -> bool:
        """Whether a tool's unexpected exception is sent as "Error executing tool NAME" and a
        reference its log line holds, never its message (which may name paths, hosts, SQL);
        a tool's, prompt's or resource template's argument validator's own message is
        withheld the same way.
        Set after the tools are registered (a launcher's, a deployment's start-up), it holds
        for them too."""
        return self._redact_tool_errors

    @redact_tool_errors.setter
    def redact_tool_errors(self, value: bool) -> None:
        expect("redact_tool_errors", value, isinstance(value, bool), "True or False")
        self._redact_tool_errors = value
        for tool in list(self._tools.values()):
            tool.redact_errors = value
        for prompt in list(self._prompts.values()):
            prompt.redact_errors = value
        for template in list(self._templates):
            template.redact_errors = value

    def _add_tool(self, tool: ToolDef) -> None:
        tool.redact_errors = self._redact_tool_errors  # before any request can reach it
        super()._add_tool(tool)

    def _add_prompt(self, prompt: PromptDef) -> None:
        prompt.redact_errors = self._redact_tool_errors  # a prompt's validators are its code too
        super()._add_prompt(prompt)

    def _add_resource(self, res: ResourceDef) -> None:
        res.redact_errors = self._redact_tool_errors  # a template's validators are its code too
        super()._add_resource(res)

    @on_loop
    def _changed(self, kind: Literal["tools", "prompts", "resources", "completions"]) -> None:
        self._core = None
        if kind != "completions":
            self.notify_list_changed(kind)
