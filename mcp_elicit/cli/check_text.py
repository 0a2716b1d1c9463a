"""``mcp-elicit check``'s report as text: the server, its tools in a table, its offers, the
verdict.

Rules: laid out in the columns the text takes on the terminal (``ui.columns.cells``: a
Chinese or Japanese letter or an emoji takes two, a combining mark none), not in characters:
every row of the table, the instructions and the offers are cut (``fit``) or wrapped to the
terminal's width, and the descriptions of the tools start in one column, whatever script
their names are in. A finding's message is not cut: it is wrapped to the width, its lines
after the first starting under its code; a URL in it too long for a line is not broken
but put on a line of its own, past the width, so that it can be copied whole. On a terminal that can only show ASCII the report
is written as ``for_encoding`` has it (a Chinese letter as ``\\u5929``, the client's "✓" as
"v") and laid out as so written.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from mcp_elicit.cli.output import Paint, sign_in_text, write
from mcp_elicit.command_redaction import secret_values
from mcp_elicit.ui.columns import cells, wrapped
from mcp_elicit.ui.form_text import SAID_MAX, clean, fit
from mcp_elicit.ui.server_text import for_encoding
from mcp_elicit.url_redaction import hidden_parts, redact_word

if TYPE_CHECKING:
    from mcp_elicit.cli.check import CheckReport
    from mcp_elicit.cli.targets import Target
    from mcp_elicit.cli.tool_checks import Finding

__all__ = ["print_check"]

#: The least room a tool's description keeps beside the names in check's table (columns).
_ABOUT_ROOM: Final = 30
#: The columns a finding's severity takes ("warning" and a space): its code starts after.
_SEVERITY: Final = 9
#: The least room a finding's message takes (columns): on a narrower terminal it wraps
#: there too.
_LEAST_SAID: Final = 12
#: The most characters of a finding's message shown: a finding quotes the server's texts
#: cut short already (at most two, each ``SAID_MAX``, or one and the end of a stdio server's
#: log), with the client's words around them, which a cut at ``SAID_MAX`` lost ("(HTTP 404
#: in a new session too: ...)"); this only bounds a message nothing cut short.
_FINDING_MAX: Final = 3 * SAID_MAX


def print_check(report: CheckReport) -> None:
    paint = Paint(sys.stdout)
    width = shutil.get_terminal_size((100, 24)).columns
    out: list[str] = []
    encoding = sys.stdout.encoding

    def measure(text: str) -> int:
        """The columns ``text`` takes as written to stdout (``for_encoding``)."""
        return cells(for_encoding(text, encoding))

    def row(label: str, value: str) -> None:
        out.append(f"{paint(f'{label:<13}', 'dim')} {value}")

    def finding(item: Finding, indent: int) -> str:
        """``item`` as its lines (starting at column ``indent``): the severity, then the
        code and the message wrapped to the width, the lines after the first under the code."""
        color = "red" if item.severity == "error" else "yellow"
        said = for_encoding(f"{item.code}: {fit(item.message, _FINDING_MAX)}", encoding)
        lines = wrapped(said, max(width - indent - _SEVERITY, _LEAST_SAID), urls_whole=True)
        first = f"{paint(f'{item.severity:<{_SEVERITY - 1}}', color)} {lines[0]}"
        return f"\n{'':<{indent + _SEVERITY}}".join([first, *lines[1:]])

    target = report.target
    out.append(paint(f"mcp-elicit check  {clean(str(target), joiners=False)}  ({target.kind})", "bold"))
    out.append("")
    server = report.server
    shown = clean(server.get("title") or server.get("name") or "?")
    version = f" {clean(server['version'])}" if server.get("version") else ""
    name = f"  (name: {clean(server['name'])})" if server.get("title") else ""
    row("server", f"{paint(shown, 'bold')}{version}{name}")
    others = [v for v in report.supported_versions if v != report.revision]
    also = f"; also speaks {', '.join(others)}" if others else ""
    revision = textwrap.wrap(
        f"MCP {report.revision} ({report.era}){also}", max(width - 14, 20), break_on_hyphens=False
    )
    row("revision", f"\n{'':<14}".join(revision))
    capabilities = [for_encoding(c, encoding) for c in _capabilities(report.capabilities)]
    row("capabilities", f"\n{'':<14}".join(_wrap_list(capabilities, width - 14)))
    if report.instructions:
        row("instructions", fit(report.instructions, width - 15, measure=measure))
    declared = ", ".join(sorted(report.client_capabilities)) or "no capabilities"
    row("this client", f"declared {declared} and called no tool")
    if report.authorization is not None:
        row("signed in", sign_in_text(report.authorization))
    out.append("")
    if report.listed:
        pages = "page" if report.pages == 1 else "pages"
        row("tools", f"{len(report.tools)}, in {report.pages} {pages}")
        # one column for the descriptions: the longest name's, unless that leaves a description
        # too little room; a longer name then has its description below it, in the column
        longest = max((measure(clean(t.name)) for t in report.tools), default=0)
        name_width = min(longest, max(width - 7 - _ABOUT_ROOM, 12))
        for tool in report.tools:
            mark = (
                paint("✓", "green")
                if not tool.findings
                else (paint("✗", "red") if tool.errors else paint("!", "yellow"))
            )
            about = fit(
                tool.description or "(no description)", max(width - name_width - 7, 20), measure=measure
            )
            about = paint(about, "dim")
            name = fit(tool.name, max(width - 6, 20), length=True, measure=measure)
            if measure(name) > width - 6:  # cut short: the length said after it takes room too
                said = len(f" ({len(tool.name)} characters)")
                name = fit(tool.name, max(width - 6 - said, 20), length=True, measure=measure)
            if measure(name) <= name_width:
                out.append(f"  {mark} {name}{'':<{name_width - measure(name)}}  {about}")
            else:
                out.extend([f"  {mark} {name}", f"{'':<{name_width + 6}}{about}"])
            out.extend(f"      {finding(item, 6)}" for item in tool.findings)
    if report.offers:
        out.append("")
        for kind, names in report.offers.items():
            listed = ", ".join(clean(n) for n in names) if names else "none"
            label = "templates" if kind == "resource_templates" else kind
            row(label, fit(f"{len(names)}: {listed}" if names else listed, width - 15, measure=measure))
            out.extend(f"{'':<14}{finding(item, 14)}" for item in report.offer_problems.get(kind, ()))
    for item in report.problems:
        row("server", finding(item, 14))
    timings = report.timings_ms
    parts = [f"sign-in {_ms(timings['sign_in'])} (with you)"] if "sign_in" in timings else []
    parts += [f"connect {_ms(timings['connect'])}"] if "connect" in timings else []
    if "tools_list" in timings:
        parts.append(f"tools/list {_ms(timings['tools_list'])}")
    if "total" in timings:
        parts.append(f"total {_ms(timings['total'])}")
    out.append("")
    row("timings", f"\n{'':<14}".join(_wrap_list(parts, width - 14, after=" ·")))
    out.append("")
    out.extend(_verdict(report, paint, width))
    write("\n".join(out))  # as stdout's encoding can show it, as measured above


def _capabilities(caps: Mapping[str, Any]) -> list[str]:
    """The capabilities, with what each says beyond being there: "tools (listChanged)",
    "extensions (io.modelcontextprotocol/tasks)"."""
    shown = []
    for name in sorted(caps):
        value = caps[name]
        details = (
            sorted(k for k, v in value.items() if v not in (False, None))
            if isinstance(value, Mapping)
            else []
        )
        shown.append(clean(f"{name} ({', '.join(details)})" if details else name))
    return shown or ["(none)"]


def _wrap_list(items: list[str], room: int, *, after: str = ",") -> list[str]:
    """``items`` as a list ("a, b, c", or with ``after`` " ·": "a · b · c") in lines of at
    most ``room`` columns (20 at least), broken between items; an item longer than a line
    is broken at its spaces."""
    room = max(room, 20)
    lines: list[str] = []
    for i, item in enumerate(items):
        piece = item if i == len(items) - 1 else f"{item}{after}"
        if lines and cells(lines[-1]) + 1 + cells(piece) <= room:
            lines[-1] += f" {piece}"
        else:
            lines.extend(_wrapped(piece, room))
    return lines


def _wrapped(text: str, room: int) -> list[str]:
    """``text`` in lines of at most ``room`` columns, broken at its spaces (inside a word
    only when the word alone is too wide, and then between whole characters' codes: a
    report for a terminal that can only show ASCII is mostly ``\\u5929``)."""
    return wrapped(text, room)  # ASCII is measured without loading rich (ui.columns)


def _ms(value: float) -> str:
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


#: The widest the closing advice is written (columns): a narrower terminal wraps it at its
#: width, between words.
_ADVICE_WIDTH: Final = 90


def _verdict(report: CheckReport, paint: Paint, width: int) -> list[str]:
    from mcp_elicit.client.declared import defined_modes  # loaded by the check already

    counts = []
    if report.errors:
        counts.append(f"{report.errors} error{'s' if report.errors != 1 else ''}")
    if report.warnings:
        counts.append(f"{report.warnings} warning{'s' if report.warnings != 1 else ''}")
    if report.violations:
        lines = [paint(f"PROTOCOL VIOLATION (exit {report.exit_code})", "bold red")]
        lines.extend(clean(v, multiline=True) for v in report.violations)
        return lines
    if report.exit_code:
        strict = " (--strict: warnings count)" if report.strict and not report.errors else ""
        return [
            paint(f"FAILED (exit {report.exit_code}): {', '.join(counts)}{strict}; see above.", "bold red")
        ]
    head = "OK" + (f", with {', '.join(counts)}" if counts else "")
    first = next(iter(report.tools), None)
    tool = first.name if first is not None else "TOOL"
    required = first.required if first is not None else ()  # without them the call only fails
    call = " ".join(["mcp-elicit call", *_call_argv(report, tool, required)])
    nothing = "This test declares no client capabilities, so the server could ask it nothing"
    advice = [f"{nothing}. To try an elicitation flow, call a tool from a client that declares elicitation:"]
    if report.era.startswith("handshake") and not defined_modes(report.revision):
        advice = [
            f"{nothing};",
            f"MCP {report.revision} has no elicitation, so it can ask no client anything. To call a tool:",
        ]
    room = max(min(width, _ADVICE_WIDTH), 20)
    return [
        paint(f"{head}: {_what_happened(report)}", "bold green"),
        *(line for paragraph in advice for line in _wrapped(paragraph, room)),
        f"  {clean(call)}",  # whole, to be copied
        *_hidden_note(report.target),
    ]


def _what_happened(report: CheckReport) -> str:
    """Only what the test did: a server that declares no tools was not asked for them."""
    if report.listed:
        return "the server answers and lists its tools."
    return "the server answers, but declares no tools capability, so no tools were listed."


def _call_argv(report: CheckReport, tool: str, required: tuple[str, ...]) -> list[str]:
    words = [shlex.quote(tool), *(shlex.quote(f"{name}=VALUE") for name in required)]
    target = report.target
    if target.url is not None:  # as the report names it: a key in its query is not printed
        return [shlex.quote(str(target)), *words]
    return [*words, "--", str(target)]  # nor a URL argument's password, nor a --token's value


def _hidden_note(target: Target) -> list[str]:
    """What the command's REDACTED stands for, when the TARGET shown holds one: the person
    writes it out from what they gave, to run the command."""
    if target.url is not None:
        hidden = hidden_parts(target.url)
        return [f"  (in the TARGET, REDACTED hides {hidden}: write it out as you gave it)"] if hidden else []
    hides = []
    if any(redact_word(word) != word for word in target.command):
        hides.append("the password or key of a URL among its arguments")
    if secret_values(target.command):
        hides.append("the value of an option that names a secret (a key, a token, a password)")
    if not hides:
        return []
    return [f"  (in the command, REDACTED hides {' and '.join(hides)}: write it out as you gave it)"]
