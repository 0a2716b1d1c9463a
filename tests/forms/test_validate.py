"""Validating answers: every rule, its message, coercions, and defaults."""

from __future__ import annotations

import enum
from collections import OrderedDict

import pytest

from mcp_elicit.errors import FormValidationError, ValidationProblem
from mcp_elicit.forms import Boolean, Choice, Form, FormSchema, Integer, MultiChoice, Number, String
from mcp_elicit.forms.fields import FieldSpec
from mcp_elicit.forms.validate import FormValidator, Invalid, _first_repeat, compile_field
from mcp_elicit.wire.jsonrpc import encode


class Tone(enum.StrEnum):
    CALM = "calm"


class Count(int):
    pass


def one(spec: FieldSpec) -> FormSchema:
    return Form(x=spec)


def problems(schema: FormSchema, content: object) -> list[tuple[str | None, str]]:
    with pytest.raises(FormValidationError) as caught:
        schema.validate(content)
    return [(p.field, p.message) for p in caught.value.problems]


@pytest.mark.parametrize(
    ("spec", "value", "clean"),
    [
        (String(), "", ""),
        (String(), "héllo", "héllo"),
        (String(), Tone.CALM, "calm"),
        (String(min_length=2, max_length=3), "ab", "ab"),
        (String(min_length=2, max_length=3), "abc", "abc"),
        (String(max_length=2), "😀😀", "😀😀"),
        (String(format="email"), "a@example.com", "a@example.com"),
        (String(format="uri"), "https://example.com", "https://example.com"),
        (String(format="date"), "2026-12-31", "2026-12-31"),
        (String(format="date-time"), "2026-12-31T10:00:00Z", "2026-12-31T10:00:00Z"),
        (String(format="date-time"), "2016-12-31T18:59:60-05:00", "2016-12-31T18:59:60-05:00"),
        (Number(), 1, 1),
        (Number(), 1.5, 1.5),
        (Number(), -0.0, -0.0),
        (Number(), 10**30, 1e30),
        (Number(minimum=0, maximum=1), 0, 0),
        (Number(minimum=0, maximum=1), 1.0, 1.0),
        (Integer(), 3, 3),
        (Integer(), 3.0, 3),
        (Integer(), Count(4), 4),
        (Integer(minimum=1, maximum=20), 20, 20),
        (Integer(minimum=0.5), 1, 1),
        (Boolean(), True, True),
        (Boolean(), False, False),
        (Choice(["a", "b"]), "b", "b"),
        (Choice(Tone), Tone.CALM, "calm"),
        (MultiChoice(["a", "b"]), [], []),
        (MultiChoice(["a", "b"]), ["b", "a"], ["b", "a"]),
        (MultiChoice(["a", "b"]), ("a",), ["a"]),
        (MultiChoice(Tone), [Tone.CALM], ["calm"]),
        (MultiChoice(["a", "b"], min_items=1, max_items=1), ["a"], ["a"]),
    ],
)
def test_valid_values(spec: FieldSpec, value: object, clean: object) -> None:
    result = one(spec).validate({"x": value})
    assert result == {"x": clean}
    assert type(result["x"]) is type(clean)


@pytest.mark.parametrize(
    ("spec", "value", "message"),
    [
        (String(), 3, "must be text"),
        (String(), ["a"], "must be text"),
        (String(), True, "must be text"),
        (String(min_length=1), "", "must not be empty"),
        (String(min_length=3), "ab", "must be at least 3 characters long, not 2"),
        (String(max_length=1), "ab", "must be at most 1 character long, not 2"),
        (String(max_length=2), "abc", "must be at most 2 characters long, not 3"),
        (String(min_length=4, max_length=4), "abc", "must be exactly 4 characters long, not 3"),
        (String(min_length=4, max_length=4), "abcde", "must be exactly 4 characters long, not 5"),
        # what a person sees as 2 letters or 1 emoji is more code points: the count says why
        (
            String(max_length=2),
            "Zoe\u0301",
            "must be at most 2 characters long, not 4 (an accent and each part of an emoji count as one too)",
        ),
        (
            String(max_length=2),
            "\U0001f44d\U0001f3fd\U0001f1eb\U0001f1f7",
            "must be at most 2 characters long, not 4 (an accent and each part of an emoji count as one too)",
        ),
        (
            String(min_length=4),
            "\U0001f468\u200d\U0001f469",
            "must be at least 4 characters long, not 3 (an accent and each part of an emoji count as one too)",
        ),
        (
            String(format="email"),
            "nope",
            "has no @ between a name and a domain; it must be an email address like name@example.com",
        ),
        (
            String(format="uri"),
            "example.com",
            "must be a full address, like https://example.com/page or mailto:ada@example.com",
        ),
        (String(format="date"), "31/12/2026", "must be a date like 2026-12-31"),
        (
            String(format="date-time"),
            "2026-12-31T10:00:00",
            "must be a date and time with a time zone, like 2026-12-31T18:30:00Z",
        ),
        (
            String(format="date-time"),
            "2016-12-31T12:00:60Z",
            "can have second 60 only as a leap second, the last second of a day in UTC, "
            "like 2016-12-31T23:59:60Z or 2016-12-31T18:59:60-05:00",
        ),
        (
            String(format="date-time"),
            "2016-12-31T23:59:60+01:00",
            "can have second 60 only as a leap second, the last second of a day in UTC, "
            "like 2016-12-31T23:59:60Z or 2016-12-31T18:59:60-05:00",
        ),
        (
            String(format="date-time"),
            "2016-12-32T23:59:60Z",
            "names a day that does not exist (2016-12-32); it must be a date and time with a time zone, "
            "like 2026-12-31T18:30:00Z",
        ),
        (
            String(format="date-time"),
            "2026-02-30T00:00:00Z",
            "names a day that does not exist (2026-02-30); it must be a date and time with a time zone, "
            "like 2026-12-31T18:30:00Z",
        ),
        (
            String(format="date-time"),
            "2026-02-28T24:00:00Z",
            "names a time of day that does not exist (24:00:00); hours go from 00 to 23, minutes and "
            "seconds from 00 to 59",
        ),
        (
            String(format="date-time"),
            "2026-02-28T10:00:00+24:00",
            "has a time zone offset that does not exist (+24:00); offsets go from -23:59 to +23:59",
        ),
        (
            String(format="date"),
            "2026-02-30",
            "names a day that does not exist; it must be a date like 2026-12-31",
        ),
        (
            String(format="date"),
            "2026-13-01",
            "names a day that does not exist; it must be a date like 2026-12-31",
        ),
        (Number(), "1", "must be a number"),
        (Number(), True, "must be a number"),
        (Number(), float("nan"), "must be a finite number"),
        (Number(), float("inf"), "must be a finite number"),
        (Number(minimum=1), 0.5, "must be at least 1"),
        (Number(maximum=2.5), 3, "must be at most 2.5"),
        (Integer(), 1.5, "must be a whole number"),
        (Integer(), "3", "must be a whole number"),
        (Integer(), False, "must be a whole number"),
        (Integer(), float("-inf"), "must be a finite number"),
        (Integer(minimum=1, maximum=20), 0, "must be at least 1"),
        (Integer(minimum=1, maximum=20), 21, "must be at most 20"),
        (Integer(minimum=1, maximum=20), 21.0, "must be at most 20"),
        (Integer(), 1e20, "must be between -9007199254740991 and 9007199254740991"),
        (Integer(), 2**53, "must be between -9007199254740991 and 9007199254740991"),
        (Integer(), -(2**64), "must be between -9007199254740991 and 9007199254740991"),
        (Integer(minimum=0), 1e20, "must be between -9007199254740991 and 9007199254740991"),
        (Integer(maximum=5), -1e20, "must be between -9007199254740991 and 9007199254740991"),
        (Boolean(), 1, "must be true or false"),
        (Boolean(), "true", "must be true or false"),
        (Choice(["indoor", "patio"]), "garden", "must be one of: indoor, patio"),
        (Choice(["indoor", "patio"]), 1, "must be one of: indoor, patio"),
        (
            Choice([str(i) for i in range(20)]),
            "x",
            "must be one of: 0, 1, 2, 3, 4, 5, 6, 7, 8, … (20 options)",
        ),
        (MultiChoice(["a", "b"]), "a", "must be a list of choices from: a, b"),
        (MultiChoice(["a", "b"]), {"a"}, "must be a list of choices from: a, b"),
        (MultiChoice(["a", "b"]), ["c"], "contains 'c', which is not one of: a, b"),
        (MultiChoice(["a", "b"]), [1], "contains 1, which is not one of: a, b"),
        (MultiChoice(["a", "b"]), ["a", "a"], "contains 'a' more than once"),
        (MultiChoice(["a", "b"], min_items=1), [], "must have at least 1 choice"),
        (MultiChoice(["a", "b", "c"], min_items=2), ["a"], "must have at least 2 choices"),
        (MultiChoice(["a", "b", "c"], max_items=1), ["a", "b"], "must have at most 1 choice"),
        (MultiChoice(["a", "b", "c"], min_items=2, max_items=2), ["a"], "must have exactly 2 choices"),
    ],
)
def test_invalid_values(spec: FieldSpec, value: object, message: str) -> None:
    assert problems(one(spec), {"x": value}) == [("x", message)]
    assert one(spec).check_field("x", value) == message


@pytest.mark.parametrize(
    ("items", "repeat"),
    [
        (["a", "a"], "a"),
        (["b", "a", "a", "b"], "a"),
        (["b", "a", "b", "a"], "b"),
        (["c", "a", "b", "c"], "c"),
    ],
)
def test_first_repeat_is_the_first_item_seen_before(items: list[str], repeat: str) -> None:
    assert _first_repeat(items) == repeat


def test_first_repeat_needs_a_repeat() -> None:
    with pytest.raises(ValueError, match="no item is repeated"):
        _first_repeat(["a", "b"])


def test_a_repeat_among_many_choices_is_named() -> None:
    values = [f"o{i}" for i in range(5000)]
    assert problems(one(MultiChoice(values)), {"x": [*values, "o4999"]}) == [
        ("x", "contains 'o4999' more than once")
    ]


BOOKING = Form(
    party_size=Integer(minimum=1, maximum=20),
    date=String(format="date"),
    seating=Choice({"indoor": "Inside", "patio": "On the patio"}),
    dietary=MultiChoice(["vegan", "gluten-free"], required=False),
    ok=Boolean(default=False, required=False),
)
GOOD = {"party_size": 4, "date": "2026-12-31", "seating": "patio", "dietary": ["vegan"], "ok": True}


def test_every_problem_is_listed_in_field_order() -> None:
    bad = {
        "party_size": 40,
        "date": "2026-13-01",
        "seating": "garden",
        "dietary": ["vegan", "vegan"],
        "ok": 1,
    }
    assert problems(BOOKING, bad) == [
        ("party_size", "must be at most 20"),
        ("date", "names a day that does not exist; it must be a date like 2026-12-31"),
        ("seating", "must be one of: indoor, patio"),
        ("dietary", "contains 'vegan' more than once"),
        ("ok", "must be true or false"),
    ]


def test_error_message_joins_problems() -> None:
    with pytest.raises(
        FormValidationError, match="party_size: is required; date: is required; seating: is required"
    ):
        BOOKING.validate({})


def test_required_and_null() -> None:
    assert problems(BOOKING, {"date": "2026-12-31", "seating": None}) == [
        ("party_size", "is required"),
        ("seating", "is required"),
    ]
    assert BOOKING.validate({**GOOD, "dietary": None, "ok": None}) == {
        "party_size": 4,
        "date": "2026-12-31",
        "seating": "patio",
    }


def test_unknown_keys_are_dropped_and_order_is_the_forms() -> None:
    content = {"zzz": 1, **dict(reversed(list(GOOD.items())))}
    result = BOOKING.validate(content)
    assert result == GOOD
    assert list(result) == list(GOOD)


def test_validate_returns_new_objects() -> None:
    content = dict(GOOD)
    result = BOOKING.validate(content)
    assert result is not content
    assert result["dietary"] is not content["dietary"]


def test_any_mapping_is_accepted() -> None:
    assert BOOKING.validate(OrderedDict(GOOD)) == GOOD


@pytest.mark.parametrize("content", [None, [], "x", 3, [("party_size", 1)]])
def test_content_must_be_an_object(content: object) -> None:
    assert problems(BOOKING, content) == [
        (None, "the answer must be an object that maps field names to values")
    ]
    with pytest.raises(FormValidationError):
        BOOKING.apply_defaults(content)


def test_optional_field_left_out() -> None:
    assert BOOKING.validate({k: v for k, v in GOOD.items() if k not in ("dietary", "ok")}) == {
        "party_size": 4,
        "date": "2026-12-31",
        "seating": "patio",
    }


def test_apply_defaults() -> None:
    schema = Form(
        a=String(default="x", required=False),
        b=MultiChoice(["p", "q"], default=["q"], required=False),
        c=Boolean(default=False),
        d=Integer(required=False),
    )
    filled = schema.apply_defaults({"c": None, "extra": 1})
    assert filled == {"a": "x", "b": ["q"], "c": False, "extra": 1}
    assert schema.apply_defaults({"a": "given", "b": []}) == {"a": "given", "b": [], "c": False}
    assert filled["b"] is not schema.apply_defaults({})["b"]
    assert schema.validate(filled) == {"a": "x", "b": ["q"], "c": False}


def test_check_field() -> None:
    assert BOOKING.check_field("party_size", 3) is None
    assert BOOKING.check_field("party_size", None) == "is required"
    assert BOOKING.check_field("dietary", None) is None
    assert BOOKING.check_field("party_size", 0) == "must be at least 1"
    with pytest.raises(KeyError):
        BOOKING.check_field("nope", 1)


def test_problem_str() -> None:
    assert str(ValidationProblem("a", "is required")) == "a: is required"
    assert str(ValidationProblem(None, "bad")) == "bad"


def test_compile_field_returns_invalid() -> None:
    check = compile_field(Integer(maximum=1))
    result = check(2)
    assert isinstance(result, Invalid)
    assert result.message == "must be at most 1"
    assert repr(result) == "Invalid('must be at most 1')"
    assert check(1) == 1


def test_float_bounds_are_shown_plainly() -> None:
    assert problems(one(Number(minimum=2.0)), {"x": 1}) == [("x", "must be at least 2")]
    assert problems(one(Number(maximum=1e20)), {"x": 1e21}) == [("x", "must be at most 1e+20")]


def test_a_number_answer_written_as_a_whole_number_past_the_safe_range_is_a_float() -> None:
    # A script's 100000000000000000000 (what JavaScript writes for 1e20) is read as an int,
    # which the wire cannot carry past 64 bits: the call failed with a bare TypeError.
    clean = one(Number()).validate({"x": 10**20})
    assert clean == {"x": 1e20}
    assert type(clean["x"]) is float
    assert encode(clean) == b'{"x":1e+20}'
    assert one(Number()).validate({"x": -(2**70)}) == {"x": -float(2**70)}
    edge = one(Number()).validate({"x": 2**53 - 1})["x"]
    assert (edge, type(edge)) == (2**53 - 1, int)
    assert one(Number(maximum=1e25)).validate({"x": 10**25}) == {"x": 1e25}


@pytest.mark.parametrize(
    ("spec", "value", "message"),
    [
        (Number(), 10**400, "must be between -1.7976931348623157e+308 and 1.7976931348623157e+308"),
        (Number(), -(10**400), "must be between -1.7976931348623157e+308 and 1.7976931348623157e+308"),
        (Number(maximum=5), 10**400, "must be at most 5"),
        (Number(minimum=5), -(10**400), "must be at least 5"),
        (Number(maximum=1e20), 10**21, "must be at most 1e+20"),
    ],
    ids=["above", "below", "above a maximum", "below a minimum", "above a float maximum"],
)
def test_a_whole_number_beyond_what_a_float_holds_is_refused(
    spec: FieldSpec, value: int, message: str
) -> None:
    assert problems(one(spec), {"x": value}) == [("x", message)]


@pytest.mark.parametrize(
    "item", ["x" * 100_000, ["y"] * 100_000, {"k": "z" * 100_000}], ids=["text", "list", "object"]
)
def test_a_long_choice_outside_the_options_is_shown_cut_short(item: object) -> None:
    # The message is for a person, and goes back to the client: it echoed the whole value.
    [(field, message)] = problems(one(MultiChoice(["a", "b"])), {"x": ["a", item]})
    assert field == "x"
    assert message.startswith(f"contains {repr(item)[:20]}")
    assert message.endswith(f"… ({len(repr(item))} characters), which is not one of: a, b")
    assert len(message) < 120


def test_validator_without_fields() -> None:
    assert FormValidator([]).validate({"a": 1}) == {}
