"""Properties over generated forms: wire round trips, the official schemas, answers.

The official JSON schemas are read from ``shared/spec/<revision>/schema.json`` beside
the repository (``MCP_SPEC_DIR`` overrides); tests that need them skip when absent.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import os
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_elicit.errors import FormSchemaError, FormValidationError
from mcp_elicit.forms import Boolean, Choice, Form, FormSchema, Integer, MultiChoice, Number, String
from mcp_elicit.forms.fields import FieldSpec

REVISIONS = ("2025-11-25", "2026-07-28")
SPEC_DIR = Path(os.environ.get("MCP_SPEC_DIR") or Path(__file__).resolve().parents[3] / "shared" / "spec")
SETTINGS = settings(
    deadline=None,
    max_examples=int(os.environ.get("FORMS_EXAMPLES", "150")),
    suppress_health_check=[HealthCheck.too_slow],
)


@functools.cache
def requested_schema_validator(revision: str) -> Any:
    """A validator for ``ElicitRequestFormParams.requestedSchema`` of one revision."""
    path = SPEC_DIR / revision / "schema.json"
    if not path.is_file():
        pytest.skip(f"official MCP schema {path} is not present (set MCP_SPEC_DIR to the spec/ folder)")
    doc = json.loads(path.read_text(encoding="utf-8"))
    defs_key = "$defs" if "$defs" in doc else "definitions"
    target = doc[defs_key]["ElicitRequestFormParams"]["properties"]["requestedSchema"]
    schema = {"$schema": doc["$schema"], defs_key: doc[defs_key], **target}
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def officially_valid(wire: object, revision: str) -> bool:
    return bool(requested_schema_validator(revision).is_valid(wire))


# -- strategies ---------------------------------------------------------------------

words = st.text(alphabet='abcdxyz -é😀\n"\\', min_size=1, max_size=12)
names = st.text(alphabet="abcdxyz -_.$é😀", min_size=1, max_size=8)
maybe_words = st.none() | words
option_values = st.lists(
    st.text(alphabet="abcdefg#-", min_size=1, max_size=6), min_size=1, max_size=6, unique=True
)
offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))


def values_for(spec: FieldSpec) -> st.SearchStrategy[Any]:
    """Valid answers for one field."""
    if isinstance(spec, String):
        if spec.format == "email":
            return st.sampled_from(["a@example.com", "first.last@sub.example.org", "x+y@b.io"])
        if spec.format == "uri":
            return st.sampled_from(["https://example.com/", "urn:x:y", "mailto:a@b.io"])
        if spec.format == "date":
            return st.dates().map(lambda d: d.isoformat())
        if spec.format == "date-time":
            return st.datetimes(timezones=offsets).map(lambda d: d.replace(microsecond=0).isoformat())
        shortest = spec.min_length or 0
        longest = spec.max_length if spec.max_length is not None else shortest + 10
        return st.text(min_size=shortest, max_size=longest)
    if isinstance(spec, Integer):
        safe = 2**53 - 1  # whole-number answers stay within I-JSON's range
        lo = -safe if spec.minimum is None else math.ceil(spec.minimum)
        hi = safe if spec.maximum is None else math.floor(spec.maximum)
        return st.integers(lo, hi)
    if isinstance(spec, Number):
        # + 0.0 turns -0.0 into 0.0: bounds 0.0 and -0.0 are equal, but hypothesis orders them.
        lo = None if spec.minimum is None else spec.minimum + 0.0
        hi = None if spec.maximum is None else spec.maximum + 0.0
        return st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    if isinstance(spec, Boolean):
        return st.booleans()
    values = [value for value, _ in spec.options]
    if isinstance(spec, Choice):
        return st.sampled_from(values)
    hi = min(spec.max_items if spec.max_items is not None else len(values), len(values))
    return st.lists(st.sampled_from(values), min_size=spec.min_items or 0, max_size=hi, unique=True)


@st.composite
def bounds(draw: st.DrawFn, base: st.SearchStrategy[Any]) -> tuple[Any, Any]:
    lo, hi = draw(st.none() | base), draw(st.none() | base)
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    return lo, hi


@st.composite
def options(draw: st.DrawFn) -> Any:
    values = draw(option_values)
    if draw(st.booleans()):
        return values
    titles = draw(
        st.lists(
            words.filter(str.strip),
            min_size=len(values),
            max_size=len(values),
            unique_by=lambda t: " ".join(t.split()).casefold(),
        )
    )  # a person tells options apart by their titles: a form refuses two alike, or a blank one
    return dict(zip(values, titles, strict=True))


@st.composite
def specs(draw: st.DrawFn) -> FieldSpec:
    common: dict[str, Any] = {
        "title": draw(maybe_words),
        "description": draw(maybe_words),
        "required": draw(st.booleans()),
    }
    kind = draw(st.sampled_from(["string", "format", "number", "integer", "boolean", "choice", "multi"]))
    spec: FieldSpec
    if kind == "string":
        lo, hi = draw(bounds(st.integers(0, 30)))
        spec = String(min_length=lo, max_length=hi, **common)
    elif kind == "format":
        spec = String(format=draw(st.sampled_from(["email", "uri", "date", "date-time"])), **common)
    elif kind == "number":
        lo, hi = draw(bounds(st.integers(-1000, 1000) | st.floats(-1e6, 1e6)))
        spec = Number(minimum=lo, maximum=hi, **common)
    elif kind == "integer":
        lo, hi = draw(bounds(st.integers(-1000, 1000) | st.floats(-1000, 1000)))
        if lo is not None and hi is not None and math.ceil(lo) > math.floor(hi):
            hi = lo + 1  # bounds must hold a whole number
        spec = Integer(minimum=lo, maximum=hi, **common)
    elif kind == "boolean":
        spec = Boolean(**common)
    elif kind == "choice":
        opts = draw(options())
        legacy = isinstance(opts, dict) and draw(st.booleans())
        spec = Choice(opts, legacy_enum_names=legacy, **common)
    else:
        opts = draw(options())
        lo, hi = draw(bounds(st.integers(0, len(opts))))
        spec = MultiChoice(opts, min_items=lo, max_items=hi, **common)
    if draw(st.booleans()):
        default = draw(values_for(spec))
        spec = dataclasses.replace(spec, default=default)
    return spec


@st.composite
def schemas(draw: st.DrawFn) -> FormSchema:
    fields = draw(st.lists(specs(), max_size=6))
    labels = draw(st.lists(names, min_size=len(fields), max_size=len(fields), unique=True))
    return Form(dict(zip(labels, fields, strict=True)))


@st.composite
def schema_and_answer(draw: st.DrawFn) -> tuple[FormSchema, dict[str, Any]]:
    schema = draw(schemas())
    answer = {}
    for spec in schema.fields:
        if spec.required or draw(st.booleans()):
            answer[spec.name] = draw(values_for(spec))
    return schema, answer


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


# -- the official schemas -------------------------------------------------------------

VARIANTS: dict[str, FieldSpec] = {
    "string": String(title="T", description="D", min_length=1, max_length=9, default="abc"),
    "email": String(format="email"),
    "uri": String(format="uri"),
    "date": String(format="date", default="2026-12-31"),
    "date-time": String(format="date-time"),
    "number": Number(minimum=0.5, maximum=9.5, default=1),
    "integer": Integer(minimum=1, maximum=20, default=3),
    "boolean": Boolean(default=False),
    "untitled single-select": Choice(["a", "b"], default="a"),
    "titled single-select": Choice({"a": "A", "b": "B"}, default="b"),
    "legacy titled enum": Choice({"a": "A", "b": "B"}, legacy_enum_names=True),
    "untitled multi-select": MultiChoice(["a", "b"], min_items=1, max_items=2, default=["a"]),
    "titled multi-select": MultiChoice({"a": "A", "b": "B"}, default=[]),
}


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_is_valid_under_the_official_schema(revision: str, variant: str) -> None:
    schema = Form(f=VARIANTS[variant], g=String(required=False))
    wire = schema.to_json()
    requested_schema_validator(revision).validate(wire)
    assert FormSchema.parse(wire) == schema


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_official_schema_rejects_what_we_refuse_structurally(revision: str) -> None:
    for wire in (
        {"type": "object", "properties": {"x": {"type": "object"}}},
        {"type": "array", "properties": {}},
        {"type": "object", "properties": {"x": {"type": "string", "minLength": "3"}}},
        {"type": "object", "properties": {"x": {"type": "string", "format": "phone"}}},
        {"type": "object", "properties": {"x": {"type": "array", "items": {"type": "string"}}}},
        {"type": "object", "properties": {"x": {"type": "boolean", "default": "yes"}}},
    ):
        assert not officially_valid(wire, revision)
        with pytest.raises(FormSchemaError):
            FormSchema.parse(wire)


@SETTINGS
@given(schemas())
def test_generated_forms_round_trip_and_are_officially_valid(schema: FormSchema) -> None:
    wire = schema.to_json()
    assert json.loads(json.dumps(wire)) == wire
    assert FormSchema.parse(wire) == schema
    for revision in REVISIONS:
        assert officially_valid(wire, revision)


KEYWORDS = [
    "type", "title", "description", "default", "minLength", "maxLength", "format", "minimum", "maximum",
    "enum", "enumNames", "oneOf", "anyOf", "const", "items", "minItems", "maxItems", "uniqueItems",
    "pattern", "$ref", "properties", "required", "additionalProperties", "$comment",
]  # fmt: skip


@SETTINGS
@given(schemas(), st.data())
def test_whatever_parse_accepts_the_official_schema_accepts(schema: FormSchema, data: st.DataObject) -> None:
    wire = schema.to_json()
    targets = [wire, *wire["properties"].values()]
    for _ in range(data.draw(st.integers(1, 3))):
        target = data.draw(st.sampled_from(targets))
        key = data.draw(st.sampled_from(KEYWORDS))
        if data.draw(st.booleans()):
            target[key] = data.draw(
                json_values | st.sampled_from(["string", "object", "array", "integer", "date"])
            )
        else:
            target.pop(key, None)
    try:
        parsed = FormSchema.parse(wire, check_secrets=False)
    except FormSchemaError:
        return
    for revision in REVISIONS:
        assert officially_valid(wire, revision), wire
        assert officially_valid(parsed.to_json(), revision)


# -- answers ------------------------------------------------------------------------


@SETTINGS
@given(schema_and_answer())
def test_valid_answers_validate(pair: tuple[FormSchema, dict[str, Any]]) -> None:
    schema, answer = pair
    clean = schema.validate(answer)
    assert clean == answer
    assert schema.validate(clean) == clean
    for spec in schema.fields:
        assert schema.check_field(spec.name, answer.get(spec.name)) is None


@SETTINGS
@given(schema_and_answer(), st.data())
def test_defaults_fill_what_was_left_out(
    pair: tuple[FormSchema, dict[str, Any]], data: st.DataObject
) -> None:
    schema, answer = pair
    left_out = {spec.name for spec in schema.fields if spec.default is not None and data.draw(st.booleans())}
    partial = {k: v for k, v in answer.items() if k not in left_out}
    filled = schema.apply_defaults(partial)
    clean = schema.validate(filled)
    for name in left_out:
        default = schema.field(name).default
        assert clean[name] == (list(default) if isinstance(default, tuple) else default)


@SETTINGS
@given(schemas(), json_values)
def test_validate_only_ever_raises_form_validation_error(schema: FormSchema, content: Any) -> None:
    for candidate in (content, {spec.name: content for spec in schema.fields}):
        outcome = _outcome(schema, candidate)
        if isinstance(outcome, FormValidationError):
            assert outcome.problems
            assert all(p.message for p in outcome.problems)
        else:
            assert set(outcome) <= set(schema.names)


@SETTINGS
@given(schemas(), st.data())
def test_what_validate_accepts_json_schema_accepts(schema: FormSchema, data: st.DataObject) -> None:
    """Our checks are JSON Schema's (formats aside) or stricter, never looser."""
    wire = schema.to_json()
    official = jsonschema.validators.validator_for(wire)(wire)
    answer: dict[str, Any] = {}
    for spec in schema.fields:
        if spec.required or data.draw(st.booleans()):
            answer[spec.name] = data.draw(values_for(spec) | json_values, label=spec.name)
    outcome = _outcome(schema, answer)
    if not isinstance(outcome, FormValidationError):
        assert official.is_valid(outcome), (wire, outcome)


def _outcome(schema: FormSchema, content: object) -> dict[str, Any] | FormValidationError:
    try:
        return schema.validate(content)
    except FormValidationError as exc:
        return exc


@SETTINGS
@given(json_values)
def test_parse_only_ever_raises_form_schema_error(wire: Any) -> None:
    for candidate in (wire, {"type": "object", "properties": {"f": wire}}):
        with contextlib.suppress(FormSchemaError):
            FormSchema.parse(candidate, check_secrets=False)
