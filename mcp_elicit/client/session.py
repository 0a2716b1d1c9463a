"""``Client``: an MCP client that speaks both eras and answers questions through an answerer.

::

    async with Client(transport, answerer=Scripted.from_file("answers.json")) as client:
        tools = await client.list_tools()
        result = await client.call_tool("book_table", {"restaurant": "noma"})

The transport comes from ``mcp_elicit.transports`` (``http_client``, ``stdio_client``,
``memory``); ``connect_http``, ``connect_stdio`` and ``connect_memory`` there build both.

Rules:

* Connecting detects the server's era as the spec says (``core.era``): a
  ``server/discover`` probe at the most preferred modern revision in ``versions``; a
  result or a recognized modern error means modern, anything else legacy (``initialize``
  with the most preferred handshake revision). With no modern revision in ``versions``
  there is no probe; with no handshake revision, an answer that means legacy (an error,
  a 202, a page, no answer in time) is ``UnsupportedProtocolVersion`` (-32022, a version
  the two cannot agree on, as when ``server/discover`` names none the client speaks),
  saying what the server answered and which ``versions`` would talk to it (its ``data``
  also has ``answered``, what the server answered, and ``allowed``, the ``versions``,
  so a front end can give its own advice). An
  ``initialize`` answered with ``-32022`` is modern evidence after all: one more probe
  (not so the client's own refusal of the version an ``InitializeResult`` chose, which
  ends the connecting). On stdio a probe unanswered
  within ``probe_timeout`` means legacy.
* Capabilities declared are exactly what the client can do: the answerer's modes, and
  sampling or roots only with their callbacks; the tasks extension with ``tasks=True``
  (2026-07-28 requests only: a tool call may then become a task, followed to its end).
* ``progress=True`` asks for progress on every tool call, prompt and resource read (the
  request id is the token); ``log_level="info"`` asks for log messages at that level and
  above (each request's ``_meta``; at 2025-11-25 ``logging/setLevel``, if the server has
  ``logging``); progress, logs and a followed task's course reach ``on_notification``.
* Closing (``aclose``, the end of ``async with``) ends every call still in flight at
  once, each raising ``TransportError`` ("the client was closed"), a question its person
  is on withdrawn; a subscription's iteration ends; a closed client's calls raise it too.
* A stdio server that exited on its own is started again by the next call, its era probed
  again (``client.restarts``); what was in flight is lost with it, never sent again. A
  request the new process sends while its era is probed, before any handshake begins, is
  refused (-32600: it came before the session was initialized), as at the first
  connecting, ``ping`` answered: never answered by the ended session, nor left waiting.
* Results are returned as received (JSON objects); a result without ``resultType`` is
  complete. Protocol errors raise the matching ``ProtocolError``; limits, timeouts and
  broken connections raise ``RoundsExceeded``, ``RequestTimeout``, ``TransportError``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

from mcp_elicit.client import options as opt
from mcp_elicit.client.answerers import Answerer, RootsCallback, SamplingCallback, check_answerer
from mcp_elicit.client.closing import Calls
from mcp_elicit.client.connection import Connection, NotificationCallback, list_pages
from mcp_elicit.client.era_habits import say_what_follows
from mcp_elicit.client.inputs import Inputs
from mcp_elicit.client.negotiation import discovered_server, negotiate
from mcp_elicit.client.no_response import say_more
from mcp_elicit.client.params import given
from mcp_elicit.client.restarts import Restarts
from mcp_elicit.client.rev_2025_11_25 import HandshakeSession
from mcp_elicit.client.rev_2025_11_25_questions import refused_early
from mcp_elicit.client.rev_2026_07_28 import ModernSession
from mcp_elicit.client.subscriptions import Subscription, open_subscription
from mcp_elicit.client.transport import Transport
from mcp_elicit.core.client import (
    ClientInfo,
    MessageBuilder,
    ThinkClock,
    ToolIndex,
    client_capabilities,
)
from mcp_elicit.core.client_inputs import ServerInfo
from mcp_elicit.core.rounds import RoundLimits
from mcp_elicit.errors import (
    MethodNotFound,
    ProtocolError,
    ProtocolViolation,
    RequestTimeout,
    TransportError,
)
from mcp_elicit.log_labels import reported_on
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.telemetry import load as load_telemetry
from mcp_elicit.wire.jsonrpc import Message, Notification, Request, RequestId
from mcp_elicit.wire.versions import SUPPORTED

__all__ = ["Client"]

log = logging.getLogger("mcp_elicit.client")

#: Why a request of the server's that comes before any handshake began is refused.
_SETTLING = "the client is settling which revision to speak, as after the server started again"

T = TypeVar("T")


class Client:
    """An MCP client over one transport. Use it as an async context manager."""

    def __init__(
        self,
        transport: Transport,
        *,
        answerer: Answerer | None = None,
        sampling: SamplingCallback | None = None,
        roots: RootsCallback | None = None,
        versions: Sequence[str] = SUPPORTED,
        info: ClientInfo | None = None,
        timeout: float = 30.0,
        probe_timeout: float = 10.0,
        limits: RoundLimits | None = None,
        on_notification: NotificationCallback | None = None,
        report: Callable[[str], None] | None = None,
        tasks: bool = False,
        progress: bool = False,
        log_level: str | None = None,
        telemetry: bool | Telemetry | None = None,
    ) -> None:
        timeout, probe_timeout = opt.seconds("timeout", timeout), opt.seconds("probe_timeout", probe_timeout)
        versions, limits = opt.checked_versions(versions), opt.limits_or_default(limits)
        log_level = opt.checked_log_level(log_level)
        if answerer is not None:
            check_answerer(answerer)
        self.transport = transport
        self.versions = versions
        self.limits = limits
        self.probe_timeout = probe_timeout
        clock = ThinkClock()
        modes = answerer.modes if answerer is not None else frozenset()
        capabilities = client_capabilities(
            elicitation=modes, sampling=sampling is not None, roots=roots is not None, tasks=tasks
        )
        self._conn = Connection(
            transport=transport,
            builder=MessageBuilder(
                info or ClientInfo(version=opt.package_version()),
                capabilities,
                progress=progress,
                log_level=log_level,
            ),
            inputs=Inputs(answerer, sampling, roots, clock, report or reported_on(log)),
            timeout=timeout,
            clock=clock,
            on_notification=on_notification,
            server=ServerInfo(where=transport.where, secrets=getattr(transport, "secrets", ())),
            tools=ToolIndex(check_headers=False),
            telemetry=load_telemetry(telemetry, "client"),
        )
        self._session: ModernSession | HandshakeSession | None = None
        self._settling = False  # the revision is being settled: no session hears the server yet
        self._subscriptions: dict[RequestId, Subscription] = {}
        self._open = False
        self._closed = False
        self._calls = Calls()
        self._restarts = Restarts(transport)

    # ---- connecting --------------------------------------------------------------

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def connect(self) -> None:
        """Open the transport and settle the revision (see the module docstring)."""
        if self._open:
            return
        try:  # a call of its own: a close meanwhile cuts it short
            self._session = await self._calls.run(lambda: f"connecting to {self._conn.server}", self._connect)
        except BaseException:
            await self.aclose()
            raise
        log.info("connected to %s at MCP %s", self._conn.server, self.revision)

    async def aclose(self) -> None:
        """End the calls in flight, the session, then the transport (``closing``)."""
        session, self._session = self._session, None
        self._closed = self._closed or session is not None or self._calls.running
        await self._calls.close(lambda: self._end(session))

    async def _end(self, session: ModernSession | HandshakeSession | None) -> None:
        """The transport is closed even if ending the session fails or is cancelled."""
        try:
            for subscription in self._subscriptions.values():
                subscription.dropped()
            if session is not None:
                await session.close()
        finally:
            await self._restarts.stop()
            if self._open:
                self._open = False
                await self.transport.aclose()

    async def _connect(self) -> ModernSession | HandshakeSession:
        self._open, self._closed = True, False  # closed even if its opening is cut short
        await self.transport.open(self._unsolicited)
        self._restarts.watch()
        return await self._negotiate()

    async def _restart(self) -> None:
        """The server exited on its own: start it again (``client.restarts``)."""
        for subscription in self._subscriptions.values():
            subscription.dropped()
        with contextlib.suppress(Exception):
            await self.session.close()
        await self.transport.aclose()
        await self.transport.open(self._unsolicited)
        self._restarts.watch()
        self._session = await self._negotiate()

    async def _negotiate(self) -> ModernSession | HandshakeSession:
        """Until a session begins, none hears what the server sends (``_hearing``): after a
        restart, not the one of the process that ended either."""
        self._settling = True
        try:
            return await negotiate(
                self._conn,
                self.transport,
                versions=self.versions,
                limits=self.limits,
                probe_timeout=self.probe_timeout,
                routes=self._subscriptions,
                began=self._began,
            )
        finally:
            self._settling = False

    def _began(self, session: HandshakeSession) -> None:
        """The handshake's session is the client's as ``initialize`` starts: it answers
        the server's requests during the handshake (``_route``)."""
        self._session = session
        self._settling = False

    def _hearing(self) -> ModernSession | HandshakeSession | None:
        """The session that hears the server: none while the revision is being settled
        before a handshake began (a restarted server's requests are not the ended one's)."""
        return None if self._settling else self._session

    def _adopt(self, discover: Mapping[str, Any]) -> None:
        self._conn.server = discovered_server(discover, self.transport.where, self._conn.server.secrets)

    async def _unsolicited(self, message: Message) -> None:
        if not isinstance(message, Notification):
            await self._route(message)
            return
        session = self._hearing()
        revision = session.revision if session is not None else None
        sid = session.session_id if isinstance(session, HandshakeSession) else None
        with self._conn.receiving(message, revision, sid):
            await self._route(message)

    async def _route(self, message: Message) -> None:
        session = self._hearing()
        if isinstance(message, Notification) and any(
            s.deliver(message) for s in self._subscriptions.values()
        ):
            return  # stdio: a subscription's notification, routed by its id
        if isinstance(session, HandshakeSession):
            await session.on_unsolicited(message)
        elif isinstance(message, Notification):
            await self._conn.notify(message.method, message.params or {})
        elif isinstance(message, Request) and self._settling:
            await self._refuse_unsettled(message)
        else:
            log.warning("ignoring an unsolicited %s from %s", type(message).__name__, self._conn.server)

    async def _refuse_unsettled(self, request: Request) -> None:
        """A request sent while the revision is settled, before any handshake began (at
        connecting, or once a stdio server that ended was started again: the session it
        held went with it). The server waits for an answer: ``ping``, which a server may
        send before initialization, gets an empty result, anything else -32600 saying why."""
        if request.method == "ping":
            reply = self._conn.builder.result(request.id, {})
        else:
            text = refused_early(self._conn.server, request, _SETTLING)
            reply = self._conn.builder.error(request.id, -32600, text)
        try:
            await self.transport.send(reply, {})
        except TransportError as exc:  # the server went again: nobody waits for it
            log.warning(
                "the answer to %s could not be sent to %s: %s", request.method, self._conn.server, exc
            )

    # ---- what the caller sees ------------------------------------------------------

    @property
    def session(self) -> ModernSession | HandshakeSession:
        if self._session is None:
            if self._closed:
                raise TransportError(f"the client was closed: its connection to {self._conn.server} is over")
            raise TransportError("the client is not connected; use 'async with Client(...)' or connect()")
        return self._session

    @property
    def revision(self) -> str:
        """The protocol revision spoken with this server."""
        return self.session.revision

    @property
    def server_info(self) -> ServerInfo:
        """Who the server says it is, and where it is."""
        return self._conn.server

    @property
    def server_capabilities(self) -> dict[str, Any]:
        session = self.session
        if isinstance(session, ModernSession):
            caps = (session.discovered or {}).get("capabilities")
        else:
            caps = session.initialized.get("capabilities")
        return dict(caps) if isinstance(caps, Mapping) else {}

    @property
    def capabilities(self) -> dict[str, Any]:
        """What this client declares it can do (at the revision spoken: extensions, such
        as the tasks extension, exist from 2026-07-28 on; see ``client.declared``)."""
        if isinstance(self._session, HandshakeSession):
            return dict(self._session.declared)
        return dict(self._conn.builder.capabilities)

    @property
    def rejected_tools(self) -> dict[str, str]:
        """Tools dropped from ``list_tools`` for invalid ``x-mcp-header`` annotations, with why."""
        return dict(self._conn.tools.rejected)

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Any request, raw; multi round-trip methods go through their rounds."""
        return await self._call(method, lambda: self.session.call(method, params))

    async def discover(self) -> dict[str, Any]:
        """``server/discover`` (modern); on a handshake session, the same facts from ``initialize``."""
        result = await self._call("server/discover", self._discover)
        self._adopt(result)
        return result

    async def _discover(self) -> dict[str, Any]:
        session = self.session
        return session.discovered() if isinstance(session, HandshakeSession) else await session.discover()

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool (all pages). Over HTTP at a modern revision, tools with invalid
        ``x-mcp-header`` annotations are left out (see ``rejected_tools``)."""
        return await self._list("tools/list", "tools")

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        task_ids: Sequence[str] = (),
    ) -> contextlib.AbstractAsyncContextManager[Subscription]:
        """Hear about changes (``subscriptions/listen``, 2026-07-28)::

            async with client.listen(tools=True) as changes:
                async for method, params in changes:
                    ...

        ``tools``/``prompts``/``resources``: their lists changed; ``resource_uris``: those
        resources were updated; ``task_ids``: those tasks moved (the tasks extension;
        declare it with ``tasks=True``). ``changes.agreed`` is what the server agreed to.
        A 2025-11-25 server has no such method (-32601 here): its list changes reach
        ``on_notification`` on their own."""
        session = self.session
        if not isinstance(session, ModernSession):
            raise MethodNotFound(
                f"subscriptions/listen exists from 2026-07-28 on; {self._conn.server} speaks "
                f"{self.revision}, whose notifications reach on_notification"
            )
        wanted: dict[str, Any] = {}
        for flag, on in (
            ("toolsListChanged", tools),
            ("promptsListChanged", prompts),
            ("resourcesListChanged", resources),
        ):
            if on:
                wanted[flag] = True
        if resource_uris:
            wanted["resourceSubscriptions"] = list(resource_uris)
        if task_ids:
            wanted["taskIds"] = list(task_ids)
        return open_subscription(self._conn, session.revision, wanted, self._subscriptions)

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool; questions the server asks on the way go to the answerer."""
        params = {"name": name, **given(f"tools/call {name!r}", "arguments", arguments)}
        return await self._call("tools/call", lambda: self._call_tool(name, params))

    async def _call_tool(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session
        if isinstance(session, ModernSession):
            await session.ensure_tools()
            reason = self._conn.tools.rejected.get(name)
            if reason is not None:
                raise ProtocolViolation(f"tool {name!r} of {self._conn.server} was rejected: {reason}")
        try:
            return await session.call("tools/call", params)
        except RequestTimeout as exc:  # given up on, not undone
            say_more(exc, "; the tool may have acted: check what it did before calling it again")
            raise

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> dict[str, Any]:
        params = {"name": name, **given(f"prompts/get {name!r}", "arguments", arguments)}
        return await self._call("prompts/get", lambda: self.session.call("prompts/get", params))

    async def read_resource(self, uri: str) -> dict[str, Any]:
        return await self._call("resources/read", lambda: self.session.call("resources/read", {"uri": uri}))

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self._list("prompts/list", "prompts")

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self._list("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self._list("resources/templates/list", "resourceTemplates")

    async def complete(
        self, ref: Mapping[str, Any], argument: Mapping[str, Any], context: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """``completion/complete`` for a prompt or resource-template argument."""
        what = "completion/complete"
        params = {
            **given(what, "ref", ref),
            **given(what, "argument", argument),
            **given(what, "context", context),
        }
        return await self._call(what, lambda: self.session.call(what, params))

    async def _call(self, method: str, work: Callable[[], Awaitable[T]]) -> T:
        server = self.session and self._conn.server  # not connected, or closed: said here
        try:
            return await self._calls.run(lambda: f"{method} to {server}", lambda: self._revived(method, work))
        except ProtocolError as exc:  # what would follow it, in Client's options (client.era_habits)
            say_what_follows(exc, self._session.revision if self._session else None, self.capabilities)
            raise

    async def _revived(self, method: str, work: Callable[[], Awaitable[T]]) -> T:
        """``work``, once a server that exited on its own is started again; a close cuts both."""
        await self._restarts.revive(self._restart, self._conn.server, f"{method} to {self._conn.server}")
        return await work()

    async def _list(self, method: str, key: str) -> list[dict[str, Any]]:
        return await self._call(method, lambda: self._pages(method, key))

    async def _pages(self, method: str, key: str) -> list[dict[str, Any]]:
        session = self.session
        if isinstance(session, ModernSession):
            return await session.list_all(method, key)
        return await list_pages(session.call, method, key)
