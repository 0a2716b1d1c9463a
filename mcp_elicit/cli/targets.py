"""TARGET: where the server is, and a connected ``Client`` for it that keeps what the
connection saw (for explaining failures).

A TARGET is an ``http://`` or ``https://`` URL (Streamable HTTP), or a command given after
``--`` (stdio)::

    mcp-elicit check http://127.0.0.1:8000/mcp --header 'Authorization: Bearer T'
    mcp-elicit check -- mcp-elicit serve examples/demo_server.py

Rules:

* Everything after the first ``--`` is the server command, never our options; headers are
  for HTTP targets only, each ``Name: value`` with an ASCII value. A URL that cannot be parsed (an unclosed
  ``[``, a port that is not a number in 0-65535) is a usage error before anything connects.
* Over HTTP, every response's status and headers and every error under the connection
  (with its causes: refused, TLS, name resolution) are kept in ``Observed``; over stdio,
  every line the server wrote to stdout that was not JSON-RPC. Nothing here decides what a
  failure means: ``cli.diagnose`` does.
* Only the TARGET URL (and where it redirects) is ever requested, and, when the server
  wants a sign-in (``cli.sign_in``), its authorization server.
* httpx and the HTTP transport are imported only for an HTTP TARGET (``cli.http_watch``):
  a stdio connection test should not pay for them at start-up.
* What the commands print names an HTTP TARGET as ``str(target)``: its URL without user
  name and password, query or fragment, where keys travel (as the transport's own
  messages do); only requests use ``target.url`` itself.
"""

from __future__ import annotations

import contextlib
import difflib
import logging
import re
import shlex
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from mcp_elicit.client import Answerer, Client
from mcp_elicit.client.answerers import RootsCallback
from mcp_elicit.client.connection import NotificationCallback
from mcp_elicit.client.transport import Trace, Transport
from mcp_elicit.command_redaction import (
    header_secrets,
    redact_command,
    redact_secrets,
    secret_values,
    url_secrets,
)
from mcp_elicit.errors import UsageError
from mcp_elicit.telemetry_attributes import redact_uri
from mcp_elicit.transports.stdio_client import StdioTransport
from mcp_elicit.url_redaction import hidden_parts, redact_word

if TYPE_CHECKING:
    from mcp_elicit.cli.sign_in import SignIn
    from mcp_elicit.transports.http_proxy import ProxyWait

__all__ = ["HttpSeen", "Observed", "Target", "connect", "parse_target", "split_command"]

_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: What a header's name looks like, unlike a token given alone (``sk-9f...``): words of
#: letters between hyphens; only such a start of a malformed ``--header`` is quoted.
_NAME_LIKE = re.compile(r"[A-Za-z]{1,40}(?:-[A-Za-z]{1,40}){0,4}")
_NOISE_LOGGER = "mcp_elicit.stdio_client"
#: What comes before ``//`` in a URL whose colon was left out (``http//HOST``).
_NO_COLON = re.compile(r"[A-Za-z]+")
#: [USER:PASSWORD@]HOST[:PORT][/PATH] with no scheme, and a port or a password: an
#: address, never a command (``_meant_url``).
_ADDRESS = re.compile(
    r"(?:(?P<user>[^\s/?#]+)@)?(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]{1,5}))?(?:/\S*)?"
)


@dataclass(frozen=True, slots=True)
class Target:
    """An HTTP endpoint (``url``) or a server command (``command``)."""

    url: str | None = None
    command: tuple[str, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def kind(self) -> Literal["http", "stdio"]:
        return "http" if self.url is not None else "stdio"

    def __str__(self) -> str:
        """How messages and reports name the TARGET: a URL without its user name and
        password, query or fragment (where keys travel), a command without the value of an
        option that names a secret (``command_redaction``); ``url`` and ``command`` are what
        is used."""
        return redact_uri(self.url) if self.url is not None else shlex.join(redact_command(self.command))

    def unechoed(self, text: str) -> str:
        """``text``, a message to print, with each ``--header`` value it repeats (and the
        credential after a scheme alone: ``Bearer sk-...``), each key of the URL's query and
        its user name and password, and each secret a stdio command gives an option
        (``--token T``, ``API_KEY=K``), as ``REDACTED`` (``command_redaction``): a server may
        quote them in its error. Headers that say nothing secret (``Accept``,
        ``Host``) stay."""
        secrets = header_secrets(self.headers) + secret_values(
            self.command
        )  # a server's error may quote them
        return redact_secrets(text, secrets + url_secrets(self.url or ""))

    def __repr__(self) -> str:  # header values are credentials: their names only
        if self.url is None:
            return f"Target(command={redact_command(self.command)!r})"
        return f"Target(url={str(self)!r}, headers={[name for name, _ in self.headers]!r})"

    def argv(self) -> list[str]:
        """The TARGET as typed on a command line (for hints)."""
        return [self.url] if self.url is not None else ["--", *self.command]

    def to_json(self) -> dict[str, Any]:
        if self.url is not None:
            return {"kind": "http", "url": str(self), "headers": [name for name, _ in self.headers]}
        return {"kind": "stdio", "command": redact_command(self.command)}  # no password, token or key


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """``argv`` before the first ``--``, and the command after it (None without ``--``)."""
    args = list(argv)
    if "--" not in args:
        return args, None
    at = args.index("--")
    return args[:at], args[at + 1 :]


def parse_target(
    url: str | None,
    command: Sequence[str] | None,
    headers: Sequence[str] = (),
    *,
    stdio_usage: str = "check --",
    then: Sequence[str] | None = None,
) -> Target:
    """The TARGET from a URL argument or a ``--`` command; ``UsageError`` saying what is
    wrong otherwise. ``stdio_usage`` is how the subcommand's own usage starts a stdio
    server, for the hint when ``url`` is a command: the words up to and including ``--``.
    ``then`` is, for a subcommand that takes words after the TARGET (``call``'s TOOL and
    its arguments), those words: a ``url`` that reads as the first of them instead (nothing,
    or a ``NAME=VALUE``, follows it) means the server was left out, and the error says where
    it goes rather than taking that word for a command."""
    if command is not None:
        if url is not None:
            raise UsageError(
                f"give the server as a URL or as a command after --, not both ({redact_uri(url)!r} and a command)"
            )
        if not command:
            raise UsageError("nothing after --: give the server command, e.g. -- mcp-elicit serve app.py")
        if not command[0].strip():  # an unset shell variable ("$SERVER"), say: no program to run
            raise UsageError(
                f"the server command starts with an empty word: {shlex.join(redact_command(command))}"
            )
        if headers:
            raise UsageError("--header is for HTTP targets; a stdio server gets no headers")
        return Target(command=tuple(command))
    if url is None:
        raise UsageError("give the server: an http(s):// URL, or -- followed by the command that starts it")
    if not url.strip():
        raise UsageError("the TARGET is empty: give an http(s):// URL, or -- and the server command")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it checks the port: digits, 0-65535
    except ValueError as exc:
        shown = redact_uri(url)  # the person's own, but printed where others read it
        raise UsageError(
            f"{shown!r} is not a valid URL ({exc}); give it as http(s)://HOST:PORT/PATH"
        ) from None
    if parts.scheme in ("http", "https") and not parts.hostname:
        raise UsageError(f"{redact_uri(url)!r} names no host; give it as http(s)://HOST:PORT/PATH")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        meant = _meant_url(url)  # a key in a query (host:8000/mcp?token=...), a password:
        shown = _meant_shown(url, meant)[0] if meant is not None else redact_uri(url)  # hidden
        if url.endswith(".py"):  # a server file: say how to run it, not to run it bare
            raise UsageError(
                f"{shown!r} is not an http(s):// URL; to start the server it defines over stdio, put the "
                f"command after --: mcp-elicit {stdio_usage} mcp-elicit serve {shown} (an mcp_elicit "
                f"Server), or mcp-elicit {stdio_usage} python {shown} (a script that runs its own server)"
            )
        if meant is not None:  # an address, not a command: running it would not help
            typed, suggested, hidden = _meant_shown(url, meant)
            try:
                urlsplit(meant.url).port  # noqa: B018 - the URL given must not fail in its turn
            except ValueError as exc:
                raise UsageError(
                    f"{typed!r} is not a valid address ({exc}); give it as http(s)://HOST:PORT/PATH"
                ) from None
            written = f" (REDACTED hides {hidden}: write it out as you gave it)" if hidden else ""
            raise UsageError(f"{typed!r} is not an http(s):// URL; give it as {suggested}{written}")
        if then is not None and (not then or "=" in then[0]) and url.isprintable():
            raise UsageError(_left_out(url, then, stdio_usage))
        raise UsageError(
            f"{shown!r} is not an http(s):// URL; to start a server over stdio, put its command after --"
            f" (e.g. mcp-elicit {stdio_usage} {shown} ...)"
        )
    return Target(url=url, headers=tuple(_header(h) for h in headers))


def _left_out(word: str, then: Sequence[str], stdio_usage: str) -> str:
    """The error for a subcommand's words given without their server: ``word`` is what it
    asks for (a tool's name, a URI), not a command to start, and the server goes first as
    a URL or last after ``--``."""
    command = stdio_usage.split()[0]
    word = redact_word(word)  # a URI's password or key (s3://KEY:SECRET@...) shown as any URL is
    asked = shlex.quote(word) + (" ..." if then else "")
    return (
        f"no server given ({word!r} is not an http(s):// URL, and nothing follows --): give its URL "
        f"first, mcp-elicit {command} http://127.0.0.1:8000/mcp {asked}, or the command that starts "
        f"it last, after --: mcp-elicit {command} {asked} -- mcp-elicit serve app.py"
    )


@dataclass(frozen=True, slots=True)
class _Meant:
    """The http(s):// URL a word stands for: ``scheme`` (``https://``) and ``rest``, the
    word's own end after what it has in place of that scheme (all of it for an address)."""

    scheme: str
    rest: str

    @property
    def url(self) -> str:
        return self.scheme + self.rest


def _meant_url(word: str) -> _Meant | None:
    """The http(s):// URL ``word`` stands for when it is an address, not a command: a
    ``HOST:PORT[/PATH]`` or ``USER:PASSWORD@HOST[:PORT][/PATH]`` without a scheme, or a URL whose scheme is a WebSocket one or a
    typo of http(s) (``htp://``); https for ``wss``, https-like typos and port 443 (which
    is TLS whatever scheme was typed: ``ws://HOST:443``), else http. None otherwise
    (``ftp://`` is not taken for a slip). The colon left out (``http//HOST``) is such a
    slip too, and keeps the scheme as typed."""
    scheme, sep, rest = word.partition("://")
    if not sep and _NO_COLON.fullmatch(word.partition("//")[0]):
        scheme, sep, rest = word.partition("//")
        if scheme.lower() in ("http", "https"):
            return _Meant(f"{scheme.lower()}://", rest) if rest else None
    if sep:
        scheme = scheme.lower()
        meant = {"ws": "http", "wss": "https"}.get(scheme) or next(
            iter(difflib.get_close_matches(scheme, ["http", "https"], n=1, cutoff=0.75)), None
        )
        if meant is None or not rest:
            return None
        return _Meant(f"{'https' if _port(rest) == 443 else meant}://", rest)
    address = _ADDRESS.fullmatch(word)
    if address is None or not (address["port"] or ":" in (address["user"] or "")):
        return None  # a word (a program, a file) rather than an address
    return _Meant(f"{'https' if address.group('port') == '443' else 'http'}://", word)


def _meant_shown(word: str, meant: _Meant) -> tuple[str, str, str]:
    """``word`` and the URL it stands for as a message shows them, with the same parts
    ``REDACTED`` in both (a password after a typo'd scheme, ``htps://me:pw@h``, is one
    ``redact_uri`` finds only once the scheme is right), and what those parts are
    (``url_redaction.hidden_parts``; "" for none)."""
    suggested = redact_uri(meant.url)
    typed = word[: len(word) - len(meant.rest)] + suggested[len(meant.scheme) :]
    return typed, suggested, hidden_parts(meant.url)


def _port(rest: str) -> int | None:
    """The port of ``HOST:PORT/PATH`` (what follows ``scheme://``); None when none is given
    or it is not a port (the caller reports that)."""
    try:
        return urlsplit(f"//{rest}").port
    except ValueError:
        return None


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not _HEADER_NAME.fullmatch(name):
        start = _HEADER_NAME.match(text.strip())
        name_like = start is not None and start.end() < len(text.strip()) and _NAME_LIKE.fullmatch(start[0])
        named = f"the one starting {start[0]!r}" if start and name_like else "one"  # not a bare token
        raise UsageError(  # not the text itself: it is usually a token
            f"--header wants 'Name: value'; {named} ({len(text)} characters) has no ':' after a header name"
        )
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise UsageError(f"the value of header {name!r} contains control characters")
    wide = next((i for i, ch in enumerate(value) if ord(ch) > 0x7E), None)
    if wide is not None:
        raise UsageError(
            f"the value of header {name!r} is not ASCII ({value[wide]!r} at {wide}); HTTP header values are "
            "ASCII: encode it as the server expects (percent-encoding, base64)"
        )
    return name, value


@dataclass(frozen=True, slots=True)
class HttpSeen:
    """One HTTP response: what was asked and what came back (headers in lower case)."""

    method: str
    url: str
    status: int
    headers: dict[str, str]

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


@dataclass
class Observed:
    """What a connection saw, for explaining failures."""

    responses: list[HttpSeen] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    #: The first lines a stdio server wrote to stdout that are not JSON-RPC (the transport's
    #: log quotes the first few), and how many there were in all.
    stdout_noise: list[str] = field(default_factory=list)
    stdout_noise_count: int = 0
    #: The end of a stdio server's stderr once the connection has closed ("" over HTTP).
    stderr_tail: str = ""
    #: Whether the connection could sign in (``cli.sign_in``), and what the sign-in used:
    #: ``{"issuer": ..., "signed_in_now": ...}``, None when no token was used.
    signing_in: bool = False
    authorization: dict[str, Any] | None = None
    #: Milliseconds spent before the MCP requests on the sign-in (a person included).
    sign_in_ms: float = 0.0
    #: The revision agreed, once connected (None before).
    revision: str | None = None
    #: The HTTP requests waiting on a proxy, and those cut short while they did
    #: (``transports.http_proxy``): a timeout then is the proxy's, not the server's.
    proxy_waits: list[ProxyWait] = field(default_factory=list)

    def last_post(self) -> HttpSeen | None:
        for seen in reversed(self.responses):
            if seen.method == "POST":
                return seen
        return None


class _Noise(logging.Filter):
    """Takes the stdio transport's warnings about lines that were not JSON-RPC into
    ``Observed`` (the commands report them themselves); other records pass."""

    def __init__(self, observed: Observed, target: Target) -> None:
        super().__init__()
        self._observed = observed
        self._target = target  # a line may repeat a --token the command gave: kept REDACTED

    def filter(self, record: logging.LogRecord) -> bool:
        if "not JSON-RPC" not in str(record.msg):
            return True
        line = record.args[-1] if isinstance(record.args, tuple) and record.args else None
        if "wrote a line" in str(record.msg) and isinstance(line, str):  # one of the first few, redacted
            self._observed.stdout_noise.append(self._target.unechoed(line.strip()))
        return False


class _Unechoed(logging.Filter):
    """Shows each record a handler writes (the client's warnings, which quote the server:
    ``describe()`` repeats its question) without the secrets the TARGET gave."""

    def __init__(self, target: Target) -> None:
        super().__init__()
        self._target = target

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            said = record.getMessage()
        except Exception:  # a call whose arguments do not fit: the handler reports it, as logging does
            return True
        shown = self._target.unechoed(said)
        if shown != said:
            record.msg, record.args = shown, ()
        return True


@contextlib.asynccontextmanager
async def connect(
    target: Target,
    *,
    answerer: Answerer | None,
    observed: Observed,
    timeout: float,
    roots: RootsCallback | None = None,
    versions: Sequence[str] | None = None,
    trace: Trace | None = None,
    sign_in: SignIn | None = None,
    tasks: bool = False,
    on_notification: NotificationCallback | None = None,
    log_level: str | None = None,
) -> AsyncIterator[Client]:
    """A connected ``Client`` for ``target``, signing in first as ``sign_in`` says (HTTP),
    declaring the tasks extension with ``tasks``; exceptions pass through as raised."""
    options: dict[str, Any] = {
        "timeout": timeout,
        "probe_timeout": min(timeout, 10.0),
        "tasks": tasks,
        "on_notification": on_notification,
        "progress": on_notification is not None,
        "log_level": log_level,
    }
    if versions:
        options["versions"] = list(versions)
    noise = _Noise(observed, target)
    logger = logging.getLogger(_NOISE_LOGGER)
    level = logger.level
    if logger.getEffectiveLevel() > logging.WARNING:
        logger.setLevel(logging.WARNING)
    logger.addFilter(noise)
    unechoed = _Unechoed(target)
    handlers = list(logging.getLogger().handlers)  # where the client's warnings are written
    for handler in handlers:
        handler.addFilter(unechoed)
    stdio: StdioTransport | None = None
    try:
        async with contextlib.AsyncExitStack() as stack:
            transport: Transport
            if target.url is not None:
                import httpx

                from mcp_elicit.cli.tls_env import check_tls_environment

                check_tls_environment()  # before a sign-in makes its own clients

                from mcp_elicit.cli.http_watch import Watch
                from mcp_elicit.transports.http_client import HttpTransport

                auth: httpx.Auth | None = None
                if sign_in is not None:
                    from mcp_elicit.cli import sign_in as signing

                    auth = await stack.enter_async_context(signing.oauth(sign_in, target, observed))
                http = httpx.AsyncClient(
                    transport=Watch(observed),
                    timeout=httpx.Timeout(connect=min(timeout, 10.0), read=None, write=60.0, pool=60.0),
                    follow_redirects=True,
                    auth=auth,
                )
                await stack.enter_async_context(http)
                transport = HttpTransport(target.url, headers=dict(target.headers), client=http, trace=trace)
            else:
                transport = stdio = StdioTransport(target.command, trace=trace)
            client = Client(transport, answerer=answerer, roots=roots, **options)
            async with client:
                observed.revision = client.revision
                yield client
    finally:
        for handler in handlers:
            handler.removeFilter(unechoed)
        logger.removeFilter(noise)
        logger.setLevel(level)
        if stdio is not None:  # closed by now: all it wrote, for explaining a failure
            observed.stderr_tail = target.unechoed(stdio.stderr_tail())  # its --token not repeated
            observed.stdout_noise_count = stdio.stdout_noise_count
