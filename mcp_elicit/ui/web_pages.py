"""The browser answerer's page, written from the form's own field specs, and what the page
sends back read into field values and checked by the form's own rules. No I/O.

Rules:

* Everything a server wrote (its name, the message, warnings, URLs) is first made inert
  and bounded (``web_fields.escaped``: ``form_text.fit``; a message of megabytes put the
  form below it), then HTML-escaped; attributes are always quoted. Each field is
  ``web_fields``' (which control for which kind of field, and its labels). The page has
  no inline script or style: it loads the scripts of ``web_assets.SCRIPTS`` and
  ``/static/app.css`` (the answer server's CSP allows nothing else). Fields and buttons, which do nothing without the script, are ``hidden`` in the
  HTML (``data-js``) and shown by the script, so a page without JavaScript shows none,
  with or without its stylesheet. Server text carries ``dir="auto"``: Arabic or Hebrew
  reads right to left (its full stop at its end) on a page that is otherwise English.
* The fields' native constraints are hints (the form is ``novalidate``). What is valid is
  decided by ``FormSchema.validate`` alone, on the answer server (``check_form``), as the
  person types and again before anything is returned: there is no second copy of the
  rules in the page. Text and numbers are read as the terminal reads them
  (``form_text.parse_answer``); a boolean is ``true``/``false`` (or null: no answer); a
  choice is the option's value (null: no answer; ``""`` is an option's value, as the
  "(no answer)" control is told apart by a ``data-none`` mark); a multi-choice is the
  list of boxes ticked (an empty list is an answer: "none of these").
* The server's message stands in a frame of its own, named as the server's (as in the
  terminal, ``render``): whatever it writes ("The server asks you to open this web page:",
  an address, "Site bank.example", a button's words) stays apart from what the page says;
  the review, which repeats it, frames it the same way. The frame's label names its group
  and is hidden from screen readers itself, which would read it twice.
* A URL-mode question's box is ``web_url``'s.
* A page that ends there (a link opened again, a question no longer open, a refusal, an
  address that serves nothing: ``end_page``) looks like the answer page, the same header
  and layout, not bare text, from its own inline style (``END_STYLE``, allowed by its hash
  in the CSP, ``END_STYLE_SOURCE``): no second request, which a refusal for the host name
  would refuse as it refused the page.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import FormValidationError
from mcp_elicit.forms import Boolean, Choice, FieldSpec, FormSchema, MultiChoice, String
from mcp_elicit.ui import form_text
from mcp_elicit.ui.form_text import carried_by, fit, label, parse_answer, show_value
from mcp_elicit.ui.server_text import clean
from mcp_elicit.ui.web_assets import SCRIPTS
from mcp_elicit.ui.web_fields import EMPTY, RADIO_LIMIT, escaped, field_html, in_title, marked
from mcp_elicit.ui.web_url import url_box

__all__ = [
    "END_STYLE",
    "END_STYLE_SOURCE",
    "RADIO_LIMIT",
    "REFUSED",
    "Checked",
    "check_form",
    "continue_page",
    "end_page",
    "page",
    "review_rows",
]


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


#: The most of a text answer the review shows: the person checks what they send, so it is
#: not cut as a server's text is (``TITLE_MAX``), only made inert, up to this many characters.
REVIEW_TEXT_MAX: Final = 10_000


def _typed_text(value: str) -> str:
    """A text the person typed, for the review: made inert (``clean``), with its line breaks
    and its runs of spaces as typed (the page keeps them: ``white-space: pre-wrap``), whole
    up to ``REVIEW_TEXT_MAX`` characters, then "… (N characters)". A text of spaces only
    is "" (shown as ``EMPTY``)."""
    shown = clean(value[:REVIEW_TEXT_MAX], multiline=True)
    if not shown.strip():
        return ""
    return f"{shown.rstrip()}… ({len(value)} characters)" if len(value) > REVIEW_TEXT_MAX else shown


def review_rows(schema: FormSchema, content: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, answer as a person reads it) for every field, defaults marked. A text answer
    is shown whole (up to ``REVIEW_TEXT_MAX``), a default left in its box too: it is sent
    as it is shown. A default given for a field with no answer is shown as the server's text."""
    rows: list[tuple[str, str]] = []
    for spec in schema.fields:
        value = content.get(spec.name)
        if value is None and spec.default is not None:
            default = list(spec.default) if isinstance(spec.default, tuple) else spec.default
            rows.append((label(spec), f"{show_value(spec, default)} (default)"))
        else:
            if isinstance(spec, String) and isinstance(value, str):
                shown = _typed_text(value)
            else:
                shown = show_value(spec, value)
            rows.append((label(spec), EMPTY if shown == "" and value is not None else shown))
    return rows


# ---- the page ----------------------------------------------------------------------------


def page(requests: Sequence[ElicitationRequest], *, csrf: str, left: float = 600.0, draft: str = "") -> str:
    """The whole page for one round of questions (all from the same server); ``left``:
    seconds until mcp-elicit stops waiting (the page warns before, and offers more time);
    ``draft``: the round's key for the tab's draft of the answers (none when empty)."""
    first = requests[0]
    server = first.server
    who = escaped(server.title or server.name)
    version = f' <span class="version">{escaped(server.version)}</span>' if server.version else ""
    where = f" · {escaped(server.where, form_text.URL_MAX, joiners=False)}" if server.where else ""
    several = len(requests) > 1
    decline = "Decline all" if several else "Decline"  # the form's button and the review's alike
    sections = "\n".join(_question(i, r, several) for i, r in enumerate(requests))
    needs_review = any(r.mode == "form" for r in requests) or several
    review_button = (
        '<button type="submit" class="primary" id="review">Review answers</button>' if needs_review else ""
    )
    note = "Nothing is sent until you say so; closing this tab cancels."
    if any(marked(spec) for r in requests if r.schema is not None for spec in r.schema.fields):
        note = (
            'Fields marked <span class="req" aria-hidden="true">*</span><span class="sr-only">with a '
            f"star</span> are required. {note}"
        )
    verb = "asks you" if several else ("asks you to open a web page" if first.mode == "url" else "asks")
    # The tab's title names the question too (WCAG 2.4.2); the script says there where the
    # person is (problems, the review, the end) before it.
    said = in_title(first.message) if first.mode == "form" else ""
    asked = f"asks you {len(requests)} questions" if several else f"{verb}: {said}" if said else verb
    title = f"{in_title(server.title or server.name)} {asked}"
    return f"""{_head(title, SCRIPTS)}<main id="app" data-csrf="{html.escape(csrf, quote=True)}" data-server="{who}" data-count="{len(requests)}" data-left="{left:.1f}" data-round="{html.escape(draft, quote=True)}" data-carried="{html.escape(carried_by(first), quote=True)}">
<header>
<p class="eyebrow">mcp-elicit · a question from an MCP server</p>
<h1><span dir="auto">{who}</span>{version} {verb}</h1>
<p class="context">during <code>{escaped(str(first.origin))}</code>{where}</p>
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
<button type="button" class="decline" id="decline">{decline}</button>
<button type="button" class="cancel" id="cancel">Cancel</button>
</div>
</form>
<section id="review-step" hidden aria-labelledby="review-title">
<h2 id="review-title" tabindex="-1">Check your answers</h2>
<div id="review-list"></div>
<div class="actions">
<button type="button" class="primary" id="send">Send</button>
<button type="button" id="change">Change answers</button>
<button type="button" class="decline" id="decline-review">{decline}</button>
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
    message = escaped(request.message, form_text.SAID_MAX, multiline=True) or "(no message)"
    parts = [
        f'<section class="question" id="{qid}" data-mode="{request.mode}" aria-labelledby="{qid}-title">',
        heading,
        f'<div class="said" role="group" aria-labelledby="{qid}-said">'
        f'<p class="said-label" id="{qid}-said" aria-hidden="true">The server&#39;s message</p>'
        f'<p class="message" id="{qid}-message" dir="auto">{message}</p></div>',
    ]
    parts.extend(f'<p class="warning">{escaped(w, form_text.SAID_MAX)}</p>' for w in request.warnings)
    if request.problems:
        items = "".join(f"<li>{escaped(str(p), form_text.SAID_MAX)}</li>" for p in request.problems)
        parts.append(f'<div class="problems"><p>The last answer was not accepted:</p><ul>{items}</ul></div>')
    if request.mode == "url":
        parts.append(url_box(qid, request.url or "", request.server.where))
    elif request.schema is not None:
        parts.append('<div class="fields" data-js hidden>')
        schema = request.schema
        parts.extend(
            field_html(f"{qid}-f{n}", spec, schema.extras(spec.name)) for n, spec in enumerate(schema.fields)
        )
        parts.append("</div>")
    parts.append(f'<p class="error" id="{qid}-error"></p>')
    if several:
        parts.append(
            f'<p id="{qid}-declined" hidden>You declined this question. '
            f'<button type="button" class="link undecline" data-q="{qid}">Answer it after all</button></p>'
            f'<p data-js hidden><button type="button" class="link decline-one" data-q="{qid}">Decline this question</button></p>'
        )
    parts.append("</section>")
    return "\n".join(parts)


#: An ended page's whole style, inline (app.css's colours, box and heading, light and dark).
END_STYLE: Final = (
    ":root{--ink:#1b1d21;--muted:#5b6270;--line:#d5d9e0;--paper:#fff;--page:#f4f5f7;color-scheme:light dark}"
    "@media (prefers-color-scheme:dark){:root{--ink:#e8eaed;--muted:#a8aeb8;--line:#3c4149;"
    "--paper:#1f2227;--page:#15171a}}"
    "body{margin:0;background:var(--page);color:var(--ink);"
    'font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}'
    "main{max-width:42rem;overflow-wrap:anywhere;margin:2rem auto;padding:1.5rem 1.75rem 1.75rem;"
    "background:var(--paper);border:1px solid var(--line);border-radius:12px}"
    ".eyebrow{margin:0;color:var(--muted);font-size:.8rem;letter-spacing:.04em;text-transform:uppercase}"
    "h1{font-size:1.35rem;line-height:1.3;margin:.25rem 0}"
    "@media (max-width:40rem){main{margin:0;border:0;border-radius:0;min-height:100vh;padding:1.25rem 1rem}}"
)
#: The CSP source that allows ``END_STYLE`` and nothing else inline.
END_STYLE_SOURCE: Final = f"'sha256-{base64.b64encode(hashlib.sha256(END_STYLE.encode()).digest()).decode()}'"


def _head(title: str, scripts: tuple[str, ...] = (), *, inline: bool = False) -> str:
    """Every page's opening, up to its ``<body>``: ``title`` (escaped) in the tab, the
    answer page's stylesheet (``inline``: ``END_STYLE`` instead), and ``scripts`` (from
    ``/static``, deferred)."""
    tags = "".join(f'<script src="/static/{name}" defer></script>\n' for name in scripts)
    style = f"<style>{END_STYLE}</style>" if inline else '<link rel="stylesheet" href="/static/app.css">'
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width,initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{html.escape(title)} · mcp-elicit</title>\n"
        f"{style}\n{tags}</head>\n<body>\n"
    )


#: The heading and text of the pages of requests the answer server refuses (``ui.web``):
#: another host name (421: DNS rebinding), another site (403), no page's cookie (403), an
#: address that serves nothing (404) or not with that method (405).
REFUSED: Final = {
    "other-host": (
        "This address does not serve the question",
        "The answer page is served at 127.0.0.1 (or localhost) only: open it from the link mcp-elicit gave.",
    ),
    "other-site": (
        "Refused: this request came from another site",
        "The answer page takes requests from its own page only: open it from the link mcp-elicit gave.",
    ),
    "no-cookie": (
        "Not allowed",
        "Only the page opened from mcp-elicit's link, in the browser it opened in, can do this.",
    ),
    "not-found": (
        "Nothing here",
        "This address serves nothing: open the question from the link mcp-elicit gave.",
    ),
    "wrong-method": (
        "Not a page",
        "This address answers the question page's own requests only: open the question from the link mcp-elicit gave.",
    ),
}


def end_page(heading: str, text: str = "") -> str:
    """A page that ends there, with nothing to answer: ``heading`` (also the tab's title)
    and ``text`` under it, mcp-elicit's own words (escaped), laid out as the answer page is."""
    said = f"<p>{html.escape(text)}</p>\n" if text else ""
    return f"""{_head(heading, inline=True)}<main>
<header>
<p class="eyebrow">mcp-elicit · a question from an MCP server</p>
<h1>{html.escape(heading)}</h1>
</header>
{said}</main>
</body>
</html>
"""


def continue_page(server: str) -> str:
    """What the link answers when followed from another site: this page's own step to the
    form, which names the ``server`` asking (made inert and escaped) as the form does."""
    who = html.escape(fit(server, form_text.TITLE_MAX, length=True))
    return (
        f"{_head(f'Opening the question from {in_title(server)}')}<main>\n"
        f'<h1>Opening the question from <span dir="auto">{who}</span>…</h1>\n'
        '<p><a href="/form">Continue to the question</a></p>\n</main>\n</body>\n</html>\n'
    )
