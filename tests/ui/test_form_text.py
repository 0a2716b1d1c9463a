"""Forms as text: what is typed is read back per kind of field, server text is made safe."""

from __future__ import annotations

import pytest

from mcp_elicit.errors import FormValidationError
from mcp_elicit.forms import Boolean, Choice, Form, FormSchema, Integer, MultiChoice, Number, String
from mcp_elicit.ui.form_text import (
    OPTION_ABOUT_MAX,
    TITLE_MAX,
    clean,
    constraints,
    default_text,
    fit,
    label,
    option_about,
    option_lines,
    parse_answer,
    show_value,
    typed,
)

FORM = Form(
    size=Integer(title="Party size", minimum=1, maximum=20),
    price=Number(maximum=9.5, required=False),
    when=String(format="date", description="The day"),
    name=String(min_length=2, max_length=5, required=False),
    ok=Boolean(title="Confirm", default=True),
    seat=Choice({"in": "Inside", "out": "Terrace"}, default="in"),
    plain=Choice(["a", "b"], required=False),
    diet=MultiChoice(["vegan", "gluten-free"], required=False, max_items=1),
)


@pytest.mark.parametrize(
    ("field", "text", "value", "problem"),
    [
        ("size", "3", 3, None),
        ("size", " 3 ", 3, None),
        ("size", "3.0", 3, None),
        ("size", "3.5", None, "must be a whole number"),
        ("size", "three", None, "must be a whole number"),
        ("size", "", None, None),
        ("price", "9.25", 9.25, None),
        ("price", "nan", None, "must be a finite number"),
        ("price", "x", None, "must be a number"),
        ("when", "2026-12-31", "2026-12-31", None),
        ("name", " Ada  ", " Ada  ", None),  # text is kept as typed, spaces and all
        ("name", " \t ", None, None),  # only spaces: no answer
        # An invalid byte read from a terminal (surrogateescape): no JSON can carry it.
        ("name", "Jos\udce9", None, "has a character that is not text (<U+DCE9>); type it again"),
        *(("ok", word, True, None) for word in ("Y", "y", "Yes", "true")),
        *(("ok", word, False, None) for word in ("no", "N", "FALSE")),
        ("ok", "maybe", None, "must be yes or no: type y or n"),
        ("seat", "2", "out", None),
        ("seat", "terrace", "out", None),
        ("seat", "in", "in", None),
        ("seat", "3", None, "'3' is not one of the choices; type its number, value or title"),
        ("seat", "\u0662", "out", None),  # ARABIC-INDIC DIGIT TWO
        ("seat", "²", None, "'²' is not one of the choices; type its number, value or title"),
        (
            "seat",
            "1" * 5000,
            None,
            f"{'1' * 5000!r} is not one of the choices; type its number, value or title",
        ),
        ("diet", "1, ²", None, "'²' is not one of the choices; type numbers, values or titles"),
        ("plain", "B", "b", None),
        ("diet", "1, gluten-free", ["vegan", "gluten-free"], None),
        ("diet", "vegan,,", ["vegan"], None),
        ("diet", "-", [], None),
        ("diet", "vegan, 1", None, "names 'vegan' more than once: type each choice once"),
        ("diet", " - ", [], None),
        ("diet", "fish", None, "'fish' is not one of the choices; type numbers, values or titles"),
        ("diet", "4", None, "'4' is not one of the choices; type numbers, values or titles"),
        # choices with spaces or semicolons between them: how to write them
        ("diet", "1 2", None, "'1 2' is not one of the choices; separate choices with commas: 1, 2"),
        (
            "diet",
            "vegan; Gluten-free",
            None,
            "'vegan; Gluten-free' is not one of the choices; separate choices with commas: vegan, Gluten-free",
        ),
        ("diet", "1 fish", None, "'1 fish' is not one of the choices; type numbers, values or titles"),
        # one choice named twice so: "1, 1" or "vegan, 1" would be refused in turn
        ("diet", "1 1", None, "'1 1' is not one of the choices; type numbers, values or titles"),
        ("diet", "vegan;1", None, "'vegan;1' is not one of the choices; type numbers, values or titles"),
    ],
)
def test_parse_answer(field: str, text: str, value: object, problem: str | None) -> None:
    parsed = parse_answer(FORM.field(field), text)
    assert (parsed.value, parsed.problem) == (value, problem)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("New York", ["New York"]),
        ("new  york", ["New York"]),
        ("a;b", ["a;b"]),
        ("New York, a;b", ["New York", "a;b"]),
    ],
)
def test_a_choice_with_a_space_or_a_semicolon_in_it_is_taken_as_typed(text: str, value: list[str]) -> None:
    # The choices typed apart by spaces or a semicolon ("New", "York", "a", "b") are never
    # what a choice so written stands for.
    spec = Form(c=MultiChoice(["New York", "a;b", "a", "b", "New", "York"])).field("c")
    assert parse_answer(spec, text).value == value


def test_a_choice_value_wins_over_a_position() -> None:
    spec = Form(n=Choice(["2", "1"])).field("n")
    assert parse_answer(spec, "1").value == "1"
    assert parse_answer(spec, "2").value == "2"


def test_none_of_a_multi_choice_is_said_with_a_dash_unless_an_option_is_one() -> None:
    dash = Form(m=MultiChoice(["-", "x"])).field("m")
    assert parse_answer(dash, "-").value == ["-"]
    at_least = Form(m=MultiChoice(["a", "b"], min_items=1)).field("m")
    assert constraints(at_least)[1] == "pick at least 1: numbers, values or titles, separated by commas"
    assert typed(FORM.field("diet"), []) == "-"
    assert default_text(Form(m=MultiChoice(["a"], default=[])).field("m")) == ""


def test_values_read_back_are_checked_by_the_form() -> None:
    assert FORM.check_field("size", parse_answer(FORM.field("size"), "25").value) == "must be at most 20"
    assert (
        FORM.check_field("diet", parse_answer(FORM.field("diet"), "1,2").value)
        == "must have at most 1 choice"
    )
    assert FORM.check_field("when", parse_answer(FORM.field("when"), "tomorrow").value) == (
        "must be a date like 2026-12-31"
    )


def test_constraints_say_everything_a_person_needs() -> None:
    assert constraints(FORM.field("size")) == ["required", "a whole number from 1 to 20"]
    assert constraints(FORM.field("price")) == ["optional", "a number, at most 9.5"]
    assert constraints(FORM.field("when")) == ["required", "a date, YYYY-MM-DD"]
    assert constraints(FORM.field("name")) == ["optional", "2 to 5 characters"]
    assert constraints(FORM.field("ok")) == ["required", "yes or no"]
    assert constraints(FORM.field("diet")) == [
        "optional",
        "pick at most 1: numbers, values or titles, separated by commas, or - for none",
    ]
    assert option_lines(FORM.field("seat")) == ["1. Inside (in)", "2. Terrace (out)"]
    assert option_lines(FORM.field("plain")) == ["1. a", "2. b"]
    assert option_lines(FORM.field("size")) == []


def test_labels_defaults_and_shown_values() -> None:
    assert label(FORM.field("size")) == "Party size"
    assert label(FORM.field("when")) == "When"
    assert default_text(FORM.field("ok")) == "yes"
    assert default_text(FORM.field("seat")) == "Inside"  # as the choices are listed
    assert default_text(FORM.field("size")) == ""
    assert show_value(FORM.field("seat"), "out") == "Terrace"
    assert show_value(FORM.field("diet"), ["vegan"]) == "vegan"
    assert show_value(FORM.field("diet"), []) == "(none)"
    assert show_value(FORM.field("ok"), False) == "no"
    assert show_value(FORM.field("price"), 2.0) == "2"
    assert show_value(FORM.field("price"), None) == "(no answer)"


class _CountedValue(str):
    """An option's value that counts how often it is compared."""

    compared = 0
    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        _CountedValue.compared += 1
        return str.__eq__(self, other)


def test_a_multi_choice_answer_is_shown_in_time_linear_in_its_options() -> None:
    """Every option of many ticked: each is looked up by value, not found by a scan of all
    the options (quadratic, which held the browser answerer's server for many seconds on
    every keystroke). Counted in comparisons, not timed: a few per ticked value."""
    values = [_CountedValue(f"o{n}") for n in range(10_000)]
    spec = MultiChoice({v: f"Option {v}" for v in values}, name="many")
    _CountedValue.compared = 0
    shown = show_value(spec, [str(v) for v in values])
    assert shown.startswith("Option o0, Option o1, ") and shown.endswith(", Option o9999")
    assert _CountedValue.compared <= 4 * len(values), f"{_CountedValue.compared:,} comparisons"


def test_a_prompt_starts_only_with_text_shown_as_it_is() -> None:
    tricky = Form(
        pick=MultiChoice(["a,b", "c", "d\u202ee", " f"], default=["a,b", "c"]),
        one=Choice(["x\x1by", "a,b"], default="a,b"),
        note=String(default="left\u202eright", required=False),
    )
    assert default_text(tricky.field("pick")) == "1, c"
    assert typed(tricky.field("pick"), ["d\u202ee", " f"]) == "3, 4"
    assert default_text(tricky.field("one")) == "a,b"
    assert typed(tricky.field("one"), "x\x1by") == "1"
    assert default_text(tricky.field("note")) == ""
    for name, text in (("pick", "1, c"), ("pick", "3, 4"), ("one", "1")):
        assert parse_answer(tricky.field(name), text).value is not None


def test_a_choice_starts_with_its_title_and_reads_back_as_its_value() -> None:
    """The person sees the choices by their titles: the prompt starts with the title they
    read, and that title still sends the value. A title that would be read as another
    choice (another's value, a number in the list, or one with a comma in a multi-choice)
    is written as the choice's number instead."""
    form = Form(
        where=Choice({"in": "Inside", "out": "On the terrace"}, default="out"),
        many=MultiChoice({"a": "Apples", "b": "Pears, ripe"}, default=["a", "b"]),
        odd=Choice({"x": "y", "y": "Why", "z": "1"}, default="x"),
        num=Choice({"x": "Ex", "z": "1"}, default="z"),
    )
    assert default_text(form.field("where")) == "On the terrace"
    assert parse_answer(form.field("where"), "On the terrace").value == "out"
    assert default_text(form.field("many")) == "Apples, 2"
    assert parse_answer(form.field("many"), "Apples, 2").value == ["a", "b"]
    assert default_text(form.field("odd")) == "1"  # its title "y" is another's value
    assert parse_answer(form.field("odd"), "1").value == "x"
    assert default_text(form.field("num")) == "2"  # its title "1" is the first's number
    assert parse_answer(form.field("num"), "2").value == "z"


def test_a_choice_whose_title_cannot_start_a_prompt_never_reads_back_as_another() -> None:
    """Its title kept out (a comma in a multi-choice, too long), the choice was written as
    its number, though that number is another choice's value, which is read first: a rating
    listed 3, 2, 1 whose default was "1" started with "3" and sent "3". Its value is
    written instead, and each start still reads back as the default."""
    form = Form(
        rating=MultiChoice({"3": "Great, loved it", "2": "Fine, mostly", "1": "Poor, sadly"}, default=["1"]),
        pick=Choice({"2": "Two", "x": "x" * (TITLE_MAX + 1)}, default="x"),
        both=Choice({"2": "Two", "x": "2"}, default="x"),
    )
    for name in ("rating", "pick", "both"):
        spec = form.field(name)
        start = default_text(spec)
        assert start, name
        expected = list(spec.default) if isinstance(spec, MultiChoice) else spec.default
        assert parse_answer(spec, start).value == expected, (name, start)
    assert default_text(form.field("rating")) == "1"
    assert default_text(form.field("pick")) == "x"
    assert default_text(form.field("both")) == "x"  # its title "2" and its number 2 both miss
    # no way to write "a,b" reads back: the prompt starts empty (Enter gives the default),
    # never "Two, " (which sends only "2")
    lost = MultiChoice({"2": "Two", "a,b": "x" * (TITLE_MAX + 1)}, default=["2", "a,b"])
    assert default_text(Form(m=lost).field("m")) == ""


def test_clean_defuses_terminal_control() -> None:
    assert clean("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert clean("evil\u202etxt.exe") == "evil<U+202E>txt.exe"
    assert clean("zero\u200bwidth") == "zero<U+200B>width"
    assert clean("two\nlines\r") == "two lines "
    assert clean("two\nlines", multiline=True) == "two\nlines"
    assert clean("bell\x07") == "bell\\x07"
    assert clean("Zürich 東京") == "Zürich 東京"


@pytest.mark.parametrize(
    "text",
    [
        "Vie\u0323\u0302t",  # Vietnamese, decomposed: a dot below and a circumflex
        "\u0f56\u0f66\u0f92\u0fb2\u0f74\u0f56\u0f66",  # Tibetan, a stack of three
        "1\ufe0f\u20e3",  # a keycap emoji
        "e" + "\u0301" * 5,
    ],
)
def test_clean_keeps_the_marks_a_script_stacks(text: str) -> None:
    assert clean(text) == text


SAFE = "must be between -9007199254740991 and 9007199254740991"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("9" * 5000, SAFE),  # int() refuses over 4300 digits: was "must be a finite number"
        ("-" + "9" * 5000, SAFE),
        ("1e999999999", SAFE),
        ("9007199254740992", SAFE),
        ("-9007199254740992", SAFE),
        ("9007199254740993.0", SAFE),  # was rounded to 9007199254740992
        ("9007199254740990.6", "must be a whole number"),  # was rounded to 9007199254740991
        ("0.5e1", None),
    ],
)
def test_a_whole_number_is_read_exactly_and_one_beyond_the_safe_range_is_refused(
    text: str, problem: str | None
) -> None:
    parsed = parse_answer(Form(n=Integer()).field("n"), text)
    assert parsed.problem == problem
    if problem is None:
        assert parsed.value == 5


def test_a_number_too_large_says_what_is_allowed() -> None:
    assert parse_answer(Form(n=Integer()).field("n"), "9007199254740991.0").value == 9007199254740991
    assert parse_answer(FORM.field("size"), "9" * 5000).problem == "must be at most 20"  # its own bound
    assert parse_answer(FORM.field("size"), "-1e400").problem == "must be at least 1"
    assert parse_answer(FORM.field("price"), "1e400").problem == "must be at most 9.5"
    huge = "must be between -1.7976931348623157e+308 and 1.7976931348623157e+308"
    assert parse_answer(Form(n=Number()).field("n"), "9" * 5000).problem == huge
    assert parse_answer(Form(n=Number()).field("n"), "-1e309").problem == huge
    assert parse_answer(Form(n=Number()).field("n"), "1e308").value == 1e308


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        ("12345678901234567890", "1.2345678901234567e+19"),  # was sent as 12345678901234567168
        ("9007199254740993", "9007199254740992.0"),
        ("1.00000000000000001", "1.0"),
        ("1e-400", "0.0"),  # was sent as 0.0
    ],
)
def test_a_number_a_json_number_cannot_carry_is_refused_saying_what_it_would_be(text: str, sent: str) -> None:
    """What was typed reaches the server as a double: one that would arrive as another number
    is refused, saying which, instead of silently rounded."""
    parsed = parse_answer(Form(n=Number()).field("n"), text)
    assert (parsed.value, parsed.problem) == (
        None,
        f"has more digits than a number can carry: it would arrive as {sent}; type that, or fewer digits",
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0.1", 0.1),
        ("0.30000000000000004", 0.30000000000000004),
        ("1.50", 1.5),
        ("5e-324", 5e-324),
        # the exact value of the double 0.1 and of 1e23: each arrives as the number typed
        ("0.1000000000000000055511151231257827021181583404541015625", 0.1),
        ("99999999999999991611392", 1e23),
        ("9007199254740992", 9007199254740992.0),
    ],
)
def test_a_number_a_json_number_carries_is_taken(text: str, value: float) -> None:
    assert parse_answer(Form(n=Number()).field("n"), text).value == value


@pytest.mark.parametrize("text", ["1_0", "1_000", "0.5_5", "1e1_0"])
@pytest.mark.parametrize("kind", [Integer, Number])
def test_a_number_with_an_underscore_is_refused_as_one_with_a_comma(
    kind: type[Integer] | type[Number], text: str
) -> None:
    # Python's Decimal reads "1_0" as 10: a slip of the finger on "1" and "0" was sent as
    # ten, where "1,0" and "1 0" are refused saying how to write a number.
    parsed = parse_answer(Form(n=kind()).field("n"), text)
    assert parsed.value is None
    assert parsed.problem == parse_answer(Form(n=kind()).field("n"), "1,0").problem
    assert parsed.how is not None and "no commas or spaces" in parsed.how


def test_digits_of_other_scripts_are_read_as_numbers() -> None:
    # A full-width seven (U+FF17) from a Japanese input method, an Arabic-Indic three: the number they are.
    assert parse_answer(Form(n=Integer()).field("n"), "\uff17").value == 7
    assert parse_answer(Form(n=Number()).field("n"), "\u0663.5").value == 3.5


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        (Integer, "\u22125", -5),
        (Integer, " \u22125 ", -5),
        (Integer, "\uff0d\uff15", -5),
        (Number, "\u22122.5", -2.5),
        (Number, "1e\u22121", 0.1),
        (Integer, "\uff0b\uff15", 5),  # a full-width plus, as that input method types one
        (Number, "1e\uff0b1", 10.0),
    ],
)
def test_a_minus_sign_is_read_as_a_minus(kind: type[Integer] | type[Number], text: str, value: float) -> None:
    # "\u22125" (U+2212, as Swedish writes a minus; U+FF0D from a Japanese input method) was
    # refused in the terminal as "must be a whole number" while the page took it: both read
    # typed numbers here (the page's answers through web_pages.check_form).
    parsed = parse_answer(Form(n=kind()).field("n"), text)
    assert (parsed.value, parsed.problem) == (value, None)


#: A form as the official SDKs write one: exclusive bounds, a step, described options.
SDK_FORM = FormSchema.parse(
    {
        "type": "object",
        "properties": {
            "share": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.25},
            "pair": {"type": "integer", "minimum": 0, "multipleOf": 2},
            "room": {
                "type": "string",
                "oneOf": [
                    {"const": "s", "title": "Single", "description": "One bed,\nno\x1b[31m view"},
                    {"const": "d", "title": "Double"},
                    {"const": "x", "title": "Suite", "description": "w" * 500},
                ],
            },
            "extras": {
                "type": "array",
                "items": {"anyOf": [{"const": "b", "title": "Breakfast", "description": "7 to 10"}]},
            },
        },
    },
    beyond_subset="relax",
)


@pytest.mark.parametrize(
    ("field", "words"),
    [
        ("share", ["optional", "a number, more than 0 and at most 1"]),
        ("ratio", ["optional", "a number, more than 0 and less than 1", "a multiple of 0.25"]),
        ("pair", ["optional", "a whole number, at least 0", "a multiple of 2"]),
    ],
)
def test_exclusive_bounds_and_a_step_are_said_with_the_field(field: str, words: list[str]) -> None:
    assert constraints(SDK_FORM.field(field), SDK_FORM.extras(field)) == words


def test_option_descriptions_are_shown_inert_on_one_line_and_capped() -> None:
    room = SDK_FORM.field("room")
    about = option_about(room, SDK_FORM.extras("room"))
    assert about[:2] == ["One bed, no\\x1b[31m view", ""]
    assert len(about[2]) == OPTION_ABOUT_MAX and about[2].endswith("…")
    assert option_about(SDK_FORM.field("extras"), SDK_FORM.extras("extras")) == ["7 to 10"]
    assert option_about(room) == ["", "", ""]  # a form without descriptions


def test_options_another_server_titled_alike_are_shown_apart() -> None:
    wire = {
        "type": "object",
        "properties": {
            "ok": {
                "type": "string",
                "oneOf": [{"const": "a", "title": "Yes"}, {"const": "b", "title": "Yes"}],
            }
        },
    }
    spec = FormSchema.parse(wire, check_secrets=False, beyond_subset="relax").field("ok")
    assert option_lines(spec) == ["1. Yes (a)", "2. Yes (b)"]
    assert show_value(spec, "b") == "Yes (b)"
    assert parse_answer(spec, "Yes (b)").value == "b"


@pytest.mark.parametrize(
    ("bounds", "words", "too_small", "too_big"),
    [
        (
            {"minimum": 0.5, "maximum": 3.7},
            "a whole number from 1 to 3",
            (0, "must be at least 1"),
            (4, "must be at most 3"),
        ),
        ({"minimum": -2.5}, "a whole number, at least -2", (-3, "must be at least -2"), None),
        ({"maximum": -0.5}, "a whole number, at most -1", None, (0, "must be at most -1")),
        (
            {"exclusiveMinimum": 0.5, "maximum": 3.7},
            "a whole number from 1 to 3",
            (0, "must be at least 1"),
            (4, "must be at most 3"),
        ),
    ],
)
def test_an_integer_field_with_fractional_bounds_is_said_and_checked_by_its_whole_bounds(
    bounds: dict[str, float], words: str, too_small: tuple[int, str] | None, too_big: tuple[int, str] | None
) -> None:
    wire = {"type": "object", "properties": {"n": {"type": "integer", **bounds}}}
    schema = FormSchema.parse(wire, beyond_subset="relax")
    spec = schema.field("n")
    assert constraints(spec)[1] == words
    for case in (too_small, too_big):
        if case is not None:
            with pytest.raises(FormValidationError) as caught:
                schema.validate({"n": case[0]})
            assert caught.value.problems[0].message == case[1]
    if "minimum" in bounds and "maximum" in bounds:
        assert schema.validate({"n": 1}) == {"n": 1} and schema.validate({"n": 3}) == {"n": 3}
    if "exclusiveMinimum" not in bounds:  # the form still says what the server wrote
        assert schema.to_json()["properties"]["n"] == {"type": "integer", **bounds}


@pytest.mark.parametrize(
    ("at", "whole"),
    [
        ("\u202e", "<U+202E>"),  # a character shown as its code: "<…" read as a "<"
        ("e\u0301", "e\u0301"),  # a letter and its accent: "e…" is another letter
        ("\u0915\u093f", "\u0915\u093f"),  # Devanagari ki: its vowel sign is a mark
    ],
    ids=["code", "accent", "vowel sign"],
)
def test_a_cut_never_splits_what_is_read_as_one(at: str, whole: str) -> None:
    for before in range(190, 200):
        shown = fit("a" * before + at + "b" * 20, 200)
        assert shown.endswith("…") and len(shown) <= 200
        kept = shown[before:-1]
        assert kept == "" or kept.startswith(whole), (before, kept)


def test_options_alike_are_told_apart_in_the_review() -> None:
    # Two options titled the same (another server's form) read the same in the review.
    seat = Choice({"a": "Yes", "b": "Yes", "c": "No"}, title="Seat")
    assert [show_value(seat, v) for v in "abc"] == ["Yes (choice 1)", "Yes (choice 2)", "No"]


def test_options_listed_cut_short_alike_show_where_they_differ() -> None:
    # Two long values differing only at their ends were listed "1. seat-in-the-…
    # (275 characters)" and "2. seat-in-the-… (276 characters)" in the terminal.
    row = "seat-in-the-middle-of-row-twelve-" * 8
    lines = option_lines(Choice([row + "by-the-window", row + "near-the-door"]))
    assert "by-the-window" in lines[0] and "near-the-door" in lines[1], lines
    titled = option_lines(Choice({"w": row + "by-the-window", "d": row + "near-the-door"}))
    assert "by-the-window" in titled[0] and titled[0].endswith("(w)"), titled


def test_a_uri_field_is_named_alike_in_both_answerers_and_in_its_message() -> None:
    """The terminal called it "an absolute URI", the page "a full web address", and both
    take any scheme (mailto:, urn:): all three now say "a full address"."""
    from mcp_elicit.forms.foreign import NO_EXTRAS
    from mcp_elicit.forms.formats import FORMAT_MESSAGES
    from mcp_elicit.ui.web_fields import field_html

    spec = Form(site=String(title="Site", format="uri")).field("site")
    assert "a full address, like https://example.com/page" in constraints(spec)
    assert "a full address, like https://example.com/page" in field_html("f0", spec, NO_EXTRAS)
    assert FORMAT_MESSAGES["uri"].startswith("must be a full address, like https://example.com/page")


def test_a_title_typed_as_it_looks_is_read_whatever_its_accents_are_made_of() -> None:
    """A title written with an accent as its own mark ("Cafe" and U+0301) looks like "Café"
    as a keyboard types it (one character): typed so, it was "not one of the choices"."""
    form = Form(
        one=Choice({"a": "Cafe\u0301", "b": "Tea"}),
        many=MultiChoice({"a": "Tea", "b": "Cr\u00e8me"}),
    )
    assert parse_answer(form.field("one"), "CAF\u00c9").value == "a"
    assert parse_answer(form.field("many"), "tea, Cre\u0300me").value == ["a", "b"]


def test_a_title_typed_as_the_list_shows_it_is_read_whatever_its_spaces() -> None:
    """The list shows a title's spaces collapsed ("On  the terrace" as "On the terrace"):
    typed as shown, it was "not one of the choices"."""
    spec = Form(c=Choice({"a": "On  the terrace", "b": "Inside"}, default="a")).field("c")
    assert "1. On the terrace (a)" in option_lines(spec)
    assert parse_answer(spec, "on the terrace").value == "a"
    assert parse_answer(spec, default_text(spec)).value == "a"
