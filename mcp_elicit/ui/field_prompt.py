"""One field of a form asked at its own prompt, the terminal answerer's second step: what is
said of the field right there, the prompt, and the check of every key.

Rules: above the prompt, the field's description (``about_rows``: at most ``ABOUT_ROWS``
rows of the terminal's width, so that a long one does not push the prompt off a small
terminal; one cut short ends with "…", and is whole in the question above), then its
numbered choices, each with its description. Under the prompt (its toolbar), what the
field takes (``form_text.constraints``: required or not, its format, range, length, how
to pick) and the keys: Enter, back to the field before (where there is one), decline,
cancel (on a dumb terminal, also how to give one of the words typed for those as the
answer). The prompt starts with the answer being changed, else the default (the first key
typed replaces either), or with what was typed there before going back (a draft, edited
as it is). Each key is checked with the form's own rules (``field_check``). Server text is
made inert and bounded (``form_text``) and enters rich as ``Text``, never markup. Imported
only by ``ui.terminal`` once the ``cli`` extra is known to be installed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcp_elicit.forms import FieldSpec, FormSchema, MultiChoice
from mcp_elicit.ui.columns import cells, wrapped
from mcp_elicit.ui.form_text import (
    SAID_MAX,
    Parsed,
    constraints,
    default_text,
    fit,
    label,
    option_about,
    option_lines,
    parse_answer,
    typed,
)
from mcp_elicit.ui.prompts import Prompter

__all__ = ["ABOUT_ROWS", "about_rows", "ask_field", "field_check", "short_label"]

#: The most rows a field's description takes above its prompt.
ABOUT_ROWS = 3
#: The most characters of a field's label its prompt shows.
_PROMPT_LABEL = 60


def about_rows(spec: FieldSpec, width: int) -> list[str]:
    """The field's description, made inert, in rows of at most ``width`` columns (never
    under 20), at most ``ABOUT_ROWS`` of them: the rest of a longer one goes on the last,
    cut short with "…"."""
    if not spec.description:
        return []
    width = max(width, 20)
    rows = wrapped(fit(spec.description, SAID_MAX, multiline=True), width)
    if len(rows) <= ABOUT_ROWS:
        return rows
    return [*rows[: ABOUT_ROWS - 1], fit(" ".join(rows[ABOUT_ROWS - 1 :]), width, measure=cells)]


async def ask_field(
    prompter: Prompter,
    console: Console,
    schema: FormSchema,
    spec: FieldSpec,
    current: object,
    *,
    back: bool = False,
    draft: str | None = None,
) -> object:
    """The value the person gives ``spec`` (None for no answer), ``current`` the answer
    being changed; ``prompts.Back`` (with the text in the line) when they go back, which
    the prompt offers when ``back``; a ``draft`` starts the line as typed."""
    about = about_rows(spec, console.width)
    if about:  # where the person answering reads
        console.print(Text("\n".join(about), style="dim"))
    lines = option_lines(spec)
    if lines:  # a grid: a choice that wraps goes on under its text, not at the margin
        grid = Table.grid(padding=(0, 1, 0, 0))
        grid.add_column(justify="right", no_wrap=True)
        grid.add_column(overflow="fold")
        abouts = option_about(spec, schema.extras(spec.name))
        for line, said in zip(lines, abouts, strict=True):  # as Text: a console may read markup
            number, _, text = line.partition(" ")
            grid.add_row(Text(f"  {number}", style="cyan"), Text(text, style="cyan"))
            if said:  # under its option's title, where the person choosing reads
                grid.add_row(Text(""), Text(said, style="dim"))
        console.print(grid)
    start = typed(spec, current) if current is not None else default_text(spec)
    # Choices shown ticked and all cleared are none of them, as unticked boxes on the page;
    # so too when they were cleared before going back (the draft is that line, cleared).
    cleared: list[str] | None = [] if isinstance(spec, MultiChoice) and start.strip() else None
    drafted = draft is not None and draft != start
    if draft is not None:
        start = draft
    suffix = "" if spec.required else " (optional)"
    replaces = "your answer" if current is not None else "the default"
    text = await prompter.ask(
        f"{short_label(spec)}{suffix} > ",
        default=start,
        check=field_check(schema, spec, prompter.decline_key, cleared),
        toolbar=[
            *constraints(spec, schema.extras(spec.name)),
            *([f"typing replaces {replaces}"] if start and not drafted else []),
            "Enter: next",
            *([f"{prompter.back_key}: back"] if back else []),
            f"{prompter.decline_key}: decline",
            f"{prompter.cancel_key}: cancel",
            *([prompter.literal_hint] if prompter.literal_hint else []),
        ],
        declinable=True,
        back=back,
        draft=drafted,
        # Up: this field's earlier answers (its form asked again), never another's, nor
        # those of a field of another form that has its name but asks something else
        recall="\0".join((type(spec).__name__, spec.name, spec.title or "")),
    )
    return cleared if cleared is not None and not text.strip() else parse_answer(spec, text).value


def field_check(
    schema: FormSchema, spec: FieldSpec, decline_key: str, cleared: list[str] | None = None
) -> Callable[[str], str | None]:
    """What is wrong with ``text`` as ``spec``'s answer (``cleared``, when given, is what an
    empty line is: a multi-choice's ticked choices all cleared); a required field left empty
    says how to leave it instead (a person may have no answer to give)."""

    def check(text: str) -> str | None:
        parsed = Parsed(cleared) if cleared is not None and not text.strip() else parse_answer(spec, text)
        if parsed.problem is not None:
            how = f": {parsed.how}" if parsed.how else ""
            return f"{short_label(spec)} {parsed.problem}{how}"
        if parsed.value is None:
            if spec.required and spec.default is None:
                return f"{short_label(spec)} is required: type an answer, or {decline_key} to decline"
            return None
        problem = schema.check_field(spec.name, parsed.value)
        return f"{short_label(spec)} {fit(problem, SAID_MAX, length=True)}" if problem else None

    return check


def short_label(spec: FieldSpec) -> str:
    """The field's label as its prompt shows it: at most ``_PROMPT_LABEL`` characters, cut
    between whole letters (the question above shows it whole). The prompt is drawn again
    at every key, so a label of thousands of characters made each key take seconds."""
    text = label(spec)
    if len(text) <= _PROMPT_LABEL:
        return text
    cut = _PROMPT_LABEL - 1  # between whole letters: not before a mark, nor after a joiner
    while cut > 1 and (unicodedata.category(text[cut]) in ("Mn", "Me", "Cf") or text[cut - 1] == "\u200d"):
        cut -= 1
    return text[:cut] + "…"
