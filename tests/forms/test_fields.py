"""The field model: construction, wire form, and each spec's own consistency rules."""

from __future__ import annotations

import enum
from typing import Any

import pytest

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms import Boolean, Choice, Form, FormSchema, Integer, MultiChoice, Number, Option, String
from mcp_elicit.forms.fields import enum_options, humanize


class Colour(enum.Enum):
    DARK_RED = "#800000"
    green = "#00FF00"


class Size(enum.Enum):
    SMALL = 1


@pytest.mark.parametrize(
    ("spec", "wire"),
    [
        (String(), {"type": "string"}),
        (
            String(
                title="Name",
                description="Your name",
                min_length=1,
                max_length=6,
                format="email",
                default="a@b.io",
            ),
            {
                "type": "string",
                "title": "Name",
                "description": "Your name",
                "minLength": 1,
                "maxLength": 6,
                "format": "email",
                "default": "a@b.io",
            },
        ),
        (
            Number(minimum=0.5, maximum=9, default=1.5),
            {"type": "number", "minimum": 0.5, "maximum": 9, "default": 1.5},
        ),
        (
            Integer(minimum=1, maximum=20, default=2),
            {"type": "integer", "minimum": 1, "maximum": 20, "default": 2},
        ),
        (Boolean(default=False), {"type": "boolean", "default": False}),
        (Choice(["a", "b"], default="a"), {"type": "string", "enum": ["a", "b"], "default": "a"}),
        (
            Choice({"a": "A", "b": "B"}),
            {"type": "string", "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]},
        ),
        (
            Choice([("a", "A"), ("b", "B")], legacy_enum_names=True),
            {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
        ),
        (
            MultiChoice(["a", "b"], min_items=1, max_items=2, default=["a"]),
            {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b"]},
                "minItems": 1,
                "maxItems": 2,
                "default": ["a"],
            },
        ),
        (
            MultiChoice({"a": "A"}),
            {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
        ),
    ],
)
def test_to_json(spec: Any, wire: dict[str, Any]) -> None:
    spec.check()
    assert spec.to_json() == wire


def test_kinds() -> None:
    kinds = [s.kind for s in (String(), Number(), Integer(), Boolean(), Choice(["a"]), MultiChoice(["a"]))]
    assert kinds == ["string", "number", "integer", "boolean", "choice", "multi_choice"]


def test_options_are_normalised_to_pairs() -> None:
    assert Choice(["a", "b"]).options == (Option("a"), Option("b"))
    assert Choice({"a": "A"}).options == (Option("a", "A"),)
    assert Choice([("a", "A")]).options == (Option("a", "A"),)
    assert Choice(Colour).options == (Option("#800000", "Dark red"), Option("#00FF00", "Green"))
    assert MultiChoice(x for x in "ab").options == (Option("a"), Option("b"))
    assert Choice(["a"]).titled is False
    assert MultiChoice({"a": "A"}).titled is True


def test_multi_choice_default_becomes_a_tuple() -> None:
    spec = MultiChoice(["a", "b"], default=["b"])
    assert spec.default == ("b",)
    assert hash(spec) == hash(MultiChoice(["a", "b"], default=("b",)))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("abc", "not the single string 'abc'"),
        ([1], "neither a string nor a (value, title) pair"),
        ([("a", "A", "x")], "neither a string nor a (value, title) pair"),
    ],
)
def test_bad_option_shapes(options: Any, message: str) -> None:
    with pytest.raises(FormSchemaError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Form(size=Choice(options))


@pytest.mark.parametrize("kind", [Choice, MultiChoice])
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (lambda: [1], "option 1 is neither a string nor a (value, title) pair"),
        (lambda: (o for o in ["a", ("b", "B", "x")]), "option ('b', 'B', 'x') is neither a string nor"),
        (lambda: "abc", "options must be a list of strings, not the single string 'abc'"),
        (lambda: None, "options must be a list of strings, a {value: title} mapping"),
        (lambda: Size, "Enum Size has the non-string value 1"),
    ],
)
def test_bad_options_of_a_field_named_by_its_form_name_the_field(
    kind: Any, options: Any, message: str
) -> None:
    """``Form(size=Choice([1]))``: the Choice is built before the form names it, so the
    form, not the Choice, refuses its options, naming the field."""
    spec = kind(options())  # nothing to name yet
    for build in (lambda: Form(size=spec), lambda: Form({"size": spec})):
        with pytest.raises(FormSchemaError) as caught:
            build()
        assert caught.value.field == "size"
        assert str(caught.value).startswith(f"field 'size': {message}")
    with pytest.raises(FormSchemaError, match="every field needs a non-empty name"):
        FormSchema([spec])


@pytest.mark.parametrize("kind", [Choice, MultiChoice])
@pytest.mark.parametrize("unordered", [set, frozenset])
def test_options_in_no_order_are_refused_naming_the_field(kind: Any, unordered: Any) -> None:
    """Options given as a set were taken in the set's order, which the process's hash
    seed decides: what the person saw and the schema changed from one run to the next.
    They are refused, naming the field, whichever way the field is built or named."""
    said = "options must be in an order: a list or tuple, not a set"
    options = unordered({"small", "medium", "large"})
    for build in (
        lambda: kind(options, name="size"),
        lambda: Form(size=kind(options)),
        lambda: Form({"size": kind(options)}),
        lambda: Form(size=kind(unordered({("s", "Small"), ("l", "Large")}))),
    ):
        with pytest.raises(FormSchemaError) as caught:
            build()
        assert caught.value.field == "size"
        assert str(caught.value).startswith(f"field 'size': {said}"), str(caught.value)
    assert Form(size=kind(("small", "large"))).to_json()  # a tuple is in an order
    assert Form(size=kind({"s": "Small", "l": "Large"})).to_json()  # so is a dict


@pytest.mark.parametrize("unordered", [set, frozenset])
def test_a_multi_choice_default_in_no_order_is_refused_naming_the_field(unordered: Any) -> None:
    """A default given as a set was written into the schema in the set's order, which the
    hash seed decides (['c', 'a', 'b'] in one run): refused like options in no order."""
    default = unordered({"a", "b", "c"})
    for build in (
        lambda: MultiChoice(["a", "b", "c"], default=default, name="tags"),
        lambda: Form(tags=MultiChoice(["a", "b", "c"], default=default)),
    ):
        with pytest.raises(FormSchemaError) as caught:
            build()
        assert caught.value.field == "tags"
        assert "the default of a multi-choice must be in an order: a list or tuple, not a set" in str(
            caught.value
        )
    assert Form(tags=MultiChoice(["a", "b", "c"], default=("c", "a"))).to_json()["properties"]["tags"][
        "default"
    ] == ["c", "a"]


def test_a_multi_choice_built_without_a_name_with_a_set_default_stays_hashable() -> None:
    """Built with no name yet, it keeps the set default for its form to refuse; kept as the
    mutable set, the spec (frozen, hashable like every other) raised "unhashable type:
    'set'" when hashed, as a dict key or in a type hint's metadata. It keeps it frozen."""
    spec = MultiChoice(["a", "b"], default={"a"})
    assert hash(spec) == hash(MultiChoice(["a", "b"], default=frozenset({"a"})))
    with pytest.raises(
        FormSchemaError, match="field 'tags': the default of a multi-choice must be in an order"
    ):
        Form(tags=spec)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (lambda: Choice([1]), "option 1 is neither a string nor a (value, title) pair"),
        (lambda: Choice([1], legacy_enum_names=True), "option 1 is neither a string nor"),
        (lambda: MultiChoice("abc"), "options must be a list of strings, not the single string 'abc'"),
        (lambda: MultiChoice(["a"], default=5), "the default of a multi-choice must be a list"),
    ],
)
def test_a_spec_holding_what_it_could_not_read_refuses_to_be_written_out(spec: Any, message: str) -> None:
    """Kept for its form to refuse by name, options no choice takes are refused, not
    crashed on, by a spec written out alone (``to_json``), as they were when it was built."""
    with pytest.raises(FormSchemaError, match=message.replace("(", r"\(").replace(")", r"\)")):
        spec().to_json()


def test_a_multi_choice_default_that_is_no_list_is_refused_naming_the_field_its_form_gives() -> None:
    with pytest.raises(FormSchemaError) as caught:
        Form(sizes=MultiChoice(["a"], default=5))
    assert caught.value.field == "sizes"
    assert (
        str(caught.value)
        == "field 'sizes': the default of a multi-choice must be a list of option values, not 5"
    )


@pytest.mark.parametrize("kind", [Choice, MultiChoice])
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            None,
            "options must be a list of strings, a {value: title} mapping, (value, title) pairs or a str Enum, not None",
        ),
        (
            3,
            "options must be a list of strings, a {value: title} mapping, (value, title) pairs or a str Enum, not 3",
        ),
        ([1], "option 1 is neither a string nor a (value, title) pair"),
        ("abc", "not the single string 'abc'"),
    ],
)
def test_bad_options_are_refused_naming_the_field(kind: Any, options: Any, message: str) -> None:
    with pytest.raises(FormSchemaError) as caught:
        kind(options, name="size")
    assert str(caught.value).startswith("field 'size': ")
    assert message in str(caught.value)
    assert caught.value.field == "size"


@pytest.mark.parametrize("default", [5, 2.5, True])
def test_multi_choice_default_that_is_no_list_is_refused(default: Any) -> None:
    with pytest.raises(
        FormSchemaError, match="the default of a multi-choice must be a list of option values, not "
    ):
        MultiChoice(["a"], name="size", default=default)


def test_multi_choice_default_must_be_a_list() -> None:
    with pytest.raises(FormSchemaError, match=r"field 'sizes': .* must be a list"):
        Form(sizes=MultiChoice(["a"], default="a"))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            String(name="n", min_length=5, max_length=2),
            "the minimum length 5 is greater than the maximum length 2",
        ),
        (String(name="n", min_length=-1), "the minimum length must be a whole number of 0 or more"),
        (String(name="n", max_length=True), "the maximum length must be a whole number of 0 or more"),
        (
            String(name="n", max_length=10**30),
            "the maximum length must be at most 9007199254740991, not 100000000000… (31 digits)",
        ),
        (
            MultiChoice(name="n", options=["a"], min_items=2**53),
            "the minimum number of choices must be at most 9007199254740991, not 9007199254740992",
        ),
        (
            String(name="n", format="phone"),  # type: ignore[arg-type]
            "format 'phone' is not supported; use one of: date, date-time, email, uri",
        ),
        (String(name="n", default=3), "the default must be a string"),  # type: ignore[arg-type]
        (String(name="n", title=3), "the title must be a string"),  # type: ignore[arg-type]
        (String(name="n", description=3), "the description must be a string"),  # type: ignore[arg-type]
        (String(name="n", required="yes"), "required must be True or False"),  # type: ignore[arg-type]
        (Number(name="n", minimum=3, maximum=1), "the minimum value 3 is greater than the maximum value 1"),
        (Number(name="n", minimum=float("nan")), "the minimum value must be a finite number"),
        (Number(name="n", maximum=True), "the maximum value must be a finite number"),
        (Number(name="n", default=float("inf")), "the default must be a finite number"),
        (Number(name="n", default=True), "the default must be a finite number"),
        (Integer(name="n", default=1.5), "the default must be a whole number"),  # type: ignore[arg-type]
        (Integer(name="n", default=True), "the default must be a whole number"),
        (
            Integer(name="n", maximum=10**30),
            "the maximum value must be between -9007199254740991 and 9007199254740991, not 100000000000…",
        ),
        (Integer(name="n", minimum=-1e20), "the minimum value must be between -9007199254740991 and"),
        (Integer(name="n", default=2**53), "the default must be between -9007199254740991 and"),
        (Number(name="n", maximum=10**400), "the maximum value must be a finite number, and a whole one"),
        (Number(name="n", minimum=-(10**400)), "the minimum value must be a finite number, and a whole one"),
        (Number(name="n", default=10**400), "the default must be a finite number, and a whole one"),
        (Integer(name="n", minimum=1.2, maximum=1.8), "no whole number lies between the minimum 1.2 and"),
        (Integer(name="n", minimum=0.1, maximum=0.9), "no whole number lies between the minimum 0.1 and"),
        (Boolean(name="n", default=1), "the default must be True or False"),  # type: ignore[arg-type]
        (Choice([], name="n"), "a choice needs at least one option"),
        (Choice(["a", "a"], name="n"), "option 'a' is listed twice"),
        (Choice([("a", "A"), ("b", None)], name="n"), "options must either all have titles or all have none"),
        (Choice([(1, "A")], name="n"), "option values must be strings"),  # type: ignore[arg-type]
        (Choice([("a", 1)], name="n"), "the title of option 'a' must be a string"),  # type: ignore[arg-type]
        (Choice(["a"], name="n", legacy_enum_names=True), "legacy_enum_names needs options with titles"),
        (Choice(["a"], name="n", default=1), "the default must be a string"),  # type: ignore[arg-type]
        (
            MultiChoice(["a"], name="n", min_items=2),
            "it asks for at least 2 choices but offers only 1 option",
        ),
        (
            MultiChoice(["a", "b"], name="n", min_items=3),
            "it asks for at least 3 choices but offers only 2 options",
        ),
        (
            MultiChoice(["a", "b"], name="n", min_items=2, max_items=1),
            "the minimum number of choices 2 is greater",
        ),
    ],
)
def test_check_refuses(spec: Any, message: str) -> None:
    with pytest.raises(FormSchemaError) as caught:
        spec.check()
    assert caught.value.field == "n"
    assert message in str(caught.value)
    assert str(caught.value).startswith("field 'n': ")


def test_whole_numbers_at_the_edge_of_the_safe_range_are_fine() -> None:
    Integer(name="n", minimum=-(2**53 - 1), maximum=2**53 - 1, default=2**53 - 1).check()
    Integer(name="n", minimum=0.5, maximum=1).check()
    Number(name="n", minimum=-1e300, maximum=1e300, default=2**53 - 1).check()


def test_name_must_be_a_string() -> None:
    with pytest.raises(FormSchemaError, match="the name must be a string, not 3"):
        String(name=3).check()  # type: ignore[arg-type]


def test_unnamed_spec_error_has_no_field() -> None:
    with pytest.raises(FormSchemaError) as caught:
        String(min_length=3, max_length=1).check()
    assert caught.value.field is None


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("GLUTEN_FREE", "Gluten free"),
        ("gluten_free", "Gluten free"),
        ("Patio", "Patio"),
        ("ON_THE_PATIO", "On the patio"),
    ],
)
def test_humanize(name: str, title: str) -> None:
    assert humanize(name) == title


def test_enum_options_refuse_non_string_values() -> None:
    with pytest.raises(FormSchemaError, match="non-string value 1"):
        enum_options(Size)


def test_not_secret_takes_no_part_in_equality() -> None:
    assert String(name="a", not_secret=True) == String(name="a")
    assert Choice(["a"], not_secret=True) == Choice(["a"])


@pytest.mark.parametrize("cls", [String, Number, Integer, Boolean, Choice, MultiChoice])
def test_written_out_init_takes_every_field_with_its_default(cls: type[Any]) -> None:
    """The field classes write their ``__init__`` out (a handler builds fields per request):
    it must take exactly the dataclass's fields, keyword-only but ``options``, with the
    declared defaults, and set each one."""
    import dataclasses
    import inspect

    declared = {f.name: f for f in dataclasses.fields(cls) if f.init}
    params = dict(inspect.signature(cls.__init__).parameters)
    params.pop("self")
    assert set(params) == set(declared)
    for name, param in params.items():
        if name == "options":
            assert param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
            continue
        assert param.kind is inspect.Parameter.KEYWORD_ONLY, name
        assert param.default is declared[name].default, name
    # every value given is kept, and two equal specs made apart compare equal
    given = {"name": "f", "title": "T", "description": "D", "required": False, "not_secret": True}
    options = ["a", "b"]
    spec = cls(options, **given) if "options" in declared else cls(**given)
    for name, value in given.items():
        assert getattr(spec, name) == value, name
    assert spec == (cls(options, **given) if "options" in declared else cls(**given))


def test_a_spec_left_at_its_defaults_gets_the_short_form_key() -> None:
    """Only a spec whose values other than the name are all defaults (by identity) shares
    the short key: ``required=1`` equals ``required=True`` but must not share a build."""
    assert String(name="a")._key == (String, "a")
    assert String(name="a", required=1)._key is None  # type: ignore[arg-type]
    assert Integer(name="a", minimum=0)._key is None
    assert Boolean(name="a", default=False)._key is None
    assert Choice(["x"], name="a")._key is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            String(name="n", format="date", max_length=8),
            "a date answer is exactly 10 characters long, so no answer fits the maximum length 8",
        ),
        (
            String(name="n", format="date", min_length=11),
            "a date answer is exactly 10 characters long, so no answer fits the minimum length 11",
        ),
        (
            String(name="n", format="date-time", max_length=19),
            "a date-time answer is at least 20 characters long, so no answer fits the maximum length 19",
        ),
        (
            String(name="n", format="email", max_length=5),
            "an email answer is 6 to 254 characters long, so no answer fits the maximum length 5",
        ),
        (
            String(name="n", format="email", min_length=255),
            "an email answer is 6 to 254 characters long, so no answer fits the minimum length 255",
        ),
        (
            String(name="n", format="uri", max_length=1),
            "a uri answer is at least 2 characters long, so no answer fits the maximum length 1",
        ),
    ],
)
def test_a_length_no_answer_of_the_format_can_have_is_refused(spec: String, message: str) -> None:
    with pytest.raises(FormSchemaError) as caught:
        spec.check()
    assert caught.value.field == "n"
    assert str(caught.value) == f"field 'n': {message}"


@pytest.mark.parametrize(
    ("fmt", "shortest", "longest"),
    [
        ("date", "2026-01-31", "2026-01-31"),
        ("date-time", "2026-01-31T18:30:00Z", "2026-01-31T18:30:00Z"),
        ("email", "a@b.co", "a" * 64 + "@" + "b" * 63 + "." + "c" * 63 + "." + "d" * 57 + ".org"),
        ("uri", "a:", "a:"),
    ],
)
def test_lengths_at_the_edges_of_a_format_are_fine(fmt: Any, shortest: str, longest: str) -> None:
    from mcp_elicit.forms import Form

    assert len(longest) == {"email": 254}.get(fmt, len(longest))
    assert Form(n=String(format=fmt, max_length=len(shortest))).validate({"n": shortest})
    assert Form(n=String(format=fmt, min_length=len(longest))).validate({"n": longest})
    exact = Form(n=String(format=fmt, min_length=len(shortest), max_length=len(shortest)))
    assert exact.validate({"n": shortest}) == {"n": shortest}


def test_a_multi_choice_asking_for_more_choices_than_one_option_says_option() -> None:
    with pytest.raises(FormSchemaError) as caught:
        MultiChoice(["a"], name="n", min_items=2).check()
    assert str(caught.value) == "field 'n': it asks for at least 2 choices but offers only 1 option"


@pytest.mark.parametrize(
    "build",
    [
        lambda: Form(answer=Choice({"a": "Yes", "b": "Yes"})),
        lambda: Form(answer=MultiChoice({"a": "Yes", "b": "No", "c": " yes "})),
        lambda: FormSchema.parse(
            {
                "type": "object",
                "properties": {
                    "answer": {
                        "type": "string",
                        "oneOf": [{"const": "a", "title": "Yes"}, {"const": "b", "title": "Yes"}],
                    }
                },
            }
        ),
        lambda: FormSchema.parse(
            {
                "type": "object",
                "properties": {"answer": {"type": "string", "enum": ["a", "b"], "enumNames": ["Yes", "Yes"]}},
            }
        ),
    ],
)
def test_two_options_with_the_same_title_are_refused_naming_the_field_and_the_title(build: Any) -> None:
    with pytest.raises(FormSchemaError) as caught:
        build()
    assert caught.value.field == "answer"
    assert "the same title 'Yes'" in str(caught.value), str(caught.value)


@pytest.mark.parametrize(
    "build",
    [
        lambda: Form(answer=Choice({"a": "Yes", "b": ""})),
        lambda: Form(answer=MultiChoice({"a": "Yes", "b": "   "})),
        lambda: FormSchema.parse(
            {
                "type": "object",
                "properties": {"answer": {"type": "string", "enum": ["a", "b"], "enumNames": ["Yes", ""]}},
            }
        ),
    ],
)
def test_an_option_with_a_blank_title_is_refused_naming_the_field_and_the_option(build: Any) -> None:
    # It was sent, and the page showed the option as a radio button with no label.
    with pytest.raises(FormSchemaError) as caught:
        build()
    assert caught.value.field == "answer"
    assert "option 'b' has a blank title, which a person cannot pick by" in str(caught.value)
