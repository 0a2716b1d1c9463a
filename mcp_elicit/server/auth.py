"""Authentication hook: who is calling.

Rules: on Streamable HTTP a server may carry a ``TokenVerifier``; each request's
``Authorization: Bearer <token>`` goes through it and yields a ``Principal`` or is refused
with 401 and a ``WWW-Authenticate`` challenge. A token bound to a DPoP key (RFC 9449: the
principal's ``claims["cnf"]["jkt"]``) is accepted only as ``Authorization: DPoP <token>``
with a ``DPoP`` proof signed by that key for this request and its body; a token bound
(``cnf``) to anything else (a client certificate, RFC 8705) is refused, since that binding
cannot be checked here. stdio has no principal (credentials come
from the environment there). State that involves a user (sealed ``requestState``, URL-mode
flows, sessions) is bound to ``Principal.subject``.

A server whose tokens come from an OAuth authorization server describes it with
:class:`ResourceMetadata` (MCP authorization, RFC 9728): the transport publishes the
document at ``/.well-known/oauth-protected-resource<endpoint path>`` and names it in every
challenge (``resource_metadata``), so a client finds where to get a token on its own. A
token without every ``required_scopes`` (granted, or implied by a broader scope granted:
``implied_scopes``) is refused with 403 ``insufficient_scope`` naming them, so the client
can ask for more (step-up); so is a call of a tool declared with ``scopes`` by a token
lacking one of those (the challenge names the endpoint's and the tool's).
"""

from __future__ import annotations

import logging
import re
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from mcp_elicit.core.dpop import VERIFIED_ALGORITHMS
from mcp_elicit.errors import ConfigError

__all__ = [
    "Principal",
    "ResourceMetadata",
    "StaticTokens",
    "TokenVerifier",
    "realm_challenge",
    "scope_names",
    "subject_of",
]

log = logging.getLogger("mcp_elicit.auth")


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller. ``subject`` is the stable identity state is bound to;
    ``scopes`` may also be given as a token's space-separated ``scope`` string. A subject
    that is not a non-empty string (a token's missing ``sub``: None) is a ``TypeError``:
    None is what the unauthenticated callers are kept under (their rate limit, sessions,
    tasks, pages), and a principal must never be taken for them."""

    subject: str
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        subject: object = self.subject
        if not isinstance(subject, str) or not subject:
            raise TypeError(f"Principal.subject must be a non-empty string, not {subject!r}"[:200])
        scopes: object = self.scopes
        if isinstance(scopes, str):  # a token's ``scope`` as it comes: space-separated (RFC 6749 §3.3)
            object.__setattr__(self, "scopes", frozenset(scopes.split()))
        elif not isinstance(scopes, frozenset):  # a list or a set: never searched as a string
            object.__setattr__(self, "scopes", frozenset(scopes))  # type: ignore[call-overload]

    @property
    def dpop_thumbprint(self) -> str | None:
        """The thumbprint of the DPoP key the token is bound to (``claims["cnf"]["jkt"]``,
        RFC 9449 §6), or None for a bearer token. A bound token is accepted only with the
        ``DPoP`` scheme and a proof signed by that key."""
        cnf = self.claims.get("cnf")
        jkt = cnf.get("jkt") if isinstance(cnf, Mapping) else None
        return jkt if isinstance(jkt, str) and jkt else None


class TokenVerifier(Protocol):
    """Turns a bearer token into a Principal, or None when the token is not valid.

    Valid means issued for this server too: MCP authorization asks a server to refuse a
    token whose audience is another resource (RFC 8707: its ``aud``, or what
    introspection says it is for), or a token meant for one service would open all of
    them. Only the verifier sees the token's contents, so that check is the verifier's.
    """

    async def verify(self, token: str) -> Principal | None: ...


def subject_of(principal: Principal | str | None) -> str | None:
    """Whose: a ``Principal`` (a handler's ``ctx.principal``) read as its subject, a subject
    or None (the unauthenticated callers) as given; anything else is a ``TypeError``, so a
    value that could match nobody is not taken in silence."""
    if principal is None or isinstance(principal, str):
        return principal
    if isinstance(principal, Principal):
        return principal.subject
    raise TypeError(f"principal must be a Principal, its subject (a str) or None, not {principal!r}"[:200])


class StaticTokens:
    """A fixed token → subject table, for tests, demos and single-tenant deployments."""

    def __init__(self, tokens: Mapping[str, str | Principal]) -> None:
        self._tokens = {
            token: p if isinstance(p, Principal) else Principal(subject=p) for token, p in tokens.items()
        }

    async def verify(self, token: str) -> Principal | None:
        return self._tokens.get(token)


class CallableVerifier:
    """Adapts ``async def verify(token) -> Principal | None`` to ``TokenVerifier``."""

    def __init__(self, fn: Callable[[str], Awaitable[Principal | None]]) -> None:
        self._fn = fn

    async def verify(self, token: str) -> Principal | None:
        return await self._fn(token)


_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # RFC 6749 scope-token


def scope_names(where: str, scopes: object) -> tuple[str, ...]:
    """``scopes`` checked as a list of scope names (RFC 6749 scope-tokens: no spaces or
    quotes), as a tuple, each once (a scope is a set: RFC 6749 §3.3); a ``ConfigError``
    naming ``where`` otherwise."""
    if isinstance(scopes, str | bytes) or not isinstance(scopes, Sequence | frozenset | set):
        raise ConfigError(f"{where}: a list of scope names, not {scopes!r}")
    if not all(isinstance(x, str) and _SCOPE_TOKEN.fullmatch(x) for x in scopes):
        raise ConfigError(f"{where}: a list of scope names (no spaces or quotes), not {list(scopes)!r}")
    return tuple(dict.fromkeys(scopes))


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def realm_challenge(
    scheme: str = "Bearer",
    *,
    error: str | None = None,
    description: str | None = None,
    scopes: Sequence[str] = (),
) -> str:
    """The ``WWW-Authenticate`` value of a server that publishes no resource metadata;
    ``scopes``: the ones an ``insufficient_scope`` refusal names."""
    parts = ['realm="mcp"']
    if scheme == "DPoP":
        parts.append(f"algs={_quoted(' '.join(VERIFIED_ALGORITHMS))}")
    if error:
        parts.append(f"error={_quoted(error)}")
        if description:
            parts.append(f"error_description={_quoted(description)}")
    if scopes:
        parts.append(f"scope={_quoted(' '.join(scopes))}")
    return f"{scheme} " + ", ".join(parts)


@dataclass(frozen=True)
class ResourceMetadata:
    """What a server behind OAuth publishes about itself (RFC 9728), see the module docstring.

    ``authorization_servers``: issuer URLs whose tokens the verifier accepts.
    ``scopes_supported``: the scopes worth asking for (default: ``required_scopes``, if any).
    ``resource``: the endpoint's canonical URL (http or https, no fragment); default: learned
    from each request's Host.
    ``dpop_required``: refuse tokens that are not DPoP-bound (RFC 9449), and say so in the
    document (``dpop_bound_access_tokens_required``). ``dpop_nonces``: DPoP proofs must
    carry a nonce this server handed out (RFC 9449 §9), which bounds how long a proof can
    be used; the nonces are sealed under the server's key ring, so every instance sharing
    it takes them, and valid 5 minutes.
    ``implied_scopes``: the server's scope hierarchy, each scope mapped to the narrower
    ones it covers (``{"files:admin": ["files:write"], "files:write": ["files:read"]}``),
    followed transitively: a token holding a broader scope satisfies ``required_scopes``
    it implies (MCP authorization 2026-07-28 asks servers to account for such
    hierarchies). It stays the server's: neither the document nor challenges show it.
    Handlers see the scopes a token's imply in ``ctx.principal.scopes`` (``effective``).
    """

    authorization_servers: Sequence[str]
    scopes_supported: Sequence[str] | None = None
    required_scopes: Sequence[str] = ()
    resource: str | None = None
    resource_name: str | None = None
    dpop_required: bool = False
    dpop_nonces: bool = False
    implied_scopes: Mapping[str, Sequence[str]] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        servers = self.authorization_servers
        if isinstance(servers, str) or not servers or not all(isinstance(x, str) and x for x in servers):
            raise ConfigError("ResourceMetadata.authorization_servers: a list of issuer URLs")
        for name in ("scopes_supported", "required_scopes"):
            scopes = getattr(self, name)
            if scopes is not None:
                object.__setattr__(self, name, scope_names(f"ResourceMetadata.{name}", scopes))
        for name in ("scopes_supported", "required_scopes"):
            if "offline_access" in (getattr(self, name) or ()):
                log.warning(
                    "ResourceMetadata lists offline_access in %s: MCP servers should not (it belongs to "
                    "the authorization server's metadata, and required scopes go into every challenge); "
                    "clients may ask for it anyway",
                    name,
                )
        object.__setattr__(self, "authorization_servers", tuple(servers))
        object.__setattr__(self, "implied_scopes", _hierarchy(self.implied_scopes))
        if self.resource is not None:
            parts = urllib.parse.urlsplit(self.resource)
            if parts.scheme not in ("http", "https") or not parts.netloc or "#" in self.resource:
                raise ConfigError(
                    f"ResourceMetadata.resource {self.resource!r}: the endpoint's absolute http(s) URL, "
                    "without a fragment (RFC 8707: clients refuse a resource that has one)"
                )

    def document(self, resource: str) -> dict[str, Any]:
        """The metadata document for the endpoint at ``resource``."""
        out: dict[str, Any] = {
            "resource": self.resource or resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        scopes = self.scopes_supported if self.scopes_supported is not None else self.required_scopes
        if scopes:
            out["scopes_supported"] = list(scopes)
        if self.resource_name:
            out["resource_name"] = self.resource_name
        out["dpop_signing_alg_values_supported"] = list(VERIFIED_ALGORITHMS)
        if self.dpop_required:
            out["dpop_bound_access_tokens_required"] = True
        return out

    def challenge(
        self,
        metadata_url: str,
        *,
        error: str | None = None,
        description: str | None = None,
        scheme: str = "Bearer",
        scopes: Sequence[str] | None = None,
    ) -> str:
        """A ``WWW-Authenticate`` value pointing at the document (and the scopes needed:
        ``scopes``, by default ``required_scopes``); ``scheme`` ``DPoP`` also names the
        proof algorithms accepted (RFC 9449 §7.1)."""
        parts = [f"algs={_quoted(' '.join(VERIFIED_ALGORITHMS))}"] if scheme == "DPoP" else []
        if error:
            parts.append(f"error={_quoted(error)}")
        if description:
            parts.append(f"error_description={_quoted(description)}")
        needed = self.required_scopes if scopes is None else scopes
        if needed:
            parts.append(f"scope={_quoted(' '.join(needed))}")
        parts.append(f"resource_metadata={_quoted(metadata_url)}")
        return f"{scheme} " + ", ".join(parts)

    def effective(self, principal: Principal) -> Principal:
        """``principal`` holding also every scope its granted ones imply (``implied_scopes``,
        followed as far as it goes): what the transport hands to handlers, so that a check
        of ``ctx.principal.scopes`` judges as ``required_scopes`` did. The token's own
        ``scope`` claim is left as it came. ``principal`` itself when nothing is implied."""
        held = set(principal.scopes)
        todo = list(held)
        while todo:
            for narrower in self.implied_scopes.get(todo.pop(), ()):
                if narrower not in held:
                    held.add(narrower)
                    todo.append(narrower)
        if len(held) == len(principal.scopes):
            return principal
        return replace(principal, scopes=frozenset(held))

    def missing(self, principal: Principal) -> list[str]:
        """The required scopes ``principal`` lacks: neither granted nor implied by a scope
        granted (see ``effective``)."""
        if not self.required_scopes:
            return []
        held = self.effective(principal).scopes
        return [scope for scope in self.required_scopes if scope not in held]


def _hierarchy(implied: object) -> dict[str, tuple[str, ...]]:
    """``implied_scopes`` checked: scope name → the scope names it implies."""
    problem = "ResourceMetadata.implied_scopes: a mapping of a scope name to the scope names it implies"
    if not isinstance(implied, Mapping):
        raise ConfigError(problem)
    out: dict[str, tuple[str, ...]] = {}
    for broader, narrower in implied.items():
        if (
            not isinstance(broader, str)
            or not _SCOPE_TOKEN.fullmatch(broader)
            or isinstance(narrower, str)
            or not isinstance(narrower, Sequence | frozenset | set)
            or not all(isinstance(x, str) and _SCOPE_TOKEN.fullmatch(x) for x in narrower)
        ):
            raise ConfigError(f"{problem} (no spaces or quotes): {broader!r} is not")
        out[broader] = tuple(narrower)
    return out
