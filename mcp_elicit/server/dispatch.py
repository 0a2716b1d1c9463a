"""How a server answers a checked request: dispatch over the methods of every revision,
the tool call, prompt and resource read run under the asking strategy of the request's
revision, and the answer encoded for the wire. ``Server`` is a ``Dispatch``; this half
holds no configuration of its own.

Rules: a protocol fault is a JSON-RPC error with its code and HTTP status; a replay
mismatch, a form defined wrongly or a ``ToolError`` from a prompt or resource is -32603
saying so; anything else unexpected is -32603 "Internal error" (logged, never shown); a
result JSON cannot carry is -32603 too, as is a handler's own protocol error holding a
value JSON cannot carry (logged; the request is answered all the same). A ``tools/call``,
``prompts/get``, ``resources/read`` or ``completion/complete`` past its caller's rate limit
is refused before anything else of it (``server.rate_limits``: an unknown tool's, prompt's
or URI's counts too). An unknown tool
is -32602 "Unknown tool: NAME" (NAME inert and cut short; a protocol error in both revisions' specifications, not a
tool's ``isError``), naming a few of the tools there are; an unknown prompt is -32602 "Unknown
prompt: NAME" alike, and an unknown URI's NAME is cut and inert too. A prompt or resource that needs a URL-mode step
the user declined or cancelled fails by the user's choice, not the server's: -32600
(the code of the client's own doing) saying so and why, nothing logged, on both
revisions; that is its ``ToolError`` once a step of the request was refused
(``ctx.refused``: ``ctx.connect``, ``ctx.secret``, ``ctx.elicit_url``), and on
2026-07-28 a step of its own ``URLElicitationRequired`` refused (``url_raised``; 2025-11-25 sends that
as -32042, its steps checked and given ids as ``ctx.require_url``'s, where the session's
request catches its errors: ``rev_2025_11_25``). A tool gets the
same as its ``isError`` result. Without an ``asker`` (a handshake session's), 2026-07-28
questions travel as multi round-trip rounds; a tool registered with ``task=`` may go on
as a task when the client declared the extension.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from mcp_elicit.core.quoting import shown_name
from mcp_elicit.core.rev_2025_11_25 import no_session
from mcp_elicit.core.server import Call, ServerCore, modern_error
from mcp_elicit.core.tasks import TASK_METHODS, TASKS_EXTENSION, require_tasks
from mcp_elicit.errors import (
    FormSchemaError,
    InternalError,
    InvalidParams,
    InvalidRequest,
    ProtocolError,
    ReplayMismatchError,
    ResourceNotFound,
    ToolError,
)
from mcp_elicit.log_labels import log_answered_error, request_label
from mcp_elicit.sealing import StateSealer
from mcp_elicit.server.auth import Principal
from mcp_elicit.server.catalog import Catalog
from mcp_elicit.server.completion import complete
from mcp_elicit.server.context import Channel, Context
from mcp_elicit.server.lifespan import Lifespan
from mcp_elicit.server.listing_extras import listed
from mcp_elicit.server.pagination import cursor_private, paginate
from mcp_elicit.server.questions import Asker
from mcp_elicit.server.rate_limits import ToolCallLimit
from mcp_elicit.server.relay import Relay
from mcp_elicit.server.resources import find_resource, not_found
from mcp_elicit.server.rev_2025_11_25 import SessionAsker
from mcp_elicit.server.rev_2026_07_28 import ReplayAsker, run_replayed
from mcp_elicit.server.subscriptions import Subscriptions
from mcp_elicit.server.task_handler import Detach, run_detachable
from mcp_elicit.server.tasks import Tasks, answer_task_method
from mcp_elicit.server.tools import ToolDef
from mcp_elicit.server.url_mode import UrlMode
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.wire import headers as h
from mcp_elicit.wire import jsonrpc

__all__ = ["Dispatch"]

log = logging.getLogger("mcp_elicit.server")


class Dispatch(Catalog):
    """Answering checked requests from the registrations (``Server`` sets the rest up)."""

    # Set up by Server.__init__.
    telemetry: Telemetry | None
    page_size: int
    sealer: StateSealer
    clock: Callable[[], float]
    url_mode: UrlMode
    tasks: Tasks
    relay: Relay
    subscriptions: Subscriptions
    _lifespan: Lifespan
    #: How often one caller may call tools, get prompts, read resources and complete
    #: (``Server(max_calls_per_minute=)``); None: no limit.
    call_limit: ToolCallLimit | None = None

    @property
    def core(self) -> ServerCore:
        """The protocol decisions for what is registered now (``Server`` builds it)."""
        raise NotImplementedError

    def respond(
        self,
        message: jsonrpc.Request,
        *,
        channel: Channel,
        principal: Principal | None = None,
        headers: Mapping[str, str] | None = None,
        network: Mapping[str, str | int] | None = None,
    ) -> Awaitable[tuple[bytes, int]]:
        """Answer one decoded request: await it for the encoded response and the HTTP
        status for it. (A plain method handing back the coroutine that answers: one
        coroutine fewer on every request's path.)"""
        telemetry = self.telemetry
        if telemetry is None or not telemetry.active:
            return self._respond(message, channel, principal, headers)
        channel = telemetry.channel(channel, message.params, network=network)
        return telemetry.traced(message, self._respond(message, channel, principal, headers), network=network)

    async def _respond(
        self,
        message: jsonrpc.Request,
        channel: Channel,
        principal: Principal | None,
        headers: Mapping[str, str] | None,
    ) -> tuple[bytes, int]:
        core = self.core
        try:
            try:
                call = core.check_modern(message, headers)
            except ProtocolError:
                # Only a request of the modern era passes check_modern: the era needs
                # deciding (a handshake one has no session here) only when it fails.
                if core.is_handshake_request(message, headers):
                    if message.method == "ping":  # allowed before initialize (2025-11-25)
                        return jsonrpc.encode_result(message.id, {}), 200
                    raise no_session() from None
                raise
            # handle's work without its coroutine layer (check_modern passes modern calls only);
            # the framework's checks raise at the call, the handler's errors as it is awaited
            work = self._answer(core, call, channel, principal, headers, None)
            try:
                result = core.finish(call.method, await work)
            except ProtocolError as raised:
                raise modern_error(raised, handler=True) from None
        except ProtocolError as raised:
            exc = modern_error(raised)
            log_answered_error(log, message.method, message.params, message.id, exc)
            try:
                return jsonrpc.encode_error(message.id, exc), exc.http_status
            except TypeError:  # a value JSON cannot carry in its data (a handler's own error's)
                log.exception("%s: the error could not be encoded", _label(message))
                return jsonrpc.encode_error(message.id, InternalError("Internal error")), 200
        except (ReplayMismatchError, FormSchemaError, ToolError) as exc:  # said on purpose
            log.error("%s: %s", _label(message), exc)
            return jsonrpc.encode_error(message.id, InternalError(f"Internal error: {exc}")), 200
        except Exception:
            log.exception("%s failed", _label(message))
            return jsonrpc.encode_error(message.id, InternalError("Internal error")), 200
        try:
            return jsonrpc.encode_result(message.id, result), 200
        except TypeError:  # a value JSON cannot carry got into the result
            log.exception("%s: the result could not be encoded", _label(message))
            return jsonrpc.encode_error(message.id, InternalError("Internal error")), 200

    async def handle(
        self,
        call: Call,
        *,
        channel: Channel,
        principal: Principal | None = None,
        headers: Mapping[str, str] | None = None,
        asker: Asker | None = None,
    ) -> dict[str, Any]:
        """Answer one checked request; the result is ready for the wire. ``asker`` is how
        questions reach the client on a handshake session; without one, 2026-07-28
        multi round-trip requests carry them."""
        core = self.core
        result = await self._answer(core, call, channel, principal, headers, asker)
        return core.finish(call.method, result, modern=call.modern)

    def _answer(
        self,
        core: ServerCore,
        call: Call,
        channel: Channel,
        principal: Principal | None,
        headers: Mapping[str, str] | None,
        asker: Asker | None,
    ) -> Awaitable[dict[str, Any]]:
        """The awaitable of ``call``'s result before ``finish`` (a plain method: the
        handler's coroutine is the only layer under the caller's)."""
        method = call.method
        params = call.params
        if method in core.unoffered:  # the set first: check_offered is called only to raise
            core.check_offered(method)
        if method == "tools/call":
            return self._call_tool(call, channel, principal, headers, asker)
        if method == "tools/list":
            tools = listed((t.wire for t in self._tools.values()), call.revision)
            return _ready(paginate(params, "tools", self.page_size, tools))
        if method == "server/discover":
            return _ready(core.discover())
        if method == "prompts/get":
            return self._get_prompt(call, channel, principal, asker)
        if method == "resources/read":
            return self._read_resource(call, channel, principal, asker)
        if method == "prompts/list":
            prompts = listed((p.wire for p in self._prompts.values()), call.revision)
            return _ready(paginate(params, "prompts", self.page_size, prompts))
        if method == "resources/list":
            return _ready(self._list_resources(params, principal, call.revision, modern=call.modern))
        if method == "resources/templates/list":
            templates = listed((r.wire for r in self._templates), call.revision)
            return _ready(paginate(params, "resourceTemplates", self.page_size, templates))
        if method == "completion/complete":
            if self.call_limit is not None:  # the one test on the path when it is off
                self.call_limit.check_completion(principal)
            return complete(self._completer, params, principal)
        if method == "subscriptions/listen":
            return self._listen(call, channel, principal)
        if method in TASK_METHODS:
            return answer_task_method(self.tasks, call, principal.subject if principal else None, self.relay)
        # the core lets only known methods through
        raise InvalidParams(f"Unhandled method {method}")

    def _ask(
        self,
        call: Call,
        channel: Channel,
        principal: Principal | None,
        asker: Asker | None,
        run: Callable[..., Coroutine[Any, Any, dict[str, Any]]],
        args: tuple[Any, ...],
        *,
        tool: ToolDef | None = None,
        single_use: bool = False,
        task: bool = False,
    ) -> Awaitable[dict[str, Any]]:
        """Run ``run(ctx, *args)``, a handler that may ask questions, in the way the request's
        revision asks them; with ``task``, one that may go on as a task (the client declared
        the extension). A 2026-07-28 round of a ``tool`` (whose ``call`` is ``run``) runs its
        function in ``run_replayed``'s frame. (A plain method handing back the awaitable: no
        coroutine layers or closures that only forward, on every request's path.)"""
        if asker is not None:
            ctx = Context(call, channel, asker, principal, None, self.url_mode, None, self._lifespan)
            if isinstance(asker, SessionAsker):  # for the handler's own -32042 (respond_in_session)
                asker.context = ctx
            return run(ctx, *args) if tool is not None else _refusals(ctx, run(ctx, *args))
        owner = principal.subject if principal else None
        detach = Detach(self.tasks, owner) if task else None
        replay_asker = ReplayAsker()
        # positional (see Context.__init__): channel, asker, principal, log_level, url_mode, detach, lifespan
        ctx = Context(call, channel, replay_asker, principal, None, self.url_mode, detach, self._lifespan)
        rounds = run_replayed(
            call.method,
            call.params,
            replay_asker,
            run if tool is None else tool.start,
            (ctx, *args),
            sealer=lambda: self.sealer,  # read when sealing: the round may make the key file
            principal=owner,
            now=self.clock,
            spend=self.url_mode.spend_state if single_use else None,
            issue=self.url_mode.issue_state if single_use else None,
            outcome=tool,
            raised=ctx._settle_raised,
            request_id=call.id,
        )
        if tool is None:  # a prompt's or a resource's (never a task)
            return _refusals(ctx, rounds)
        if detach is None:
            return rounds
        return run_detachable(detach, lambda: rounds, lambda result: self.core.finish(call.method, result))

    async def _listen(self, call: Call, channel: Channel, principal: Principal | None) -> dict[str, Any]:
        owner = principal.subject if principal else None
        offered = {
            "tools": "toolsListChanged",
            "prompts": "promptsListChanged",
            "resources": "resourcesListChanged",
        }
        caps = self.core.identity.capabilities
        return await self.subscriptions.listen(
            call,
            channel,
            offered=frozenset(flag for kind, flag in offered.items() if kind in caps),
            served=lambda uri: "resources" in caps and self._subscribable(uri, principal),
            tasks=lambda ids: self.relay.visible(ids, owner),
            owner=owner,
            principal=principal,
            transport=getattr(channel, "transport", None),  # its stop ends the subscription
        )

    def check_subscribable(self, uri: str, principal: Principal | None) -> None:
        """Raise what ``resources/read`` of ``uri`` by ``principal`` would for a URI nothing
        serves or one it may not read (``ResourceNotFound``), without running a handler: a
        subscription to it could never be told anything, or must not be."""
        found, variables = find_resource(self._resources, self._templates, uri)
        if not found.may_read(principal, variables):
            raise not_found(uri)

    def _subscribable(self, uri: str, principal: Principal | None) -> bool:
        try:
            self.check_subscribable(uri, principal)
        except ResourceNotFound:
            return False
        return True

    def _readers(self, uri: str) -> Callable[[Principal | None], bool] | None:
        """Who may hear that ``uri`` changed: its resource's ``readable`` rule, asked when
        the change is published (None: no rule, every subscriber; as for a URI no longer
        served, whose subscribers were checked when they subscribed). A rule that fails
        counts as no (logged)."""
        try:
            found, variables = find_resource(self._resources, self._templates, uri)
        except ResourceNotFound:
            return None
        if found.readable is None:
            return None

        def may_read(principal: Principal | None) -> bool:
            try:
                return found.may_read(principal, variables)
            except Exception:
                log.exception("the readable rule of resource %r failed; its update is not sent", found.uri)
                return False

        return may_read

    def _list_resources(
        self, params: Mapping[str, Any], principal: Principal | None, revision: str, *, modern: bool
    ) -> dict[str, Any]:
        """``resources/list``: a fixed resource with a ``readable`` rule is named only to
        the callers it lets read it (a rule that fails counts as no, logged); a list that
        may differ by caller is never for a shared cache, nor is any later page of it
        (its cursor says so, whatever the list holds by then; 2026-07-28: a handshake
        session's results carry no caching hints)."""
        resources = self._resources.values()
        private = cursor_private(params, "resources")
        if all(r.readable is None for r in resources):
            shown = listed((r.wire for r in resources), revision)
            result = paginate(params, "resources", self.page_size, shown, private=private)
        else:
            private, shown = True, []
            for r in resources:
                try:
                    if r.may_read(principal, {}):
                        shown.append(r.wire)
                except Exception:
                    log.exception("the readable rule of resource %r failed; it is not listed", r.uri)
            result = paginate(params, "resources", self.page_size, listed(shown, revision), private=True)
        if modern and private:
            result["cacheScope"] = "private"
        return result

    def _call_tool(
        self,
        call: Call,
        channel: Channel,
        principal: Principal | None,
        headers: Mapping[str, str] | None,
        asker: Asker | None,
    ) -> Awaitable[dict[str, Any]]:
        """The awaitable answering a ``tools/call`` (a plain method: its checks raise at
        the call, and no coroutine layer only forwards to the tool's)."""
        if self.call_limit is not None:  # the one test on the path when it is off
            self.call_limit.check(call, principal)
        params = call.params
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams('Invalid params: tools/call needs "name" (a string)')
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParams('Invalid params: tools/call "arguments" must be an object')
        tool = self._tools.get(name)
        if tool is None:
            raise _unknown("tool", name, self._tools)
        if tool.header_params and headers is not None:
            h.check_param_headers(tool.header_params, arguments or {}, headers)
        tasks = False
        if tool.task is not None and call.modern:
            tasks = call.capabilities.extension(TASKS_EXTENSION)
            if tool.task == "required":
                require_tasks(call.capabilities)
        return self._ask(
            call,
            channel,
            principal,
            asker,
            tool.call,
            (arguments,),
            tool=tool,
            single_use=tool.single_use_state,
            task=tasks,
        )

    def tool_failed(self, call: Call, exc: Exception, where: str) -> dict[str, Any] | None:
        """The result of ``call``, a ``tools/call``, whose tool failed with ``exc`` after its
        function returned (a 2025-11-25 -32042 of its own that cannot be sent): its
        ``isError``, logged, as ``Tool.failed`` makes it. None for another method."""
        name = call.params.get("name")
        tool = self._tools.get(name) if call.method == "tools/call" and isinstance(name, str) else None
        return None if tool is None else tool.failed(exc, where)

    def _get_prompt(
        self, call: Call, channel: Channel, principal: Principal | None, asker: Asker | None
    ) -> Awaitable[dict[str, Any]]:
        if self.call_limit is not None:  # the one test on the path when it is off
            self.call_limit.check(call, principal)
        params = call.params
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams('Invalid params: prompts/get needs "name" (a string)')
        prompt = self._prompts.get(name)
        if prompt is None:
            raise _unknown("prompt", name, self._prompts)
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParams('Invalid params: prompts/get "arguments" must be an object')
        return self._ask(call, channel, principal, asker, prompt.get, (arguments,))

    def _read_resource(
        self, call: Call, channel: Channel, principal: Principal | None, asker: Asker | None
    ) -> Awaitable[dict[str, Any]]:
        if self.call_limit is not None:  # the one test on the path when it is off
            self.call_limit.check(call, principal)
        uri = call.params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams('Invalid params: resources/read needs "uri" (a string)')
        found, variables = find_resource(self._resources, self._templates, uri)
        if not found.may_read(principal, variables):  # told as a URI nothing serves
            raise not_found(uri)
        return self._ask(call, channel, principal, asker, found.read, (uri, variables))


#: How many of the tools (prompts) there are an unknown one's error names.
_NAMED = 5


def _unknown(kind: str, name: str, offered: Mapping[str, object]) -> InvalidParams:
    """-32602 for a ``tools/call`` (``prompts/get``) of ``name``, which no tool (prompt)
    has: the spec's message, the name inert (a client prints it: no escape or line break
    acts) and bounded (``shown_name``), then (bounded) some of those there are."""
    names = sorted(offered)
    listed = ", ".join(names[:_NAMED]) + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")
    return InvalidParams(f"Unknown {kind}: {shown_name(name)} (its {kind}s: {listed or 'none'})")


async def _refusals(ctx: Context, work: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """``work``, a prompt's or a resource's handler: a ``ToolError`` it fails with once the
    user declined or cancelled a URL-mode step of the request (``ctx.refused``) is the
    user's choice, not a server fault: -32600 saying both."""
    try:
        return await work
    except ToolError as exc:
        if ctx.refused is None:
            raise
        raise InvalidRequest(f"Invalid request: {exc} ({ctx.refused})") from None


def _label(message: jsonrpc.Request) -> str:
    """The request as a log line names it (``log_labels``): its prompt, resource or tool too."""
    return request_label(message.method, message.params, message.id)


async def _ready(result: dict[str, Any]) -> dict[str, Any]:
    """``result``, as an awaitable (an answer that needs no handler)."""
    return result
