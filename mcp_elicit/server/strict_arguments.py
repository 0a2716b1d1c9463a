"""A tool's arguments bound as its published ``inputSchema`` reads them (JSON Schema),
not as pydantic's lax mode would coerce them.

The ``inputSchema`` derived from the type hints says ``integer``, ``string`` with format
``date-time``...; a model that sends ``"3"`` for it, or a date-time with no offset, is
told so (a tool error naming the argument), so it can correct the call, and the function
never gets a value the schema refuses.

Rules:

* One validator per tool, built once from its arguments model, checks a call in one
  pass, in pydantic's strict mode with its JSON semantics: no string for a number, an
  integer or a boolean; no number or boolean for a string; no boolean for a number.
  What the schema shows as a string (a UUID, a ``Decimal``, an enum of strings) is
  taken from a string, an object for a dataclass, a TypedDict or a model, an array for
  a tuple or a set; ``X | None`` takes null; what is left out gets its default.
* An integer may be written with a zero fraction (``2.0``): JSON Schema says it is an
  integer. ``2.5`` is not.
* A ``Literal`` or an enum matches a value as JSON Schema's ``enum`` does: ``true`` is
  not ``1`` and ``1`` is not ``true`` (pydantic's strict check takes either for the
  other), ``1.0`` is ``1``.
* A ``datetime`` is RFC 3339 with its offset and a ``date`` strictly ``YYYY-MM-DD`` on
  the calendar, checked and read by the forms' own ``formats`` (with their messages; a
  leap second as ``parse_date_time`` reads it), wherever it sits: in a list, an
  ``X | None``, a dataclass or a TypedDict.
* When every type in the arguments model checks a decoded value as it checks the JSON
  (text, numbers, booleans, null, lists, dicts with text keys, TypedDicts, dates: the
  common case), the decoded arguments are checked as they are, at the cost of the lax
  check. Else (an enum, a UUID, a tuple, a dataclass, a model...) they are encoded again
  (orjson) and checked as JSON; then they may nest at most ``JSON_DEPTH`` levels (what
  pydantic reads in JSON), not the 512 a request may: deeper is a tool error saying so.
* Inside a pydantic model or a pydantic dataclass a parameter is typed with, pydantic
  runs the class's own prebuilt validator: strictly too, but a ``datetime`` there is
  read as pydantic reads it (``AwareDatetime`` requires the offset) and an integer
  there may not be written ``2.0``.
* Prompts are not bound this way: their arguments are strings on the wire and their
  listing gives no types, so "3" stays their integer 3 (``signature``, lax).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Final

import orjson
from pydantic import BaseModel, ValidationError
from pydantic_core import SchemaError, SchemaValidator, core_schema

from mcp_elicit.forms.formats import FormatMismatch, format_message, parse_date, parse_date_time
from mcp_elicit.server.invalid_arguments import ArgumentsError
from mcp_elicit.wire.jsonrpc import integral, nests_past

__all__ = ["JSON_DEPTH", "StrictValidate", "strict_validator"]

#: ``validate(arguments)``: the keyword arguments for the function; ``ArgumentsError``
#: listing every fault.
StrictValidate = Callable[[Mapping[str, Any]], dict[str, Any]]


def _format_reader(fmt: str, parse: Callable[[str], Any]) -> Callable[[Any], Any]:
    """What reads a JSON string of format ``fmt`` with ``parse`` (None: not of it)."""

    def read(value: Any) -> Any:
        if isinstance(value, str):
            parsed = parse(value)
            if parsed is None:
                raise FormatMismatch(format_message(fmt, value))
            return parsed
        return value  # not a string: the strict check below refuses it, as such

    return read


_date_time, _date = _format_reader("date-time", parse_date_time), _format_reader("date", parse_date)


#: What a ``Literal`` or an enum is given in place of a value it must refuse.
_REFUSED: Final = object()


def _listed(expected: tuple[Any, ...], value: Any) -> Any:
    """``value`` matched against a ``Literal``'s or an enum's ``expected`` values as JSON
    Schema's ``enum`` matches it: ``true`` is not ``1`` (pydantic's strict check takes it
    for 1, and 1 for True), ``1.0`` is ``1``."""
    if type(value) is bool:
        return value if any(type(e) is bool and e is value for e in expected) else _REFUSED
    if type(value) in (int, float):
        for e in expected:
            if isinstance(e, int | float) and not isinstance(e, bool) and e == value:
                return e
        return _REFUSED if any(isinstance(e, bool) for e in expected) else value
    return value


def _reader(kind: str, node: dict[str, Any]) -> Callable[[Any], Any] | None:
    """What reads a JSON value first for the core schema ``node`` of type ``kind``."""
    if kind == "literal":
        return functools.partial(_listed, tuple(node["expected"]))
    if kind == "enum":
        return functools.partial(_listed, tuple(member.value for member in node["members"]))
    return _BEFORE.get(kind)


#: What reads a JSON value first, by the core schema type it goes to (and ``_reader``).
_BEFORE: Final[dict[str, Callable[[Any], Any]]] = {"datetime": _date_time, "date": _date, "int": integral}

_READERS: Final = frozenset({*_BEFORE.values(), _listed})

#: Keys of a core schema whose values are not schemas to validate with.
_NOT_SCHEMAS: Final = frozenset({"serialization", "metadata", "config", "cls", "default", "expected", "ref"})

#: Core schema types whose strict check of a value decoded from JSON is that of the JSON
#: itself (with ``_BEFORE`` first); the rest (an enum, a UUID, a tuple, a dataclass, a
#: model...) is taken from JSON only in JSON mode. ``no-info`` and ``with-info`` name how
#: a function validator is called.
_SAME_IN_PYTHON: Final = frozenset(
    {
        *("any", "none", "bool", "int", "float", "str", "literal", "nullable", "union", "list", "dict"),
        *("date", "datetime", "default", "model-fields", "model-field", "typed-dict", "typed-dict-field"),
        *("definitions", "definition-ref", "function-before", "function-after", "function-wrap"),
        *("function-plain", "no-info", "with-info"),
    }
)


#: How many levels of objects and arrays pydantic reads in JSON (the arguments the first).
JSON_DEPTH: Final = 201

_TOO_DEEP: Final = (
    f"Invalid arguments: they nest objects and arrays more than {JSON_DEPTH} levels deep (the "
    "arguments object the first), deeper than this tool's parameters can be checked; send them "
    "nested less deeply"
)


def strict_validator(model: type[BaseModel]) -> StrictValidate | None:
    """The check of ``model``'s fields against JSON arguments (see the module's rules),
    giving their values; None when pydantic could not complete ``model`` or lays out its
    core schema otherwise (``tools`` then checks the published schema with jsonschema
    before the lax bind, and logs it)."""
    if not model.__pydantic_complete__:
        return None
    whole = model.__pydantic_core_schema__
    schema = _fields_schema(_rewritten(whole))
    if schema is None:
        return None
    config = (whole["schema"] if whole["type"] == "definitions" else whole).get("config")
    validator = SchemaValidator(schema, config)
    if _same_in_python(schema):  # the common case, at the cost of the lax check
        validate_python = validator.validate_python

        def bind_decoded(arguments: Mapping[str, Any]) -> dict[str, Any]:
            try:
                given = arguments if type(arguments) is dict else dict(arguments)
                values: dict[str, Any] = validate_python(given, strict=True)[0]
            except ValidationError as exc:
                raise ArgumentsError.found(exc) from None
            return values

        return bind_decoded
    validate_json = validator.validate_json

    def bind_json(arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            values: dict[str, Any] = validate_json(_encoded(arguments), strict=True)[0]
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "json_invalid":  # JSON orjson wrote: only too deep for pydantic
                raise ArgumentsError(_TOO_DEEP) from None
            raise ArgumentsError.found(exc) from None
        return values

    return bind_json


def _same_in_python(node: Any) -> bool:
    """Whether the strict check of ``node`` takes values decoded from JSON as it takes the
    JSON (``_SAME_IN_PYTHON``; a dict's keys are text, as JSON's are)."""
    if isinstance(node, list | tuple):
        return all(_same_in_python(item) for item in node)
    if not isinstance(node, dict):
        return True
    kind = node.get("type")
    if isinstance(kind, str) and kind not in _SAME_IN_PYTHON:
        return False
    if kind == "dict" and node.get("keys_schema", {"type": "str"}).get("type") not in ("str", "any"):
        return False  # JSON mode reads an object's keys as the type they go to; Python does not
    return all(_same_in_python(value) for key, value in node.items() if key not in _NOT_SCHEMAS)


def _fields_schema(schema: Any) -> Any:
    """The model's fields alone (its instance is never made: ``signature``), with the
    definitions they refer to; None for another layout."""
    if schema["type"] == "definitions":
        inner = _fields_schema(schema["schema"])
        return None if inner is None else {**schema, "schema": inner}
    if schema["type"] == "model" and schema["schema"]["type"] == "model-fields":
        return schema["schema"]
    return None


def _rewritten(node: Any, *, key: bool = False) -> Any:
    """The core schema ``node`` with each ``datetime``, ``date``, ``int``, ``literal`` and
    ``enum`` read first by its ``_reader`` (a copy: the classes' own schemas are left as
    they are). An object's key (``key``) is text, which JSON mode reads as the integer, the
    ``Literal`` or the enum it goes to: no float or boolean to tell apart."""
    if isinstance(node, list | tuple):
        return type(node)(_rewritten(item, key=key) for item in node)
    if not isinstance(node, dict):
        return node
    out = {
        name: value if name in _NOT_SCHEMAS else _rewritten(value, key=key or name == "keys_schema")
        for name, value in node.items()
    }
    kind = out.get("type", "")
    if kind == "union":  # a fault names the choice as before, not the functions reading it first
        out["choices"] = [
            _labelled(new, old) for new, old in zip(out["choices"], node["choices"], strict=True)
        ]
    before = None if key and kind in ("int", "literal", "enum") else _reader(kind, out)
    if before is None:
        return out
    ref = out.pop("ref", None)  # a reference names the whole, checked first
    wrapped = core_schema.no_info_before_validator_function(before, out)
    if ref is not None:
        wrapped["ref"] = ref
    return wrapped


def _labelled(choice: Any, original: Any) -> Any:
    """A union's ``choice`` (rewritten from ``original``), labelled as pydantic labels the
    ``original``: ``o.list[int]: ...``, not ``o.list[function-before[integral(), int]]: ...``;
    by the type it reads when it refers to definitions elsewhere."""
    if isinstance(choice, tuple):  # labelled by the author
        return choice
    try:
        return (choice, SchemaValidator(original).title)
    except SchemaError:  # a reference to definitions held above it
        pass
    if (
        choice["type"] == "function-before"
        and getattr(choice["function"]["function"], "func", choice["function"]["function"]) in _READERS
    ):
        return (choice, choice["schema"]["type"])
    return choice


def _encoded(arguments: Mapping[str, Any]) -> bytes:
    """``arguments`` as JSON; ``ArgumentsError`` for what has none (never from the wire)."""
    try:
        return orjson.dumps(arguments if type(arguments) is dict else dict(arguments))
    except TypeError as exc:  # past orjson's 255 levels (the wire allows 512), or not JSON
        if nests_past(arguments, JSON_DEPTH):
            raise ArgumentsError(_TOO_DEEP) from None
        raise ArgumentsError(f"Invalid arguments: they are not JSON values ({exc})") from None
