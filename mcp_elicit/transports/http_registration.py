"""Which client :class:`~mcp_elicit.transports.http_auth.OAuth` is at an authorization
server: credentials given beforehand, a client metadata document's URL, or a registration
of its own (RFC 7591 dynamic client registration).

Rules:

* Credentials given (``client_id``, with a secret or a ``private_key`` for
  ``private_key_jwt``) belong to one authorization server, ``client_issuer`` (default: the
  first one they are used with, a binding the ``TokenStore`` keeps, without the secret, so
  the next run holds to it too); a server that sends the client to another is an
  :class:`AuthorizationError`, and they are never presented there. They win over anything
  stored.
* Otherwise a client metadata document's URL is the ``client_id`` where the authorization
  server supports that, else the client registers itself, once per authorization server.
  That URL is https with a path (no fragment, credentials or dot segments), as a client ID
  must be: another is a ``ValueError`` when the client is made, never sent.
* A registration remembers its redirect URI and is reused with that redirect URI only (a
  loopback port changes from run to run; some servers match redirect URIs exactly).
* A redirect URI is https, or http to this machine (127.0.0.1, ::1, localhost), without a
  fragment: another is an :class:`AuthorizationError` before anything is registered or
  anyone asked, since the authorization code would travel to it in the clear.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Callable
from dataclasses import replace

import httpx

from mcp_elicit.core import token_endpoint as tokens_at
from mcp_elicit.core.authorization import AuthorizationServer
from mcp_elicit.core.authorization_urls import require_secure
from mcp_elicit.core.token_endpoint import ClientCredentials
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.telemetry import redact_urls
from mcp_elicit.transports.http_documents import post

__all__ = ["ClientIdentity"]

log = logging.getLogger(__name__)


class ClientIdentity:
    """The client's credentials at each authorization server (``clients``, by issuer: the
    ones registered or stored; credentials given are not kept there)."""

    def __init__(
        self,
        *,
        client_id: str | None,
        client_secret: str | None,
        private_key: str | None,
        client_issuer: str | None,
        client_metadata_url: str | None,
        client_name: str,
        application_type: str,
        refresh: bool,
        clock: Callable[[], float],
    ) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.private_key = private_key
        #: The authorization server ``client_id`` is registered at (None: the first one it is
        #: used with); a server that sends the client elsewhere is an error, not a guess.
        self.client_issuer = client_issuer
        if client_metadata_url is not None:
            _check_client_id_url(client_metadata_url)
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.application_type = application_type
        self.refresh = refresh
        self.clients: dict[str, ClientCredentials] = {}
        #: Client ids given beforehand, each with the issuer it is bound to (stored, no secret).
        self.given: dict[str, str] = {}
        self._clock = clock

    def known(self, server: AuthorizationServer) -> ClientCredentials | None:
        """The credentials given, or stored, for ``server`` (None: none yet)."""
        if self.client_id is not None:  # credentials given are one authorization server's
            if self.client_issuer is None:
                self.client_issuer = server.issuer
            elif server.issuer != self.client_issuer:
                raise AuthorizationError(
                    f"the server sends this client to {server.issuer}, but the client id given is "
                    f"registered at {self.client_issuer} (as given, or where an earlier sign-in "
                    "stored for this server used it): register the client there and pass that "
                    "client id (or leave it out)"
                )
        if self.client_id is not None and self.private_key is not None:
            assertion = tokens_at.client_assertion(
                self.client_id, server.issuer, self.private_key, now=self._clock()
            )
            return ClientCredentials(self.client_id, None, "private_key_jwt", assertion)
        if self.client_id is not None:  # given: it wins over anything stored
            method = tokens_at.choose_auth_method(server, self.client_secret)
            return ClientCredentials(self.client_id, self.client_secret, method)
        return self.clients.get(server.issuer)

    async def credentials(
        self, http: httpx.AsyncClient, server: AuthorizationServer, redirect_uri: str | None
    ) -> ClientCredentials:
        """Credentials for ``server``, registering there when there are none for
        ``redirect_uri`` (None: no person, no redirect)."""
        if redirect_uri is not None:
            require_secure(redirect_uri, "the Authorizer's redirect URI")
        known = self.known(server)
        if known is not None and (
            known.redirect_uri is None or redirect_uri is None or known.redirect_uri == redirect_uri
        ):
            return known
        if known is not None:  # registered for another redirect URI (a loopback port now taken)
            log.info("registering again at %s: the redirect URI changed", redact_urls(server.issuer))
        if self.client_metadata_url is not None and server.client_id_metadata_documents:
            credentials = ClientCredentials(self.client_metadata_url)
        elif server.registration_endpoint is not None:
            assert redirect_uri is not None  # client credentials always come with a client id
            credentials = await self._register(http, server, server.registration_endpoint, redirect_uri)
        else:
            raise AuthorizationError(
                f"{server.issuer} takes no registration and this client has no client id for it: "
                "register the client there and pass its client id (and secret)"
            )
        self.clients[server.issuer] = credentials
        return credentials

    async def _register(
        self, http: httpx.AsyncClient, server: AuthorizationServer, endpoint: str, redirect_uri: str
    ) -> ClientCredentials:
        body = tokens_at.registration_request(
            server,
            client_name=self.client_name,
            redirect_uri=redirect_uri,
            application_type=self.application_type,
            refresh=self.refresh,
        )
        status, answer, _ = await post(http, endpoint, json=body)
        if status not in (200, 201):
            error = tokens_at.oauth_error(answer)
            raise AuthorizationError(
                f"{server.issuer} refused to register this client (HTTP {status}"
                + (f", {error}" if error is not None else "")
                + ")"
            )
        return replace(tokens_at.read_registration(answer, server), redirect_uri=body["redirect_uris"][0])


def _check_client_id_url(url: str) -> None:
    """A client metadata document's URL, which is the client's ``client_id``: https, a host
    and a path, no fragment, no credentials, no ``.`` or ``..`` segment; else ValueError."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme != "https"
        or not parts.hostname
        or parts.path in ("", "/")
        or parts.fragment
        or "#" in url
        or parts.username is not None
        or any(segment in (".", "..") for segment in parts.path.split("/"))
    ):
        raise ValueError(
            f"client_metadata_url {url!r}: a client ID metadata document URL is https with a path "
            "(https://client.example/metadata.json), without a fragment, credentials or dot segments"
        )
