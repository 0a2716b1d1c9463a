"""``serve``'s options for ``--http``: where the MCP endpoint is and who may reach it
(``--path``, ``--allow-host``, ``--route``), how much a request may send and how long the
server waits (``--max-body``, ``--body-timeout``, ``--keepalive``, ``--verify-timeout``,
``--resume-within``: ``StreamableHTTP``'s keyword arguments of the same names), and how
long a stop waits for the requests still running (``--shutdown-grace``).

Rules:

* Each needs ``--http``: given without it (serving stdio, where it would do nothing), it
  is refused, saying so (exit 2).
* A size is a whole number of bytes, without a suffix (4 MiB is ``4194304``); a duration
  is a number of seconds (``2.5``). A value that is not such a number, is not finite, or
  is zero or below (below 0 for ``--shutdown-grace``, where 0 cancels at once) is refused
  before the server is loaded, on one line naming the option, the value and what it takes
  (exit 2). ``--max-body`` is at least 1024: no MCP request is smaller (an ``initialize``
  alone takes a few hundred bytes), so a smaller value is a slip (``4`` meant as MiB), not
  a limit. ``off`` turns a limit off where the keyword argument takes None
  (``--body-timeout``, ``--keepalive``, ``--verify-timeout``). ``--verify-timeout`` bounds
  the server's token verifier: for a server without ``auth=`` it is refused (it would
  bound nothing).
* A server that cannot be served over HTTP as it is (a tool needing scopes, and no
  ``auth=``) is refused as every configuration error is: ``cannot serve: ...``, exit 2.
* Not given, each keeps ``StreamableHTTP``'s default, which its help states (a test holds
  the two equal).
* None has an environment variable: as for ``--path`` or ``--route``, only the store and
  the state keys have one (``$MCP_ELICIT_STORE``, ``$MCP_ELICIT_STATE_KEYS``).

Reading them imports nothing of the HTTP stack: ``serve`` over stdio starts without it.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from mcp_elicit.cli.serve_http import SHUTDOWN_GRACE
from mcp_elicit.errors import CliError, ConfigError

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server
    from mcp_elicit.transports.http_server import StreamableHTTP

__all__ = ["DEFAULTS", "LEAST_BODY", "HttpOptions", "checked", "http_app", "register"]

#: ``StreamableHTTP``'s defaults, as the help states them (a test compares).
DEFAULTS: Final[dict[str, float]] = {
    "max_body": 4 * 1024 * 1024,
    "body_timeout": 30.0,
    "keepalive": 15.0,
    "verify_timeout": 10.0,
    "resume_within": 60.0,
}
#: The smallest ``--max-body``: below it, no MCP request fits.
LEAST_BODY: Final = 1024
#: Digits a ``--max-body`` may have (past them, a body could not declare its length).
_MOST_DIGITS: Final = 18

#: Each duration: its option, its keyword argument, what ``off`` (None) means ("": not
#: taken), its help.
_DURATIONS: Final = (
    (
        "--body-timeout",
        "body_timeout",
        "no limit",
        "seconds a request body has to arrive in full, from its first bytes: beyond, 408 and "
        "the connection is closed (a client that stalls or trickles holds nothing); the "
        "URL-mode pages' forms too",
    ),
    (
        "--keepalive",
        "keepalive",
        "never",
        "seconds of silence after which a response still running (a question waiting for a "
        "person) or a session's stream gets an SSE comment, so that a proxy's idle timeout does "
        "not cut it",
    ),
    (
        "--verify-timeout",
        "verify_timeout",
        "no limit",
        "seconds the server's token verifier (Server(auth=...)) has to answer: beyond, the "
        "request is refused with 503 and Retry-After",
    ),
    (
        "--resume-within",
        "resume_within",
        "",
        "seconds a 2025-11-25 client has to come back (Last-Event-ID) for a stream that dropped "
        "while its request runs, and that a finished stream's answer is kept for it",
    ),
)

#: What each option is, said when it comes without ``--http`` (in the order checked).
_WHAT: Final = {
    "path": "--path is the MCP endpoint's path over HTTP",
    "allow_host": "--allow-host names the Hosts HTTP requests may use",
    "route": "--route names this instance in its HTTP session ids",
    "max_body": "--max-body limits HTTP request bodies",
    **{name: f"{option} is a limit of serving over HTTP" for option, name, _, _ in _DURATIONS},
    "shutdown_grace": "--shutdown-grace is how long the HTTP server's stop waits for requests",
}


@dataclass(frozen=True)
class HttpOptions:
    """What ``serve --http`` was told, checked."""

    path: str = "/mcp"
    allow_host: tuple[str, ...] = ()
    route: str | None = None
    #: ``StreamableHTTP``'s limits given on the command line (None: ``off``); the others
    #: keep its defaults.
    limits: dict[str, Any] = field(default_factory=dict)
    shutdown_grace: float = SHUTDOWN_GRACE


def register(serve: argparse.ArgumentParser) -> None:
    """Add the options to ``serve``'s parser, as a group of their own."""
    group = serve.add_argument_group("with --http")
    group.add_argument("--path", help="the MCP endpoint path (default /mcp)")
    group.add_argument(
        "--allow-host",
        action="append",
        default=[],
        type=_host,
        metavar="HOST",
        help="accept this Host/Origin besides loopback (repeatable; '*' turns the check off)",
    )
    group.add_argument(
        "--route",
        metavar="NAME",
        help="behind a load balancer: start every 2025-11-25 session id with NAME and a dot "
        "(a.<random>), so the balancer can send a session's requests to this instance by the "
        "Mcp-Session-Id prefix (1-32 letters, digits, '-', '_'; one per instance; README, 'Several instances')",
    )
    group.add_argument(
        "--max-body",
        metavar="BYTES",
        help="the largest request body taken, in bytes, without a suffix (413 beyond; "
        f"at least {LEAST_BODY}; default {int(DEFAULTS['max_body'])}, 4 MiB)",
    )
    for option, name, off, said in _DURATIONS:
        default = f"default {DEFAULTS[name]:g}"
        group.add_argument(
            option, metavar="SECONDS", help=f"{said} ({f'off: {off}; ' if off else ''}{default})"
        )
    group.add_argument(
        "--shutdown-grace",
        metavar="SECONDS",
        help="at SIGTERM or Ctrl-C, how long the requests still running get to finish before "
        f"they are cancelled, each answering 503 (0: at once; default {SHUTDOWN_GRACE:g})",
    )


def checked(args: argparse.Namespace) -> HttpOptions | None:
    """The options given with ``--http``, checked (None without ``--http``); a
    ``CliError`` (exit 2) for one that cannot work, or one given without ``--http``."""
    if args.http is None:
        for name, said in _WHAT.items():
            if getattr(args, name):
                raise CliError(f"{said}: it needs --http", exit_code=2)
        return None
    if args.path is not None and not args.path.startswith("/"):  # no request's path could match it
        raise CliError(f"--path must start with '/' (as /mcp does), not {args.path!r}", exit_code=2)
    if args.route is not None:
        from mcp_elicit.transports.http_sessions import route_prefix

        try:
            route_prefix(args.route)
        except ConfigError as exc:
            raise CliError(f"--route: {exc}", exit_code=2) from None
    limits: dict[str, Any] = {}
    if args.max_body is not None:
        limits["max_body"] = _bytes("--max-body", args.max_body)
    for option, name, off, _ in _DURATIONS:
        text = getattr(args, name)
        if text is not None:
            limits[name] = _seconds(option, text, off=off)
    grace = SHUTDOWN_GRACE
    if args.shutdown_grace is not None:
        grace = float(_seconds("--shutdown-grace", args.shutdown_grace, off="", zero=True) or 0)
    return HttpOptions(
        path=args.path or "/mcp",
        allow_host=tuple(args.allow_host),
        route=args.route,
        limits=limits,
        shutdown_grace=grace,
    )


def http_app(server: Server, options: HttpOptions) -> StreamableHTTP:
    """The app ``serve --http`` runs: ``server`` with the ``options`` given. ``CliError``
    (exit 2) for what only the loaded server tells: a ``--verify-timeout`` with no
    verifier to bound, or a server that cannot be served over HTTP as it is (a tool
    needing scopes without ``auth=``)."""
    from mcp_elicit.transports.http_server import LOOPBACK_HOSTS, StreamableHTTP

    if "verify_timeout" in options.limits and server.auth is None:
        raise CliError(
            f"--verify-timeout bounds the token verifier's answer, and server {server.name!r} has "
            "none (no Server(auth=...)): leave it out",
            exit_code=2,
        )
    allowed = [*LOOPBACK_HOSTS, *options.allow_host]
    try:
        return StreamableHTTP(
            server, path=options.path, allowed_hosts=allowed, route=options.route, **options.limits
        )
    except ConfigError as exc:
        raise CliError(f"cannot serve: {exc}", exit_code=2) from None


def _bytes(option: str, text: str) -> int:
    """``text`` as a number of bytes, from ``LEAST_BODY``."""
    word = text.strip()
    if not (word.isascii() and word.isdigit()):
        said = "a whole number of bytes, without a suffix"
    elif len(word) > _MOST_DIGITS:
        said = f"a number of bytes of at most {_MOST_DIGITS} digits"
    elif int(word) < LEAST_BODY:
        said = f"{LEAST_BODY} bytes or more: no MCP request is smaller"
    else:
        return int(word)
    raise CliError(f"{option} {text!r}: expected {said} (4 MiB is {4 * 1024 * 1024})", exit_code=2)


def _seconds(option: str, text: str, *, off: str, zero: bool = False) -> float | None:
    """``text`` as seconds; None for ``off`` where ``off`` says what that means."""
    word = text.strip()
    if off and word.lower() == "off":
        return None
    try:
        value = float(word)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and (value >= 0 if zero else value > 0):
        return value
    takes = "a number of seconds, 0 or more" if zero else "a number of seconds above 0"
    raise CliError(f"{option} {text!r}: expected {takes}{f', or off ({off})' if off else ''}", exit_code=2)


def _host(text: str) -> str:
    """An ``--allow-host`` value: a Host name (or ``*``) a request could carry."""
    from mcp_elicit.transports.host_check import allowed_host

    try:
        return allowed_host(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
