"""What the terminal answerer shows, as rich renderables: the question (who asks, during
which request, the message, every field), the review of the answers, the URL consent, and
the consent to sign in (``ui.sign_in``).

Rules: server text enters only as ``rich.text.Text`` built from ``form_text.clean`` output,
never as markup, so a server cannot style, move or hide anything; styles come from here
only. Each is bounded (``form_text.fit``): a URL is cut in what follows its host, never
in the host, which is what the person must read. The server's message has a frame of its own inside the question's, so no line of it
can pass for one the client adds (the address, its site, a warning). Imported only by ``ui.terminal`` and ``ui.sign_in`` once the ``cli`` extra is known to be
installed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from copy import copy
from dataclasses import replace

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.segment import Segment
from rich.table import Table
from rich.text import Span, Text

from mcp_elicit.client.url_consent import UrlVerdict
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import ValidationProblem
from mcp_elicit.forms import FormSchema
from mcp_elicit.ui.form_text import (
    SAID_MAX,
    TITLE_MAX,
    URL_MAX,
    clean,
    constraints,
    fit,
    label,
    option_about,
    option_lines,
    show_value,
    url_shown,
)
from mcp_elicit.ui.server_text import for_encoding

__all__ = [
    "problems_text",
    "question_panel",
    "review_table",
    "sign_in_panel",
    "stderr_console",
    "url_panel",
    "url_text",
]

_PART_STYLES = {
    "scheme": "dim",
    "userinfo": "bold red strike",
    "host": "bold",
    "domain": "bold reverse",
    "port": "bold",
    "rest": "dim",
}
#: The widest a field's label is shown beside what it says (wrapped beyond): a label as wide
#: as the terminal would leave no room for the descriptions, choices and answers.
_LABEL_WIDTH = 32
#: Under this many columns the review shows each label above its answer.
_NARROW = 40


class _Framed:
    """A frame titled ``title`` around ``parts``; when the title is wider than the frame's
    top edge leaves room for, the title is the frame's first line instead, wrapped."""

    def __init__(self, title: Text, parts: Sequence[RenderableType], border_style: str) -> None:
        self.title = title
        self.parts = parts
        self.border_style = border_style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shown = _encoded(self.title, options.encoding)  # as wide as it is written
        if shown.cell_len + 5 <= options.max_width:  # corner, rule, space, ..., space, corner
            yield Panel(
                Group(*self.parts), title=self.title, title_align="left", border_style=self.border_style
            )
        else:
            yield Panel(Group(self.title, *self.parts), border_style=self.border_style)


def stderr_console(*, plain: bool) -> Console:
    """The console the answerers write on: stderr, reading no markup, emoji or highlights in
    what it is given; with no styles at all when ``plain`` (a terminal the prompts cannot
    draw on: rich drops them by itself for ``TERM=dumb``, not for a type terminfo knows
    without cursor addressing)."""
    return _EncodedConsole(
        stderr=True, highlight=False, markup=False, emoji=False, color_system=None if plain else "auto"
    )


class _EncodedConsole(Console):
    """A console that writes each text as its output's encoding can show it
    (``server_text.for_encoding``) before laying it out: on an ASCII-only terminal the
    encoder wrote "é" as "\\xe9" after rich had measured one column for it, and a frame's
    right edge stood out by three columns a letter. A table's cells are written so before
    its columns are measured: sized on the letters, a column broke "cr\\xe8me br\\xfbl\\xe9e"
    over two rows with room beside it. What rich cuts short itself (a label too wide for its
    column) it ends with "…", which such a terminal got as "\\u2026": it gets dots instead,
    in the columns the "…" and what it follows took (``_dotted``)."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        if isinstance(renderable, Text):
            renderable = _encoded(renderable, self.encoding)
        elif isinstance(renderable, Table):
            renderable = _encoded_table(renderable, self.encoding)
        segments = super().render(renderable, options)
        if for_encoding(_ELLIPSIS, self.encoding) == _ELLIPSIS:
            return segments
        return map(_dotted, segments)


#: What rich ends a text it cuts short with; and that with the (at most two) characters
#: before it, which dots replace on a terminal that cannot show it.
_ELLIPSIS = "…"
_CUT = re.compile(f".{{0,2}}{_ELLIPSIS}")


def _dotted(segment: Segment) -> Segment:
    """``segment`` with each "…" rich ended a cut with written as dots in as many columns as
    it and the two characters before it took: "signs you…" in ten columns is "signs y..."."""
    if segment.control or _ELLIPSIS not in segment.text:
        return segment
    dots = _CUT.sub(lambda cut: "." * cell_len(cut.group()), segment.text)
    return Segment(dots, segment.style, segment.control)


def _encoded_table(table: Table, encoding: str) -> Table:
    """A copy of ``table`` whose title and cells (text) are written as ``_encoded`` writes
    them."""
    shown = copy(table)
    shown.columns = [
        replace(column, _cells=[_encoded_cell(cell, encoding) for cell in column.cells])
        for column in table.columns
    ]
    if isinstance(table.title, Text):
        shown.title = _encoded(table.title, encoding)
    elif table.title is not None:
        shown.title = for_encoding(table.title, encoding)
    return shown


def _encoded_cell(cell: RenderableType, encoding: str) -> RenderableType:
    """A table's cell as ``_encoded`` writes it: text only; any other renderable is written
    so as it is rendered."""
    if isinstance(cell, Text):
        return _encoded(cell, encoding)
    if isinstance(cell, str):
        return for_encoding(cell, encoding)
    return cell


def _encoded(text: Text, encoding: str) -> Text:
    """``text`` with every character shown as ``for_encoding`` shows it, its styles kept."""
    plain = text.plain
    if for_encoding(plain, encoding) == plain:
        return text
    shown = [for_encoding(character, encoding) for character in plain]
    at = [0]
    for part in shown:
        at.append(at[-1] + len(part))
    out = text.blank_copy("".join(shown))
    end = len(plain)
    out.spans = [Span(at[min(span.start, end)], at[min(span.end, end)], span.style) for span in text.spans]
    return out


def _asker(request: ElicitationRequest) -> Text:
    server = request.server
    text = Text(fit(server.title or server.name, TITLE_MAX, length=True), style="bold")
    if server.version:
        text.append(f" {fit(server.version, TITLE_MAX, length=True)}")
    return text


def _context(request: ElicitationRequest) -> Text:
    text = Text(f"during {fit(str(request.origin), TITLE_MAX, length=True)}", style="dim")
    if request.server.where:
        text.append(f" · {fit(request.server.where, URL_MAX, length=True, joiners=False)}", style="dim")
    return text


def _message(request: ElicitationRequest) -> RenderableType:
    """The server's message in a frame of its own: whatever it writes (an address, a
    "Site:" line, a warning) stays apart from the lines the client adds. Its title is
    ``_Framed``'s: on a narrow terminal, words whole on the frame's first lines."""
    text = Text(fit(request.message, SAID_MAX, length=True, multiline=True) or "(no message)")
    return _Framed(Text("the server's message", style="dim"), [text], "dim")


def field_rows(schema: FormSchema) -> RenderableType:
    """Every field: number, title, description, constraints, default and choices (each
    with its description, dim, on the lines under it), as ``_Rows``."""
    rows: list[tuple[str, Text, Text]] = []
    for i, spec in enumerate(schema.fields, 1):
        about = Text()
        if spec.description:
            about.append(fit(spec.description, SAID_MAX, length=True, multiline=True) + "\n")
        extras = schema.extras(spec.name)
        about.append(" · ".join(constraints(spec, extras)), style="dim")
        if spec.default is not None:
            about.append(" · default: ", style="dim")
            about.append(
                show_value(spec, list(spec.default) if isinstance(spec.default, tuple) else spec.default)
            )
        for line, said in zip(option_lines(spec), option_about(spec, extras), strict=True):
            about.append("\n  " + line)
            if said:
                about.append("\n     " + said, style="dim")
        rows.append((str(i), Text(label(spec)), about))
    return _Rows(rows)


def problems_text(problems: Sequence[ValidationProblem], schema: FormSchema | None) -> Text:
    text = Text()
    for problem in problems:
        name = problem.field
        where = fit(name, TITLE_MAX, length=True) if name else name
        if schema is not None and name is not None and name in schema.names:
            where = label(schema.field(name))
        said = fit(problem.message, SAID_MAX, length=True)
        text.append("✗ ", style="bold red")
        text.append(f"{where}: {said}" if where else said)
        text.append("\n")
    text.rstrip()
    return text


def question_panel(request: ElicitationRequest) -> RenderableType:
    """The whole form-mode question."""
    parts: list[RenderableType] = [_context(request), _message(request)]
    if request.schema is not None and request.schema.fields:
        parts.extend([Text(), field_rows(request.schema)])
    for warning in request.warnings:
        parts.append(Text(f"⚠ {fit(warning, SAID_MAX, length=True)}", style="yellow"))
    if request.problems:
        parts.extend(
            [
                Text("The last answer was not accepted:", style="red"),
                problems_text(request.problems, request.schema),
            ]
        )
    title = _asker(request)
    title.append(" asks")
    return _Framed(title, parts, "cyan")


def review_table(schema: FormSchema, values: Mapping[str, object]) -> RenderableType:
    """The answers so far, numbered so that one can be changed (``_Rows``)."""
    rows: list[tuple[str, Text, Text]] = []
    for i, spec in enumerate(schema.fields, 1):
        value = values.get(spec.name)
        if value is None and spec.default is not None:
            default = list(spec.default) if isinstance(spec.default, tuple) else spec.default
            shown = Text(f"(default: {show_value(spec, default)})", style="dim")
        elif value is None:
            shown = Text("(no answer)", style="dim")
        else:
            shown = Text(show_value(spec, value))
        rows.append((str(i), Text(label(spec)), shown))
    return _Rows(rows, title="Your answers")


class _Rows:
    """Rows of a label and what is said of it (a field's answer, its details; the sign-in's
    server and issuer), numbered when their numbers are not empty: side by side, or, under
    ``_NARROW`` columns, each label on a line of its own above it (beside each other, the
    padded columns left a few characters each at 20 columns, and words were broken: "Numb",
    "er"; a sign-in's addresses got none at 16 columns)."""

    def __init__(
        self, rows: Sequence[tuple[str, Text, Text]], title: str | None = None, *, labels: str = "bold"
    ) -> None:
        self.rows = rows
        self.title = title
        self.labels = labels

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        narrow = options.max_width < _NARROW
        table = Table(
            title=self.title,
            title_justify="left",
            show_header=False,
            show_edge=self.title is not None,
            box=None,
            padding=(0, 1) if narrow else (0, 2),
            collapse_padding=self.title is None,  # the question's rows: a grid
            pad_edge=not narrow and self.title is not None,
        )
        numbered = any(number for number, _, _ in self.rows)
        if numbered:
            table.add_column(justify="right", style="bold cyan", no_wrap=True)
        if narrow:
            table.add_column(overflow="fold")
            for number, name, shown in self.rows:
                said = Text.assemble(Text(name.plain, style=self.labels), "\n", shown)
                table.add_row(*([number] if numbered else []), said)
        else:
            table.add_column(style=self.labels, overflow="fold", max_width=_LABEL_WIDTH)
            table.add_column(overflow="fold")
            for number, name, shown in self.rows:
                table.add_row(*([number] if numbered else []), name, shown)
        yield table


def url_text(verdict: UrlVerdict) -> Text:
    """The URL, host and registrable domain highlighted (``form_text.url_shown``: the host
    whole, the rest cut short past ``URL_MAX`` characters)."""
    text = Text(overflow="fold")
    parts, cut = url_shown(verdict)
    for role, shown in parts:
        text.append(shown, style=_PART_STYLES[role] if not verdict.refused else "")
    text.append(cut, style="dim")
    return text


def _url_lines(verdict: UrlVerdict) -> list[RenderableType]:
    """The full URL, where it really goes, and every warning (or why it is refused)."""
    parts: list[RenderableType] = [url_text(verdict), Text()]
    if verdict.refused:
        for warning in verdict.warnings:
            if warning.refuses:
                parts.append(Text(f"✗ {fit(warning.text, SAID_MAX)}", style="bold red"))
            else:
                parts.append(Text(f"⚠ {fit(warning.text, SAID_MAX)}", style="yellow"))
        parts.append(Text("This address will not be opened.", style="bold red"))
        return parts
    site = Text("Site: ", style="dim")
    site.append(clean(verdict.site, joiners=False), style="bold")
    if verdict.host != verdict.site:
        site.append("   page on ", style="dim")
        site.append(clean(verdict.host, joiners=False))
    if verdict.ascii_host != verdict.host:
        site.append(f"   (to DNS: {clean(verdict.ascii_host, joiners=False)})", style="dim")
    parts.append(site)
    for warning in verdict.warnings:
        parts.append(Text(f"⚠ {fit(warning.text, SAID_MAX)}", style="yellow"))
    parts.append(
        Text("Nothing is opened or fetched unless you say so; then it opens in your browser.", style="dim")
    )
    return parts


def url_panel(request: ElicitationRequest, verdict: UrlVerdict) -> RenderableType:
    """The URL-mode question: the full URL, where it really goes, and every warning."""
    parts: list[RenderableType] = [_context(request), _message(request), Text()]
    parts.extend(_url_lines(verdict))
    title = _asker(request)
    title.append(" asks you to open a web page")
    return _Framed(title, parts, "magenta")


def sign_in_panel(
    server: str, issuer: str, verdict: UrlVerdict, issuer_site: str | None = None
) -> RenderableType:
    """Consent to sign in: which MCP server wants it, the authorization server (issuer)
    that signs the person in (each under its label on a narrow terminal: ``_Rows``), and its
    page, shown like a URL-mode question's URL."""
    about = _Rows(
        [
            ("", Text("MCP server"), Text(fit(server, URL_MAX, length=True, joiners=False), style="bold")),
            ("", Text("signs you in"), Text(fit(issuer, URL_MAX, length=True, joiners=False), style="bold")),
        ],
        labels="dim",
    )
    parts: list[RenderableType] = [about, Text()]
    parts.append(
        Text(
            "This server wants you to sign in (OAuth). You sign in on the authorization server's own "
            "page; mcp-elicit gets a token for this server only."
        )
    )
    if issuer_site and not verdict.refused and issuer_site != verdict.site:
        parts.append(
            Text(
                f"⚠ The sign-in page is not on the issuer's site ({clean(issuer_site, joiners=False)}).",
                style="yellow",
            )
        )
    parts.append(Text())
    parts.extend(_url_lines(verdict))
    title = Text("An MCP server asks you to sign in", style="bold")
    return _Framed(title, parts, "magenta")
