"""Redis store URLs: what ``RedisStore`` takes from one, and how any store URL is shown.

Rules:

* ``redis://[user:password@]host[:port][/db][?option=value&...]``, or ``rediss://`` for
  TLS; the path is the database number; the options are ``URL_OPTIONS`` (passed on to
  redis-py) and ``prefix`` (ours, taken out before redis-py sees the URL).
* Option values are checked here, not at the first call: a timeout is seconds above 0
  (``nan`` and ``inf`` are none), ``health_check_interval`` whole seconds above 0,
  ``max_connections`` a whole number above 0 (redis-py reads 0 as its default); the
  ``ssl_`` options need ``rediss://`` and values TLS knows. No option is given twice,
  nor the database both as the path and as ``db=``.
* Every refusal is a ``ConfigError`` quoting the URL as ``redact_url`` shows it: the
  password, a lone user-info part and a ``password=`` option hidden. A password whose
  ``/``, ``?``, ``#`` or ``@`` was not percent-encoded cuts the URL short where no parser
  can tell; then more is hidden rather than less, and the error says to percent-encode.
"""

from __future__ import annotations

import math
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcp_elicit.errors import ConfigError

__all__ = ["URL_OPTIONS", "redact_url", "shown_valid_url", "split_url"]

#: URL query options passed on to redis-py; ``prefix`` is ours.
URL_OPTIONS = frozenset(
    {
        "db",
        "health_check_interval",
        "max_connections",
        "socket_connect_timeout",
        "socket_timeout",
        "ssl_ca_certs",
        "ssl_cert_reqs",
        "ssl_check_hostname",
    }
)
_BOOLEANS = frozenset({"true", "false", "yes", "no", "1", "0"})
_DB_PATH = re.compile(r"/?|/[0-9]{1,5}")
# ``scheme://`` or, the slashes forgotten, ``scheme:`` or ``scheme:/`` (never ``C:``, a drive);
# a space, tab or no-break space mistyped into the scheme is read as part of it
_AUTHORITY = re.compile(
    r"^(\s*(?:[A-Za-z][A-Za-z0-9+.\s-]*://|[A-Za-z][A-Za-z0-9+.\s-]+:/?))(.*)$", re.DOTALL
)
_DRIVE = re.compile(r"[A-Za-z]:")
_QUERY_SECRET = re.compile(r"([?&](?:password|pass|pwd)=)[^&#]*", re.IGNORECASE)
_ENCODE_HINT = "percent-encode '/', '?', '#' and '@' in a user name or password (%2F, %3F, %23, %40)"


def redact_url(url: str) -> str:
    """``url`` with its password (or a lone user-info part) replaced by ``***``, and so is
    a ``password=`` query option, whatever its scheme: a ``sqlite:`` or ``memory:`` URL
    given a user and password (copied from another database's) has them hidden too, and
    so does one written without its ``//`` (``memory:user:password@host``), with a space
    or tab mistyped into its scheme (``re\\tdis://``), or without its colon
    (``redis//user:password@host``: all up to the last ``@``).

    The user information is what precedes the last ``@`` before the first ``/``, ``?``
    or ``#``. A password written without percent-encoding may hold ``/``, ``?``, ``#``
    or ``@``, which no parser can tell from the URL's own: then everything up to the last
    ``@`` is hidden (hiding too much is the safe side). One exception: in a ``sqlite:``
    URL, a name with no ``:`` before an ``@`` starts a relative file name
    (``sqlite://ann@example.org/state.db``), never a secret, and is shown, as is a Windows
    drive (``sqlite://C:/Users/ann@example.org/state.db``)."""
    match = _AUTHORITY.match(url)
    if match is None:  # no scheme to read (its colon left out: ``redis//me:pw@h``): to the last "@"
        before = url[: max(url.rfind("@"), 0)]  # unless a path (``C:/Users/ann@example.org/...``)
        secret = "//" in before or ":" in before[2 if _DRIVE.match(before) else 0 :]
        return _QUERY_SECRET.sub(r"\1***", "***" + url[len(before) :] if secret else url)
    start, rest = match.groups()
    end = next((i for i, c in enumerate(rest) if c in "/?#"), len(rest))
    file_name = start.strip().lower().startswith("sqlite:")
    at = rest.rfind("@", 0, end)
    drive = file_name and _DRIVE.fullmatch(rest[:end])  # sqlite://C:/Users/ann@example.org/...
    if at < 0 and "@" in rest[end:] and not drive and (":" in rest[:end] or not file_name):
        at = rest.rfind("@")  # a password holding '/', '?' or '#', unencoded
    if at >= 0:
        user, colon, _ = rest[:at].partition(":")
        if colon and not any(c in user for c in "/?#"):
            rest = f"{user}:***@{rest[at + 1 :]}"
        elif colon or not file_name:
            rest = f"***@{rest[at + 1 :]}"
    return start + _QUERY_SECRET.sub(r"\1***", rest)


def shown_valid_url(url: str) -> str:
    """A URL ``split_url`` accepted, password hidden: its parts are known, so an ``@`` in
    an option's value (a certificate path) is not taken for the end of a password."""
    parts = urlsplit(url.strip())
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return urlunsplit(parts)
    user, colon, _ = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}" if colon else f"***@{host}"))


def _garbled_userinfo(url: str) -> bool:
    """Whether an ``@`` sits past the host part: a user name or password holding one of
    the URL's own delimiters, unencoded."""
    match = _AUTHORITY.match(url)
    rest = match.group(2) if match else url
    at = rest.find("@")
    return at >= 0 and any(c in rest[:at] for c in "/?#")


def split_url(url: str) -> tuple[str, str | None]:
    """The URL for redis-py (without our options) and the ``prefix`` option, if any."""
    shown = redact_url(url)
    hint = f" ({_ENCODE_HINT})" if _garbled_userinfo(url) else ""

    def bad(problem: str) -> ConfigError:
        return ConfigError(f"Redis URL {shown!r}: {problem}{hint}")

    try:
        parts = urlsplit(url)
    except ValueError as exc:  # its text shows no part of the URL but a bracketed host's
        if "IPv6" not in str(exc):
            raise bad(str(exc)) from exc
        raise bad(
            "a '[' or ']' out of place: an IPv6 host is written in brackets, as in "
            "redis://[::1]:6379/0, and a '[' or ']' in a user name or password percent-encoded (%5B, %5D)"
        ) from exc
    try:
        port = parts.port  # raises ValueError when the port is not a number
    except ValueError as exc:  # its text quotes the port, which may be part of a password
        problem = "the port is out of range" if "range" in str(exc) else "the port is not a number"
        raise bad(problem) from exc
    if port == 0:
        raise bad("port 0: no server listens there (leave the port out for 6379)")
    if parts.scheme not in ("redis", "rediss"):
        raise bad("the scheme must be redis:// or rediss://")
    if not parts.hostname:
        raise bad("no host (expected redis://host:port/db)")
    if not _DB_PATH.fullmatch(parts.path):
        raise bad("the path is the database number, as in redis://host:6379/0")
    if parts.fragment:
        raise bad("unexpected fragment")
    prefix: str | None = None
    options: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name in seen:  # redis-py keeps the first, a prefix was the last: refuse either
            raise bad(f"{name} is given twice")
        seen.add(name)
        if name == "db" and parts.path.strip("/"):
            raise bad(f"the database is given twice, as the path {parts.path} and as db=: give one")
        if name == "prefix":
            prefix = value
        elif name in URL_OPTIONS:
            wrong = _option_problem(name, value, tls=parts.scheme == "rediss")
            if wrong is not None:
                raise bad(wrong)
            options.append((name, value))
        else:
            allowed = ", ".join(sorted({*URL_OPTIONS, "prefix"}))
            if name in ("username", "password"):
                raise bad(f"give the {name} before the host, as in redis://user:password@host:6379/0")
            raise bad(f"unknown option {name!r} (known: {allowed})")
    return urlunsplit(parts._replace(query=urlencode(options), fragment="")), prefix


def _option_problem(name: str, value: str, *, tls: bool) -> str | None:
    """What is wrong with the value of option ``name`` (None when nothing is): redis-py
    takes a timeout of 0, below 0, ``nan`` or ``inf``, and every call then times out at
    once or may wait for ever; it takes TLS options on ``redis://`` or with values TLS has
    no use for, and every call then fails as if the server were not Redis or had no TLS."""
    if name.startswith("ssl_") and not tls:
        return f"{name} is for TLS: use rediss://"
    if name == "ssl_cert_reqs" and value not in ("none", "optional", "required"):
        return f"{name} is none, optional or required"
    if name == "ssl_check_hostname" and value.lower() not in _BOOLEANS:
        return f"{name} is true or false"
    if name == "ssl_ca_certs" and not value:
        return f"{name} is the path of a file of CA certificates"
    if name in ("socket_timeout", "socket_connect_timeout"):
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if not 0 < seconds < math.inf:
            return f"{name} is seconds, a number above 0 (as in {name}=10)"
    elif name == "health_check_interval" and not (value.isascii() and value.isdigit() and int(value) > 0):
        return f"{name} is whole seconds above 0 (as in {name}=15)"
    elif name == "max_connections" and not (value.isascii() and value.isdigit() and int(value) > 0):
        return f"{name} is a whole number above 0 (as in {name}=20)"  # redis-py reads 0 as its default
    return None
