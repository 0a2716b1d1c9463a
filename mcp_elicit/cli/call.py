"""``mcp-elicit call`` (and ``prompt``, ``read``): one request as an elicitation-capable
client, every question the server asks on the way answered, the result printed::

    mcp-elicit call http://127.0.0.1:8000/mcp book_table restaurant=noma
    mcp-elicit call book_table restaurant=noma -- mcp-elicit serve examples/demo_server.py
    mcp-elicit prompt plan_evening city=Oslo -- mcp-elicit serve examples/demo_server.py
    mcp-elicit read bookings://menu/noma --answers answers.json -- mcp-elicit serve ...

``--root DIR`` (repeatable) declares the roots capability and answers ``roots/list``
with those directories. A server over HTTP that wants OAuth gets a sign-in first
(``cli.sign_in``). Who answers: ``--answers FILE`` (a script,
``client.answerers.Scripted``); else the terminal answerer when stdin and stderr are
terminals (or ``--ui terminal``); a page in the browser with ``--ui web``
(``ui.web.WebAnswerer``); else nobody, and the client declares no elicitation capability
(``--ui none``). Scripted and browser rounds are printed on stderr as they happen; the
result goes to stdout. ``call`` declares the tasks extension (2026-07-28): a tool call the
server turns into a task is followed to its end, its questions answered the same way.
What the server says meanwhile goes to stderr as it comes: the task's course, progress,
log messages (asked for from ``--log-level LEVEL`` up, since a server need send none
unasked; by default none is asked for, as the MCP Inspector's CLI and the SDKs' clients set
no level of their own, a level set changing what the server does), each on a line and cut short (with ``--json``, also whole under
``notifications`` when the call succeeds, the first of them: ``output.Heard``); at most ``LOG_LINES`` log messages, then one line
at the end says how many more came; fewer, but some left out of ``--json``, that line says so. A tool result is checked
against the tool's listed ``outputSchema``: a mismatch is a warning on stderr
(``output_mismatch`` in ``--json``), like a stdio server's stray output, and so is an argument
name the tool's input schema does not list but allows (``unknown_arguments``; one it refuses
is a usage error before the call, as is leaving out an argument its object schema requires). A call that declared no elicitation for want of a terminal
says so on stderr, with what to give instead (not with ``--json``). ``--json``'s object opens with ``ok`` and ``exit_code``, as
``check``'s report and every failure's do; warnings are on stderr with it too.

Exit codes: 0 a result (declined and cancelled questions are results too), 1 the tool
reported an error (``isError``) or the server answered with a JSON-RPC error, 2 usage,
3 could not connect, sign in or start the server, 4 protocol violation, 130 Ctrl-C, 143 SIGTERM
(``cli.main``: either stops a stdio server), 141 stdout's reader went away.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from mcp_elicit.cli import output
from mcp_elicit.cli.diagnose import explain, noise_note
from mcp_elicit.cli.era_hints import capability_words, tool_error_note
from mcp_elicit.cli.options import (
    Once,
    add_connection_options,
    client_options,
    missing_names,
    parse_args_target,
    parse_pairs,
    unknown_names,
)
from mcp_elicit.cli.recorded import Recorded
from mcp_elicit.cli.sign_in import SignIn
from mcp_elicit.cli.targets import Observed, Target, connect
from mcp_elicit.cli.tool_schemas import output_mismatch, tool_schemas
from mcp_elicit.cli.url_steps import unfollowed
from mcp_elicit.client import Answerer, Scripted
from mcp_elicit.client.answerers import RootsCallback
from mcp_elicit.errors import (
    CheckFailed,
    CliError,
    ConfigError,
    MethodNotFound,
    MissingClientCapability,
    UsageError,
)
from mcp_elicit.ui.form_text import clean
from mcp_elicit.ui.terminal import TerminalAnswerer
from mcp_elicit.url_redaction import hidden_parts, redact_uri, uri_redacted
from mcp_elicit.wire.meta import LOG_LEVELS

__all__ = ["Recorded", "register", "run_request"]

_KINDS = {
    "call": ("tools/call", "TOOL", "call a tool as an elicitation-capable client and print the result"),
    "prompt": ("prompts/get", "PROMPT", "get a prompt as an elicitation-capable client and print it"),
    "read": ("resources/read", "URI", "read a resource as an elicitation-capable client and print it"),
}
_EXAMPLES = {
    "call": "book_table restaurant=noma",
    "prompt": "plan_evening city=Oslo",
    "read": "bookings://menu/noma",
}


#: What each command's words are, as its help says.
_WORDS_HELP: Final = {
    "call": "NAME=VALUE is text unless the tool's input schema says otherwise; NAME:=JSON is JSON",
    "prompt": "NAME=VALUE gives an argument, always text (prompt arguments are strings)",
    "read": "the URI of the resource to read (no arguments)",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for command, (method, what, help_text) in _KINDS.items():
        parser = sub.add_parser(
            command,
            help=help_text,
            description=textwrap.fill(
                f"{help_text[0].upper()}{help_text[1:]}. TARGET is an http(s):// URL given first, or -- "
                "followed by the command that starts a stdio server, given last. A server over HTTP that "
                "asks for OAuth gets a sign-in in your browser (after you say yes).",
                width=80,
            ),
            epilog=(
                "examples:\n"
                f"  mcp-elicit {command} http://127.0.0.1:8000/mcp {_EXAMPLES[command]}\n"
                f"  mcp-elicit {command} {_EXAMPLES[command]} -- mcp-elicit serve examples/demo_server.py\n"
                f"  mcp-elicit {command} https://mcp.example.com/mcp {_EXAMPLES[command]}   "
                "# signs in if the server asks\n\n"
                "exit codes: 0 a result, 1 an error result, 2 usage, 3 cannot connect, sign in or start the server,\n"
                "  or not an MCP server (a web page, plain text, a legacy HTTP+SSE server), 4 protocol violation,\n"
                "  130 interrupted (Ctrl-C), 143 terminated (SIGTERM), 129 hung up (SIGHUP); a stdio server is\n"
                "  stopped each way, 141 stdout's reader went away (| head)"
            ),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        usage = f"TARGET {what}" + (" [NAME=VALUE ...]" if command != "read" else "")
        parser.add_argument(
            "words",
            nargs="*",
            metavar=usage,
            help=_WORDS_HELP[command],
        )
        if command != "read":
            parser.add_argument(
                "--args", action=Once, metavar="JSON", help="the arguments as one JSON object"
            )
        parser.add_argument(
            "--answers", metavar="FILE", help="answer the server's questions from this script"
        )
        parser.add_argument(
            "--ui",
            choices=["auto", "terminal", "web", "none"],
            default="auto",
            help="who answers without --answers: the terminal (auto: when there is one), "
            "a page in your browser (web), or nobody",
        )
        parser.add_argument(
            "--root",
            action="append",
            default=[],
            metavar="DIR",
            help="declare the roots capability and give the server this directory as a root (repeatable)",
        )
        parser.add_argument(
            "--log-level",
            choices=[*LOG_LEVELS, "off"],
            default="off",
            metavar="LEVEL",
            help="ask the server for its log messages of this level and above (debug, info, notice, warning, "
            "error, critical, alert, emergency) and print them; default off: none is asked for (those a "
            "server sends unasked are printed still)",
        )
        add_connection_options(parser, timeout=30.0)
        parser.set_defaults(handler=_main, method=method)


def _main(args: argparse.Namespace) -> int:
    words = list(args.words)
    what = _KINDS[args.command][1]
    if args.server_command is None:
        if not words:
            raise UsageError("give the server: an http(s):// URL first, or -- and its command last")
        later = next((word for word in words[1:] if _is_url(word)), None)
        if not _is_url(words[0]) and later is not None:
            hidden = hidden_parts(later)  # its password or key shown REDACTED, as every line does
            written = f" (REDACTED hides {hidden}: write it out as you gave it)" if hidden else ""
            raise UsageError(
                f"the URL comes first: mcp-elicit {args.command} {redact_uri(later)} {words[0]} ...{written}"
            )
        url: str | None = words.pop(0)
    elif words and _is_url(words[0]) and (args.command != "read" or len(words) > 1):
        url = words.pop(0)  # a URL and a command: parse_target says to give one (a read's URI may be a URL)
    else:
        url = None
    target = args.target = parse_args_target(
        args, url, stdio_usage=f"{args.command} {what} ... --", then=words
    )
    if not words:
        raise UsageError(f"give the {what.lower()} after the TARGET")
    name, pairs = words[0], words[1:]
    for word in [*words, getattr(args, "args", None) or ""]:
        _utf8(word)
    if args.method == "resources/read" and pairs:
        raise UsageError("read takes one URI and no arguments")
    given = parse_pairs(pairs, base=getattr(args, "args", None))  # usage errors before connecting
    if args.method == "prompts/get":
        _text_only(given)
    roots = _root_list(args.root)
    answerer = _answerer(args)
    recorded = (
        Recorded(answerer, echo=not isinstance(answerer, TerminalAnswerer), unechoed=target.unechoed)
        if answerer is not None
        else None
    )
    outcome = asyncio.run(
        run_request(
            target,
            args.method,
            name,
            pairs=pairs,
            base=getattr(args, "args", None),
            answerer=recorded,
            roots=roots,
            log_level=None if args.log_level == "off" else args.log_level,
            listing=args.json,
            **client_options(args, target),
        )
    )
    result = outcome["result"]
    code = 1 if result.get("isError") is True else 0
    if args.json:  # ok and exit_code first, as in check's report and every failure's object
        rounds = recorded.rounds if recorded is not None else []
        output.print_json({"ok": code == 0, "exit_code": code, **outcome, "rounds": rounds})
    else:
        if result.get("isError") is True:
            output.write("mcp-elicit: the tool reported an error:", sys.stderr)
        output.print_result(args.method, result)
    if answerer is None and args.ui == "auto" and not args.json:  # the person did not choose it
        sys.stdout.flush()  # a reader gone away (| head) ends the command here, nothing said
        output.write(f"mcp-elicit: note: {_NOBODY_ANSWERS}", sys.stderr)
    if note := tool_error_note(result, outcome["revision"]):
        output.write(f"mcp-elicit: note: {note}", sys.stderr)
    if outcome.get("noise"):
        output.write(f"mcp-elicit: warning: {outcome['noise']}", sys.stderr)
    if outcome.get("output_mismatch"):
        output.write(f"mcp-elicit: warning: {clean(outcome['output_mismatch'])}", sys.stderr)
    return code


#: Why a call declared no elicitation, and what to do: said when the server needed an answer
#: (-32021), and as a note after a call the server (or its tool) coped without one.
_NOBODY_ANSWERS: Final = (
    "this call declared no elicitation: with no terminal on stdin and stderr (or --ui none), "
    "nothing could answer the server's questions. Give --answers FILE, or --ui web."
)


#: The most log messages (``notifications/message``) a call prints; one line at its end
#: says how many more came (thousands would scroll a question or a warning away).
LOG_LINES: Final = 20
#: The server capability each request needs.
_CAPABILITY: Final = {"tools/call": "tools", "prompts/get": "prompts", "resources/read": "resources"}


def _is_url(word: str) -> bool:
    return word.lower().startswith(("http://", "https://"))


def _utf8(word: str) -> None:
    """A ``UsageError`` for a word the terminal did not give as UTF-8 (Python keeps such
    bytes as lone surrogates, which no JSON message can carry)."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        shown = word.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="backslashreplace")
        raise UsageError(
            f"'{shown}' is not valid UTF-8 (the bytes shown as \\x..); "
            "set the terminal to UTF-8, or give the value as a JSON \\u escape with NAME:=JSON"
        ) from None


def _text_only(arguments: dict[str, Any]) -> dict[str, str]:
    """Prompt arguments, which MCP makes strings; a ``UsageError`` naming any that is not."""
    bad = [k for k, v in arguments.items() if not isinstance(v, str)]
    if bad:
        raise UsageError(f"prompt arguments are text; {', '.join(bad)} given as JSON")
    return arguments


def narrate(method: str, params: Mapping[str, Any], unechoed: Callable[[str], str] = str) -> None:
    """What the server says while the request runs, on stderr: a task's status, progress,
    log messages, each on a line, what the server wrote cut short (``output.said``), and
    ``unechoed`` (``Target.unechoed``: a stdio server's progress may quote its ``--token``)."""
    if method == "notifications/tasks":
        message = params.get("statusMessage")
        said = f" - {output.said(message)}" if message else ""
        line = (
            f"… task {output.said(params.get('taskId', '?'))[:8]}: {output.said(params.get('status'))}{said}"
        )
    elif method == "notifications/progress":
        total = params.get("total")
        done = output.said(params.get("progress")) + (f"/{output.said(total)}" if total is not None else "")
        message = params.get("message")
        line = f"… {done}" + (f" {output.said(message)}" if message else "")
    elif method == "notifications/message":
        logger = params.get("logger")
        where = f" {output.said(logger)}:" if logger else ""
        data = params.get("data")
        text = data if isinstance(data, str) else output.shown_json(data, default=str)
        line = f"[{output.said(params.get('level'))}]{where} {output.said(text)}"
    else:
        return
    output.write(unechoed(line), sys.stderr)


def _give(roots: Sequence[Mapping[str, str]]) -> RootsCallback:
    async def give() -> list[Mapping[str, str]]:
        return list(roots)

    return give


def _root_list(paths: Sequence[str]) -> list[dict[str, str]]:
    """``--root`` directories as MCP roots (``file://`` URIs, named after the directory)."""
    roots = []
    for given in paths:
        path = Path(given).expanduser()
        if not path.is_dir():
            raise UsageError(f"--root {given}: not a directory")
        path = path.resolve()
        roots.append({"uri": path.as_uri(), "name": path.name or str(path)})
    return roots


def _answerer(args: argparse.Namespace) -> Answerer | None:
    if args.answers is not None:
        if args.ui in ("terminal", "web"):
            raise UsageError(f"give --answers or --ui {args.ui}, not both")
        try:
            return Scripted.from_file(args.answers)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    if args.ui == "web":
        from mcp_elicit.ui.web import WebAnswerer  # starlette: only for --ui web

        return WebAnswerer()
    terminal = sys.stdin.isatty() and sys.stderr.isatty()
    if args.ui == "terminal" and not terminal:
        raise UsageError("--ui terminal needs a terminal on stdin and stderr; give --answers FILE instead")
    return TerminalAnswerer() if args.ui == "terminal" or (args.ui == "auto" and terminal) else None


async def run_request(
    target: Target,
    method: str,
    name: str,
    *,
    pairs: list[str] | None = None,
    base: str | None = None,
    answerer: Answerer | None = None,
    roots: Sequence[Mapping[str, str]] = (),
    timeout: float = 30.0,
    versions: list[str] | None = None,
    trace: output.Tracer | None = None,
    sign_in: SignIn | None = None,
    log_level: str | None = None,
    listing: bool = False,
) -> dict[str, Any]:
    """Connect, send ``method`` for ``name`` (tool, prompt or URI) through every round, and
    return the result with what was spoken; a ``CliError`` with the right exit code
    otherwise. The server's log messages from ``log_level`` up are asked for and printed;
    ``listing``: ``--json`` was asked for, to list the notifications heard."""
    observed = Observed()
    offered: set[str] = {"tools", "prompts", "resources"}  # until the server has said
    started = time.perf_counter()
    during = "connect"
    mismatch = unknown = ""
    heard = output.Heard()
    logs = 0
    done = False

    def hear(method: str, params: Mapping[str, Any]) -> None:
        nonlocal logs
        # its texts kept as shown: without the secrets the TARGET gave, as a question's
        heard(method, {name: target.unechoed(v) if isinstance(v, str) else v for name, v in params.items()})
        logs += method == "notifications/message"
        if method != "notifications/message" or logs <= LOG_LINES:
            narrate(method, params, target.unechoed)

    try:
        async with connect(
            target,
            answerer=answerer,
            roots=_give(roots) if roots else None,
            observed=observed,
            timeout=timeout,
            versions=versions,
            trace=trace,
            sign_in=sign_in,
            tasks=method == "tools/call",
            on_notification=hear,
            log_level=log_level,
        ) as client:
            connected = time.perf_counter()
            offered = set(client.server_capabilities)
            during = "tools/list" if method == "tools/call" else method  # its schema first
            if method == "tools/call":
                schema, output_schema = await tool_schemas(client, name)
                during = method
                arguments = parse_pairs(pairs or [], base=base, schema=schema)
                if unknown := unknown_names(arguments, schema, name):  # said now, before any round
                    output.write(f"mcp-elicit: warning: {clean(unknown)}", sys.stderr)
                missing_names(arguments, schema, name)  # a call the schema refuses is not sent
                result = await client.call_tool(name, arguments)
                mismatch = output_mismatch(output_schema, result)
            elif method == "prompts/get":
                arguments = _text_only(parse_pairs(pairs or [], base=base))
                result = await client.get_prompt(name, arguments)
            else:
                result = await client.read_resource(name)
            info = client.server_info
            revision = client.revision
            capabilities = client.capabilities
        done = True
    except CliError:
        raise
    except Exception as exc:
        error = await explain(exc, target, observed, during=during)
        error = unfollowed(error, exc, str(target), observed.revision, nobody_answers=answerer is None)
        if isinstance(answerer, Recorded):
            error = answerer.unfinished(error, exc)
        if method == "resources/read":  # the server's "Resource not found: URI", whatever its form
            error.args = (uri_redacted(str(error), name),)
        if getattr(exc, "code", None) == MethodNotFound.code and _CAPABILITY[method] not in offered:
            error = CheckFailed(
                f"{error}\nThe server declares no {_CAPABILITY[method]} capability: it offers none. "
                "mcp-elicit check with the same TARGET shows what it offers."
            )
        if isinstance(exc, MissingClientCapability):
            nobody = f"{_NOBODY_ANSWERS[0].upper()}{_NOBODY_ANSWERS[1:]}" if answerer is None else None
            error = CheckFailed(capability_words(exc, str(error), nobody))
        raise error from None
    finally:  # a failure's --json has no notifications: only --trace shows them then
        if closing := heard.closing(logs - LOG_LINES, LOG_LINES, listed=done, asked=listing):
            output.write(closing, sys.stderr)
    finished = time.perf_counter()
    return {
        "target": target.to_json(),
        "revision": revision,
        "server": {"name": info.name, "version": info.version, "title": info.title},
        "client_capabilities": capabilities,
        "authorization": observed.authorization,
        "method": method,
        "name": name,
        "result": result,
        "notifications": heard.kept,
        "notifications_left_out": heard.left_out,
        "noise": noise_note(observed).strip(),
        "output_mismatch": mismatch,
        "unknown_arguments": unknown,
        "timings_ms": {
            "connect": round((connected - started) * 1000, 1),
            "request": round((finished - connected) * 1000, 1),
        },
    }
