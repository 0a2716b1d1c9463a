"""The browser answerer's form fields, as HTML written from the form's own field specs. No I/O.

Rules:

* Server text in a field (titles, descriptions, option titles) is made inert and bounded
  (``escaped``: ``form_text.fit``), then HTML-escaped; attributes are always quoted. What
  the page sends back as it is (an option's value, a default in a text box) is only
  escaped (``_value``), not made inert: ``clean`` would change it (a Persian zero-width
  non-joiner, an emoji's zero-width joiner), and the changed text would no longer be the
  option or the default. Server text and text boxes carry ``dir="auto"``.
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
  sits under its title (no two alike, even cut short: ``form_text.option_names``), tied
  to its control by ``aria-describedby``. Each is labelled (a ``<label>``, or a ``<fieldset>``
  and ``<legend>`` for groups) and tied by ``aria-describedby`` to its description, hint
  and error slot. Defaults are pre-filled (but a text default that a bidirectional
  override or mark would draw as other text: ``_boxed_default``); required fields carry
  ``required`` and a mark.
  A field that looks like it asks for a secret (``forms.secrets.secret_in_field``; a
  client reads another server's form unguarded) is marked ``data-secret``: the page's
  draft of the answers (kept in the tab under ``draft``, the round's key) never holds it.
* A number's text box is an ARIA spin button (``role="spinbutton"``): its bounds as
  ``aria-valuemin``/``aria-valuemax`` (an integer's, the whole numbers they allow), its
  default as ``aria-valuenow``, its step as ``data-step`` (a multiple it must be, else 1, or a tenth, a
  hundredth... for a number within a range under 10 wide).
  The page keeps ``aria-valuenow`` true as the person types and steps the value with the
  Up and Down arrows, within the bounds (``app.js``).
"""

from __future__ import annotations

import dataclasses
import html
import re
import unicodedata
from typing import Final

from mcp_elicit.forms import Boolean, Choice, FieldSpec, Integer, MultiChoice, Number, String
from mcp_elicit.forms.foreign import FieldExtras
from mcp_elicit.forms.secrets import secret_in_field
from mcp_elicit.ui import form_text
from mcp_elicit.ui.form_text import clean, constraints, fit, label, option_about, option_names

__all__ = ["EMPTY", "RADIO_LIMIT", "escaped", "field_html", "in_title", "marked"]

RADIO_LIMIT: Final = 5
EMPTY: Final = "(empty text)"
#: The most characters of a server's name, and of its message, in a tab's title.
_TAB_MAX: Final = 80
_UNWRITABLE: Final = re.compile("[\x00\ud800-\udfff]")
#: The bidirectional embeddings, overrides, isolates and marks: text after one in a box is
#: drawn in another order (U+202E makes "00001 ot $" read "$ to 10000"; right-to-left
#: marks between digits, "10<U+200F>.5<U+200F>0" read "05.10").
_REORDERS: Final = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_FORMAT_INPUT: Final = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}
#: The days a date picker offers: the form's dates have four-digit years, from 0001.
_DAYS: Final = {
    "date": ' min="0001-01-01" max="9999-12-31"',
    "datetime-local": ' min="0001-01-01T00:00" max="9999-12-31T23:59:59" step="1"',
}
_FORMAT_HINT: Final = {
    "email": "an email address, like name@example.com",
    "uri": "a full address, like https://example.com/page",
    "date": "a date",
    "date-time": "a date and time, in your time zone",
}


def escaped(
    text: str, most: int = form_text.TITLE_MAX, *, multiline: bool = False, joiners: bool = True
) -> str:
    """Server text, made inert, at most ``most`` characters (``form_text.fit``: "…" and
    how long the whole is end one cut short; ``joiners`` as there: False for an address),
    escaped for HTML text or a quoted attribute."""
    return html.escape(fit(text, most, length=True, multiline=multiline, joiners=joiners), quote=True)


def in_title(text: str) -> str:
    """Server text for a tab's title (not yet escaped): made inert as on the page, shorter
    (``_TAB_MAX``: a tab's label, read first by a screen reader), and right-to-left text set
    apart in first-strong isolates, as ``dir="auto"`` sets it apart on the page: a title has
    no elements of its own to carry that."""
    shown = fit(text, _TAB_MAX)
    if any(unicodedata.bidirectional(ch) in ("R", "AL") for ch in shown):
        return f"\u2068{shown}\u2069"
    return shown


def _value(text: str) -> str:
    """A value the page sends back unchanged, escaped for a quoted ``value`` attribute (a
    carriage return as a reference: HTML reads a bare one as a line feed). Text no page
    can carry (a lone surrogate, which UTF-8 cannot encode; NUL) is made inert instead."""
    if _UNWRITABLE.search(text):
        return html.escape(clean(text), quote=True)
    return html.escape(text, quote=True).replace("\r", "&#13;")


def _hint(spec: FieldSpec, extras: FieldExtras) -> str:
    if isinstance(spec, String):
        words = constraints(dataclasses.replace(spec, format=None))[1:]
        if spec.format is not None:
            words.insert(0, _FORMAT_HINT[spec.format])
        if spec.default is not None and _boxed_default(spec) != spec.default:
            words.append(f"left empty: {fit(spec.default, form_text.TITLE_MAX, length=True)}")
        return ", ".join(words)
    if isinstance(spec, Integer | Number):
        return ", ".join(constraints(spec, extras)[1:])
    if isinstance(spec, Choice):
        return "pick one"
    if isinstance(spec, MultiChoice):
        return constraints(spec)[1].split(":")[0]
    return ""


def _boxed_default(spec: String) -> str:
    """The text a text field's box starts with: its default, unless the default holds a
    bidirectional override, isolate or mark (``_REORDERS``), which the box would draw as other
    text; the box is then empty (which gives the default) and the hint shows it made
    visible, as the terminal, which never pre-fills what ``clean`` would change."""
    default = spec.default or ""
    return "" if _REORDERS.search(default) else default


def marked(spec: FieldSpec) -> bool:
    """Whether the field carries the required mark: a required yes-or-no is a checkbox,
    an answer ticked or not, and has none."""
    return spec.required and not isinstance(spec, Boolean)


def _mark(spec: FieldSpec, *, group: bool) -> str:
    if not marked(spec):
        return ""
    spoken = '<span class="sr-only"> (required)</span>' if group else ""
    return f'<span class="req" aria-hidden="true"> *</span>{spoken}'


def _about(fid: str, spec: FieldSpec, extras: FieldExtras) -> tuple[str, str]:
    """The description and hint paragraphs, and the ids they give aria-describedby."""
    out: list[str] = []
    ids: list[str] = []
    if spec.description:
        out.append(
            f'<p class="desc" id="{fid}-desc" dir="auto">{escaped(spec.description, form_text.SAID_MAX, multiline=True)}</p>'
        )
        ids.append(f"{fid}-desc")
    hint = _hint(spec, extras)
    if hint:
        out.append(f'<p class="hint" id="{fid}-hint">{html.escape(hint)}</p>')
        ids.append(f"{fid}-hint")
    ids.append(f"{fid}-error")
    return "".join(out), " ".join(ids)


def field_html(fid: str, spec: FieldSpec, extras: FieldExtras) -> str:
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
    if isinstance(spec, String):
        value = _boxed_default(spec)
    if isinstance(spec, String) and spec.format is not None:
        kind = _FORMAT_INPUT[spec.format]
        extra += _DAYS.get(kind, "")
        if spec.format == "date-time" and spec.default is not None:
            extra += f' data-rfc3339="{_value(spec.default)}"'
            value = ""
    elif isinstance(spec, Integer | Number):
        # Text, read by the page with the browser's decimal mark: a number box reads a
        # German "2,5" as 25 (the bounds are in the hint, the check is the form's). A spin
        # button, as the number box was: its bounds said, the arrows step it (app.js).
        head += " data-number"
        extra += ' inputmode="numeric"' if isinstance(spec, Integer) else ' inputmode="decimal"'
        extra += _spin(spec, extras)
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
        f'{head} data-format="{escaped(getattr(spec, "format", None) or "")}">'
        f'<label for="{fid}-input" dir="auto">{_label(spec)}{_mark(spec, group=False)}</label>{about}'
        f"{control}{error}</div>"
    )


def _group(
    fid: str, spec: Choice | MultiChoice, extras: FieldExtras, about: str, described: str, error: str
) -> str:
    legend = f'<legend dir="auto">{_label(spec)}{_mark(spec, group=True)}</legend>'
    said = option_about(spec, extras)
    names = option_names(spec.options, EMPTY)  # no two alike, even cut short
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


def _spin(spec: Integer | Number, extras: FieldExtras) -> str:
    """A number field's spin-button attributes: its inclusive bounds (none where an exclusive
    one is stricter: no value on the bound is allowed), its default as its value, and the
    step the arrows take: the multiple it must be, else 1 (a tenth, a hundredth... for a
    number within a range under 10 wide)."""
    lo, hi = spec.whole_bounds if isinstance(spec, Integer) else (spec.minimum, spec.maximum)
    if extras.more_than is not None:
        lo = None
    if extras.less_than is not None:
        hi = None
    step = 1.0 if extras.multiple_of is None else extras.multiple_of
    if extras.multiple_of is None and isinstance(spec, Number) and lo is not None and hi is not None:
        width = hi - lo
        while 0 < width < 10 * step and step > 1e-6:
            step /= 10
    out = ' role="spinbutton"'
    out += "" if lo is None else f' aria-valuemin="{_number(lo)}"'
    out += "" if hi is None else f' aria-valuemax="{_number(hi)}"'
    out += "" if spec.default is None else f' aria-valuenow="{_number(spec.default)}"'
    return f'{out} data-step="{_step(step)}"'


def _step(step: float) -> str:
    """A step as the page reads it: "0.1", not "0.1" x 10 rounding to "0.010000000000000002"."""
    return _number(float(f"{step:.12g}"))
