"""Protocol decisions specific to the handshake revisions (2025-11-25, 2025-06-18,
2025-03-26). No I/O.

Rules:

* ``initialize`` negotiates: the client's version when we speak it, else our latest
  handshake revision (never 2026-07-28, which has no handshake). The client's
  capabilities from ``initialize`` decide, for the whole session, what may be asked, read
  as the negotiated revision means them: before 2025-11-25 elicitation had no modes (a
  form, no URL mode, no -32042), so there an ``elicitation`` object, whatever it holds,
  declares forms only; a URL-mode question there is -32021 naming the revision as what
  lacks URL mode (``url_mode_missing``), not the client. Before 2025-06-18 there was no
  elicitation at all: a declared ``elicitation`` is read as not declared, and a form asked
  there is -32021 naming the revision (``form_missing``). Where the revision is what
  lacks it, the -32021's data says so too: ``requiredProtocolVersion``, the first revision
  that has it, beside the capability (``revision_lacks``).
* Methods of this era: ``initialize``, ``ping``, ``logging/setLevel``,
  ``resources/subscribe`` and ``resources/unsubscribe``, plus the ones both eras share.
  ``server/discover`` does not exist here (-32601).
* Results carry no ``resultType``, caching hints or serverInfo ``_meta``: those belong to
  2026-07-28.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcp_elicit.core.server import FRAMEWORK_METHODS, MODERN_ONLY_METHODS, ServerIdentity
from mcp_elicit.errors import InvalidParams, InvalidRequest, MethodNotFound, MissingClientCapability
from mcp_elicit.wire.meta import LOG_LEVELS, ClientCapabilities
from mcp_elicit.wire.versions import HANDSHAKE, REV_2025_06_18, REV_2025_11_25, negotiate_handshake

__all__ = [
    "HANDSHAKE_ONLY",
    "Handshake",
    "RevisionLacks",
    "check_method",
    "form_missing",
    "initialize_result",
    "no_session",
    "parse_initialize",
    "parse_set_level",
    "revision_lacks",
    "url_mode_missing",
]

#: Methods only the handshake era has.
HANDSHAKE_ONLY: Final = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)


@dataclass(frozen=True, slots=True)
class Handshake:
    """What ``initialize`` settled for a session."""

    version: str
    capabilities: ClientCapabilities
    client_info: Mapping[str, Any] | None


def parse_initialize(params: Mapping[str, Any] | None) -> Handshake:
    """Read an ``initialize`` request; raise -32602 when it is malformed."""
    if params is None:
        raise InvalidParams("Invalid params: initialize needs protocolVersion, capabilities and clientInfo")
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        raise InvalidParams("Invalid params: initialize needs protocolVersion (a string)")
    caps = params.get("capabilities")
    if not isinstance(caps, Mapping):
        raise InvalidParams("Invalid params: initialize needs capabilities (an object)")
    info = params.get("clientInfo")
    version = negotiate_handshake(requested)
    return Handshake(
        version=version,
        capabilities=ClientCapabilities(_as_meant(caps, version)),
        client_info=info if isinstance(info, Mapping) else None,
    )


#: The handshake revisions before elicitation (it came with 2025-06-18).
WITHOUT_ELICITATION: Final = frozenset({"2024-11-05", "2025-03-26"})


def _as_meant(caps: Mapping[str, Any], version: str) -> Mapping[str, Any]:
    """``caps`` as ``version`` means them: before 2025-11-25 a declared ``elicitation``
    takes forms, the only kind there was (``{"url": {}}`` in it names nothing); before
    2025-06-18 it names nothing at all, as if it had not been declared."""
    elicitation = caps.get("elicitation")
    if version in WITHOUT_ELICITATION and "elicitation" in caps:
        return {k: v for k, v in caps.items() if k != "elicitation"}
    if version == REV_2025_11_25 or not isinstance(elicitation, Mapping) or not elicitation:
        return caps
    return {**caps, "elicitation": {}}


def form_missing(version: str) -> MissingClientCapability:
    """The -32021 for a form a request at ``version`` cannot carry: a client that did not
    declare ``elicitation``, or a revision without elicitation, whatever it declared."""
    required: dict[str, Any] = {"elicitation": {"form": {}}}
    if version not in WITHOUT_ELICITATION:
        return MissingClientCapability.requiring(required)
    return revision_lacks(
        f"This request needs the client capability elicitation.form, which MCP {version} does not "
        "have: elicitation came with 2025-06-18",
        required,
        REV_2025_06_18,
        revision=version,
        lacks="elicitation.form",
    )


def url_mode_missing(version: str) -> MissingClientCapability:
    """The -32021 for a URL-mode question a request at ``version`` cannot carry: before
    2025-11-25 the revision has none, whatever the client declared (see ``_as_meant``)."""
    required: dict[str, Any] = {"elicitation": {"url": {}}}
    if version == REV_2025_11_25 or (version not in HANDSHAKE and version not in WITHOUT_ELICITATION):
        return MissingClientCapability.requiring(required)
    before = (
        "elicitation came with 2025-06-18"
        if version in WITHOUT_ELICITATION
        else "before it elicitation asks with forms only"
    )
    return revision_lacks(
        f"This request needs the client capability elicitation.url, which MCP {version} does not "
        f"have: URL-mode elicitation came with 2025-11-25, {before}",
        required,
        REV_2025_11_25,
        revision=version,
        lacks="elicitation.url",
    )


class RevisionLacks(MissingClientCapability):
    """A -32021 for what the session's revision cannot carry (``revision_lacks``).
    ``revision``: the session's; ``lacks``: what it lacks, in words ("elicitation.url",
    "a multi-select (field 'tags')"), for an error naming it among others (``ctx.gather``)."""

    revision: str = ""
    lacks: str = ""


def revision_lacks(
    message: str, required: Mapping[str, Any], since: str, *, revision: str, lacks: str
) -> RevisionLacks:
    """The -32021 for what the session's ``revision`` cannot carry, whatever the client
    declared: its data names the capability it takes and, as ``requiredProtocolVersion``,
    the first revision that has it (declaring the capability would not be enough)."""
    error = RevisionLacks(message, {"requiredCapabilities": dict(required), "requiredProtocolVersion": since})
    error.revision, error.lacks = revision, lacks
    return error


def initialize_result(identity: ServerIdentity, handshake: Handshake) -> dict[str, Any]:
    """The ``initialize`` result for ``handshake``."""
    caps: dict[str, Any] = {
        k: dict(v) if isinstance(v, Mapping) else v for k, v in identity.capabilities.items()
    }
    if "resources" in caps:
        caps["resources"] = {**caps["resources"], "subscribe": True}
    caps.setdefault("logging", {})
    caps.pop("extensions", None)  # 2026-07-28 only
    result: dict[str, Any] = {
        "protocolVersion": handshake.version,
        "capabilities": caps,
        "serverInfo": identity.info(),
    }
    if identity.instructions:
        result["instructions"] = identity.instructions
    return result


def no_session() -> InvalidRequest:
    """The 400 for a message of the handshake era (a request, or a notification) that names
    no session: the client must initialize first (or speak 2026-07-28)."""
    return InvalidRequest(
        "Bad request: no session. Send initialize first (revisions 2025-11-25 and "
        "earlier), or send _meta with io.modelcontextprotocol/protocolVersion (2026-07-28)",
        http_status=400,
    )


def check_method(method: str) -> None:
    """Raise -32601 unless ``method`` exists in the handshake era."""
    if method not in HANDSHAKE_ONLY and (method not in FRAMEWORK_METHODS or method in MODERN_ONLY_METHODS):
        raise MethodNotFound(f"Method not found: {method}", http_status=200)


def parse_set_level(params: Mapping[str, Any] | None) -> str:
    level = (params or {}).get("level")
    if level not in LOG_LEVELS:
        raise InvalidParams(f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}")
    return str(level)
