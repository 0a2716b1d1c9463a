"""The browser answerer's page, written from the form's own field specs, and what the page
sends back read into field values and checked by the form's own rules. No I/O.

Rules:

* Everything a server wrote (its name, the message, titles, descriptions, option titles,
  URLs) is first made inert with ``form_text.clean`` (control, bidirectional and invisible
  characters shown as ``<U+202E>`` instead of acting) and bounded (``form_text.fit``:
  a message of megabytes put the form below it, a title of 90,000 characters filled the
  screen from its ``<label>``), then HTML-escaped; attributes are always quoted. What the page sends back as it is (an option's value, a default in a
  text box) is only escaped, not made inert: ``clean`` would change it (a Persian
  zero-width non-joiner, an emoji's zero-width joiner), and the changed text would no
  longer be the option or the default. The page has no inline script or style: it loads
  ``/static/values.js``, ``/static/draft.js``, ``/static/app.js`` and ``/static/app.css``
  (the answer server's CSP allows nothing else). Fields and buttons,
  which do nothing without the script, are ``hidden`` in the HTML (``data-js``) and shown
  by the script, so a page without JavaScript shows none, with or without its stylesheet.
  Server text and text boxes carry ``dir="auto"``: Arabic or Hebrew reads right to left
  (its full stop at its end) on a page that is otherwise English.
* One native control per kind of field: text (a ``textarea`` when the default has a line
  break, which a text box would drop), ``email``, ``url``, ``date`` and
  ``datetime-local`` inputs (years 0001 to 9999, as the form's dates); a text box for a
  number (``inputmode`` numeric or decimal, ``data-number``: the page reads it with the
  browser's decimal mark, where a number box reads a German "2,5" as 25);
  a checkbox for a boolean, or, for an optional one without a default, radio buttons
  "(no answer)", "Yes" and "No" (an unticked box would say "no" for the person); radio
  buttons for up to five options, else a select (radio buttons still when an option has a
  description, which a select cannot show); a group of checkboxes for a multi-choice. An
  option's description (made inert, on one line, capped: ``form_text.option_about``)
  sits under its title (no two alike, even cut short: ``form_text.option_names``), tied to its control by ``aria-describedby``. Each is labelled (a ``<label>``, or a ``<fieldset>``
  and ``<legend>`` for groups) and tied by ``aria-describedby`` to its description, hint
  and error slot. Defaults are pre-filled; required fields carry ``required`` and a mark.
  A field that looks like it asks for a secret (``forms.secrets.secret_in_field``; a
  client reads another server's form unguarded) is marked ``data-secret``: the page's
  draft of the answers (kept in the tab under ``draft``, the round's key) never holds it.
* Those native constraints are hints (the form is ``novalidate``). What is valid is
  decided by ``FormSchema.validate`` alone, on the answer server (``check_form``), as the
  person types and again before anything is returned: there is no second copy of the
  rules in the page. Text and numbers are read as the terminal reads them
  (``form_text.parse_answer``); a boolean is ``true``/``false`` (or null: no answer); a
  choice is the option's value (null: no answer; ``""`` is an option's value, as the
  "(no answer)" control is told apart by a ``data-none`` mark); a multi-choice is the
  list of boxes ticked (an empty list is an answer: "none of these").
* A URL-mode question's box is ``web_url``'s.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import FormValidationError
from mcp_elicit.forms import (
    Boolean,
    Choice,
    FieldSpec,
    FormSchema,
    Integer,
    MultiChoice,
    Number,
    String,
)
from mcp_elicit.forms.foreign import FieldExtras
from mcp_elicit.forms.secrets import secret_in_field
from mcp_elicit.ui import form_text
from mcp_elicit.ui.form_text import (
    clean,
    constraints,
    fit,
    label,
    option_about,
    option_names,
    parse_answer,
    show_value,
)
from mcp_elicit.ui.web_url import url_box

__all__ = ["RADIO_LIMIT", "Checked", "check_form", "page", "review_rows"]

#: Single-choice fields with at most this many options are radio buttons, else a select.
RADIO_LIMIT: Final = 5
_EMPTY: Final = "(empty text)"
_UNWRITABLE: Final = re.compile("[\x00\ud800-\udfff]")
_FORMAT_INPUT: Final = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}
#: The days a date picker offers: the form's dates have four-digit years, from 0001.
_DAYS: Final = {
    "date": ' min="0001-01-01" max="9999-12-31"',
    "datetime-local": ' min="0001-01-01T00:00" max="9999-12-31T23:59:59" step="1"',
}
_FORMAT_HINT: Final = {
    "email": "an email address, like name@example.com",
    "uri": "a full web address, like https://example.com/page",
    "date": "a date",
    "date-time": "a date and time, in your time zone",
}


def _e(text: str, most: int = form_text.TITLE_MAX, *, multiline: bool = False) -> str:
    """Server text, made inert, at most ``most`` characters (``form_text.fit``: "…" and
    how long the whole is end one cut short), escaped for HTML text or a quoted attribute."""
    return html.escape(fit(text, most, length=True, multiline=multiline), quote=True)


def _value(text: str) -> str:
    """A value the page sends back unchanged, escaped for a quoted ``value`` attribute (a
    carriage return as a reference: HTML reads a bare one as a line feed). Text no page
    can carry (a lone surrogate, which UTF-8 cannot encode; NUL) is made inert instead."""
    if _UNWRITABLE.search(text):
        return html.escape(clean(text), quote=True)
    return html.escape(text, quote=True).replace("\r", "&#13;")


# ---- reading and checking answers ---------------------------------------------------------


@dataclass
class Checked:
    """One form's answer read back: the values given (``content``, absent fields left
    out) and one message for a person per field that is wrong (``problems``, by the
    field's position in the form)."""

    content: dict[str, Any] = field(default_factory=dict)
    problems: dict[int, str] = field(default_factory=dict)
    form_problem: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems and self.form_problem is None


def _read(spec: FieldSpec, raw: object) -> tuple[object, str | None]:
    """A field's value from what the page sent (None: no answer), or why it cannot be read."""
    if isinstance(spec, Boolean | MultiChoice | Choice) or raw is None:
        return raw, None
    if not isinstance(raw, str):
        return raw, None  # the form's own check says what is wrong with it
    parsed = parse_answer(spec, raw)
    return parsed.value, parsed.problem


def check_form(schema: FormSchema, raw: object) -> Checked:
    """Read what the page sent for ``schema`` (a list of values in field order) and check
    it with the form's own ``validate``, defaults applied as the client will apply them."""
    if not isinstance(raw, list) or len(raw) != len(schema.fields):
        return Checked(form_problem="the answer must give one value per field, in order")
    out = Checked()
    where = {spec.name: n for n, spec in enumerate(schema.fields)}
    for n, (spec, given) in enumerate(zip(schema.fields, raw, strict=True)):
        value, problem = _read(spec, given)
        if problem is not None:
            out.problems[n] = f"{label(spec)} {fit(problem, form_text.SAID_MAX, length=True)}"
        elif value is not None:
            out.content[spec.name] = value
    try:
        schema.validate(schema.apply_defaults(out.content))
    except FormValidationError as exc:
        for found in exc.problems:
            at = where.get(found.field) if found.field is not None else None
            if at is None:
                out.form_problem = fit(found.message, form_text.SAID_MAX, length=True)
            elif at not in out.problems:
                out.problems[at] = (
                    f"{label(schema.fields[at])} {fit(found.message, form_text.SAID_MAX, length=True)}"
                )
    return out


def review_rows(schema: FormSchema, content: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, answer as a person reads it) for every field, defaults marked."""
    rows: list[tuple[str, str]] = []
    for spec in schema.fields:
        value = content.get(spec.name)
        if value is None and spec.default is not None:
            default = list(spec.default) if isinstance(spec.default, tuple) else spec.default
            rows.append((label(spec), f"{show_value(spec, default)} (default)"))
        else:
            shown = show_value(spec, value)
            rows.append((label(spec), _EMPTY if shown == "" and value is not None else shown))
    return rows


# ---- the page ----------------------------------------------------------------------------


def page(requests: Sequence[ElicitationRequest], *, csrf: str, left: float = 600.0, draft: str = "") -> str:
    """The whole page for one round of questions (all from the same server); ``left``:
    seconds until mcp-elicit stops waiting (the page warns before, and offers more time);
    ``draft``: the round's key for the tab's draft of the answers (none when empty)."""
    first = requests[0]
    server = first.server
    who = _e(server.title or server.name)
    version = f' <span class="version">{_e(server.version)}</span>' if server.version else ""
    where = f" · {_e(server.where, form_text.URL_MAX)}" if server.where else ""
    several = len(requests) > 1
    sections = "\n".join(_question(i, r, several) for i, r in enumerate(requests))
    needs_review = any(r.mode == "form" for r in requests) or several
    review_button = (
        '<button type="submit" class="primary" id="review">Review answers</button>' if needs_review else ""
    )
    note = "Nothing is sent until you say so; closing this tab cancels."
    if any(_marked(spec) for r in requests if r.schema is not None for spec in r.schema.fields):
        note = (
            'Fields marked <span class="req" aria-hidden="true">*</span><span class="sr-only">with a '
            f"star</span> are required. {note}"
        )
    verb = "asks you" if several else ("asks you to open a web page" if first.mode == "url" else "asks")
    title = f"{fit(server.title or server.name, form_text.TITLE_MAX)} {verb}"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{html.escape(title)} · mcp-elicit</title>
<link rel="stylesheet" href="/static/app.css">
<script src="/static/values.js" defer></script>
<script src="/static/draft.js" defer></script>
<script src="/static/app.js" defer></script>
</head>
<body>
<main id="app" data-csrf="{html.escape(csrf, quote=True)}" data-server="{who}" data-count="{len(requests)}" data-left="{left:.1f}" data-round="{html.escape(draft, quote=True)}">
<header class="asker">
<p class="eyebrow">mcp-elicit · a question from an MCP server</p>
<h1><span class="server" dir="auto">{who}</span>{version} {verb}</h1>
<p class="context">during <code>{_e(str(first.origin))}</code>{where}</p>
</header>
<noscript><p class="alert">This page needs JavaScript to send your answers, and it is off here:
nothing can be sent from this page, and the question is cancelled. Turn JavaScript on for this
address to answer in the browser next time.</p></noscript>
<div id="alert" class="alert" role="alert"></div>
<div id="time" class="warning time" role="alert" hidden><span id="time-text"></span>
<button type="button" id="more-time">More time</button></div>
<div id="status" class="sr-only" role="status" aria-live="polite"></div>
<form id="answers" novalidate>
{sections}
<p class="legend-note" data-js hidden>{note}</p>
<div class="actions" id="form-actions" data-js hidden>
{review_button}
<button type="button" class="decline" id="decline">{"Decline all" if several else "Decline"}</button>
<button type="button" class="cancel" id="cancel">Cancel</button>
</div>
</form>
<section id="review-step" hidden aria-labelledby="review-title">
<h2 id="review-title" tabindex="-1">Check your answers</h2>
<div id="review-list"></div>
<div class="actions">
<button type="button" class="primary" id="send">Send</button>
<button type="button" id="change">Change answers</button>
<button type="button" class="decline" id="decline-review">Decline</button>
<button type="button" class="cancel" id="cancel-review">Cancel</button>
</div>
</section>
<section id="finished" hidden aria-labelledby="finished-title">
<h2 id="finished-title" tabindex="-1"></h2>
<p id="finished-text"></p>
</section>
</main>
</body>
</html>
"""


def _question(index: int, request: ElicitationRequest, several: bool) -> str:
    qid = f"q{index}"
    heading = (
        f'<h2 id="{qid}-title">Question {index + 1}</h2>'
        if several
        else f'<h2 id="{qid}-title" class="sr-only">The question</h2>'
    )
    message = _e(request.message, form_text.SAID_MAX, multiline=True) or "(no message)"
    parts = [
        f'<section class="question" id="{qid}" data-mode="{request.mode}" aria-labelledby="{qid}-title">',
        heading,
        f'<p class="message" id="{qid}-message" dir="auto">{message}</p>',
    ]
    parts.extend(f'<p class="warning">{_e(w, form_text.SAID_MAX)}</p>' for w in request.warnings)
    if request.problems:
        items = "".join(f"<li>{_e(str(p), form_text.SAID_MAX)}</li>" for p in request.problems)
        parts.append(f'<div class="problems"><p>The last answer was not accepted:</p><ul>{items}</ul></div>')
    if request.mode == "url":
        parts.append(url_box(qid, request.url or "", request.server.where))
    elif request.schema is not None:
        parts.append('<div class="fields" data-js hidden>')
        schema = request.schema
        parts.extend(
            _field(f"{qid}-f{n}", spec, schema.extras(spec.name)) for n, spec in enumerate(schema.fields)
        )
        parts.append("</div>")
    parts.append(f'<p class="error question-error" id="{qid}-error"></p>')
    if several:
        parts.append(
            f'<p class="declined-note" id="{qid}-declined" hidden>You declined this question. '
            f'<button type="button" class="link undecline" data-q="{qid}">Answer it after all</button></p>'
            f'<p data-js hidden><button type="button" class="link decline-one" data-q="{qid}">Decline this question</button></p>'
        )
    parts.append("</section>")
    return "\n".join(parts)


def _hint(spec: FieldSpec, extras: FieldExtras) -> str:
    if isinstance(spec, String):
        words = constraints(dataclasses.replace(spec, format=None))[1:]
        if spec.format is not None:
            words.insert(0, _FORMAT_HINT[spec.format])
        return ", ".join(words)
    if isinstance(spec, Integer | Number):
        return ", ".join(constraints(spec, extras)[1:])
    if isinstance(spec, Choice):
        return "pick one"
    if isinstance(spec, MultiChoice):
        return constraints(spec)[1].split(":")[0]
    return ""


def _marked(spec: FieldSpec) -> bool:
    """Whether the field carries the required mark: a required yes-or-no is a checkbox,
    an answer ticked or not, and has none."""
    return spec.required and not isinstance(spec, Boolean)


def _mark(spec: FieldSpec, *, group: bool) -> str:
    if not _marked(spec):
        return ""
    spoken = '<span class="sr-only"> (required)</span>' if group else ""
    return f'<span class="req" aria-hidden="true"> *</span>{spoken}'


def _about(fid: str, spec: FieldSpec, extras: FieldExtras) -> tuple[str, str]:
    """The description and hint paragraphs, and the ids they give aria-describedby."""
    out: list[str] = []
    ids: list[str] = []
    if spec.description:
        out.append(
            f'<p class="desc" id="{fid}-desc" dir="auto">{_e(spec.description, form_text.SAID_MAX, multiline=True)}</p>'
        )
        ids.append(f"{fid}-desc")
    hint = _hint(spec, extras)
    if hint:
        out.append(f'<p class="hint" id="{fid}-hint">{html.escape(hint)}</p>')
        ids.append(f"{fid}-hint")
    ids.append(f"{fid}-error")
    return "".join(out), " ".join(ids)


def _field(fid: str, spec: FieldSpec, extras: FieldExtras) -> str:
    about, described = _about(fid, spec, extras)
    error = f'<p class="error" id="{fid}-error"></p>'
    head = f'<div class="field" id="{fid}" data-kind="{spec.kind}" data-label="{_label(spec)}"'
    if secret_in_field(spec) is not None:
        head += " data-secret"  # never kept in the tab's draft
    required = " required" if spec.required else ""
    if isinstance(spec, Boolean) and not spec.required and spec.default is None:
        legend = f'<legend dir="auto">{_label(spec)}</legend>'
        items = [
            _option(fid, str(n), value, title, radio=True, checked=n == 0, none=n == 0)
            for n, (value, title) in enumerate((("", "(no answer)"), ("true", "Yes"), ("false", "No")))
        ]
        return (
            f'{head}><fieldset id="{fid}-group" role="radiogroup" aria-describedby="{described}">'
            f'{legend}{about}<div class="options">{"".join(items)}</div>{error}</fieldset></div>'
        )
    if isinstance(spec, Boolean):
        checked = " checked" if spec.default else ""
        return (
            f'{head}><div class="check"><input type="checkbox" id="{fid}-input"{checked} '
            f'aria-describedby="{described}"><label for="{fid}-input" dir="auto">{_label(spec)}</label></div>'
            f"{about}{error}</div>"
        )
    if isinstance(spec, Choice | MultiChoice):
        return head + ">" + _group(fid, spec, extras, about, described, error) + "</div>"
    kind = "text"
    extra = ""
    value = "" if spec.default is None else str(spec.default)
    if isinstance(spec, String) and spec.format is not None:
        kind = _FORMAT_INPUT[spec.format]
        extra += _DAYS.get(kind, "")
        if spec.format == "date-time" and spec.default is not None:
            extra += f' data-rfc3339="{_value(spec.default)}"'
            value = ""
    elif isinstance(spec, Integer | Number):
        # Text, read by the page with the browser's decimal mark: a number box reads a
        # German "2,5" as 25 (the bounds are in the hint, the check is the form's).
        head += " data-number"
        extra += ' inputmode="numeric"' if isinstance(spec, Integer) else ' inputmode="decimal"'
        if spec.default is not None:
            value = _number(spec.default)
    autocomplete = ' autocomplete="email"' if kind == "email" else ' autocomplete="off"'
    if kind == "text" and not isinstance(spec, Integer | Number):
        autocomplete += ' dir="auto"'  # typed Arabic or Hebrew reads right to left
    if kind == "text" and ("\n" in value or "\r" in value):
        # A text box drops line breaks. The newline after the tag is one HTML drops itself.
        control = (
            f'<textarea id="{fid}-input" rows="{min(len(value.splitlines()) + 1, 8)}"'
            f'{required}{autocomplete} aria-describedby="{described}">\n{_value(value)}</textarea>'
        )
    else:
        control = (
            f'<input type="{kind}" id="{fid}-input" value="{_value(value)}"{required}{extra}{autocomplete} '
            f'aria-describedby="{described}">'
        )
    return (
        f'{head} data-format="{_e(getattr(spec, "format", None) or "")}">'
        f'<label for="{fid}-input" dir="auto">{_label(spec)}{_mark(spec, group=False)}</label>{about}'
        f"{control}{error}</div>"
    )


def _group(
    fid: str, spec: Choice | MultiChoice, extras: FieldExtras, about: str, described: str, error: str
) -> str:
    legend = f'<legend dir="auto">{_label(spec)}{_mark(spec, group=True)}</legend>'
    said = option_about(spec, extras)
    names = option_names(spec.options, _EMPTY)  # no two alike, even cut short
    if isinstance(spec, Choice) and len(spec.options) > RADIO_LIMIT and not any(said):
        empty = "(no answer)" if not spec.required else "Choose one"
        options = [
            *([f'<option value="" data-none>{empty}</option>'] if spec.default is None else []),
            *(
                f'<option value="{_value(o.value)}"{" selected" if o.value == spec.default else ""}>'
                f"{html.escape(name)}</option>"
                for o, name in zip(spec.options, names, strict=True)
            ),
        ]
        return (
            f'<label for="{fid}-input" dir="auto">{_label(spec)}{_mark(spec, group=False)}</label>{about}'
            f'<select id="{fid}-input" dir="auto"{" required" if spec.required else ""} aria-describedby="{described}">'
            f"{''.join(options)}</select>{error}"
        )
    radio = isinstance(spec, Choice)
    chosen = {spec.default} if isinstance(spec, Choice) else set(spec.default or ())
    role = 'role="radiogroup"' if radio else 'role="group"'
    required = ' aria-required="true"' if radio and spec.required else ""
    items: list[str] = []
    boxes = list(spec.options)
    if radio and not spec.required and spec.default is None:
        items.append(_option(fid, "none", "", "(no answer)", radio=True, checked=True, none=True))
    for n, (option, name, text) in enumerate(zip(boxes, names, said, strict=True)):
        items.append(
            _option(
                fid,
                str(n),
                option.value,
                name,
                radio=radio,
                checked=option.value in chosen,
                about=text,
            )
        )
    return (
        f'<fieldset id="{fid}-group" {role}{required} aria-describedby="{described}">{legend}{about}'
        f'<div class="options">{"".join(items)}</div>{error}</fieldset>'
    )


def _option(
    fid: str,
    n: str,
    value: str,
    title: str,
    *,
    radio: bool,
    checked: bool,
    none: bool = False,
    about: str = "",
) -> str:
    """One radio button or checkbox; ``none``: the "(no answer)" one, told apart by its
    mark, not its value (an option's value may be empty text); ``title``, already made inert
    (``option_names``); ``about``: its description, already made inert (``option_about``),
    under its title."""
    kind = "radio" if radio else "checkbox"
    name = f' name="{fid}"' if radio else ""
    mark = (" checked" if checked else "") + (" data-none" if none else "")
    oid = f"{fid}-o{n}"
    label_html = f'<label for="{oid}" dir="auto">{html.escape(title)}</label>'
    if about:
        mark += f' aria-describedby="{oid}-desc"'
        label_html = (
            f'<div class="opt-text">{label_html}'
            f'<span class="opt-desc" id="{oid}-desc" dir="auto">{html.escape(about)}</span></div>'
        )
    return (
        f'<div class="option"><input type="{kind}" id="{oid}"{name} value="{_value(value)}"{mark}>'
        f"{label_html}</div>"
    )


def _label(spec: FieldSpec) -> str:
    return html.escape(label(spec), quote=True)


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)
