"""The schema checker every wire test relies on: where it departs from ``schema.json``,
and that it departs nowhere else."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from support.wire import WireChecker

REVISIONS = ["2025-11-25", "2026-07-28"]  # the schemas the suite reads (older shapes: below)
_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


def _send_answer(checker: WireChecker, answer: dict[str, Any]) -> None:
    """Check a form answer as the client sends it at the checker's revision: the result of
    an ``elicitation/create`` (2025-11-25), or in a retry's ``inputResponses``
    (2026-07-28)."""
    if checker.revision != "2026-07-28":
        checker.response("elicitation/create", {"jsonrpc": "2.0", "id": 1, "result": answer})
        return
    params = {"name": "t", "inputResponses": {"k": answer}, "requestState": "s", "_meta": _META}
    checker.request({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})


def _raw_errors(checker: WireChecker, instance: Any, definition: str) -> list[str]:
    """What the unaltered ``schema.json`` of the checker's revision says of ``instance``."""
    where = "definitions" if "definitions" in checker.schema else "$defs"
    root = {
        "$schema": checker.schema.get("$schema"),
        where: checker.schema[where],
        "$ref": f"#/{where}/{definition}",
    }
    cls = jsonschema.validators.validator_for(root)
    return [e.message for e in cls(root).iter_errors(instance)]


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_fractional_form_answer_is_valid_as_the_specification_says(revision: str) -> None:
    """``schema.ts`` types a form answer's values ``string | number | boolean | string[]``;
    the generated ``schema.json`` narrows ``number`` to ``integer`` there. The checker
    follows the specification, and this test fails, to say the departure can go, once
    ``schema.json`` agrees."""
    checker = WireChecker.load(revision)
    content: dict[str, Any] = {"weight": 72.5, "guests": 2, "name": "Ann", "tags": ["a"]}
    answer = {"action": "accept", "content": content}
    assert _raw_errors(checker, answer, "ElicitResult"), (
        "schema.json now admits fractions: drop _as_specified"
    )
    _send_answer(checker, answer)
    assert checker.seen >= 1


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    "content",
    [{"nested": {"a": 1}}, {"list": [1, 2]}, {"nothing": None}, {"mixed": ["a", 1]}],
    ids=json.dumps,
)
def test_what_no_form_answer_can_hold_is_still_refused(revision: str, content: dict[str, Any]) -> None:
    checker = WireChecker.load(revision)
    with pytest.raises(AssertionError, match="invalid"):
        _send_answer(checker, {"action": "accept", "content": content})


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_checker_changes_no_other_definition(revision: str) -> None:
    checker = WireChecker.load(revision)
    raw = checker.schema.get("$defs") or checker.schema.get("definitions")
    assert {name for name in raw if raw[name] != checker.defs[name]} == {"ElicitResult"}


#: A schema shaped as those before 2025-11-25 are (draft-07 ``definitions``; a request's
#: type its ``method`` and ``params`` alone, the envelope ``JSONRPCRequest``'s; a form
#: answer's values one list of types), small and written here, so that the checker's
#: reading of that shape is tested where the official files are absent.
_OLDER_SHAPE: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "definitions": {
        "JSONRPCRequest": {
            "type": "object",
            "required": ["jsonrpc", "id", "method"],
            "properties": {
                "jsonrpc": {"const": "2.0"},
                "id": {"type": ["string", "integer"]},
                "method": {"type": "string"},
                "params": {"type": "object", "additionalProperties": {}},
            },
        },
        "JSONRPCResponse": {
            "type": "object",
            "required": ["jsonrpc", "id", "result"],
            "properties": {
                "jsonrpc": {"const": "2.0"},
                "id": {"type": ["string", "integer"]},
                "result": {"type": "object", "additionalProperties": {}},
            },
        },
        "ListToolsRequest": {
            "type": "object",
            "required": ["method"],
            "properties": {
                "method": {"const": "tools/list"},
                "params": {"type": "object", "properties": {"cursor": {"type": "string"}}},
            },
        },
        "ElicitResult": {
            "type": "object",
            "required": ["action"],
            "properties": {
                "action": {"enum": ["accept", "decline", "cancel"]},
                "content": {
                    "type": "object",
                    "additionalProperties": {"type": ["string", "integer", "boolean"]},
                },
            },
        },
    },
}


@pytest.mark.parametrize(
    ("params", "fault"),
    [
        ({"cursor": "abc"}, None),
        ({"cursor": 1}, "1 is not of type 'string'"),
        ({"page": 2}, "'page' was unexpected"),
    ],
)
def test_a_request_of_an_older_shape_is_checked_in_its_envelope(
    params: dict[str, Any], fault: str | None
) -> None:
    checker = WireChecker("2025-06-18", _OLDER_SHAPE)
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}
    if fault is None:
        checker.request(request)
        assert checker.seen == 2  # the envelope, then the method's own type
        return
    with pytest.raises(AssertionError, match=fault):
        checker.request(request)


def test_an_older_shape_takes_fractional_form_answers_too() -> None:
    checker = WireChecker("2025-06-18", _OLDER_SHAPE)
    answer = {"action": "accept", "content": {"weight": 72.5, "guests": 2, "name": "Ann"}}
    checker.response("elicitation/create", {"jsonrpc": "2.0", "id": 1, "result": answer})
    with pytest.raises(AssertionError, match="invalid"):
        checker.response(
            "elicitation/create", {"jsonrpc": "2.0", "id": 1, "result": {**answer, "content": {"a": [1]}}}
        )
