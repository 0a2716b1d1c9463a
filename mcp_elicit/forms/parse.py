"""Reading a ``requestedSchema`` off the wire into field specs.

Input is a decoded JSON value; output is a tuple of named :mod:`fields` specs, which
``FormSchema`` then checks for consistency (bounds, defaults) and secrets.

Rules:

- The top level must be ``{"type": "object", "properties": {...}}`` with an optional
  ``required`` list of unique names that are all properties.
- Each property must be one of the primitive schemas both official revisions define
  (string, number/integer, boolean, single-select in its three spellings, multi-select
  in its two). Everything else is refused with :class:`FormSchemaError` naming the
  field and the rule: nested objects, free-form arrays, ``$ref``, ``type`` lists, an
  unknown ``type`` or ``format``, keywords that do not apply to the field's kind
  (``pattern``, ``exclusiveMinimum``, ``minLength`` on a choice, ...).
- A ``$schema`` must name a dialect in which the subset's keywords mean what they mean
  in 2020-12, the MCP default: 2020-12, 2019-09, draft-07 or draft-06 (``http`` or
  ``https``, with or without the empty fragment); any other is refused by name, as both
  revisions' basic/index (JSON Schema Usage) require of an unsupported dialect.
- Harmless extras are accepted and dropped: at the top ``$schema`` (once its dialect is
  known), ``$id``, ``$comment``, ``title``, ``description`` and a boolean
  ``additionalProperties`` (unknown keys are dropped from answers anyway); on a field ``$comment``,
  ``examples`` and ``deprecated``; on a multi-select ``uniqueItems: true``,
  ``items.type: "string"`` beside ``anyOf``, and no ``items.type`` beside an ``enum`` of
  strings (FastMCP 4 sends ``"items": {"enum": [...]}``); ``to_json`` always writes the
  official shape.
- An integral float where a whole number is expected (``"minLength": 3.0``, an
  integer field's ``"default": 3.0``) is read as an int.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any, NoReturn, cast

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms.field_values import shown
from mcp_elicit.forms.fields import (
    STRING_FORMATS,
    Boolean,
    Choice,
    FieldSpec,
    Integer,
    MultiChoice,
    Number,
    Option,
    String,
    StringFormat,
)

__all__ = ["KEYWORD_HINTS", "json_kind", "parse_fields"]

_TOP_KEYS = frozenset({"type", "properties", "required", "additionalProperties"})
_TOP_IGNORED = frozenset({"$schema", "$id", "$comment", "title", "description"})
#: Dialects whose meaning for every keyword of the subset is 2020-12's (draft-04 has no
#: ``const``), named by their meta-schema without scheme and empty fragment.
_DIALECTS = (
    "json-schema.org/draft/2020-12/schema",
    "json-schema.org/draft/2019-09/schema",
    "json-schema.org/draft-07/schema",
    "json-schema.org/draft-06/schema",
)
_FIELD_IGNORED = frozenset({"$comment", "examples", "deprecated"})
_COMMON = frozenset({"type", "title", "description", "default"})
_ALLOWED: dict[str, frozenset[str]] = {
    "text": _COMMON | {"minLength", "maxLength", "format"},
    "number": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "single-select": _COMMON | {"enum", "enumNames", "oneOf"},
    "multi-select": _COMMON | {"items", "minItems", "maxItems", "uniqueItems"},
}
#: For a keyword the subset does not have: why not, and what to do instead.
KEYWORD_HINTS = {
    "$ref": "references ($ref) are not allowed; write the field out in full",
    "pattern": "pattern is not part of the form subset (neither official schema defines it); "
    "check the value in the tool instead",
    "exclusiveMinimum": "exclusive bounds are not part of the form subset; use minimum",
    "exclusiveMaximum": "exclusive bounds are not part of the form subset; use maximum",
    "properties": "nested objects are not allowed in a form; flatten them into top-level fields",
    "anyOf": "anyOf is only allowed inside the items of a multi-select",
    "allOf": "allOf is not part of the form subset",
    "const": "const is only allowed inside oneOf/anyOf options",
    "nullable": "nullable is not part of the form subset; leave the field out of required instead",
}
#: For a property without "type": the keyword that says what was meant, and what to do.
_UNTYPED = {
    "$ref": KEYWORD_HINTS["$ref"],
    "properties": KEYWORD_HINTS["properties"],
    "anyOf": 'anyOf is not part of the form subset: give the field one "type", '
    'and to make it optional leave it out of "required"',
    "oneOf": 'oneOf needs "type": "string" beside it (a single-select of {"const": ..., "title": ...} '
    "entries); a union of types is not part of the form subset",
    "allOf": KEYWORD_HINTS["allOf"] + '; write the field out in full with its "type"',
    "enum": 'enum needs "type": "string" beside it',
    "const": KEYWORD_HINTS["const"],
}
_MULTI_SHAPE = (
    'an array must be a multi-select: items must be {"type": "string", "enum": [...]} '
    'or {"anyOf": [{"const": ..., "title": ...}, ...]}'
)


def json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _fail(field: str | None, message: str) -> NoReturn:
    raise FormSchemaError(message, field=field)


def _text(name: str, prop: Mapping[str, Any], key: str) -> str | None:
    value = prop.get(key)
    if value is not None and not isinstance(value, str):
        _fail(name, f"{key} must be a string, not {json_kind(value)}")
    return value


def _whole(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _count(name: str, prop: Mapping[str, Any], key: str) -> int | None:
    value = prop.get(key)
    if value is None:
        return None
    whole = _whole(value)
    if whole is None or whole < 0:
        _fail(name, f"{key} must be a whole number of 0 or more, not {shown(value)}")
    return whole


def _real(name: str, prop: Mapping[str, Any], key: str, *, whole: bool = False) -> float | None:
    value = prop.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        _fail(name, f"{key} must be a finite number, not {shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):  # a huge int is the field's to refuse
        _fail(name, f"{key} must be a finite number, not {shown(value)}")
    if whole and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _check_keys(name: str, prop: Mapping[str, Any], kind: str) -> None:
    allowed = _ALLOWED[kind]
    for key in prop:
        if key in allowed or key in _FIELD_IGNORED:
            continue
        hint = KEYWORD_HINTS.get(key) or f"keyword {shown(key)} is not part of the form subset"
        _fail(name, f"{hint} (in a {kind} field, allowed: {', '.join(sorted(allowed))})")


def _string_list(name: str, value: object, what: str) -> list[str]:
    if not isinstance(value, list) or not value:
        _fail(name, f"{what} must be a non-empty array of strings")
    for item in value:
        if not isinstance(item, str):
            _fail(name, f"{what} must hold strings only, not {json_kind(item)} ({shown(item)})")
    return value


def _titled_options(name: str, value: object, key: str) -> tuple[Option, ...]:
    if not isinstance(value, list) or not value:
        _fail(name, f'{key} must be a non-empty array of {{"const": ..., "title": ...}} objects')
    options = []
    for entry in value:
        if not isinstance(entry, Mapping) or set(entry) != {"const", "title"}:
            _fail(
                name, f'each {key} entry must be exactly {{"const": ..., "title": ...}}, not {shown(entry)}'
            )
        const, title = entry["const"], entry["title"]
        if not isinstance(const, str) or not isinstance(title, str):
            _fail(name, f"{key} entries need a string const and a string title, not {shown(entry)}")
        options.append(Option(const, title))
    return tuple(options)


def _single_select(name: str, prop: Mapping[str, Any], common: dict[str, Any]) -> Choice:
    default = prop.get("default")
    if default is not None and not isinstance(default, str):
        _fail(name, f"the default must be one of the option strings, not {shown(default)}")
    if "oneOf" in prop:
        if "enum" in prop or "enumNames" in prop:
            _fail(name, "use either oneOf or enum (+ enumNames) for a choice, not both")
        return Choice(_titled_options(name, prop["oneOf"], "oneOf"), default=default, **common)
    values = _string_list(name, prop["enum"], "enum") if "enum" in prop else None
    if values is None:
        _fail(name, "enumNames needs an enum beside it")
    if "enumNames" not in prop:
        return Choice(values, default=default, **common)
    titles = _string_list(name, prop["enumNames"], "enumNames")
    if len(titles) != len(values):
        _fail(name, f"enumNames has {len(titles)} titles for {len(values)} enum values")
    return Choice(list(zip(values, titles, strict=True)), default=default, legacy_enum_names=True, **common)


def _multi_select(name: str, prop: Mapping[str, Any], common: dict[str, Any]) -> MultiChoice:
    items = prop.get("items")
    if not isinstance(items, Mapping):
        _fail(name, _MULTI_SHAPE)
    options: tuple[Option, ...] | list[str]
    if "anyOf" in items and set(items) <= {"anyOf", "type"} and items.get("type", "string") == "string":
        options = _titled_options(name, items["anyOf"], "anyOf")
    elif set(items) <= {"type", "enum"} and "enum" in items and items.get("type", "string") == "string":
        options = _string_list(name, items["enum"], "items.enum")
    else:
        _fail(name, _MULTI_SHAPE)
    if prop.get("uniqueItems", True) is not True:
        _fail(name, "a multi-select never repeats a choice, so uniqueItems can only be true")
    default = prop.get("default")
    if default is not None and (
        not isinstance(default, list) or not all(isinstance(item, str) for item in default)
    ):
        _fail(name, f"the default of a multi-select must be an array of option strings, not {shown(default)}")
    return MultiChoice(
        options,
        default=default,
        min_items=_count(name, prop, "minItems"),
        max_items=_count(name, prop, "maxItems"),
        **common,
    )


def _parse_field(name: str, prop: object, required: bool) -> FieldSpec:
    if not isinstance(prop, Mapping):
        _fail(name, f"a property schema must be an object, not {json_kind(prop)}")
    kind = prop.get("type")
    if kind is None:
        hint = next((hint for key, hint in _UNTYPED.items() if key in prop), None)
        _fail(name, hint or 'it has no "type"; use one of: string, number, integer, boolean, array')
    for key, value in prop.items():
        if value is None and key not in _FIELD_IGNORED:
            _fail(name, f"{key} must not be null; leave it out instead")
    if isinstance(kind, list):
        _fail(
            name,
            'type must be a single name, not a list; to make a field optional, leave it out of "required"',
        )
    common: dict[str, Any] = {
        "name": name,
        "required": required,
        "title": _text(name, prop, "title"),
        "description": _text(name, prop, "description"),
    }
    default = prop.get("default")
    if kind == "string" and ("enum" in prop or "oneOf" in prop or "enumNames" in prop):
        _check_keys(name, prop, "single-select")
        return _single_select(name, prop, common)
    if kind == "string":
        _check_keys(name, prop, "text")
        fmt = _text(name, prop, "format")
        if fmt is not None and fmt not in STRING_FORMATS:
            _fail(
                name, f"format {shown(fmt)} is not supported; use one of: {', '.join(sorted(STRING_FORMATS))}"
            )
        if default is not None and not isinstance(default, str):
            _fail(name, f"the default must be a string, not {json_kind(default)} ({shown(default)})")
        return String(
            default=default,
            min_length=_count(name, prop, "minLength"),
            max_length=_count(name, prop, "maxLength"),
            format=cast("StringFormat | None", fmt),
            **common,
        )
    if kind in ("number", "integer"):
        if "enum" in prop:
            _fail(name, "enum is only allowed on string fields")
        _check_keys(name, prop, "number")
        whole = kind == "integer"
        number = _real(name, prop, "default", whole=whole)
        bounds: dict[str, Any] = {
            "minimum": _real(name, prop, "minimum", whole=whole),
            "maximum": _real(name, prop, "maximum", whole=whole),
        }
        if whole:
            if number is not None and not isinstance(number, int):
                _fail(name, f"the default must be a whole number, not {shown(number)}")
            return Integer(default=number, **bounds, **common)
        return Number(default=number, **bounds, **common)
    if kind == "boolean":
        _check_keys(name, prop, "boolean")
        if default is not None and not isinstance(default, bool):
            _fail(name, f"the default must be true or false, not {shown(default)}")
        return Boolean(default=default, **common)
    if kind == "array":
        _check_keys(name, prop, "multi-select")
        return _multi_select(name, prop, common)
    if kind == "object":
        _fail(name, "nested objects are not allowed in a form; flatten them into top-level fields")
    _fail(name, f"type {shown(kind)} is not allowed; use one of: string, number, integer, boolean, array")


def _check_dialect(dialect: object) -> None:
    if not isinstance(dialect, str):
        _fail(None, "$schema must be a string")
    scheme, sep, rest = dialect.partition("://")
    if not (sep and scheme in ("http", "https") and rest.removesuffix("#") in _DIALECTS):
        _fail(
            None,
            f"$schema names the JSON Schema dialect {shown(dialect)}, which is not supported; "
            "leave it out (2020-12 is the default) or name the json-schema.org meta-schema "
            "of 2020-12, 2019-09, draft-07 or draft-06",
        )


def parse_fields(obj: object) -> tuple[FieldSpec, ...]:
    """Named field specs from a ``requestedSchema`` JSON object, in property order."""
    if not isinstance(obj, Mapping):
        _fail(None, f"a requestedSchema must be a JSON object, not {json_kind(obj)}")
    if obj.get("type") != "object":
        _fail(None, f'a requestedSchema must have "type": "object", not {shown(obj.get("type"))}')
    for key in obj:
        if key not in _TOP_KEYS and key not in _TOP_IGNORED:
            hint = KEYWORD_HINTS.get(key) or f"keyword {shown(key)} is not part of the form subset"
            _fail(None, f"{hint} (at the top of the requestedSchema)")
    if "$schema" in obj:
        _check_dialect(obj["$schema"])
    extra = obj.get("additionalProperties", False)
    if extra is not True and extra is not False:
        _fail(None, "additionalProperties may only be true or false; a form has no extra fields")
    properties = obj.get("properties")
    if not isinstance(properties, Mapping):
        _fail(None, f'a requestedSchema needs "properties" as an object, not {json_kind(properties)}')
    required = obj.get("required", [])
    if not isinstance(required, list) or not all(isinstance(n, str) for n in required):
        _fail(None, '"required" must be an array of field names')
    if len(set(required)) != len(required):
        counts = Counter(required)  # one pass: required.count per name is quadratic
        twice = next(n for n in required if counts[n] > 1)
        _fail(twice, 'it is listed twice in "required"')
    for name in required:
        if name not in properties:
            _fail(name, 'it is listed in "required" but is not one of the properties')
    for name in properties:
        if not isinstance(name, str) or not name:
            _fail(None, f"property names must be non-empty strings, not {shown(name)}")
    wanted = set(required)
    return tuple(_parse_field(name, prop, name in wanted) for name, prop in properties.items())
