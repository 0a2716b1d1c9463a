"""Which era a server speaks, and which revision to use with it: decided from what came back.
No I/O: a decoded response (or its absence) and an HTTP status in, a verdict out.

Rules (2026-07-28, *Versioning: Backward Compatibility* and the stdio and Streamable HTTP
binding pages):

* The probe is ``server/discover`` at the client's most preferred modern revision.
* A ``DiscoverResult`` means modern: keep the requested revision if the server lists it,
  else take the client's most preferred modern revision among ``supportedVersions``. A
  result listing only handshake revisions is a legacy advertisement: fall back.
* A *recognized modern error* (``-32020`` header mismatch, ``-32021`` missing capability,
  ``-32022`` unsupported version) means modern: never fall back. ``-32022`` names the
  versions to retry with (``data.supported``); the retry may use the very version that
  was refused, once (a server may refuse a first request for its own reasons).
* Anything else means legacy: on stdio any other error or no answer in time; on HTTP a
  4xx or 2xx without a recognized modern error body. The fallback is never keyed to one
  error code.
* Not evidence of an era, but errors: 401/403 (authorization), 429 and 503 (busy, or
  shutting down: try again), another 5xx without a JSON-RPC error, a broken connection.
* A refusal quotes the body's (or a 503 error's message's) first 200 characters, its URLs
  redacted first (a cut inside a password would keep its start from any later redaction).
* Versions are picked from the registry in the client's order of preference; date strings
  are never compared.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from mcp_elicit.core.quoting import quoted
from mcp_elicit.errors import ProtocolError, TransportError, UnsupportedProtocolVersion
from mcp_elicit.url_redaction import redact_urls
from mcp_elicit.wire.jsonrpc import ErrorResponse, Message, Response
from mcp_elicit.wire.versions import is_handshake, is_modern

__all__ = [
    "MODERN_ERROR_CODES",
    "Legacy",
    "Modern",
    "Reprobe",
    "Verdict",
    "handshake_choice",
    "judge_probe",
    "modern_preferences",
    "pick_version",
    "retry_version",
]

#: Error codes only a modern server sends: their presence proves the era.
MODERN_ERROR_CODES: Final = frozenset({-32020, -32021, -32022})


@dataclass(frozen=True, slots=True)
class Modern:
    """The server is modern; speak ``version``. ``discover`` is its result, if there was one."""

    version: str
    discover: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Reprobe:
    """The server is modern but refused the requested revision; probe again with ``version``."""

    version: str


@dataclass(frozen=True, slots=True)
class Legacy:
    """The server is legacy (or dual-era preferring the handshake): run ``initialize``.
    ``silent``: it gave the probe no answer at all (a stdio server that may be slow to
    start, or not speak MCP)."""

    reason: str
    silent: bool = False


Verdict: TypeAlias = Modern | Reprobe | Legacy


def pick_version(offered: Iterable[object], preferred: Sequence[str]) -> str | None:
    """The first of ``preferred`` that ``offered`` contains (only strings count)."""
    offered_set = {v for v in offered if isinstance(v, str)}
    for version in preferred:
        if version in offered_set:
            return version
    return None


def modern_preferences(preferred: Sequence[str]) -> tuple[str, ...]:
    """The modern revisions among ``preferred``, in the same order."""
    return tuple(v for v in preferred if is_modern(v))


def handshake_choice(preferred: Sequence[str]) -> tuple[str, ...]:
    """The handshake revisions among ``preferred``, in the same order."""
    return tuple(v for v in preferred if is_handshake(v))


def _supported(data: object) -> list[object] | None:
    if isinstance(data, Mapping):
        supported = data.get("supported")
        if isinstance(supported, list):
            return supported
    return None


def retry_version(error: Mapping[str, Any], requested: str, preferred: Sequence[str]) -> str:
    """The modern revision to retry with after a ``-32022`` answer to any request.

    Raises the error itself (as ``UnsupportedProtocolVersion``) when the server names no
    modern revision the client speaks.
    """
    supported = _supported(error.get("data"))
    choice = pick_version(supported or (), modern_preferences(preferred))
    if choice is None:
        raise _incompatible(error, requested, supported, preferred)
    return choice


def _incompatible(
    error: Mapping[str, Any] | None,
    requested: str,
    supported: Sequence[object] | None,
    preferred: Sequence[str],
) -> ProtocolError:
    offered = "none named"
    if supported:  # quoted short: what a server names may be anything, nested or huge
        offered = ", ".join(v if isinstance(v, str) and len(v) <= 80 else quoted(v) for v in supported[:20])
        offered += f" and {len(supported) - 20} more" if len(supported) > 20 else ""
    exc = UnsupportedProtocolVersion(
        f"The server does not speak MCP {requested} and offers no revision this client speaks "
        f"(server: {offered}; client: {', '.join(preferred)})",
        {"supported": list(supported or ()), "requested": requested},
    )
    if error is not None and isinstance(error.get("message"), str):
        exc.data = {**(exc.data or {}), "serverMessage": error["message"]}
    return exc


def judge_probe(
    answer: Message | None,
    *,
    requested: str,
    preferred: Sequence[str],
    status: int | None = None,
    body: str = "",
) -> Verdict:
    """Judge the answer to a ``server/discover`` probe sent at ``requested``.

    ``answer`` is the JSON-RPC response (None when there was none: no body, not JSON-RPC,
    or no answer in time on stdio); ``status`` the HTTP status (None off HTTP).
    """
    if status == 401:
        raise TransportError(
            "The server requires authorization (HTTP 401): pass auth=OAuth(...) "
            "(mcp_elicit.transports.http_auth) to sign in, or a token with "
            "headers={'Authorization': 'Bearer ...'}"
        )
    if status == 403:
        raise TransportError(
            "The server refused access (HTTP 403): the credentials sent, if any, do not grant it"
        )
    if status == 429:  # load shedding says nothing of the revisions the server speaks
        raise TransportError(
            f"The server is busy (HTTP 429 Too Many Requests): try again later. {_said(body)}".rstrip()
        )
    if status == 503:  # unavailable (stopping, overloaded): says nothing of its revisions either
        said = answer.error.get("message", "") if isinstance(answer, ErrorResponse) else body
        raise TransportError(
            f"The server is unavailable (HTTP 503 Service Unavailable): try again later. {_said(str(said))}".rstrip()
        )
    if status is not None and status >= 500 and not isinstance(answer, ErrorResponse):
        raise TransportError(f"The server failed with HTTP {status}: {_said(body) or 'no body'}")
    if isinstance(answer, Response):
        return _judge_discover(answer.result, requested, preferred)
    if isinstance(answer, ErrorResponse):
        code = answer.error.get("code")
        if code == -32022:
            supported = _supported(answer.error.get("data"))
            choice = pick_version(supported or (), modern_preferences(preferred))
            if choice is not None:
                return Reprobe(choice)
            if supported is not None and pick_version(supported, handshake_choice(preferred)) is None:
                raise _incompatible(answer.error, requested, supported, preferred)
            return Legacy("the server refused the modern probe and names handshake revisions")
        if code in MODERN_ERROR_CODES:
            raise ProtocolError.from_error(answer.error)
        return Legacy(f"server/discover was answered with error {code}: {answer.error.get('message', '')}")
    if status is None:
        return Legacy("no answer to server/discover")
    return Legacy(f"server/discover was answered with HTTP {status} and no modern JSON-RPC error")


def _said(body: str) -> str:
    """A body as a refusal quotes it: its URLs redacted, then cut to 200 characters."""
    return redact_urls(body)[:200]


def _judge_discover(result: Mapping[str, Any], requested: str, preferred: Sequence[str]) -> Verdict:
    supported = result.get("supportedVersions")
    if not isinstance(supported, list):
        return Modern(requested, result)
    if requested in supported:
        return Modern(requested, result)
    choice = pick_version(supported, modern_preferences(preferred))
    if choice is not None:
        return Modern(choice, result)
    if pick_version(supported, handshake_choice(preferred)) is not None:
        return Legacy("server/discover lists only handshake revisions")
    raise _incompatible(None, requested, supported, preferred)
