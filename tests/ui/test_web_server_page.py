"""The browser answerer's page as HTML, and the one source of truth: server text escaped and
made inert, text no page can carry refused, a labelled native control for every variant, and
the page's checks saying what the form's own validation says."""

from __future__ import annotations

import dataclasses
import html as html_lib
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit.errors import FormValidationError
from mcp_elicit.forms import Boolean, Form, Integer, String
from mcp_elicit.ui import web_pages
from mcp_elicit.ui.web_pages import check_form, page
from ui.web_rounds import DEFAULTS, EVERY_KIND, LEGACY, SERVER, form_request, open_round, url_request

from support.web_answers import SMALL, claim

pytestmark = pytest.mark.anyio

STATIC = Path(web_pages.__file__).parent / "web_static"


def test_server_text_is_escaped_and_made_inert() -> None:
    hostile = Form(
        x=String(title='<img src=x onerror="alert(1)">', description="a\u202eb <script>alert(2)</script>")
    )
    request = form_request(hostile, message="</p><script>alert(3)</script>\x1b[31m red")
    html = page([request], csrf="c")
    assert "<script>alert" not in html
    assert "<img" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "\u202e" not in html and "&lt;U+202E&gt;" in html
    assert "\x1b" not in html and "\\x1b[31m" in html
    scripts = re.findall(r"<script[^>]*>[^<]*</script>", html)
    assert scripts == [
        f'<script src="/static/{name}.js" defer></script>'
        for name in ("values", "draft", "review", "events", "urlstep", "app", "spin")
    ]
    assert html.count("<script") == 7  # nothing inline


async def test_text_no_page_can_carry_is_shown_made_inert() -> None:
    # JSON can say "\u0000", which no page may carry.
    schema = json.loads(
        '{"type": "object", "properties": {"c": {"type": "string", "enum": ["a", "b\\u0000"]}}}'
    )
    async with open_round([form_request(schema)]) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        shown = await client.get(f"{opened.base}/form")
        assert shown.status_code == 200
        assert 'value="a"' in shown.text and 'value="b\\x00"' in shown.text and "\x00" not in shown.text


def test_a_form_with_text_no_message_can_carry_never_reaches_a_page() -> None:
    # JSON can say "\ud800" (a lone surrogate, which UTF-8 cannot encode): the form is
    # refused as it is read (the connection declines it), naming the character.
    schema = json.loads('{"type": "object", "properties": {"c": {"type": "string", "enum": ["a\\ud800"]}}}')
    request = form_request(schema)
    assert request.schema is None and request.schema_problem is not None
    assert "U+D800" in request.schema_problem


async def test_a_url_no_page_can_carry_is_refused_not_a_server_error() -> None:
    async with (
        open_round([url_request("https://example.com/\ud800")]) as opened,
        httpx.AsyncClient() as client,
    ):
        await claim(client, opened)
        shown = await client.get(f"{opened.base}/form")
        assert shown.status_code == 200
        assert "This address will not be opened." in shown.text and "U+D800" in shown.text


def test_only_an_optional_boolean_without_a_default_is_three_way() -> None:
    form = Form(
        a=Boolean(title="A"), b=Boolean(title="B", required=False), c=Boolean(title="C", default=False)
    )
    html = page([form_request(form)], csrf="c")
    assert html.count('type="checkbox"') == 2  # required, or defaulted: an answer either way
    assert html.count('type="radio"') == 3 and 'value="true"' in html and 'value="false"' in html
    assert check_form(form, [True, None, False]).content == {"a": True, "c": False}
    assert check_form(form, [False, False, True]).content == {"a": False, "b": False, "c": True}


def test_the_page_speaks_of_required_marks_only_when_it_shows_one() -> None:
    # A required yes-or-no is a checkbox, always an answer, without a mark.
    marks = Form(a=Boolean(title="A"), b=String(title="B", required=False))
    html = page([form_request(marks)], csrf="c")
    assert 'class="req"' not in html and "are required" not in html
    html = page([form_request(Form(a=Boolean(title="A"), b=String(title="B")))], csrf="c")
    assert html.count('class="req"') == 2 and "are required" in html  # the note's own star, and B's


def test_the_reviews_decline_says_all_when_the_page_asks_several_questions() -> None:
    # The form's button said "Decline all" and the review's, for the same action, "Decline":
    # with one question already declined there, it read as declining what was left.
    several = page([form_request(SMALL), form_request(SMALL)], csrf="c")
    assert '<button type="button" class="decline" id="decline">Decline all</button>' in several
    assert '<button type="button" class="decline" id="decline-review">Decline all</button>' in several
    one = page([form_request(SMALL)], csrf="c")
    assert '<button type="button" class="decline" id="decline-review">Decline</button>' in one


def test_the_page_has_a_labelled_native_control_for_every_variant() -> None:
    html = page(
        [form_request(), form_request(LEGACY, key="legacy"), form_request(DEFAULTS, key="defaults")], csrf="c"
    )
    assert 'type="email"' in html and 'type="url"' in html and 'type="date"' in html
    assert (
        'type="datetime-local"' in html and 'max="9999-12-31T23:59:59"' in html and 'max="9999-12-31"' in html
    )
    # numbers are text the page reads with the browser's decimal mark, bounds in the hint
    assert 'type="number"' not in html and "data-number" in html
    assert 'inputmode="numeric"' in html and 'inputmode="decimal"' in html
    assert 'role="radiogroup"' in html and "<select" in html and 'role="group"' in html
    assert ">Medium</label>" in html  # enumNames
    assert 'value="2"' in html and 'value="window seat"' in html  # defaults
    assert 'data-rfc3339="2026-12-24T18:30:00Z"' in html
    assert 'value="out" checked' in html and 'value="c" selected' in html and 'value="vegan" checked' in html
    for control in re.findall(r'<input type="(?:text|email|url|date|datetime-local)" id="([^"]+)"', html):
        assert f'<label for="{control}" dir="auto">' in html
    assert html.count('aria-describedby="') >= len(EVERY_KIND.fields)


@pytest.mark.parametrize(
    ("values", "problems"),
    [
        (
            [
                "Al",
                "al@example.com",
                None,
                "2026-12-24",
                "2026-12-24T18:30:00+01:00",
                "2",
                None,
                True,
                "mains",
                "in",
                "t2",
                [],
                ["wine"],
            ],
            {},
        ),
        (
            ["A", "nope", "x", "24/12", "?", "0", "1000", "yes", "soup", None, None, ["vegan", "vegan"], []],
            None,
        ),
    ],
    ids=["fine", "everything-wrong"],
)
def test_check_form_says_what_validate_says(values: list[Any], problems: dict[int, str] | None) -> None:
    checked = check_form(EVERY_KIND, values)
    if problems is not None:
        assert checked.problems == problems
        EVERY_KIND.validate(EVERY_KIND.apply_defaults(checked.content))
        return
    # Every field is wrong, and each message is the form's own with the field's label in front.
    assert set(checked.problems) == set(range(len(EVERY_KIND.fields)))
    for index, message in checked.problems.items():
        spec = EVERY_KIND.fields[index]
        assert message.startswith((spec.title or spec.name) + " ")
    with pytest.raises(FormValidationError) as raised:
        EVERY_KIND.validate(EVERY_KIND.apply_defaults(checked.content))
    told = {p.field: p.message for p in raised.value.problems}
    for index, message in checked.problems.items():
        assert message.endswith(" " + told[EVERY_KIND.fields[index].name])


def test_text_is_read_as_typed_as_in_the_terminal() -> None:
    form = Form(note=String(title="Note"), size=Integer(required=False))
    assert check_form(form, ["  by the window ", " 4 "]).content == {"note": "  by the window ", "size": 4}
    assert check_form(form, ["   ", None]).problems == {0: "Note is required"}
    # JSON from the page can say "\ud800"; the client could not send it back.
    assert check_form(form, ["x\ud800", None]).problems == {
        0: "Note has a character that is not text (<U+D800>); type it again"
    }


async def test_marks_stacked_on_a_letter_are_shown_not_piled_over_the_page() -> None:
    # Hundreds of combining marks on one letter paint far above and below its line, over
    # the address and its site; past a few (no script stacks more), each is shown by code.
    zalgo = "a" + "\u0363\u0364" * 200
    request = url_request("https://evil.example/pay", message=f"Pay {zalgo} here")
    async with open_round([request]) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        shown = (await client.get(f"{opened.base}/form")).text
    assert re.search("[\u0300-\u036f]{6}", shown) is None
    assert "a\u0363\u0364\u0363\u0364\u0363&lt;U+0364&gt;&lt;U+0363&gt;" in shown


def test_an_integer_field_with_fractional_bounds_says_the_whole_numbers_it_takes() -> None:
    # min="0.5" with step="1" made a number box take 0.5, 1.5... and refuse 1, 2 and 3; the
    # box is text now, and the hint says which whole numbers the form takes, as does the
    # spin button to assistive technology.
    html = page([form_request(Form(n=Integer(minimum=0.5, maximum=3.7)))], csrf="c")
    assert ' min="' not in html and "a whole number from 1 to 3" in html
    assert 'role="spinbutton" aria-valuemin="1" aria-valuemax="3" data-step="1"' in html


def test_a_field_that_looks_like_a_secret_is_marked_so_no_draft_keeps_it() -> None:
    form = {"type": "object", "properties": {"password": {"type": "string"}, "note": {"type": "string"}}}
    html = page([form_request(form)], csrf="c", draft="mcp_elicit_abc")
    assert re.findall(r'<div class="field" id="(q0-f\d)"[^>]* data-secret', html) == ["q0-f0"]
    assert 'data-round="mcp_elicit_abc"' in html


def test_a_servers_huge_texts_are_cut_short_on_the_page() -> None:
    # A message, description or URL path of megabytes, a title of 90,000 characters (a
    # client reads up to 100,000) went onto the page whole: the form sat below megabytes
    # of text, and a <label> or <legend> of 90,000 characters filled the screen.
    big = "many words " * 200_000
    form = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Your name " + big[:90_000], "description": "About " + big},
            "pick": {
                "type": "string",
                "title": "Pick",
                "oneOf": [
                    {"const": "a", "title": "First " + big[:90_000]},
                    {"const": "b", "title": "Second"},
                ],
            },
        },
    }
    path = big.replace(" ", "/")
    url = f"https://accounts.example.com/{path}"
    html = page([form_request(form, message="Tell us " + big), url_request(url, message=big)], csrf="c")
    assert f'href="{url}"' not in html  # too long to be shown whole: refused, never linked
    assert len(html) < 100_000, f"{len(html)} characters on the page"
    assert "(2200008 characters)" in html  # the message, cut short
    assert ">https://accounts.example.com/many/words/" in html  # the URL refused, shown cut short
    assert f"/w… ({len(url)} characters)</p>" in html


async def test_every_script_and_stylesheet_the_page_loads_is_served_and_each_is_short() -> None:
    """The page's scripts and stylesheet, each named by the page, served by the answer
    server with its type (the CSP allows only those), and none past 500 lines: the page's
    script is split by concern rather than grown into one file no one reads whole."""
    async with open_round([form_request(EVERY_KIND)]) as opened, httpx.AsyncClient() as client:
        await claim(client, opened)
        shown = (await client.get(f"{opened.base}/form")).text
        linked = re.findall(r'<(?:script src|link rel="stylesheet" href)="(/static/[^"]+)"', shown)
        assert {p.rsplit("/", 1)[1] for p in linked} == {p.name for p in STATIC.iterdir()}, linked
        for path in linked:
            response = await client.get(f"{opened.base}{path}")
            kind = "text/css" if path.endswith(".css") else "text/javascript"
            assert (response.status_code, response.headers["content-type"].split(";")[0]) == (200, kind), path
            assert len(response.text.splitlines()) <= 500, (path, len(response.text.splitlines()))


def _tab_title(requests: list[Any]) -> str:
    found = re.search(r"<title>([^<]*)</title>", page(requests, csrf="c"))
    assert found is not None
    return html_lib.unescape(found.group(1))


def test_the_tabs_title_is_short_and_its_server_text_inert_and_isolated() -> None:
    """The title is a tab's label and the first thing a screen reader says: a server's name
    and message of 200 characters each made it a paragraph. Right-to-left server text is
    set apart in it (first-strong isolates) as on the page (``dir="auto"``), so it cannot
    reorder the page's own words around it; controls show as codes, as on the page."""
    long = dataclasses.replace(
        form_request(SMALL, message="Tell us " + "much " * 100),
        server=dataclasses.replace(SERVER, title="T" * 300),
    )
    title = _tab_title([long])
    assert len(title) <= 2 * 80 + len(" asks: ") + len(" · mcp-elicit"), title
    assert title.startswith("T" * 70) and " asks: Tell us much much" in title, title
    hebrew = dataclasses.replace(
        form_request(SMALL, message="כמה אורחים? 4"), server=dataclasses.replace(SERVER, title="מסעדה 2")
    )
    assert _tab_title([hebrew]) == "\u2068מסעדה 2\u2069 asks: \u2068כמה אורחים? 4\u2069 · mcp-elicit"
    hostile = form_request(SMALL, message="Pay\u202e\x1b[31m now\n\u2069 <b>")
    assert _tab_title([hostile]) == "Table bookings asks: Pay<U+202E>\\x1b[31m now <U+2069> <b> · mcp-elicit"
    assert _tab_title([form_request(SMALL, message="  \n ")]) == "Table bookings asks · mcp-elicit"


def test_every_class_the_pages_use_is_styled_or_scripted() -> None:
    """A class on a page is there for a rule of app.css or a script's hook; the end page's
    ``main.ended``, the header's ``.asker`` (and ``question-error``, ``declined-note``,
    ``url-label``, the server's name's ``server``) had neither, leaving a reader of the HTML to look for a style that did
    not exist. They are gone."""
    pages = [
        page([form_request(), url_request("https://example.com/pay")], csrf="c"),
        page([form_request(LEGACY)], csrf="c"),
        web_pages.end_page("Ended", "Nothing was sent."),
        web_pages.continue_page("Bookings"),
    ]
    used = {name for html in pages for attr in re.findall(r'class="([^"]*)"', html) for name in attr.split()}
    css = (STATIC / "app.css").read_text(encoding="utf-8")
    scripts = "".join(p.read_text(encoding="utf-8") for p in STATIC.glob("*.js"))
    unstyled = {
        name
        for name in used
        if not re.search(rf"\.{re.escape(name)}(?![\w-])", css)
        and not re.search(rf"[\"']{re.escape(name)}[\"']|[\"'][^\"'\n]*\.{re.escape(name)}(?![\w-])", scripts)
    }
    assert unstyled == set()
