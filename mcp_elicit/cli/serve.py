"""``mcp-elicit serve``: its options, and serving an mcp_elicit ``Server`` over stdio or
Streamable HTTP as they say.

Rules: a bad option (``--max-calls-per-minute``, the HTTP options of
``cli.serve_http_options``) is said before the server is loaded; the state keys come from
``--state-key-file`` (refused when others may change it), else ``$MCP_ELICIT_STATE_KEYS``;
URL mode's store from ``--store``, else ``$MCP_ELICIT_STORE``, else the server's own, its
URL logged redacted. Over stdio, nothing but JSON-RPC goes to stdout: what the server's
module prints while it loads goes to stderr, as the log does, and a person who started it
by hand in a terminal is told on stderr what it is waiting for. The key ring, the loader
and the HTTP server are imported when the command runs, not when the parser is built.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_elicit.cli.log_lines import InertFormatter, ShownHandler
from mcp_elicit.errors import CliError, ConfigError

if TYPE_CHECKING:
    from mcp_elicit.sealing import KeyRing
    from mcp_elicit.server.app import Server

__all__ = ["KEYGEN_PRIVATE", "STATE_KEYS_ENV", "STORE_ENV", "register", "run"]

STATE_KEYS_ENV = "MCP_ELICIT_STATE_KEYS"
STORE_ENV = "MCP_ELICIT_STORE"
#: How to make a key file that only its owner may read (keygen prints the keys).
KEYGEN_PRIVATE = "(umask 077; mcp-elicit keygen > state.keys)"
log = logging.getLogger("mcp_elicit.cli")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``serve`` and its options to the subcommands ``sub``."""
    from mcp_elicit.cli import serve_http_options

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


def run(args: argparse.Namespace) -> int:
    """``mcp-elicit serve``: load the server, configure it from the options, serve it."""
    from mcp_elicit.cli.address import split_address
    from mcp_elicit.cli.loader import load_server
    from mcp_elicit.cli.serve_http_options import checked

    http = checked(args)  # before the server is loaded: a bad option is said at once
    calls = _per_minute(args.max_calls_per_minute)
    if args.http is None:  # started with fd 2 closed: /dev/null takes its number first
        from mcp_elicit.transports.stdio_stderr import quiet_stderr

        quiet_stderr()
    handler = ShownHandler(sys.stderr)
    handler.setFormatter(InertFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
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
