"""The server's protocol core: which revision a request speaks, whether it may proceed, and
what its result looks like on the wire. No I/O, no handlers: decoded JSON in, decisions out.

Rules (2026-07-28, checked in this order, the order the spec and the conformance suite
expect):

1. ``_meta`` carries protocolVersion and clientCapabilities        -32602, HTTP 400
2. the ``MCP-Protocol-Version`` header equals the ``_meta`` version   -32020, HTTP 400
3. the version is one we speak                                    -32022, HTTP 400
   (then ``_meta``'s optional fields: a bad logLevel or progressToken  -32602, HTTP 400;
   what they may hold is the version's to say)
4. ``Mcp-Method`` equals ``method``; ``Mcp-Name`` equals name/uri    -32020, HTTP 400
5. the method exists in this revision                             -32601, HTTP 404
6. the server declared the capability the method belongs to       -32601, HTTP 404
   (``check_offered``, once the handlers are known: ``prompts/list`` on a server
   without prompts; both revisions)

Header checks (2 and 4) apply only where there are headers (Streamable HTTP). An error a
handler raised goes out in codes 2026-07-28 allows (``modern_error``): it forbids -32002
(resource not found before it: -32602 now, ``data`` kept) and every code of its reserved
range -32020..-32099 it does not define (those go out as -32603, message and ``data``
kept), as is one of the codes it defines that is not about the client's request (a
handler's -32020 or -32022, a -32021 without the ``data`` its schema asks). Every
result gets ``resultType``; cacheable results get ``ttlMs`` and ``cacheScope``; every modern result
names the server in ``_meta``. A request whose era is the handshake one goes to
``rev_2025_11_25``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from mcp_elicit.core.tasks import TASK_METHODS
from mcp_elicit.errors import (
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    MissingClientCapability,
    ProtocolError,
    ResourceNotFound,
    UnsupportedProtocolVersion,
)
from mcp_elicit.url_redaction import redact_uri
from mcp_elicit.wire import headers as h
from mcp_elicit.wire.headers import OWS
from mcp_elicit.wire.jsonrpc import Request, RequestId
from mcp_elicit.wire.meta import (
    CLIENT_CAPABILITIES_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    ClientCapabilities,
    read_request_meta,
)
from mcp_elicit.wire.versions import MODERN, SUPPORTED, is_handshake, unsupported

__all__ = [
    "CACHEABLE_METHODS",
    "CAPABILITY_OF",
    "FRAMEWORK_METHODS",
    "MODERN_ONLY_METHODS",
    "INPUT_METHODS",
    "Call",
    "ServerCore",
    "ServerIdentity",
    "modern_error",
]

#: The server capability each method belongs to: a server that did not declare it does
#: not offer the method (-32601), as the schema's ``MethodNotFoundError`` says.
CAPABILITY_OF: Final = {
    "tools/list": "tools",
    "tools/call": "tools",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
    "completion/complete": "completions",
    "logging/setLevel": "logging",
}

#: Methods a modern server answers through the framework's handlers.
FRAMEWORK_METHODS: Final = frozenset(
    {
        "tools/list",
        "tools/call",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
        "subscriptions/listen",
        *TASK_METHODS,
    }
)
#: Of those, the methods that exist only from 2026-07-28 on.
MODERN_ONLY_METHODS: Final = frozenset({"subscriptions/listen", *TASK_METHODS})
#: Methods whose result may be ``input_required`` (multi round-trip).
INPUT_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: Methods whose results carry caching hints.
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
#: Methods of the handshake revisions that 2026-07-28 removed.
REMOVED_METHODS: Final = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)


@dataclass(frozen=True, slots=True)
class ServerIdentity:
    """What the server says about itself."""

    name: str
    version: str
    title: str | None = None
    instructions: str | None = None
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    cache_ttl_ms: int = 0
    cache_scope: Literal["public", "private"] = "private"

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title:
            info["title"] = self.title
        return info


@dataclass(slots=True)
class Call:
    """A request that passed the protocol checks and goes to a handler."""

    id: RequestId
    method: str
    params: dict[str, Any]
    revision: str
    capabilities: ClientCapabilities
    client_info: Mapping[str, Any] | None = None
    log_level: str | None = None
    progress_token: str | int | None = None

    @property
    def modern(self) -> bool:
        return self.revision in MODERN


class ServerCore:
    """Protocol decisions for one server; shared by every transport and connection."""

    def __init__(self, identity: ServerIdentity) -> None:
        self.identity = identity
        self._server_meta = {SERVER_INFO_META_KEY: identity.info()}
        #: The methods whose capability this server did not declare (``check_offered``).
        self.unoffered: Final = frozenset(
            method for method, needed in CAPABILITY_OF.items() if needed not in identity.capabilities
        )

    # ---- era -----------------------------------------------------------------

    @staticmethod
    def is_handshake_request(
        message: Request, headers: Mapping[str, str] | None, *, in_session: bool = False
    ) -> bool:
        """True when ``message`` belongs to the handshake era (2025-11-25 and earlier).

        The message decides first: ``_meta`` naming a protocol version makes it modern
        (a session header is then ignored, and a disagreeing version header is a header
        mismatch, not a reason to change era). Without it, a version header decides; then a
        session (header, or an initialized stdio process); then ``initialize`` itself.
        """
        meta = (message.params or {}).get("_meta")
        # None first (a handshake request has no _meta): isinstance(None, Mapping) is slow.
        if meta is not None and isinstance(meta, (dict, Mapping)) and PROTOCOL_VERSION_META_KEY in meta:
            return False
        if headers is not None:
            version = headers.get(h.VERSION_HEADER)
            if version is not None:
                return is_handshake(version.strip(OWS))
            if "mcp-session-id" in headers:
                return True
        # 2026-07-28 has no ping: one without _meta is a handshake-era client's, which may
        # ping before initialize
        return in_session or message.method == "initialize" or message.method == "ping"

    @staticmethod
    def check_notification_version(params: Mapping[str, Any] | None, headers: Mapping[str, str]) -> None:
        """Raise the header mismatch (-32020) a request would get when a notification's
        ``_meta`` names a protocol version (a string) and its MCP-Protocol-Version header
        names another: which era it belongs to is not for the transport to guess."""
        meta = (params or {}).get("_meta")
        if not isinstance(meta, (dict, Mapping)):
            return
        version = meta.get(PROTOCOL_VERSION_META_KEY)
        raw = headers.get(h.VERSION_HEADER)
        if isinstance(version, str) and raw is not None and raw.strip(OWS) != version:
            raise _version_mismatch(raw, version)

    # ---- modern requests -------------------------------------------------------

    def check_modern(self, message: Request, headers: Mapping[str, str] | None) -> Call:
        """Run the 2026-07-28 checks on ``message``; raise the first error that applies.

        Without ``_meta`` (or its protocolVersion), a version header naming no revision we
        speak is the error to report (-32022), not the missing ``_meta``; a protocolVersion
        of another type than string is -32602 all the same (the request is malformed)."""
        params = message.params if message.params is not None else {}
        try:
            meta = read_request_meta(params)
        except InvalidParams as exc:
            given = _required_version(params)
            if given is not None:  # an optional field failed: the version is checked first
                self._check_version(message, given, headers)
            raw = headers.get(h.VERSION_HEADER) if headers is not None else None
            if raw is not None and raw.strip(OWS) not in SUPPORTED and not _version_not_a_string(params):
                refused = unsupported(raw.strip(OWS))
                refused.request_id = message.id
                raise refused from None
            exc.request_id = message.id
            raise
        version = meta[0]
        method = message.method
        self._check_version(message, version, headers)
        try:
            if headers is not None:
                self._check_standard_headers(headers, method, params)
            if method not in FRAMEWORK_METHODS and method != "server/discover":
                if method in REMOVED_METHODS:
                    raise MethodNotFound(
                        f"Method not found: {method} does not exist in revision {version} "
                        "(it belongs to the initialize handshake of 2025-11-25 and earlier)"
                    )
                raise MethodNotFound(f"Method not found: {method}")
        except (HeaderMismatch, InvalidRequest, UnsupportedProtocolVersion, MethodNotFound) as exc:
            exc.request_id = message.id
            raise
        # Positional: keyword arguments make this (once per request) about twice as slow.
        return Call(message.id, method, params, *meta)

    @staticmethod
    def _check_version(message: Request, version: str, headers: Mapping[str, str] | None) -> None:
        """Checks 2 and 3 for ``message``, whose ``_meta`` names ``version``."""
        try:
            if headers is not None:
                raw = headers.get(h.VERSION_HEADER)
                if raw is None or raw.strip(OWS) != version:
                    raise _version_mismatch(raw, version)
            if version not in MODERN:  # MODERN and the handshake revisions are disjoint
                if is_handshake(version):
                    raise InvalidRequest(
                        f"Bad request: no session. Revision {version} needs the initialize handshake: "
                        "send initialize first and then the session's requests without _meta "
                        f"protocolVersion, or send {MODERN[0]} in _meta protocolVersion",
                        http_status=400,
                    )
                raise unsupported(version)
        except (HeaderMismatch, InvalidRequest, UnsupportedProtocolVersion) as exc:
            exc.request_id = message.id
            raise

    def check_offered(self, method: str) -> None:
        """-32601 when ``method`` belongs to a capability this server did not declare
        (``prompts/list`` on a server with no prompts): a client that read the
        capabilities never asks, and one that asks learns the method is not offered
        rather than getting an empty answer that looks like one."""
        if method in self.unoffered:
            raise MethodNotFound(
                f"Method not found: {method} is not offered "
                f"(this server declares no {CAPABILITY_OF[method]} capability)"
            )

    @staticmethod
    def _check_standard_headers(headers: Mapping[str, str], method: str, params: Mapping[str, Any]) -> None:
        raw_method = headers.get(h.METHOD_HEADER)
        if raw_method is None:
            raise HeaderMismatch("Header mismatch: the Mcp-Method header is required")
        if raw_method.strip(OWS) != method:
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Method header {h.shown(raw_method.strip(OWS))} "
                f"does not match body method {h.shown(method)}{_why_not(raw_method)}"
            )
        expected = h.name_source(method, params)
        if expected is None:
            return
        raw_name = headers.get(h.NAME_HEADER)
        if raw_name is None:
            raise HeaderMismatch(f"Header mismatch: the Mcp-Name header is required for {method}")
        try:
            name = h.decode_value(raw_name)
        except ValueError as exc:
            raise HeaderMismatch(f"Header mismatch: Mcp-Name header is invalid: {exc}") from None
        if name != expected:
            if method == "resources/read":  # URIs: redacted before the cut (a password cut short stays)
                name, expected = redact_uri(name), redact_uri(expected)
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Name header value {h.shown(name)} does not match body value "
                f"{h.shown(expected)}"
            )

    # ---- results ---------------------------------------------------------------

    def discover(self) -> dict[str, Any]:
        """The ``server/discover`` result body (before ``finish``)."""
        result: dict[str, Any] = {
            "supportedVersions": list(SUPPORTED),
            "capabilities": dict(self.identity.capabilities),
        }
        if self.identity.instructions:
            result["instructions"] = self.identity.instructions
        return result

    def finish(self, method: str, result: dict[str, Any], *, modern: bool = True) -> dict[str, Any]:
        """Stamp a handler's result for the wire (in place; returns it)."""
        if modern:
            result.setdefault("resultType", "complete")
            meta = result.get("_meta")
            if meta is None:
                result["_meta"] = self._server_meta
            elif SERVER_INFO_META_KEY not in meta:
                result["_meta"] = {**meta, **self._server_meta}
            if method in CACHEABLE_METHODS and result["resultType"] == "complete":
                result.setdefault("ttlMs", self.identity.cache_ttl_ms)
                result.setdefault("cacheScope", self.identity.cache_scope)
        return result


#: The codes of the range 2026-07-28 reserves (-32020..-32099) that it defines.
_DEFINED_RESERVED: Final = frozenset(
    {HeaderMismatch.code, MissingClientCapability.code, UnsupportedProtocolVersion.code}
)


def modern_error(exc: ProtocolError, *, handler: bool = False) -> ProtocolError:
    """``exc`` as a 2026-07-28 answer may carry it: a handler's own (or one relayed from a
    server of another revision) may hold a code that revision forbids. A resource not
    found said the old way (-32002) is -32602; another code of the reserved range the
    revision does not define is -32603; either keeps its message and ``data`` as they
    were (a relayed one's ``data`` says what its server said, not only the URI).

    The codes it defines speak of the client's request, each with the ``data`` its schema
    asks: one that is not so is -32603 too (HTTP 200: not the client's doing), message and
    ``data`` kept. That is a -32021 without ``data.requiredCapabilities`` (an object), and,
    raised while the ``handler`` ran, a -32020 or -32022: the request's headers and version
    were checked before it ran, so such a one is about a request of the handler's own (an
    upstream's answer it relays, naming that server's versions). Anything else is ``exc``
    itself."""
    code = exc.code
    if isinstance(exc, ResourceNotFound) and exc.handshake:
        modern: ProtocolError = ResourceNotFound(exc.uri, exc.reason)
    elif code == ResourceNotFound.HANDSHAKE_CODE:
        modern = InvalidParams(exc.message, exc.data)
    elif -32099 <= code <= -32020 and code not in _DEFINED_RESERVED:
        modern = InternalError(exc.message, exc.data)
    elif code in _DEFINED_RESERVED and not _about_the_request(exc, handler):
        modern = InternalError(exc.message, exc.data)
        modern.request_id = exc.request_id
        return modern
    else:
        return exc
    modern.message, modern.args, modern.data = exc.message, (exc.message,), exc.data  # its own words
    modern.http_status, modern.request_id = exc.http_status, exc.request_id
    return modern


def _about_the_request(exc: ProtocolError, handler: bool) -> bool:
    """Whether ``exc``, in a code 2026-07-28 defines, can be about the client's request."""
    if exc.code == MissingClientCapability.code:
        data = exc.data
        return isinstance(data, Mapping) and isinstance(data.get("requiredCapabilities"), Mapping)
    return not handler


def _required_version(params: Mapping[str, Any]) -> str | None:
    """The protocolVersion of ``params._meta`` when it holds both required fields, each of
    its type (a ``_meta`` that failed did so on an optional field then)."""
    meta = params.get("_meta")
    if not isinstance(meta, (dict, Mapping)) or not isinstance(
        meta.get(CLIENT_CAPABILITIES_META_KEY), Mapping
    ):
        return None
    version = meta.get(PROTOCOL_VERSION_META_KEY)
    return version if isinstance(version, str) else None


def _version_not_a_string(params: Mapping[str, Any]) -> bool:
    """Whether ``params._meta`` holds a protocolVersion that is not a string."""
    meta = params.get("_meta")
    return (
        isinstance(meta, (dict, Mapping))
        and PROTOCOL_VERSION_META_KEY in meta
        and not isinstance(meta[PROTOCOL_VERSION_META_KEY], str)
    )


def _version_mismatch(raw: str | None, version: str) -> HeaderMismatch:
    """The error for a ``MCP-Protocol-Version`` header ``raw`` that is not ``version``."""
    if raw is None:
        return HeaderMismatch("Header mismatch: the MCP-Protocol-Version header is required")
    return HeaderMismatch(
        f"Header mismatch: MCP-Protocol-Version header {h.shown(raw.strip(OWS))} does not match "
        f"_meta protocolVersion {h.shown(version)}{_why_not(raw)}"
    )


def _why_not(raw: str) -> str:
    """What an error about the header value ``raw`` adds when it is not plain ASCII."""
    return "" if raw.isascii() else f" ({h.NOT_ASCII})"
