"""Per-request ``_meta`` (2026-07-28) and client capabilities.

Rules:

* A modern request carries ``params._meta`` with ``io.modelcontextprotocol/protocolVersion``
  (a string) and ``io.modelcontextprotocol/clientCapabilities`` (an object); a request
  missing either is malformed: -32602, HTTP 400. ``clientInfo`` and ``logLevel`` are
  optional; a malformed optional field is ignored rather than fatal, except ``logLevel``
  which must be a known level when present, and ``progressToken``, which the spec says
  MUST be a string or an integer (-32602 otherwise, or past 64 bits; null is no token,
  2.0 is 2).
* Capabilities are read as declared, nothing inferred: ``elicitation: {}`` means form mode
  only; no ``elicitation`` key means no elicitation at all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_elicit.errors import InvalidRequestMeta

__all__ = [
    "CLIENT_CAPABILITIES_META_KEY",
    "CLIENT_INFO_META_KEY",
    "ClientCapabilities",
    "LOG_LEVELS",
    "LOG_LEVEL_META_KEY",
    "PROTOCOL_VERSION_META_KEY",
    "RequestMeta",
    "SERVER_INFO_META_KEY",
    "SUBSCRIPTION_ID_META_KEY",
    "parse_request_meta",
    "progress_token",
    "read_request_meta",
]

# The reserved keys, as the spec (and mcp_types) name them. Spelled out here rather than
# imported: importing mcp_types builds every wire model (~150 ms), which a client that only
# lists tools should not pay for. tests/wire/test_meta.py checks they equal mcp_types'.
PROTOCOL_VERSION_META_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_META_KEY: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_META_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_META_KEY: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_META_KEY: Final = "io.modelcontextprotocol/subscriptionId"

#: Logging levels, least to most severe (RFC 5424 order).
LOG_LEVELS: Final[tuple[str, ...]] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


@dataclass(slots=True)
class ClientCapabilities:
    """What one request (or one handshake session) says the client can do."""

    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def elicitation_form(self) -> bool:
        elicitation = self.raw.get("elicitation")
        if not isinstance(elicitation, (dict, Mapping)):
            return False
        # An empty object means form only; otherwise form must be named.
        return not elicitation or "form" in elicitation

    @property
    def elicitation_url(self) -> bool:
        elicitation = self.raw.get("elicitation")
        return isinstance(elicitation, (dict, Mapping)) and "url" in elicitation

    @property
    def sampling(self) -> bool:
        return isinstance(self.raw.get("sampling"), (dict, Mapping))

    @property
    def roots(self) -> bool:
        return isinstance(self.raw.get("roots"), (dict, Mapping))

    def extension(self, name: str) -> bool:
        """Whether the client declared the extension ``name`` (``extensions.<name>``)."""
        extensions = self.raw.get("extensions")
        return isinstance(extensions, (dict, Mapping)) and isinstance(extensions.get(name), (dict, Mapping))


@dataclass(slots=True)
class RequestMeta:
    """The protocol fields of one modern request's ``_meta``."""

    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Mapping[str, Any] | None = None
    log_level: str | None = None
    progress_token: str | int | None = None


def parse_request_meta(params: Mapping[str, Any] | None) -> RequestMeta:
    """Read and check the per-request ``_meta`` of a modern request."""
    return RequestMeta(*read_request_meta(params))


def read_request_meta(
    params: Mapping[str, Any] | None,
) -> tuple[str, ClientCapabilities, Mapping[str, Any] | None, str | None, str | int | None]:
    """``parse_request_meta``'s fields as a tuple, in ``RequestMeta``'s order: the server
    core builds its ``Call`` from them on every request, without the ``RequestMeta``."""
    meta = params.get("_meta") if params is not None else None
    if not isinstance(meta, (dict, Mapping)):
        raise InvalidRequestMeta(
            "Invalid params: _meta is required on every request of revision 2026-07-28 "
            f"(with {PROTOCOL_VERSION_META_KEY} and {CLIENT_CAPABILITIES_META_KEY})"
        )
    version = meta.get(PROTOCOL_VERSION_META_KEY)
    if not isinstance(version, str):
        raise InvalidRequestMeta(f"Invalid params: _meta must carry {PROTOCOL_VERSION_META_KEY} (a string)")
    caps = meta.get(CLIENT_CAPABILITIES_META_KEY)
    if not isinstance(caps, (dict, Mapping)):
        raise InvalidRequestMeta(
            f"Invalid params: _meta must carry {CLIENT_CAPABILITIES_META_KEY} (an object)"
        )
    info = meta.get(CLIENT_INFO_META_KEY)
    level = meta.get(LOG_LEVEL_META_KEY)
    if level is not None and level not in LOG_LEVELS:
        raise InvalidRequestMeta(
            f"Invalid params: {LOG_LEVEL_META_KEY} must be one of {', '.join(LOG_LEVELS)}, not {level!r}"
        )
    token = meta.get("progressToken")
    if token is not None and not isinstance(token, str):
        token = progress_token(token)
    # None first: isinstance(None, Mapping) is a slow miss in the ABC machinery.
    if info is not None and not isinstance(info, (dict, Mapping)):
        info = None
    return version, ClientCapabilities(caps), info, level, token


def progress_token(token: object) -> str | int | None:
    """``token``, a request's ``_meta`` progressToken, as this server takes it: a string, an
    integer (2.0 is 2, an integer to JSON Schema) or None (null: no token). -32602 for any
    other, and for an integer past 64 bits, which the encoder cannot write back (the token
    is echoed in every progress notification; nor are such request ids taken). Read from
    JSON such an integer is the nearest float: a number past 2**53 written with a fraction
    or an exponent is refused too, as its integer may not be the number sent."""
    if token is None or isinstance(token, str):
        return token
    if isinstance(token, int) and not isinstance(token, bool):
        if _INT_MIN <= token <= _INT_MAX:
            return token
    elif not isinstance(token, float) or not token.is_integer():
        raise InvalidRequestMeta(
            f"Invalid params: _meta progressToken must be a string or an integer, not {_shown(token)}"
        )
    elif abs(token) <= _EXACT:
        return int(token)
    if isinstance(token, float) and _INT_MIN < token < _INT_MAX:  # no integer past 64 bits
        why = f"{token:g}, a number written with a fraction or an exponent past 2**53, where it is not exact"
    else:  # an integer past 64 bits is read as the nearest float: said by its size, not its digits
        why = f"an integer outside -2**63..2**64-1 ({abs(int(token)).bit_length()} bits)"
    raise InvalidRequestMeta(
        "Invalid params: _meta progressToken must be a string or an integer of at most 64 bits "
        f"(each progress notification echoes it as sent), not {why}"
    )


#: The integers a message this server writes may hold (its encoder's range), and the
#: largest a float holds exactly.
_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**64 - 1
_EXACT: Final = 2**53


def _shown(value: object) -> str:
    """A wrong ``_meta`` value, for a message: its JSON type, and the value when short."""
    kind = {bool: "a boolean", int: "an integer", float: "a number", list: "an array", dict: "an object"}.get(
        type(value), "a value"
    )
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):  # not from JSON (a caller's own mapping): the type says enough
        return kind
    return f"{kind} ({text})" if len(text) <= 40 else kind
