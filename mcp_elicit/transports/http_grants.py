"""Assertions a client presents as its grant (the JWT-bearer grant, RFC 7523 §2.1) instead
of sending a person to sign in, for :class:`~mcp_elicit.transports.http_auth.OAuth`:

* a workload's own JWT, from its platform (workload identity federation): a string, or a
  function returning a current one;
* an ID-JAG (enterprise-managed authorization, the MCP extension built on the Identity
  Assertion JWT Authorization Grant): :class:`EnterpriseIdp` trades the person's single
  sign-on ID token at their company's identity provider (a token exchange, RFC 8693) for a
  grant to one MCP server's authorization server, which the company's policy allows or
  refuses.

Rules: an assertion source is called with the :class:`Audience` it is for, every time a
new access token is needed (so a rotating platform token or a short-lived ID-JAG is never
reused stale). What comes back must look like a JWT. A refusal is an
:class:`AuthorizationError` naming the OAuth error and never the tokens.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import httpx

from mcp_elicit.core.authorization_urls import require_secure
from mcp_elicit.core.token_endpoint import id_jag_request, read_id_jag
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_documents import post

__all__ = ["AssertionSource", "Audience", "EnterpriseIdp", "assertion_for"]


@dataclass(frozen=True)
class Audience:
    """What an assertion is asked for: the authorization server (its issuer and token
    endpoint), the MCP server (``resource``) and the scope the client will ask."""

    issuer: str
    token_endpoint: str
    resource: str
    scope: str | None = None


#: A JWT, or a function of the :class:`Audience` returning one (or an awaitable of one).
AssertionSource = str | Callable[[Audience], str | Awaitable[str]]


async def assertion_for(source: AssertionSource, audience: Audience) -> str:
    """The assertion ``source`` gives for ``audience``, checked to be a JWT."""
    value = source(audience) if callable(source) else source
    if inspect.isawaitable(value):
        value = await value
    if not isinstance(value, str) or value.count(".") != 2 or not all(value.split(".")[:2]):
        raise AuthorizationError("the assertion is not a JWT (three dot-separated parts)")
    return value


@dataclass
class EnterpriseIdp:
    """The person's company identity provider, for enterprise-managed authorization.

    ``token_endpoint``: the IdP's token endpoint (https). ``id_token``: the ID token the
    client got when the person signed in to it through the IdP (or a function returning a
    current one). ``client_id``/``client_secret``: the client's registration at the IdP
    (the secret is sent when given). Use it as ``OAuth(None, client_id=..., client_secret=...,
    assertion=EnterpriseIdp(...))``, with the client's credentials at the MCP server's
    authorization server.
    """

    token_endpoint: str
    id_token: str | Callable[[], str | Awaitable[str]] = field(repr=False)
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    timeout: float = 15.0
    transport: httpx.AsyncBaseTransport | None = None

    def __post_init__(self) -> None:
        require_secure(self.token_endpoint, "the enterprise identity provider's token endpoint")

    async def __call__(self, audience: Audience) -> str:
        subject = self.id_token() if callable(self.id_token) else self.id_token
        if inspect.isawaitable(subject):
            subject = await subject
        if not isinstance(subject, str) or not subject:
            raise AuthorizationError("the ID token for the enterprise identity provider is not a string")
        form = id_jag_request(
            audience.issuer,
            audience.resource,
            id_token=subject,
            client_id=self.client_id,
            client_secret=self.client_secret,
            scope=audience.scope,
        )
        async with httpx.AsyncClient(
            timeout=self.timeout, follow_redirects=False, transport=self.transport
        ) as http:
            status, answer, _ = await post(
                http, self.token_endpoint, data=form, headers={"Accept": "application/json"}
            )
        return read_id_jag(status, answer if isinstance(answer, Mapping) else None, self.token_endpoint)
