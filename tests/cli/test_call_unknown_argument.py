"""``mcp-elicit call`` with an argument name the tool's input schema does not have: a
usage error before the call when the schema refuses it (``additionalProperties: false``,
or a required property missing beside it, the usual typo), naming the name, the closest
one and the names the tool takes; a warning, and the call, when the schema allows it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli.helpers import demo_stdio, run
from mcp_elicit.cli.options import unknown_names
from mcp_elicit.errors import UsageError

SCHEMAS_APP = """
import json

from mcp_elicit import Server

app = Server("schemas")


@app.tool(input_schema={
    "type": "object",
    "properties": {"booking_id": {"type": "integer"}, "note": {"type": "string"}},
    "additionalProperties": False,
})
async def closed(booking_id=None, note=None) -> str:
    return json.dumps({"booking_id": booking_id, "note": note})


@app.tool(input_schema={
    "type": "object",
    "properties": {"booking_id": {"type": "integer"}},
    "additionalProperties": True,
})
async def open_ended(booking_id=None, extra=None) -> str:  # extra: not in the schema
    return json.dumps({"booking_id": booking_id, "extra": extra})


@app.tool(input_schema={
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "patternProperties": {"^x_": {"type": "string"}},
    "additionalProperties": False,
})
async def patterned(text=None, x_tag=None, x_more=None) -> str:
    return json.dumps({"text": text, "x_tag": x_tag, "x_more": x_more})
"""


def _app(tmp: Path) -> list[str]:
    app = tmp / "schemas_app.py"
    app.write_text(SCHEMAS_APP, encoding="utf-8")
    return [sys.executable, "-m", "mcp_elicit", "serve", str(app)]


def test_a_misspelt_required_argument_is_a_usage_error_before_the_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the demo's schema says nothing of additionalProperties, but booking_id is required
    result = run(
        capsys, "call", "cancel_booking", "booking=abc", "--ui", "none", "--trace", "--", *demo_stdio()
    )
    assert result.code == 2, result.err
    assert "tools/call" not in result.sent_methods()
    said = result.err.splitlines()[-1]
    assert "'booking'" in said and "did you mean 'booking_id'" in said, said
    assert "takes: booking_id" in said, said
    assert "Field required" not in result.err


def test_a_name_the_schema_closes_out_is_a_usage_error_with_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(
        capsys, "call", "closed", "booking_id=1", "noet=hi", "--json", "--ui", "none", "--", *_app(tmp_path)
    )
    assert result.code == 2, result.err
    report = result.json()
    assert (report["ok"], report["exit_code"]) == (False, 2)
    assert "'noet'" in report["error"] and "did you mean 'note'" in report["error"]
    assert "takes: booking_id, note" in report["error"]


def test_a_name_an_open_schema_allows_is_sent_with_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(
        capsys, "call", "open_ended", "booking_id=1", "extra=yes", "--ui", "none", "--", *_app(tmp_path)
    )
    assert result.code == 0, result.err
    assert json.loads(result.out) == {"booking_id": 1, "extra": "yes"}
    assert "warning" in result.err and "'extra'" in result.err and "booking_id" in result.err


def test_the_warning_for_a_name_an_open_schema_allows_is_in_the_json_object(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(
        capsys,
        "call",
        "open_ended",
        "booking_id=1",
        "extra=yes",
        "--json",
        "--ui",
        "none",
        "--",
        *_app(tmp_path),
    )
    assert result.code == 0, result.err
    report = result.json()
    assert (report["ok"], report["exit_code"]) == (True, 0)
    assert json.loads(report["result"]["content"][0]["text"]) == {"booking_id": 1, "extra": "yes"}
    said = report["unknown_arguments"]
    assert "'extra'" in said and "booking_id" in said and "sent anyway" in said, said
    assert "warning" in result.err and "'extra'" in result.err  # still said to a person too
    quiet = run(capsys, "call", "open_ended", "booking_id=1", "--json", "--ui", "none", "--", *_app(tmp_path))
    assert quiet.code == 0, quiet.err
    assert quiet.json()["unknown_arguments"] == ""


def test_names_the_schema_knows_are_not_questioned(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(
        capsys,
        "call",
        "patterned",
        "text=a",
        "x_tag=b",
        "--args",
        '{"x_more": "c"}',
        "--ui",
        "none",
        "--",
        *_app(tmp_path),
    )
    assert result.code == 0, result.err
    assert json.loads(result.out) == {"text": "a", "x_tag": "b", "x_more": "c"}
    assert "warning" not in result.err
    refused = run(capsys, "call", "patterned", "--args", '{"y": "c"}', "--ui", "none", "--", *_app(tmp_path))
    assert refused.code == 2, refused.err
    assert "'y'" in refused.err


@pytest.mark.parametrize(
    "schema",
    [
        {"allOf": [{"properties": {"a": {}}}], "additionalProperties": False},  # composed: not second-guessed
        {
            "properties": {"a": {}},
            "patternProperties": {"(": {}},
            "additionalProperties": False,
        },  # unreadable
        {"properties": {"a": {}}, "additionalProperties": {"type": "string"}},  # others allowed, typed
    ],
)
def test_schemas_that_may_take_the_name_do_not_refuse_it(schema: dict[str, object]) -> None:
    assert "did you mean" not in unknown_names({"b": "x"}, schema, "tool")  # no UsageError either


def test_a_closed_schema_without_properties_takes_no_names() -> None:
    with pytest.raises(UsageError, match=r"no argument 'b'.*takes no named arguments"):
        unknown_names({"b": "x"}, {"type": "object", "additionalProperties": False}, "tool")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object"},  # any object: what a tool registered without a schema often lists
        {"type": "object", "additionalProperties": {"type": "string"}},  # a map of names to text
        {"type": "object", "additionalProperties": True},
    ],
    ids=["any-object", "typed-map", "open"],
)
def test_a_schema_that_names_no_argument_and_takes_any_questions_none(schema: dict[str, object]) -> None:
    """No ``properties`` and other names allowed: every name is the tool's to read (a map
    such as environment variables), so none is called unknown, on every call."""
    assert unknown_names({"PATH": "/bin", "HOME": "/root"}, schema, "set_env") == ""


def test_a_required_name_the_properties_leave_out_is_one_the_tool_takes() -> None:
    """``required`` names an argument too, when ``properties`` does not list it: the
    refusal suggests it and says the tool takes it, not that it takes no named arguments."""
    with pytest.raises(UsageError) as refused:
        unknown_names({"qeury": "x"}, {"type": "object", "required": ["query"]}, "search")
    said = str(refused.value)
    assert "did you mean 'query'" in said and "takes: query" in said, said
    assert "no named arguments" not in said, said


def test_an_open_schema_with_no_properties_does_not_say_the_tool_takes_no_names() -> None:
    warning = unknown_names({"x": 1}, {"type": "object", "properties": {}}, "ping")
    assert "'x'" in warning and "lists none" in warning, warning
    assert "takes no named arguments" not in warning, warning  # it sends them, as the schema allows
