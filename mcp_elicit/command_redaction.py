"""How a command line (a stdio server's, as a message or a report repeats it) is shown:
each word as :func:`url_redaction.redact_word` shows a URL in it, and every value that an
option, an environment assignment or a header names as a secret replaced by ``REDACTED``.

Rules:

* A name says secret when one of its parts (split at ``-``, ``_``, ``.`` and a lower-case
  letter before an upper-case one) is a secret's word (``key``, ``token``, ``secret``,
  ``password``, ``passwd``, ``pwd``, ``auth``, ``authorization``, ``credential(s)``,
  ``bearer``, ``cookie``...), or ends in one of the longer ones (``authtoken``,
  ``clientsecret``, ``apikey``), digits after it aside (``--token2``), and no part says
  the value is only where or what the secret is: a file, a path, a directory, a
  variable's name, an id, a URL, a type, a length, a count or a time (``--key-file PATH``,
  ``--token-url URL``, ``--auth-type basic``, ``API_KEY_ID=...``, ``--max-token-count 9``).
  ``--no-auth`` is a switch, not a name with a value.
* Three forms hide their value: ``--NAME=VALUE`` (one or two dashes), ``--NAME VALUE``
  (the next word, whatever it starts with: a secret may start with ``-``, ``--token -x``,
  as getopt, click and Go's flag all take it; only a long option, two dashes and a
  lower-case name, ``--token --verbose``, is read as the next option, not a value), and
  ``NAME=VALUE`` for an environment variable's name (``env API_KEY=... python s.py``),
  also as an option's value (``--env=API_KEY=...``, docker's way).
  A header given as a word (``-H 'Authorization: Bearer T'``, ``--header=X-Api-Key: K``)
  keeps its name and its scheme (``Bearer REDACTED``: one of the schemes HTTP registers,
  never a passphrase's first word) when the name says secret, or is one of the headers
  that carry credentials (``Authorization``, ``Cookie``). An option whose name says
  secret and header (``--auth-header 'Bearer T'``, ``--auth-header 'Authorization: Bearer
  T'``) hides its value so too: such a name is the header, not where it is.
* A message that repeats a secret (a server's stderr quoting its ``--token``, its error,
  a line on its stdout) shows it REDACTED (:func:`redact_secrets`): wherever it occurs
  when it has at least ``SEARCHED_LEAST`` characters (a token glued to other text is
  still the token), and where it stands whole (not inside a longer run of letters, digits
  and ``_``) when it is shorter, from ``SEARCHED_FEWEST`` characters on: a short password
  (``--password hunter2``) is hidden where the server repeats it, and ``--key name``
  hides the word "name" but not "names" or "renamed". Fewer characters than that protect
  nothing and would hide the text's small words.
* The secrets of an HTTP request a message may repeat (a server's error quoting the
  address it was asked at, or a header): the values of the headers sent but those that
  say nothing secret (``Accept``, ``Host``, MCP's own), each with its credential after a
  scheme alone (:func:`header_secrets`); the URL's query, whole and each value, and its
  user name, password and the ``Basic`` credential a client sends for them
  (:func:`url_secrets`). :func:`redact_secrets` hides them by the rule above.
* Conservative: a name that does not say secret keeps its value (a path, a port, a model's
  name), and short options (``-p X``: a port as often as a password) keep theirs. What a
  secret is hidden from is a message, not the program: the command run is the one given.

A leaf beside ``url_redaction``: the stdio transport and the command line both use it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Sequence
from typing import Final
from urllib.parse import parse_qsl, unquote, unquote_plus, urlsplit

from mcp_elicit.url_redaction import redact_word

__all__ = [
    "SEARCHED_FEWEST",
    "SEARCHED_LEAST",
    "header_secrets",
    "redact_command",
    "redact_secrets",
    "secret_name",
    "secret_values",
    "url_secrets",
]

#: From this many characters on, :func:`redact_secrets` hides a secret's value wherever it
#: occurs in a text; a shorter one only where it stands whole (``--key name``: the word
#: "name", not "names").
SEARCHED_LEAST: Final = 8
#: The fewest characters of a secret's value that :func:`redact_secrets` searches a text
#: for: a shorter one protects nothing and would hide the text's small words.
SEARCHED_FEWEST: Final = 4

#: A part of a name that makes it a secret's.
_SECRET: Final = frozenset(
    {
        "apikey",
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "credential",
        "credentials",
        "key",
        "pass",
        "passphrase",
        "passwd",
        "password",
        "pwd",
        "secret",
        "token",
    }
)
#: Longer secret words a part may end in (``authtoken``, ``clientsecret``, ``dbpassword``).
_ENDINGS: Final = ("apikey", "passwd", "password", "secret", "token")
#: A part of a name that says the value is not the secret itself, but where or what it is.
_ABOUT: Final = frozenset(
    {
        "alg",
        "algorithm",
        "budget",
        "cmd",
        "command",
        "count",
        "dir",
        "directory",
        "endpoint",
        "env",
        "expiry",
        "expires",
        "file",
        "format",
        "id",
        "kind",
        "len",
        "length",
        "limit",
        "location",
        "max",
        "method",
        "min",
        "mode",
        "name",
        "path",
        "prefix",
        "scheme",
        "size",
        "timeout",
        "ttl",
        "type",
        "uri",
        "url",
        "var",
    }
)
#: The headers that carry credentials whatever their name's parts say.
_SECRET_HEADERS: Final = frozenset({"authorization", "cookie", "proxy-authorization"})
#: The headers whose values a message may repeat as they are: they say nothing secret.
_PLAIN_HEADERS: Final = frozenset(
    {"accept", "accept-encoding", "accept-language", "connection", "content-length", "content-type"}
    | {"host", "origin", "user-agent", "last-event-id", "mcp-method", "mcp-name", "mcp-protocol-version"}
)
_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_OPTION = re.compile(r"(-{1,2})([A-Za-z][A-Za-z0-9_.-]+)(?:(=)(.*))?", re.DOTALL)
_ENV = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
_HEADER = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+):([ \t]*)(.*)", re.DOTALL)
#: The authentication schemes a credential follows (HTTP's registry, and the common ones
#: beside it): a header value's first word is kept only when it is one of them.
_SCHEMES: Final = frozenset(
    {"basic", "bearer", "digest", "dpop", "hoba", "mutual", "negotiate", "ntlm", "token", "apikey"}
)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9-]*)[ \t]+")
#: A word that is the next option, not a secret option's value: two dashes and a lower-case name.
_LONG_OPTION = re.compile(r"--[a-z][a-z0-9-]*(?:=.*)?", re.DOTALL)
#: A character that continues a word: a secret is found only where none is beside it.
_WORDLIKE = re.compile(r"\w")


def secret_name(name: str) -> bool:
    """Whether an option, a variable or a header called ``name`` holds a secret (see the
    rules): ``api-key``, ``GITHUB_TOKEN``, ``clientSecret``; not ``key-file``, ``no-auth``."""
    parts = [part.lower() for part in _PARTS.findall(name)]
    if not parts or parts[0] == "no" or any(part in _ABOUT for part in parts):
        return False
    words = [part.rstrip("0123456789") for part in parts]  # --token2, PASSWORD1: numbered ones
    return any(word in _SECRET or word.endswith(_ENDINGS) for word in words)


def redact_command(words: Sequence[str]) -> list[str]:
    """``words`` (a command line, split) as a message shows them (see the rules)."""
    return [redact_word(shown) for shown, _ in _read(words)]


def secret_values(words: Sequence[str]) -> list[str]:
    """The values :func:`redact_command` hides in ``words``, for a message that repeats one
    (a server's own error quoting its option)."""
    return [secret for _, secret in _read(words) if secret]


def redact_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` (a message that may repeat a command's secrets) with each of ``secrets``
    shown ``REDACTED``: wherever it occurs from ``SEARCHED_LEAST`` characters on, and
    where it stands whole (no letter, digit or ``_`` right before it or after it continues
    it) from ``SEARCHED_FEWEST`` (see the rules)."""
    for secret in sorted({s for s in secrets if len(s) >= SEARCHED_FEWEST}, key=len, reverse=True):
        if secret not in text:
            continue
        if len(secret) >= SEARCHED_LEAST:
            text = text.replace(secret, "REDACTED")
            continue
        before = r"(?<!\w)" if _WORDLIKE.match(secret[0]) else ""
        after = r"(?!\w)" if _WORDLIKE.match(secret[-1]) else ""
        text = re.sub(before + re.escape(secret) + after, "REDACTED", text)
    return text


def header_secrets(headers: Iterable[tuple[str, str]]) -> list[str]:
    """The values of ``headers`` (name, value) that a message should not repeat, each with
    its credential after a scheme alone (``Bearer sk-...``: ``sk-...``); those of headers
    that say nothing secret (``Accept``, ``Host``, MCP's own) are not among them."""
    values = [value for name, value in headers if name.lower() not in _PLAIN_HEADERS]
    return [part for value in values for part in (value, value.rpartition(" ")[2])]


def url_secrets(url: str) -> list[str]:
    """What the URL ``url`` carries that a message should not repeat: its query (whole,
    decoded, and each value), its user name and password (as written and decoded), and the
    ``Basic`` credential a client sends for them. Nothing for a URL that cannot be read."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.query, unquote_plus(parts.query)]
    found += [value for _, value in parse_qsl(parts.query, keep_blank_values=True)]
    user, colon, password = parts.netloc.rpartition("@")[0].partition(":")
    found += [user, unquote(user), password, unquote(password)]
    if user or colon:
        pair = f"{unquote(user)}:{unquote(password)}".encode()
        found.append(base64.b64encode(pair).decode("ascii"))
    return [secret for secret in found if secret]


def _read(words: Sequence[str]) -> list[tuple[str, str]]:
    """Each word as shown, and the secret it hides ("" when none)."""
    out: list[tuple[str, str]] = []
    value_of = ""  # the secret option before, its value to come ("" when none)
    for word in words:
        if value_of and _LONG_OPTION.fullmatch(word) is None:
            out.append(_value(value_of, word) if word else (word, ""))
            value_of = ""
            continue
        value_of = ""
        option = _OPTION.fullmatch(word)
        if option is not None:
            dashes, name, equals, value = option.groups()
            if equals is None:
                value_of = name if secret_name(name) else ""
                out.append((word, ""))
            elif secret_name(name) and value:
                shown, secret = _value(name, value)
                out.append((f"{dashes}{name}={shown}", secret))
            else:  # the value may be an assignment (docker's --env=API_KEY=K) or a header
                shown, secret = _assigned(value)
                out.append((f"{dashes}{name}={shown}", secret))
            continue
        out.append(_assigned(word))
    return out


def _value(name: str, value: str) -> tuple[str, str]:
    """The value of the secret option ``name`` as shown, and the secret it hides: all of
    it, but a header's name and scheme when the option's name says header."""
    if "header" not in (part.lower() for part in _PARTS.findall(name)):
        return "REDACTED", value
    shown, secret = _header(value)
    if secret:
        return shown, secret
    return _credential("", value)


def _assigned(word: str) -> tuple[str, str]:
    """``word`` with its value hidden if it is an environment assignment (``API_KEY=K``)
    or a header whose name says secret."""
    env = _ENV.fullmatch(word)
    if env is not None and secret_name(env[1]) and env[2]:
        return f"{env[1]}=REDACTED", env[2]
    return _header(word)


def _header(word: str) -> tuple[str, str]:
    """``word`` with its value hidden if it is a header whose name says secret."""
    header = _HEADER.fullmatch(word)
    if header is None:
        return word, ""
    name, space, value = header.groups()
    if not value or not (name.lower() in _SECRET_HEADERS or secret_name(name)):
        return word, ""
    return _credential(f"{name}:{space}", value)


def _credential(head: str, value: str) -> tuple[str, str]:
    """A header's ``value`` after ``head`` as shown: ``Bearer T`` keeps its scheme (one of
    ``_SCHEMES``, which says what kind, not the token), anything else is hidden whole."""
    scheme = _SCHEME.match(value)
    known = scheme is not None and scheme[1].lower() in _SCHEMES and scheme.end() < len(value)
    kept = scheme[0] if known and scheme is not None else ""
    return f"{head}{kept}REDACTED", value[len(kept) :]
