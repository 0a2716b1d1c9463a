"""``mcp-elicit call`` without an argument the tool's input schema requires: a usage error
(exit 2) before the call, on one line naming each missing argument, what the schema says it
is, and how to give it; never a tools/call the server can only refuse. Only a clear case is
refused: an object schema with a top-level ``required``; a schema that is not an object, or
a required argument whose property has a default, is the server's to judge."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cli.helpers import demo_stdio, run
from mcp_elicit.cli.options import missing_names
from mcp_elicit.errors import UsageError

UNUSUAL_APP = """
import json

from mcp_elicit import Server

app = Server("unusual")


@app.tool(input_schema={
    "type": "object",
    "properties": {
        "restaurant": {"type": "string", "description": "Where to book\\u001b[31m, by its name"},
        "guests": {"type": "integer"},
        "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["restaurant", "guests", "when"],
})
async def book(restaurant=None, guests=None, when=None) -> str:
    return "booked"
"""


def _app(tmp: Path) -> list[str]:
    app = tmp / "unusual_app.py"
    app.write_text(UNUSUAL_APP, encoding="utf-8")
    return [sys.executable, "-m", "mcp_elicit", "serve", str(app)]


def test_a_missing_required_argument_is_a_usage_error_before_the_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "call", "cancel_booking", "--ui", "none", "--trace", "--", *demo_stdio())
    assert result.code == 2, result.err
    assert "tools/call" not in result.sent_methods()
    said = result.err.splitlines()[-1]
    assert said == (
        "mcp-elicit: cancel_booking needs the argument booking_id (integer), which its input schema "
        "requires; give it as booking_id=VALUE"
    ), said


def test_with_json_the_refusal_is_the_error_of_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "cancel_booking", "--json", "--ui", "none", "--", *demo_stdio())
    assert result.code == 2, result.err
    report = result.json()
    assert (report["ok"], report["exit_code"]) == (False, 2)
    assert "needs the argument booking_id (integer)" in report["error"]


def test_several_missing_are_named_with_their_types_and_descriptions_made_inert(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(capsys, "call", "book", "guests=2", "--ui", "none", "--trace", "--", *_app(tmp_path))
    assert result.code == 2, result.err
    assert "tools/call" not in result.sent_methods()
    said = result.err.splitlines()[-1]
    assert "\x1b" not in said
    assert said.startswith("mcp-elicit: book needs the arguments restaurant (string: Where to book"), said
    assert (
        "when (string or null), which its input schema requires; give them as restaurant=VALUE when=VALUE"
        in said
    )
    assert "guests" not in said


@pytest.mark.parametrize(
    "schema",
    [
        None,
        {"type": "array", "required": ["x"]},
        {"required": ["x"]},  # no type: not the object the spec asks for, so not a clear case
        {"type": "object", "required": "x"},
        {"type": "object", "required": [7]},
        {"type": "object", "properties": {"x": {"type": "string"}}},
        # required with a default: a server may fill it in (mcp-elicit's own, checking the
        # schema as JSON Schema reads it, refuses the call, and says so)
        {"type": "object", "properties": {"x": {"type": "string", "default": "a"}}, "required": ["x"]},
    ],
)
def test_unusual_schemas_are_not_questioned(schema: dict[str, object] | None) -> None:
    missing_names({}, schema, "tool")  # no UsageError


def test_arguments_given_in_args_or_as_json_count() -> None:
    schema = {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]}
    missing_names({"a": None, "b": 0}, schema, "tool")
    with pytest.raises(UsageError, match="tool needs the argument b, which"):
        missing_names({"a": 1}, schema, "tool")


@pytest.mark.parametrize("name", ["a=b", "x:", ""])
def test_a_name_no_pair_can_carry_is_shown_given_in_args(name: str) -> None:
    # "a=b=VALUE" gives a, "x:=VALUE" gives x as JSON, "=VALUE" is refused: --args carries any name
    schema = {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}
    with pytest.raises(UsageError) as caught:
        missing_names({}, schema, "tool")
    said = str(caught.value)
    assert said.endswith(f"give it as --args '{{\"{name}\": VALUE}}'"), said
    assert f"{name}=VALUE" not in said


def test_names_pairs_can_carry_are_shown_as_pairs_beside_one_in_args() -> None:
    schema = {"type": "object", "required": ["city", "a=b"]}
    with pytest.raises(UsageError) as caught:
        missing_names({}, schema, "tool")
    assert str(caught.value).endswith("give them as city=VALUE --args '{\"a=b\": VALUE}'"), str(caught.value)
