"""``mcp-elicit check TARGET``: the connection test.

It connects as a client that declares **no capabilities**, so a server has no reason or
permission to ask it anything, and it **calls no tool**. It reports the revision spoken
(and how it was settled), who the server says it is, its capabilities, every tool from
every page of ``tools/list`` with a verdict on its definition (``cli.tool_checks``),
what else it offers (its prompts, resources and resource templates, listed when it
declares them, each listing with a verdict on its entries, ``cli.offer_checks``; a listing
that fails is a warning), and how long each step took.
A clean result says the server answers and lists its tools (or that it declares no tools
capability, so none were listed); a ``tools/list`` answered with a JSON-RPC error (or,
over HTTP, a 404 without one: plain text) is an error in the report (``list-failed``),
which still says who answered; a ``server/discover`` result that is not complete or whose
``capabilities`` is not an object is a protocol violation. To try an elicitation flow,
call a tool from a client that declares elicitation (``mcp-elicit call``). A server over
HTTP that wants OAuth gets a sign-in first (``cli.sign_in``); the report names the
authorization server whose token was used.

Exit codes: 0 clean (warnings allowed unless ``--strict``), 1 the server answered but
something is wrong (each thing named), 2 usage, 3 could not connect, sign in or start the server,
4 protocol violation (including anything but JSON-RPC on a stdio server's stdout, or a
``tools/list`` whose pages are malformed or never end: a cursor given again, a new one on page
1000; an empty ``nextCursor`` is the end, with a warning, before 2026-07-28, a cursor at it), 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP, 141 stdout's
reader went away (``cli.main``).
"""

from __future__ import annotations

import argparse
import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from mcp_elicit.cli import output
from mcp_elicit.cli.diagnose import explain, noise_note
from mcp_elicit.cli.offer_checks import check_prompts, check_resource_templates, check_resources
from mcp_elicit.cli.options import add_connection_options, client_options, parse_args_target
from mcp_elicit.cli.sign_in import SignIn
from mcp_elicit.cli.targets import Observed, Target, connect
from mcp_elicit.cli.tool_checks import Finding, ToolVerdict, check_tools
from mcp_elicit.client import Client
from mcp_elicit.client.rev_2026_07_28 import ModernSession
from mcp_elicit.core.quoting import quoted
from mcp_elicit.errors import CheckFailed, CliError, ProtocolError, ServerBrokeProtocol, TransportError
from mcp_elicit.wire.versions import REV_2026_07_28, is_modern

__all__ = ["CheckReport", "register", "run_check"]

_MAX_PAGES: Final = 1000


@dataclass
class CheckReport:
    """Everything ``check`` found; ``exit_code`` says how it went."""

    target: Target
    revision: str = ""
    era: str = ""
    server: dict[str, Any] = field(default_factory=dict)
    supported_versions: list[str] = field(default_factory=list)
    instructions: str | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    tools: list[ToolVerdict] = field(default_factory=list)
    #: What else the server offers, by kind ("prompts", "resources", "resource_templates").
    offers: dict[str, list[str]] = field(default_factory=dict)
    #: What is wrong with those entries, by the same kinds (a kind with nothing wrong is absent).
    offer_problems: dict[str, list[Finding]] = field(default_factory=dict)
    pages: int = 0
    listed: bool = False
    problems: list[Finding] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    strict: bool = False
    #: The OAuth sign-in used (``cli.sign_in.signed_in``), None without one.
    authorization: dict[str, Any] | None = None

    @property
    def errors(self) -> int:
        return sum(t.errors for t in self.tools) + self._count("error")

    @property
    def warnings(self) -> int:
        return sum(t.warnings for t in self.tools) + self._count("warning")

    def _count(self, severity: str) -> int:
        found = [*self.problems, *(f for kind in self.offer_problems.values() for f in kind)]
        return sum(1 for f in found if f.severity == severity)

    @property
    def exit_code(self) -> int:
        if self.violations:
            return ServerBrokeProtocol.exit_code
        if self.errors or (self.strict and self.warnings):
            return 1
        return 0

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.exit_code == 0,
            "exit_code": self.exit_code,
            "target": self.target.to_json(),
            "revision": self.revision,
            "era": self.era,
            "server": self.server,
            "supported_versions": self.supported_versions,
            "instructions": self.instructions,
            "capabilities": self.capabilities,
            "client_capabilities": self.client_capabilities,
            "authorization": self.authorization,
            "tools_listed": self.listed,
            "pages": self.pages,
            "tools": [t.to_json() for t in self.tools],
            "offers": self.offers,
            "offer_problems": {k: [f.to_json() for f in v] for k, v in self.offer_problems.items()},
            "problems": [p.to_json() for p in self.problems],
            "violations": self.violations,
            "errors": self.errors,
            "warnings": self.warnings,
            "timings_ms": self.timings_ms,
        }


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "check",
        help="the connection test: declares no capabilities, calls no tool, checks every tool definition",
        description=textwrap.fill(
            "Connect to an MCP server as a client that declares no capabilities and calls no tool; "
            "report the revision, server, capabilities, every tool with a verdict, and timings. "
            "A server over HTTP that asks for OAuth gets a sign-in in your browser (after you say yes). "
            "TARGET is an http(s):// URL, or -- followed by the command that starts a stdio server.",
            width=80,
        ),
        epilog=(
            "examples:\n"
            "  mcp-elicit check -- mcp-elicit serve examples/demo_server.py\n"
            "  mcp-elicit check https://mcp.example.com/mcp      # signs in if the server asks\n"
            "  mcp-elicit check https://mcp.example.com/mcp --header 'Authorization: Bearer TOKEN'\n\n"
            "exit codes: 0 clean, 1 something is wrong, 2 usage, 3 cannot connect, sign in or start the server,\n"
            "  or not an MCP server (a web page, plain text, a legacy HTTP+SSE server), 4 protocol violation,\n"
            "  130 interrupted (Ctrl-C), 143 terminated (SIGTERM), 129 hung up (SIGHUP); a stdio server is\n"
            "  stopped each way, 141 stdout's reader went away (| head)"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("url", nargs="?", metavar="TARGET", help="http(s):// URL (or: -- COMMAND ARGS...)")
    add_connection_options(parser, timeout=10.0)
    parser.add_argument("--strict", action="store_true", help="warnings fail the check too (exit 1)")
    parser.set_defaults(handler=_main)


def _main(args: argparse.Namespace) -> int:
    import asyncio

    target = args.target = parse_args_target(args, args.url)
    report = asyncio.run(run_check(target, **client_options(args, target), strict=args.strict))
    if args.json:
        output.print_json(report.to_json())
    else:
        from mcp_elicit.cli.check_text import print_check

        print_check(report)
    return report.exit_code


async def run_check(
    target: Target,
    *,
    timeout: float = 10.0,
    versions: list[str] | None = None,
    trace: output.Tracer | None = None,
    strict: bool = False,
    sign_in: SignIn | None = None,
) -> CheckReport:
    """Run the connection test; a ``CliError`` (exit 3 or 4) when there is no report to give."""
    observed = Observed()
    report = CheckReport(target=target, strict=strict)
    started = time.perf_counter()
    asks = _ServerAsks(trace)
    during = "connect"
    refused: ProtocolError | TransportError | None = None  # tools/list answered with an error (or a 404)
    try:
        async with connect(
            target,
            answerer=None,
            observed=observed,
            timeout=timeout,
            versions=versions,
            trace=asks,
            sign_in=sign_in,
        ) as client:
            report.timings_ms["connect"] = _ms(started)
            _describe(client, report)
            asks.during = "after connecting"
            if "tools" in report.capabilities:
                during = asks.during = "tools/list"
                listed = time.perf_counter()
                try:
                    tools = await _list_tools(client, report)
                except ProtocolError as exc:
                    refused = exc  # explained once closed: a stdio server's log is read then
                except TransportError as exc:
                    if exc.http_status != 404:
                        raise
                    refused = exc  # a 404 in plain text: refused as with a JSON-RPC error in it
                else:
                    report.timings_ms["tools_list"] = _ms(listed)
                    report.listed = True
                    report.tools = check_tools(tools, report.revision)
            else:
                report.problems.append(
                    Finding(
                        "warning", "no-tools", "the server declares no tools capability; nothing was listed"
                    )
                )
            for kind, capability, method, key, name, verdict in _OFFERS:
                if capability in report.capabilities:
                    during = asks.during = method
                    await _list_offer(client, report, kind, method, key, name, verdict)
    except CliError:
        raise
    except Exception as exc:
        raise await explain(exc, target, observed, during=during) from None
    report.timings_ms["total"] = _ms(started)
    if refused is not None:
        failed = await explain(refused, target, observed, during="tools/list")
        if not isinstance(failed, CheckFailed):  # a refusal over HTTP (401, 403...) says more
            raise failed
        report.problems.append(Finding("error", "list-failed", str(failed)))
    report.authorization = observed.authorization
    if report.authorization is not None and report.authorization.get("signed_in_now"):
        # the time a person took to sign in is not the server's
        report.timings_ms["sign_in"] = observed.sign_in_ms
        report.timings_ms["connect"] = round(max(report.timings_ms["connect"] - observed.sign_in_ms, 0.0), 1)
    if observed.stdout_noise:
        report.violations.append(noise_note(observed).strip())
    report.violations.extend(asks.violations())
    return report


class _ServerAsks:
    """Watches every message received for the server's own requests (forwarding each to the
    ``--trace`` printer, if any). This test declares no client capabilities, so a server
    has neither reason nor permission to ask it anything: each request but ``ping`` is a
    protocol violation, named with the step it came in, whatever the client answered."""

    def __init__(self, trace: output.Tracer | None) -> None:
        self._trace = trace
        self.during = "connect"
        self.seen: list[tuple[str, str]] = []

    def __call__(self, direction: Literal["send", "receive"], message: Mapping[str, Any]) -> None:
        if self._trace is not None:
            self._trace(direction, message)
        method = message.get("method")
        if direction == "receive" and isinstance(method, str) and "id" in message and method != "ping":
            self.seen.append((method, self.during))

    def violations(self) -> list[str]:
        return [
            f"the server sent the request {method!r} ({_step(during)}) to a client that declared no "
            "capabilities: a server may not ask a client for what it did not declare"
            for method, during in dict.fromkeys(self.seen)
        ]


def _step(during: str) -> str:
    if during == "connect":
        return "while connecting"
    return during if during.startswith("after") else f"during {during}"


def _describe(client: Client, report: CheckReport) -> None:
    report.revision = client.revision
    session = client.session
    if isinstance(session, ModernSession):
        report.era = "modern: answered server/discover"
        discovered = session.discovered or {}
        versions = discovered.get("supportedVersions")
        report.supported_versions = (
            [v for v in versions if isinstance(v, str)] if isinstance(versions, list) else []
        )
        instructions = discovered.get("instructions")
        report.violations.extend(_discover_faults(discovered))
    else:
        report.era = "handshake: initialize"
        report.supported_versions = [client.revision]
        instructions = session.initialized.get("instructions")
    report.instructions = instructions if isinstance(instructions, str) else None
    info = client.server_info
    report.server = {"name": info.name, "version": info.version, "title": info.title}
    if info.name == "unknown server":
        report.problems.append(
            Finding("warning", "server-info", "the server does not say its name (serverInfo)")
        )
    report.capabilities = client.server_capabilities
    report.client_capabilities = client.capabilities


def _discover_faults(discovered: Mapping[str, Any]) -> list[str]:
    """What is wrong with the shape of a ``server/discover`` result: it is a complete result
    (``input_required`` is only for ``tools/call``, ``prompts/get`` and ``resources/read``)
    whose ``capabilities`` is an object."""
    faults = []
    kind = discovered.get("resultType", "complete")
    if kind != "complete":
        faults.append(
            f"the server answered server/discover with resultType {_short(kind)}; server/discover "
            "must give a complete result (input_required only for tools/call, prompts/get and resources/read)"
        )
    capabilities = discovered.get("capabilities")
    if not isinstance(capabilities, Mapping):
        faults.append(
            f"server/discover gave capabilities that are not an object: {_short(capabilities)}"
            if "capabilities" in discovered
            else "server/discover gave no capabilities object"
        )
    return faults


async def _list_tools(client: Client, report: CheckReport) -> list[object]:
    tools, report.pages = await _list_all(client, "tools/list", "tools", report)
    return tools


#: What else is listed: (kind shown, capability, method, result key, the name of an item,
#: the verdict on a listing).
_OFFERS: Final[tuple[tuple[str, str, str, str, str, Callable[[list[object]], list[Finding]]], ...]] = (
    ("prompts", "prompts", "prompts/list", "prompts", "name", check_prompts),
    ("resources", "resources", "resources/list", "resources", "uri", check_resources),
    (
        "resource_templates",
        "resources",
        "resources/templates/list",
        "resourceTemplates",
        "uriTemplate",
        check_resource_templates,
    ),
)


async def _list_offer(
    client: Client,
    report: CheckReport,
    kind: str,
    method: str,
    key: str,
    name: str,
    verdict: Callable[[list[object]], list[Finding]],
) -> None:
    """List what else the server declares it offers, with a verdict on its entries. A
    listing that fails is a warning, not a verdict on the connection (the connection test
    is about tools)."""
    try:
        items, _ = await _list_all(client, method, key, report)
    except (ProtocolError, ServerBrokeProtocol, TransportError) as exc:
        if isinstance(exc, TransportError) and exc.http_status != 404:
            raise
        report.problems.append(Finding("warning", "list-failed", f"{method} failed: {exc}"))
        return
    report.offers[kind] = [
        item[name] if isinstance(item, Mapping) and isinstance(item.get(name), str) else "?" for item in items
    ]
    findings = verdict(items)
    if findings:
        report.offer_problems[kind] = findings


async def _list_all(client: Client, method: str, key: str, report: CheckReport) -> tuple[list[object], int]:
    """Every item of every page of a list method, and the number of pages. An empty
    ``nextCursor`` is a cursor at 2026-07-28 and the end of the list before it, with a
    warning in ``report`` either way (``_EMPTY_FOLLOWED``, ``_EMPTY_CURSOR``). A cursor
    given again, or a new one on page ``_MAX_PAGES``, is a list that never ends: read no
    further."""
    items: list[object] = []
    cursor: str | None = None
    seen: set[str] = set()
    pages = 0
    while True:
        params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
        page = await client.request(method, params or None)
        pages += 1
        found = page.get(key) if isinstance(page, Mapping) else None
        if not isinstance(found, list):
            raise ServerBrokeProtocol(f"page {pages} of {method} has no {key} list: {_short(page)}")
        items.extend(found)
        next_cursor = page.get("nextCursor")
        if next_cursor is None:
            return items, pages
        if not isinstance(next_cursor, str):
            raise ServerBrokeProtocol(
                f"{method} gave a nextCursor that is not a string: {_short(next_cursor)}"
            )
        if next_cursor == "" and not is_modern(report.revision):
            report.problems.append(
                Finding(
                    "warning",
                    "empty-cursor",
                    _EMPTY_CURSOR.format(page=pages, method=method, revision=report.revision),
                )
            )
            return items, pages
        if next_cursor == "" and "" not in seen:
            report.problems.append(
                Finding("warning", "empty-cursor", _EMPTY_FOLLOWED.format(page=pages, method=method))
            )
        if next_cursor in seen:
            rule = (
                f" (at {REV_2026_07_28} an empty nextCursor is a cursor, not the end)"
                if next_cursor == ""
                else ""
            )
            raise ServerBrokeProtocol(
                f"{method} never ends: page {pages} gives the cursor {_short(next_cursor)} again{rule}; "
                "to end the list, leave nextCursor out of the last page"
            )
        if pages >= _MAX_PAGES:
            raise ServerBrokeProtocol(
                f"{method} never ends: page {pages} gives yet another cursor ({_short(next_cursor)}), and "
                f"mcp-elicit reads at most {_MAX_PAGES} pages; to end the list, leave nextCursor out of the last page"
            )
        seen.add(next_cursor)
        cursor = next_cursor


#: What an empty ``nextCursor`` at 2026-07-28 gets: followed, and a warning for the clients
#: that stop there.
_EMPTY_FOLLOWED: Final = (
    'page {page} of {method} gives nextCursor "", a cursor at ' + REV_2026_07_28 + " (followed): "
    'clients that take "" for the end (the TypeScript SDK\'s does) miss the pages after it. A cursor '
    "that is never empty reads alike everywhere"
)

#: What an empty ``nextCursor`` before 2026-07-28 gets: the end, and a warning.
_EMPTY_CURSOR: Final = (
    'page {page} of {method} gives nextCursor "" (an empty string): taken as the end of the list, as '
    "clients commonly take it (the TypeScript SDK's does); {revision} says only that a missing "
    "nextCursor ends it, and at " + REV_2026_07_28 + " an empty one is a cursor a client must follow. To end "
    "the list, leave nextCursor out of the last page"
)


def _short(value: object) -> str:
    text = repr(value) if isinstance(value, str) else quoted(value)  # repr recurses, quoted stops
    return text if len(text) <= 200 else text[:197] + "..."


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
