"""MCP authorization, client side: the URLs of the flow. Where a server's protected
resource metadata and an authorization server's metadata are looked for, which URLs the
client may fetch from or send a person to, and which servers it must not sign in to. No
I/O: URLs in, URLs and verdicts out. The flow itself is :mod:`mcp_elicit.core.authorization`.

Rules:

* Protected resource metadata (RFC 9728) is looked for at the challenge's
  ``resource_metadata``, then at the well-known URL with the server's path, then without
  it. A ``resource_metadata`` on another origin than the server's must be https (or http
  to this machine); none may have a fragment.
* Authorization server metadata is looked for at the issuer's well-known URLs in the
  spec's order: RFC 8414, then OpenID discovery (path inserted, then appended).
* A metadata document's ``resource`` must be the server's own URL or a parent of it (same
  origin, path on a segment boundary): a server cannot send the client to get tokens for
  another resource.
* A URL a document names (an authorization server, an endpoint) is https, or http to a
  loopback host, and has no fragment (:func:`require_secure`); and a server elsewhere (not
  on this machine nor a private network) may not name an address on either, nor a name
  that says it is there (``localhost``, ``.local``, ``.home.arpa``, ``.internal``):
  server-side request forgery.
* Names are resolved by the transport, which asks here before it connects
  (:func:`far_server`, :func:`resolution_refusal`): for a server elsewhere, no host of its
  sign-in but its own may resolve to this machine or a private network. Whether the server
  is elsewhere is read from its URL and, when known, the address its answer came from
  (never a proxy's: the transport passes none then). A request through a proxy is resolved
  by the proxy: only the rules on URLs above apply to it.
* No sign-in, and no token, for a server over plain http off this machine (or, when the
  user trusts it, off a private network): :func:`cleartext_refusal`.

Every refusal is an :class:`AuthorizationError` naming the URL (cut short) and what it is.
"""

from __future__ import annotations

import ipaddress
import unicodedata
import urllib.parse
from collections.abc import Sequence
from typing import Final

from mcp_elicit.core.ipv4_forms import IDN_DOTS, NotIPv4, read_ipv4
from mcp_elicit.core.quoting import quoted
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.url_redaction import redact_urls

__all__ = [
    "PLAIN_HTTP",
    "PRIVATE_NAMES",
    "PRIVATE_NETWORKS",
    "authorization_server_metadata_urls",
    "check_resource",
    "cleartext_refusal",
    "far_server",
    "protected_resource_urls",
    "quoted_value",
    "require_secure",
    "resolution_refusal",
    "split_url",
]


def quoted_value(value: object, limit: int = 120) -> str:
    """A value from the network, in an error: its repr with every URL's user information,
    query and fragment redacted (``url_redaction.redact_urls``), then cut to ``limit``
    characters. Redacted before the cut: a cut inside a password would take away the "@"
    that marks it as one, and nothing after could find it."""
    text = redact_urls(
        repr(value) if isinstance(value, str) else quoted(value)
    )  # repr recurses, quoted stops
    return text if len(text) <= limit else text[: limit - 3] + "..."


def split_url(url: str, what: str) -> urllib.parse.SplitResult:
    """``url`` split, if it is an http(s) URL with a host and a valid port."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError:
        raise AuthorizationError(f"{what} {quoted_value(url)} is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AuthorizationError(f"{what} {quoted_value(url)} is not an http(s) URL")
    if "\\" in parts.netloc:  # a browser ends the host there, where Python reads on
        raise AuthorizationError(f"{what} {quoted_value(url)} is not a valid URL")
    return parts


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _loopback(host: str) -> bool:
    address = _address(host)
    return address.is_loopback if address is not None else host.lower() == "localhost"


def require_secure(url: str, what: str, *, named_by: str | None = None) -> str:
    """``url`` if it is https, or http to a loopback host; else AuthorizationError.
    ``named_by``: the URL of the server whose document names ``url``, which may not send the
    client nearer home than itself (:func:`_nearer`)."""
    parts = split_url(url, what)
    if parts.fragment:
        raise AuthorizationError(f"{what} {quoted_value(url)} has a fragment")
    if parts.scheme != "https" and not _loopback(parts.hostname or ""):
        raise AuthorizationError(
            f"{what} {quoted_value(url)} is plain http to a host that is not this machine"
        )
    if named_by is not None:
        _nearer(url, parts.hostname or "", named_by, what)
    return url


_HOME: Final = ("this machine", "a private network")


def _read_host(host: str) -> tuple[str, ipaddress.IPv4Address | ipaddress.IPv6Address | None]:
    """The host as a browser or the system's resolver reads it: %-escapes decoded, full-width
    digits and dots mapped, lower case; and its address, in whatever form it is written
    (``2130706433``, ``0x7f.1``, ``127.0.0.1.``: :mod:`mcp_elicit.core.ipv4_forms`)."""
    text = unicodedata.normalize("NFKC", urllib.parse.unquote(host)).lower()
    labels = IDN_DOTS.split(text)
    name = ".".join(labels)
    address = _address(name)
    if address is None:
        try:
            address = read_ipv4(labels)
        except NotIPv4:  # no browser nor resolver goes there: judged as a name
            address = None
    return name, address


def _distance(host: str) -> int:
    """0 for this machine, 1 for a private or reserved network, 2 for anywhere else. A name
    is judged as written, not resolved: ``localhost`` (and ``*.localhost``) is this
    machine, a private network's special-use name (``.local``, ``.home.arpa``,
    ``.internal``) a private network, any other name elsewhere. An IPv6 address carrying
    an IPv4 one (:func:`_carried`) is judged as that."""
    host, address = _read_host(host)
    if isinstance(address, ipaddress.IPv6Address):
        address = _carried(address)
    if address is None:
        name = host.rstrip(".")
        if name == "localhost" or name.endswith(".localhost"):
            return 0
        return 1 if name.endswith(PRIVATE_NAMES) else 2
    if address.is_loopback or address.is_unspecified:
        return 0
    if (
        address.is_private
        or address.is_link_local
        or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)  # fec0::/10, deprecated
        or address.is_reserved
        or address.is_multicast
        or any(address in net for net in PRIVATE_NETWORKS)
    ):
        return 1
    return 2


#: NAT64's well-known prefix (RFC 6052): an IPv6-only network's way to IPv4 hosts.
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


def _carried(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The IPv4 address that ``address`` reaches, when it carries one: NAT64's well-known
    prefix (DNS64 answers an IPv4-only name with it) and 6to4 (RFC 3056); else itself.
    Judged as the IPv4 address, a translated 127.0.0.1 is this machine, and a public one
    is elsewhere, not a reserved range."""
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return address.sixtofour or address


def _nearer(url: str, host: str, named_by: str, what: str) -> None:
    """Refuse ``url`` when it is on this machine or a private network and the server naming
    it is on neither: its documents would have the client make requests (or send the
    person's browser) where that server cannot reach, server-side request forgery (MCP
    security best practices: block them). A server on a private network or this machine
    may name either (a development setup: a container's server, the host's authorization
    server). Here a host counts as near by its address, or by a name that says so
    (``localhost``, a private network's special-use name); where other names resolve is
    the transport's to check before it connects (:func:`resolution_refusal`)."""
    near = _distance(host)
    if near < 2 and _distance(split_url(named_by, "the URL naming it").hostname or "") == 2:
        raise AuthorizationError(
            f"{what} {quoted_value(url)} is on {_HOME[near]}, and {quoted_value(named_by)} that "
            "names it is not: refusing to be sent there (server-side request forgery)"
        )


def far_server(server_url: str, peer: str | None = None) -> bool:
    """Whether the MCP server at ``server_url`` is neither on this machine nor a private
    network, so that its sign-in may go to no host there: by its URL's host (an address, or
    a name that says so) and, when the transport knows it, ``peer``, the address its answer
    came from (a company's server under a public-looking name on a private address is on
    that network; a server's own DNS cannot move it there, its answer came from where it is).
    Through a proxy that address is the proxy's and says nothing of the server's: the
    transport passes None, and the URL alone decides."""
    near = _distance(split_url(server_url, "the MCP server URL").hostname or "")
    if peer is not None:
        near = min(near, _distance(peer))
    return near == 2


def resolution_refusal(host: str, addresses: Sequence[str], *, server_url: str) -> str | None:
    """Why the sign-in of the far MCP server at ``server_url`` must not connect to ``host``,
    which resolved to ``addresses``; None when it may. Every address must be elsewhere (the
    one tried next could be the near one: a name that answers both is refused). The
    server's own host is the one the user named and the client already talks to: it is
    taken wherever it resolves (TLS proves the name)."""
    own = (split_url(server_url, "the MCP server URL").hostname or "").rstrip(".")
    name = host.lower().rstrip(".")
    if name in (own, _idna(own)):
        return None
    for address in addresses:
        near = _distance(address)
        if near < 2:
            return (
                f"{quoted_value(host)} resolves to {address}, on {_HOME[near]}, and the MCP server "
                f"{quoted_value(server_url)} whose sign-in leads there is not: refusing to connect "
                "(server-side request forgery)"
            )
    return None


def _idna(name: str) -> str:
    """``name`` in ASCII as httpx writes the host it connects to (IDNA 2008 through the
    ``idna`` package: ``faß`` is ``xn--fa-hia``, where Python's own codec, IDNA 2003, says
    ``fass``); ``name`` itself when it has no such form."""
    import idna  # its tables load only for a server's own name to compare

    try:
        return idna.encode(name.lower()).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        return name


#: Where ``plain_http="private"`` lets the client sign in over plain http: private-use
#: (RFC 1918, RFC 4193), shared (RFC 6598) and link-local addresses, and the special-use
#: names of a local network (``.local``, RFC 6762; ``.home.arpa``, RFC 8375; ``.internal``).
PRIVATE_NETWORKS: Final = tuple(
    ipaddress.ip_network(net)
    for net in (
        *("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"),
        *("fc00::/7", "fe80::/10"),
    )
)
PRIVATE_NAMES: Final = (".local", ".home.arpa", ".internal")
PLAIN_HTTP: Final = ("loopback", "private")


def _private(host: str) -> bool:
    address = _address(host)
    if address is None:
        return host.lower().rstrip(".").endswith(PRIVATE_NAMES)
    return any(address in net for net in PRIVATE_NETWORKS)


def cleartext_refusal(server_url: str, plain_http: str) -> str | None:
    """Why the client must not sign in to (nor send tokens to) ``server_url``, or None:
    plain http to another machine carries a bearer token readable by anyone on the way
    (RFC 6750 section 5.3: TLS is a must). Loopback is this machine; ``plain_http``
    ``"private"`` also trusts the private networks above."""
    parts = split_url(server_url, "the MCP server URL")
    host = parts.hostname or ""
    if parts.scheme == "https" or _loopback(host) or (plain_http == "private" and _private(host)):
        return None
    if plain_http == "private":
        where = (
            "not a private-network address (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, "
            "link-local, or a name under .local, .home.arpa or .internal)"
        )
        allow = ""
    else:
        where = "another machine"
        allow = (
            '; on a private network you trust, allow plain http there with OAuth(plain_http="private") '
            "(the command line's --plain-http private)"
        )
    return (
        f"{server_url} is plain http to {where}: its tokens would cross the network unencrypted "
        "(RFC 6750 section 5.3), so mcp-elicit does not sign in to it nor send it tokens. Use the "
        f"server's https:// URL{allow}"
    )


def _well_known(url: str, name: str) -> tuple[str, str]:
    """``(with the path, without it)``: RFC 8615 URLs for ``name`` from ``url``'s origin."""
    parts = split_url(url, "the MCP server URL")
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    return f"{origin}/.well-known/{name}{path}", f"{origin}/.well-known/{name}"


def protected_resource_urls(server_url: str, advertised: str | None) -> list[str]:
    """Where to look for the server's protected resource metadata, in order: the
    challenge's ``resource_metadata``, then the well-known URL with the server's path, then
    at the root."""
    split_url(server_url, "the MCP server URL")
    urls: list[str] = []
    if advertised:
        what = "the resource_metadata URL in WWW-Authenticate"
        same = (
            _origin_and_path(advertised, what)[:3] == _origin_and_path(server_url, "the MCP server URL")[:3]
        )
        if not same:  # the server's own origin is as safe as the server: it was let in
            require_secure(advertised, what, named_by=server_url)
        elif "#" in advertised:
            raise AuthorizationError(f"{what} {quoted_value(advertised)} has a fragment")
        urls.append(advertised)
    with_path, root = _well_known(server_url, "oauth-protected-resource")
    for url in (with_path, root):
        if url not in urls:
            urls.append(url)
    return urls


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where to look for an issuer's metadata, in the order the MCP spec gives: with a path,
    OAuth then OpenID (path inserted), then OpenID (path appended); without one, OAuth then
    OpenID."""
    parts = split_url(issuer, "the authorization server")
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def _origin_and_path(url: str, what: str) -> tuple[str, str, int | None, str]:
    parts = split_url(url, what)
    port = parts.port
    if port is None:
        port = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), port, parts.path


def check_resource(server_url: str, resource: str) -> None:
    """Refuse metadata for a resource that is not ``server_url`` or a parent of it."""
    scheme, host, port, path = _origin_and_path(server_url, "the MCP server URL")
    r_scheme, r_host, r_port, r_path = _origin_and_path(resource, "the resource in the metadata")
    inside = path.rstrip("/") == r_path.rstrip("/") or path.startswith(r_path.rstrip("/") + "/")
    if (scheme, host, port) != (r_scheme, r_host, r_port) or not inside:
        raise AuthorizationError(
            f"the server's protected resource metadata is for {quoted_value(resource)}, not for {quoted_value(server_url)}: "
            "refusing to ask for tokens for another resource"
        )
