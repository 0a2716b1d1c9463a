"""URL consent: what a person must see before a client opens a URL a server sent. Pure.

``judge_url(url)`` reads the string the way a browser would and returns a ``UrlVerdict``:
the scheme, the host as a person should read it (Unicode) and as DNS sees it (ASCII), the
*registrable domain* (the site that owns the page: ``example.co.uk`` for
``login.example.co.uk``), the user-info if any, whether the host is this computer, the
warnings with codes and text for a person, and whether the URL is refused outright. It
also splits the URL into ``parts`` (scheme, user-info, host, domain, port, rest) so any
user interface can highlight the host and the domain in the full URL it shows.

Rules:

* Nothing here fetches anything or resolves a name: only the string is read. A client
  opens a URL in the system browser only after the person consents, and never fetches it
  itself.
* Refused (``refused``, and a warning whose ``refuses`` is true): a scheme other than
  ``http``/``https`` (``javascript:``, ``file:``, ``data:``...), a URL that is not absolute
  or has no host, a bad port, an unreadable host (a character no registered site name
  holds, such as ``;`` in ``evil.com;good.example``, included), and any control, invisible or
  bidirectional-formatting character (they make the URL read differently from where it
  goes). Also user-info before the host (``userinfo``: ``https://bank.com@evil.example``
  goes to ``evil.example``; ``https://user:pw@host`` carries a password): no page a server
  may send needs it (servers must not put credentials in the URL), and its only other use
  is to make one site read as another. And a URL longer than ``MAX_URL`` (2048, ``core.client_inputs``)
  characters (``too-long``): a person must see the whole URL before consenting, and a
  server's URL past that is refused rather than shown at such length (a sign-in's URL, the
  client's own with the scopes asked in it, is judged with ``longest=None``, and shown
  whole however long). Such a URL is still read in full (host, domain,
  parts, the other warnings) so that the person is shown where it really goes. So is a
  backslash between the scheme and the path (``backslash``: ``https://evil.example\\@bank.com``),
  which browsers read as a slash and other URL parsers as part of the name, so that where
  the URL goes depends on which program opens it.
* Warned: ``http`` to anything but loopback (``not-https``); a raw IP
  host, including IPv4 in decimal, hex or octal forms, or written as IPv6
  (``[::ffff:10.0.0.5]`` is 10.0.0.5) (``ip-host``, which says so when
  the address is on a private or link-local network); a host in punycode
  (``punycode``) or with non-ASCII characters (``idn``), both shown as sent (a character
  that shows as nothing by its code), as they read, and as DNS reads them; a label
  that mixes scripts (``mixed-script``: Latin with Cyrillic, say; the Chinese, Japanese
  and Korean combinations with Han are allowed, as in Unicode TS 39); a label written
  in Cyrillic or Greek letters that all look like Latin ones, under a Latin top-level
  domain (``lookalike``: ``xn--80ak6aa92e.com`` reads as apple.com in Unicode). A host with a label of
  either kind is shown as DNS has it (``host`` is then the ASCII form, as browsers
  show it), since its Unicode form reads as the name it imitates; a loopback host
  or the "any" address ``0.0.0.0`` / ``[::]``, which browsers connect to this computer
  (``this-computer``: allowed, since a local server's own page is one, but a remote server
  sending the person there reaches what runs on their computer; not said when the server
  itself runs here, a command or a loopback URL); a host written with
  %-escapes (``encoded-host``); an underscore in the host (``underscore``); a wrong number of slashes after the scheme
  (``odd-syntax``), which browsers read in their own way.
* The authority is split as browsers split it (WHATWG URL): it ends at the first ``/``,
  ``\\``, ``?`` or ``#``; the user-info ends at its *last* ``@``. Names go to and from
  ASCII as browsers take them (UTS 46, non-transitional, through the ``idna`` package):
  ``straße.de`` is ``xn--strae-oqa.de``, not ``strasse.de`` as IDNA 2003 had it, so the
  site shown is the one the browser will open. A label UTS 46 does not allow is refused.
* The registrable domain comes from the Public Suffix List (``publicsuffixlist``, which
  ships the list: nothing is fetched), its private section included, so every site on a
  hosting platform is a site of its own (``b.github.io``, not ``github.io``). A host that
  is itself a public suffix, or a single label, is its own domain. An IP host has none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final, Literal
from urllib.parse import urlsplit

from mcp_elicit.client.url_hosts import (
    IDN_DOTS,
    Refused,
    UrlWarning,
    address_of,
    is_hidden,
    is_loopback,
    port_number,
    read_host,
    registrable,
    split_port,
)
from mcp_elicit.core.client_inputs import MAX_URL

__all__ = [
    "Part",
    "PartRole",
    "UrlVerdict",
    "UrlWarning",
    "judge_url",
    "server_on_this_computer",
]

PartRole = Literal["scheme", "userinfo", "host", "domain", "port", "rest"]

_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_ALLOWED_SCHEMES: Final = frozenset({"http", "https"})


@dataclass(frozen=True, slots=True)
class Part:
    """A slice of the URL as given, and what it is (for highlighting)."""

    role: PartRole
    text: str


@dataclass(frozen=True, slots=True)
class UrlVerdict:
    """What ``judge_url`` read. ``host`` and ``registrable_domain`` are in Unicode (what a
    person reads); ``ascii_host`` is what DNS sees. ``parts`` concatenate to ``url``."""

    url: str
    scheme: str = ""
    host: str = ""
    ascii_host: str = ""
    registrable_domain: str | None = None
    port: int | None = None
    userinfo: str | None = None
    loopback: bool = False
    ip: bool = False
    warnings: tuple[UrlWarning, ...] = ()
    parts: tuple[Part, ...] = ()

    @property
    def refused(self) -> bool:
        """True when the URL must not be opened at all."""
        return any(w.refuses for w in self.warnings)

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(w.code for w in self.warnings)

    @property
    def site(self) -> str:
        """What to call the destination: the registrable domain, else the host."""
        return self.registrable_domain or self.host

    def to_json(self) -> dict[str, object]:
        return {
            "url": self.url,
            "scheme": self.scheme,
            "host": self.host,
            "asciiHost": self.ascii_host,
            "registrableDomain": self.registrable_domain,
            "port": self.port,
            "userinfo": self.userinfo,
            "loopback": self.loopback,
            "ip": self.ip,
            "refused": self.refused,
            "warnings": [{"code": w.code, "text": w.text, "refuses": w.refuses} for w in self.warnings],
        }


def judge_url(url: str, *, server: str | None = None, longest: int | None = MAX_URL) -> UrlVerdict:
    """Read ``url`` as a browser would; see the module docstring for what is refused and
    what is warned about. ``server``: where the MCP server that sent it was reached (its
    URL, or the command that runs it); a server on this computer sending the person to a
    page on this computer is what a local server does, so ``this-computer`` is left out.
    ``longest``: the longest URL not refused as ``too-long`` (None: any length, for a URL
    the client built itself, a sign-in's, which is then shown whole however long)."""
    try:
        verdict = _judge(url)
    except Refused as exc:
        return UrlVerdict(url=url, warnings=(exc.warning,), parts=(Part("rest", url),))
    if verdict.loopback and server is not None and server_on_this_computer(server):
        verdict = replace(verdict, warnings=tuple(w for w in verdict.warnings if w.code != "this-computer"))
    if longest is not None and len(url) > longest:
        too_long = UrlWarning(
            "too-long",
            f"The address is {len(url)} characters long, more than the {longest} that can be "
            "shown in full, so what it carries cannot all be examined. Such an address is never "
            "opened.",
            refuses=True,
        )
        verdict = replace(verdict, warnings=(*verdict.warnings, too_long))
    return verdict


def server_on_this_computer(where: str) -> bool:
    """Whether a server reached at ``where`` runs here: a command (stdio), or an http(s)
    URL whose host is a loopback name or address."""
    if not where:
        return False  # not known
    if not _SERVER_URL.match(where):
        return True  # a command: a process started here
    try:
        host = urlsplit(where).hostname or ""
    except ValueError:
        return False
    try:
        return is_loopback(host, is_ip=True)
    except ValueError:
        return is_loopback(host.lower(), is_ip=False)


_SERVER_URL = re.compile(r"(?i)https?://")


def _judge(url: str) -> UrlVerdict:
    hidden = [ch for ch in url if is_hidden(ch)]
    if hidden:
        names = ", ".join(sorted({f"U+{ord(ch):04X}" for ch in hidden}))
        raise Refused(
            "hidden-characters",
            f"The address contains spaces, control or invisible characters ({names}), which can make "
            "it read differently from where it goes.",
        )
    match = _SCHEME.match(url)
    if match is None:
        raise Refused("malformed", "This is not a complete web address (it has no scheme such as https:).")
    scheme = match.group(1).lower()
    if scheme not in _ALLOWED_SCHEMES:
        raise Refused(
            "scheme",
            f"Only http and https addresses are opened; this one is {scheme}:, which a browser would "
            "not treat as a web page.",
        )
    warnings: list[UrlWarning] = []
    pos = match.end()
    slashes = 0
    while pos < len(url) and url[pos] in "/\\":
        slashes += 1
        pos += 1
    auth_end = len(url)
    for i in range(pos, len(url)):
        if url[i] in "/\\?#":
            auth_end = i
            break
    authority = url[pos:auth_end]
    backslash = "\\" in url[match.end() : auth_end + 1]
    odd = slashes != 2 and not backslash
    userinfo: str | None = None
    host_start = pos
    if "@" in authority:
        at = authority.rindex("@")
        userinfo = authority[:at]
        host_start = pos + at + 1
    hostport = url[host_start:auth_end]
    host_text, port_text = split_port(hostport)
    port = port_number(port_text)
    if not host_text:
        raise Refused("no-host", "The address names no site (it has no host).")
    host, ascii_host, is_ip, ip_warning, idn_warnings = read_host(host_text)
    loopback = is_loopback(ascii_host, is_ip)
    if backslash:
        warnings.append(
            UrlWarning(
                "backslash",
                "The address has a backslash (\\) before its path, which a browser reads as a slash "
                f"and other programs as part of the name: a browser goes to {host}, another program "
                "perhaps elsewhere. Such an address is never opened.",
                refuses=True,
            )
        )
    if odd:
        warnings.append(
            UrlWarning(
                "odd-syntax",
                f"The address is written in an unusual way ({slashes} slashes after {scheme}:); a "
                f"browser reads it as going to {host}.",
            )
        )
    if userinfo is not None:
        shown = userinfo if len(userinfo) <= 60 else userinfo[:57] + "..."
        warnings.append(
            UrlWarning(
                "userinfo",
                f"The address has a user name or password before '@' ({shown}), which is not the site: "
                f"the address really goes to {host}. Such an address is never opened: no sign-in page "
                "needs one, and it is a common way to pass one site off as another.",
                refuses=True,
            )
        )
    warnings.extend(idn_warnings)
    if ip_warning is not None:
        warnings.append(ip_warning)
    if is_ip and not loopback:
        local = address_of(ascii_host)
        network = (
            " It is an address on your own network (a router, a printer, a cloud machine's own "
            "services), not on the internet."
            if local.is_private or local.is_link_local
            else ""
        )
        warnings.append(
            UrlWarning(
                "ip-host",
                f"The site is a raw IP address ({host}), not a name: nothing says whose site this is.{network}",
            )
        )
    if loopback:
        warnings.append(
            UrlWarning(
                "this-computer",
                f"The page is on this computer ({host}), served by a program running here, not by a "
                "website: open it only if you expect a program here to show you a page.",
            )
        )
    if scheme == "http" and not loopback:
        warnings.append(
            UrlWarning(
                "not-https",
                "The page is not encrypted (http://): what you type on it can be read or changed on the way.",
            )
        )
    domain = None if is_ip else registrable(host)
    parts = _parts(url, pos, userinfo, host_start, host_text, port_text, auth_end, host, domain)
    return UrlVerdict(
        url=url,
        scheme=scheme,
        host=host,
        ascii_host=ascii_host,
        registrable_domain=domain,
        port=port,
        userinfo=userinfo,
        loopback=loopback,
        ip=is_ip,
        warnings=tuple(warnings),
        parts=parts,
    )


def _parts(
    url: str,
    authority_start: int,
    userinfo: str | None,
    host_start: int,
    host_text: str,
    port_text: str | None,
    auth_end: int,
    host: str,
    domain: str | None,
) -> tuple[Part, ...]:
    parts = [Part("scheme", url[:authority_start])]
    if userinfo is not None:
        parts.append(Part("userinfo", url[authority_start:host_start]))
    host_end = host_start + len(host_text)
    split = _domain_split(host_text, host, domain)
    if split > 0:
        parts.append(Part("host", url[host_start : host_start + split]))
    parts.append(Part("domain" if domain is not None else "host", url[host_start + split : host_end]))
    if port_text is not None:
        parts.append(Part("port", url[host_end:auth_end]))
    if auth_end < len(url):
        parts.append(Part("rest", url[auth_end:]))
    return tuple(p for p in parts if p.text)


def _domain_split(host_text: str, host: str, domain: str | None) -> int:
    """Where the registrable domain starts in the host as written (0 when it is all of it,
    or when the written form does not map label for label)."""
    if domain is None or "%" in host_text:
        return 0
    written = IDN_DOTS.split(host_text)
    trailing = 1 if written and written[-1] == "" else 0
    keep = domain.count(".") + 1
    if len(written) - trailing != host.rstrip(".").count(".") + 1 or keep >= len(written) - trailing:
        return 0
    cut = len(written) - trailing - keep
    return sum(len(label) + 1 for label in written[:cut])
