"""``mcp-elicit``: serve a server, generate a state key; test one (``check``) and talk to
one (``call``, ``prompt``, ``read``), registered from their own modules.

Rules: every error ends with a message on stderr and the exit code its ``CliError``
carries (2 for usage and configuration problems), and with ``--json`` also a JSON object
on stdout saying so (``ok``, ``exit_code``, ``error``), argparse's own errors included; that message and the client's warnings
may quote a server, so what could act on a terminal is shown instead. Nothing but JSON-RPC
ever goes to stdout when serving over stdio. SIGTERM stops a client command as Ctrl-C
does (the request cancelled, a stdio server stopped), with exit 143 instead of 130, and so
does SIGHUP, with 129 (``cli.stop_signals``); with
``--json`` either says so in the same JSON object, a Ctrl-C while the command line is still
read too (when ``--json`` is among the words before ``--``, as for argparse's errors), or
while this module is imported (``cli.entry``, where the console script starts). Once stdout's reader has gone away
(``| head -1``), a command stops quietly with 141, the 128 + SIGPIPE a shell shows for a
process SIGPIPE ended, as 130 and 143 are for SIGINT and SIGTERM. Everything after the first ``--`` is a server
command (the stdio TARGET of the client commands), never an option of ours. Positional words that argparse
leaves over after options (``call URL --json TOOL x=1``) are given back to the command.
What only one command needs is imported by that command (the key ring, the loader, the
HTTP stack), so that ``check`` over stdio starts without them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import shlex
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from mcp_elicit.cli import stop_signals
from mcp_elicit.errors import CliError, ConfigError, UsageError

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

    from mcp_elicit.cli.targets import Target
    from mcp_elicit.sealing import KeyRing
    from mcp_elicit.server.app import Server

__all__ = ["EXIT_BROKEN_PIPE", "main", "reader_gone", "stopped_at_start"]

STATE_KEYS_ENV = "MCP_ELICIT_STATE_KEYS"
STORE_ENV = "MCP_ELICIT_STORE"
#: How to make a key file that only its owner may read (keygen prints the keys).
KEYGEN_PRIVATE = "(umask 077; mcp-elicit keygen > state.keys)"
log = logging.getLogger("mcp_elicit.cli")


class _ParseError(Exception):
    """argparse's own error, held until ``_parse`` has given it as JSON when asked."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with two changes: its errors are held (``_ParseError``), and a
    help that meets stdout's closed pipe (``--help | head -1``) fails as every command's
    output does (``main``: 141), where argparse would forget the failure and exit 0."""

    def error(self, message: str) -> NoReturn:
        raise _ParseError(self, message)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if not message:
            return
        try:
            (file or sys.stderr).write(message)
        except BrokenPipeError:
            if file is sys.stdout:  # --help's reader gone away: main ends with 141
                raise
        except (AttributeError, OSError):  # what argparse's own tolerates (no stderr at all)
            pass

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Also says in the namespace which parser left words over: a command's, whose
        usage ``_parse`` then shows, else (words before the command) the top level's."""
        parsed, extra = super().parse_known_args(args, namespace)
        if extra:
            vars(parsed).setdefault(_LEFT_OVER_BY, self)
        return parsed, extra


class _Version(argparse.Action):
    """``--version``: the release of the installed distribution (what pip shows, and what
    the client's ``clientInfo`` says), looked up only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from mcp_elicit.client.options import package_version

        parser._print_message(f"{parser.prog} {package_version()}\n", sys.stdout)
        parser.exit()


#: The attribute naming the parser that left words over (``_Parser.parse_known_args``).
_LEFT_OVER_BY = "_mcp_elicit_left_over_by"


def _parser() -> argparse.ArgumentParser:
    from mcp_elicit.cli import call, check, serve_http_options

    parser: argparse.ArgumentParser = _Parser(
        prog="mcp-elicit",
        description="MCP elicitation toolkit",
        epilog="exit codes: 0 success, 1 the server answered but something is wrong (an error result), "
        "2 usage or configuration (a server file that cannot be loaded), 3 cannot connect, sign in or "
        "start the server, or not an MCP server, 4 the server broke the protocol, 130 interrupted (Ctrl-C), 143 terminated "
        "(SIGTERM, client commands), 129 hung up (SIGHUP, client commands), 141 stdout's reader went away (| head), nothing said; "
        "'mcp-elicit COMMAND --help' says what each means for that command",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show the installed release and exit")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser(
        "serve",
        help="serve an mcp_elicit Server over stdio or Streamable HTTP",
        epilog="exit codes: 0 stopped (stdin closed, or SIGTERM), 2 the server cannot be "
        "loaded, a bad option, key file or store, or the address cannot be bound, 130 interrupted (Ctrl-C)",
    )
    serve.add_argument("target", help="path/to/app.py or package.module, optionally :NAME")
    serve.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP here instead of stdio")
    serve.add_argument(
        "--state-key-file",
        type=Path,
        help=f"keys sealing requestState and URL mode's secrets (else ${STATE_KEYS_ENV}; else, on the "
        "default store, a key file made next to it; else a random per-process key)",
    )
    serve.add_argument(
        "--store",
        metavar="URL",
        help="where URL mode keeps flows, secrets, tokens and single-use markers: sqlite:///path, "
        f"redis://host:port/db (several instances), memory:// (else ${STORE_ENV}, else a SQLite file "
        "in the user data directory)",
    )
    serve.add_argument(
        "--public-url",
        metavar="URL",
        help="the base of the URL-mode page links, as browsers reach this server, e.g. "
        "https://mcp.example.com (default: the server's own Server(public_url=...); else with --http: "
        "http://HOST:PORT of the bound address, "
        "0.0.0.0 and :: read as 127.0.0.1; with --allow-host: the Host of each MCP request)",
    )
    serve.add_argument(
        "--redact-tool-errors",
        action="store_true",
        help="send a tool's unexpected exception as 'Error executing tool NAME' and a reference "
        "its log line holds, never its message, and a validator's own message about an argument "
        "(of a tool, a prompt or a resource template) as withheld, with a reference, pydantic's "
        "words about the value kept (as "
        "Server(redact_tool_errors=True) does)",
    )
    serve.add_argument(
        "--max-calls-per-minute",
        metavar="N",
        help="limit how often one caller (a principal; else every unauthenticated caller "
        "together) calls tools: a tenth of N at once, then N a minute; gets prompts and reads "
        "resources 10 times as often, and completes 30 times as often (as "
        "Server(max_calls_per_minute=N) does, replacing the server's own limit)",
    )
    serve.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="what serve logs to stderr (default: info; debug adds the HTTP access log)",
    )

    serve_http_options.register(serve)  # --path, --allow-host, --route, limits and waits

    keygen = sub.add_parser("keygen", help="print a new requestState key file")
    keygen.set_defaults(command="keygen")

    check.register(sub)
    call.register(sub)
    return parser


def _state_keys(path: Path | None) -> KeyRing | None:
    """The keys of ``--state-key-file`` (refused when others may change it, used with a
    warning when they may read it: ``key_file.check_given``), else of
    ``$MCP_ELICIT_STATE_KEYS``; None when neither is given."""
    from mcp_elicit.sealing import KeyRing
    from mcp_elicit.server.key_file import check_given

    where = f"--state-key-file {str(path)!r}" if path is not None else f"${STATE_KEYS_ENV}"
    try:
        if path is not None:
            with open(path, encoding="utf-8") as file:
                readable = check_given(path, os.fstat(file.fileno()))
                if readable is not None:
                    logging.getLogger("mcp_elicit.cli").warning("%s", readable)
                text: str | None = file.read()
        else:
            text = os.environ.get(STATE_KEYS_ENV) or None
    except UnicodeDecodeError:
        raise CliError(
            f"{where} is not UTF-8 text: a key file holds hex or base64 keys, one per line "
            f"(make one with '{KEYGEN_PRIVATE}')",
            exit_code=2,
        ) from None
    except OSError as exc:
        raise CliError(f"cannot read the state key file {str(path)!r}: {exc}", exit_code=2) from None
    except ConfigError as exc:  # others may change it
        raise CliError(str(exc), exit_code=2) from None
    if text is None:
        return None
    try:
        return KeyRing.from_text(text)
    except ConfigError as exc:
        raise CliError(
            f"invalid state keys in {where}: {exc} (make a key file with "
            f"'{KEYGEN_PRIVATE}' and give every instance the same one)",
            exit_code=2,
        ) from None


def _serve(args: argparse.Namespace) -> int:
    from mcp_elicit.cli.address import split_address
    from mcp_elicit.cli.loader import load_server
    from mcp_elicit.cli.serve_http_options import checked

    http = checked(args)  # before the server is loaded: a bad option is said at once
    calls = _per_minute(args.max_calls_per_minute)
    if args.http is None:  # started with fd 2 closed: /dev/null takes its number first
        from mcp_elicit.transports.stdio_stderr import quiet_stderr

        quiet_stderr()
    handler = _ShownHandler(sys.stderr)
    handler.setFormatter(_InertFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=args.log_level.upper(), handlers=[handler])
    if args.http is None:  # stdio: stdout is the protocol's, so what the module prints is a log line
        with contextlib.redirect_stdout(sys.stderr):
            server = load_server(args.target)
    else:
        server = load_server(args.target)
    if args.redact_tool_errors:  # else the server's own setting stays
        server.redact_tool_errors = True
    if calls is not None:
        server.limit_tool_calls(calls)
    keys = _state_keys(args.state_key_file)
    if keys is not None:
        server.set_state_keys(keys)  # else the server says at start-up what seals (Server.start)
    address = split_address(args.http) if args.http is not None else None
    given_public = args.public_url is not None or server.url_mode.public_url is not None  # not derived
    _configure_url_mode(server, args, address)
    if address is None:
        from mcp_elicit.transports.stdio_serve import serve_stdio

        _say_stdio_to_a_person(server, args.target)
        try:
            asyncio.run(serve_stdio(server))
        except ConfigError as exc:
            raise CliError(f"cannot serve: {exc}", exit_code=2) from None
        return 0
    from mcp_elicit.cli.serve_http import serve_http

    assert http is not None
    return serve_http(server, address, http, args.log_level, given_public=given_public)


def _say_stdio_to_a_person(server: Server, target: str) -> None:
    """``serve`` over stdio started by hand in a terminal, where nothing shows that it runs
    nor what talks to it: one line on stderr saying so (never on stdout, the protocol's;
    never when a client started it, its stdin then a pipe)."""
    try:
        by_hand = sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed, or replaced by an object without it
        return
    if by_hand:
        shown = shlex.quote(target)
        print(
            f"mcp-elicit: serving {server.name!r} over stdio: an MCP client starts this command and "
            f"speaks JSON-RPC on its stdin and stdout. Try it with: mcp-elicit check -- mcp-elicit "
            f"serve {shown}, or serve it over HTTP: mcp-elicit serve {shown} --http 127.0.0.1:8000. "
            "Ctrl-C stops it.",
            file=sys.stderr,
            flush=True,
        )


def _per_minute(text: str | None) -> float | None:
    """``--max-calls-per-minute``, checked as ``Server(max_calls_per_minute=)`` is, said on
    one line in the command line's words (not argparse's usage, nor Python's None)."""
    from mcp_elicit.server.options import LEAST_PER_MINUTE, MOST_PER_MINUTE, per_minute

    if text is None:
        return None
    try:
        return per_minute("--max-calls-per-minute", float(text))
    except (ValueError, ConfigError):
        raise CliError(
            f"--max-calls-per-minute {text!r}: expected a number of calls a minute from "
            f"{LEAST_PER_MINUTE:g} to {MOST_PER_MINUTE:,}",
            exit_code=2,
        ) from None


def _configure_url_mode(server: Server, args: argparse.Namespace, address: tuple[str, int] | None) -> None:
    """``--store`` (else ``$MCP_ELICIT_STORE``, else the server's own) and ``--public-url``
    (else the server's own, else, over HTTP reached by loopback names only, the bound
    address)."""
    store = (args.store or os.environ.get(STORE_ENV) or "").strip() or None
    named = "--store" if args.store else f"${STORE_ENV}"
    try:
        server.configure_url_mode(store=store)
    except ConfigError as exc:
        raise CliError(f"{named}: {exc}", exit_code=2) from None
    try:
        server.configure_url_mode(public_url=args.public_url)
    except ConfigError as exc:
        raise CliError(f"--public-url: {exc}", exit_code=2) from None
    derive = args.public_url is None and server.url_mode.public_url is None  # the server's own stays
    if derive and address is not None and not args.allow_host:
        # derived, not given: plain http off loopback (a LAN test) is warned about at start-up
        from mcp_elicit.cli.address import default_public_url

        derived = default_public_url(*address)
        try:
            server.url_mode.configure(public_url=derived, from_address=True)
        except ConfigError as exc:  # a host no link can name (a zone id, a non-ASCII name, a space)
            raise CliError(
                f"--http {args.http}: the pages' links cannot be made from it ({exc}); give the URL "
                "clients reach this server at with --public-url",
                exit_code=2,
            ) from None
    if store is not None:
        from mcp_elicit.stores.redis import redact_url

        log.info("URL mode keeps its state in %s", redact_url(store))


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    from mcp_elicit.cli.targets import split_command

    parser = _parser()
    words, command = split_command(sys.argv[1:] if argv is None else argv)
    try:
        args, extra = parser.parse_known_args(words)
        left_over_by = vars(args).pop(_LEFT_OVER_BY, parser)
        if extra and (not hasattr(args, "words") or any(word.startswith("-") for word in extra)):
            left_over_by.error(f"unrecognized arguments: {' '.join(extra)}")
    except _ParseError as exc:
        if "--json" in words:
            from mcp_elicit.cli import output

            output.print_failure(UsageError(exc.message), None)
        argparse.ArgumentParser.error(exc.parser, exc.message)  # usage on stderr, exit 2
    args.server_command = command
    if extra:
        args.words = [*args.words, *extra]
    return args


class _InertFormatter(logging.Formatter):
    """Log lines with every character that could act on a terminal shown instead, and a
    message on one line: a server's log quotes what clients send (a tool's own log lines
    its arguments), a client's warnings what servers send, and either could otherwise
    forge a line or act on the terminal. A traceback keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return _inert(super().formatMessage(record), multiline=False)

    def formatException(self, ei: Any) -> str:
        return _inert(super().formatException(ei), multiline=True)

    def formatStack(self, stack_info: str) -> str:
        return _inert(super().formatStack(stack_info), multiline=True)


def _inert(text: str, *, multiline: bool) -> str:
    from mcp_elicit.ui.form_text import clean  # on the first line logged, not at start-up

    return clean(text, multiline=multiline)


class _ShownHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Log lines as stderr's encoding can show them (``server_text.for_encoding``): a
    warning quoting a server's Chinese on an ASCII-only terminal, not logging's traceback."""

    def format(self, record: logging.LogRecord) -> str:
        from mcp_elicit.ui.server_text import for_encoding

        return for_encoding(super().format(record), getattr(self.stream, "encoding", None))


def _client_logging(args: argparse.Namespace) -> None:
    """Warnings from the client on stderr, briefly."""
    handler = _ShownHandler(sys.stderr)
    handler.setFormatter(_InertFormatter("mcp-elicit: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])


#: The exit code once stdout's reader has gone away (``| head -1``): 128 + SIGPIPE, what a
#: shell shows for a process that SIGPIPE ended, as 130 and 143 are for SIGINT and SIGTERM.
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; its exit code. Once stdout's reader has gone away, the
    command stops there, says nothing (where would it, and about what) and exits 141, as
    Python's documentation of SIGPIPE advises: stdout is pointed at /dev/null, so that
    what is still buffered cannot fail again at exit ("Exception ignored")."""
    try:
        try:
            return _main(argv)
        finally:  # argparse's exits too: what is buffered meets the closed pipe here
            if sys.stdout is not None:
                sys.stdout.flush()
    except BrokenPipeError:
        return reader_gone()


def reader_gone() -> int:
    """``EXIT_BROKEN_PIPE``, once stdout's reader has gone away, with stdout pointed at
    /dev/null first (``main``; a script running commands stops so too)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    stop_signals.terminated.clear()
    try:
        args = _parse(argv)  # imports the commands' modules: a Ctrl-C may come meanwhile
    except KeyboardInterrupt:
        return stopped_at_start(sys.argv[1:] if argv is None else argv)
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "keygen":
            from mcp_elicit.sealing import KeyRing

            print(KeyRing.generate().export_text(), end="")
            return 0
        if hasattr(args, "handler"):
            _client_logging(args)
            with stop_signals.stopping():
                code: int = args.handler(args)
            return code
    except CliError as exc:
        from mcp_elicit.cli.targets import Target
        from mcp_elicit.ui.form_text import clean

        if isinstance(target := getattr(args, "target", None), Target):  # no --header value it repeats
            exc.args = (target.unechoed(str(exc)),)

        if getattr(args, "json", False):  # a machine reading stdout gets JSON, whatever failed
            from mcp_elicit.cli import output

            output.print_failure(exc, getattr(args, "target", None))

        # the message may quote a server (its name, a URL, an error text): made inert, and
        # written as stderr's encoding can show it
        from mcp_elicit.cli.output import write

        write(f"mcp-elicit: {clean(str(exc), multiline=True)}", sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        if getattr(args, "json", False):  # JSON on every outcome, this one too
            _print_stopped(getattr(args, "target", None))
        return stop_signals.exit_code()
    return 2


def stopped_at_start(argv: Sequence[str]) -> int:
    """The end of a command a Ctrl-C stopped before it ran (while the command line was read,
    or this module imported: ``cli.entry``): 130, and with ``--json`` among the words before
    ``--`` (as ``_parse`` reads them) the JSON object saying so."""
    from mcp_elicit.cli.targets import split_command

    if "--json" in split_command(argv)[0]:
        _print_stopped(None)
    return 130


def _print_stopped(target: Target | None) -> None:
    """``--json``'s object for a command stopped by Ctrl-C, SIGTERM or SIGHUP (``target``
    None when it came before the TARGET was read)."""
    from mcp_elicit.cli import output

    output.print_failure(CliError(stop_signals.said(), exit_code=stop_signals.exit_code()), target)
