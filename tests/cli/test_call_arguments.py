"""``mcp-elicit call`` (and ``prompt``): how the words after the tool name become arguments:
read by the tool's input schema (anyOf, enum, numbers JSON cannot carry), values given as
JSON, options between the words, and the usage errors of arguments that cannot be read."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli.helpers import demo_stdio, run
from mcp_elicit.cli.main import main
from mcp_elicit.cli.options import parse_pairs
from mcp_elicit.errors import UsageError

from support.procs import HttpProcess


def test_arguments_are_read_by_the_tool_schema(capsys: pytest.CaptureFixture[str]) -> None:
    typed = run(
        capsys, "call", "cancel_booking", "booking_id=41", "--ui", "none", "--trace", "--", *demo_stdio()
    )
    assert typed.out.strip() == "There is no booking #41."
    call = next(m for m in typed.sent() if m.get("method") == "tools/call")
    assert call["params"]["arguments"] == {"booking_id": 41}
    as_json = run(
        capsys, "call", "cancel_booking", "--args", '{"booking_id": 7}', "--ui", "none", "--", *demo_stdio()
    )
    assert as_json.out.strip() == "There is no booking #7."


TYPED_APP = """
import json

from mcp_elicit import Server

app = Server("typed")
UNSET = object()


@app.tool(input_schema={
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "maybe_n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "one_of": {"oneOf": [{"type": "number"}, {"type": "boolean"}]},
        "level": {"enum": [1, 2, 3]},
        "int_or_text": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "x": {"type": "number"},
    },
})
async def echo(
    text=UNSET, maybe_n=UNSET, tags=UNSET, one_of=UNSET, level=UNSET, int_or_text=UNSET, x=UNSET
) -> str:
    given = dict(text=text, maybe_n=maybe_n, tags=tags, one_of=one_of, level=level, int_or_text=int_or_text, x=x)
    return json.dumps({k: v for k, v in given.items() if v is not UNSET})
"""


def _typed_app(tmp: Path) -> list[str]:
    app = tmp / "typed_app.py"
    app.write_text(TYPED_APP, encoding="utf-8")
    return [sys.executable, "-m", "mcp_elicit", "serve", str(app)]


@pytest.mark.parametrize(
    ("pair", "sent"),
    [
        ("maybe_n=5", {"maybe_n": 5}),
        ("maybe_n=null", {"maybe_n": None}),
        ('tags=["a", "b=c"]', {"tags": ["a", "b=c"]}),
        ("one_of=true", {"one_of": True}),
        ("one_of=2.5", {"one_of": 2.5}),
        ("level=2", {"level": 2}),
        ("int_or_text=5", {"int_or_text": "5"}),  # text is allowed: what was typed
        ("text=a=b", {"text": "a=b"}),
        ("text=42", {"text": "42"}),
        ("text=ünï 😀", {"text": "ünï 😀"}),
    ],
)
def test_arguments_follow_any_of_and_enum_in_the_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pair: str, sent: dict[str, object]
) -> None:
    result = run(capsys, "call", "echo", pair, "--ui", "none", "--trace", "--", *_typed_app(tmp_path))
    assert result.code == 0, result.err
    call = next(m for m in result.sent() if m.get("method") == "tools/call")
    assert call["params"]["arguments"] == sent
    assert json.loads(result.out) == sent


@pytest.mark.parametrize(
    "given",
    [
        ["x:=NaN"],
        ["x=1e400"],
        ["x=-Infinity"],
        ["--args", '{"x": Infinity}'],
        ["--args", '{"x": [1e999]}'],
        ["maybe_n=123456789012345678901234567890"],
        ["x:=-9223372036854775809"],
        ["x:=" + "9" * 5000],  # past the digits int() reads at all
        ["--args", '{"x": ' + "9" * 5000 + "}"],
    ],
)
def test_a_number_json_cannot_carry_is_refused_before_calling(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, given: list[str]
) -> None:
    result = run(capsys, "call", "echo", *given, "--ui", "none", "--trace", "--", *_typed_app(tmp_path))
    assert result.code == 2, result.err
    assert "tools/call" not in result.sent_methods()
    assert "not a number JSON can carry" in result.err, result.err
    assert "Traceback" not in result.err


def test_options_may_come_between_the_words(
    capsys: pytest.CaptureFixture[str], http_demo: HttpProcess
) -> None:
    result = run(capsys, "call", http_demo.url, "--ui", "none", "list_bookings")
    assert result.code == 0, result.err


@pytest.mark.parametrize("given", [["n:=5"], ["--args", '{"city": "Oslo", "n": [1]}']])
def test_prompt_arguments_given_as_json_are_refused_before_connecting(
    capsys: pytest.CaptureFixture[str], given: list[str]
) -> None:
    result = run(capsys, "prompt", "plan_evening", *given, "--trace", "--", *demo_stdio())
    assert result.code == 2
    assert "prompt arguments are text; n given as JSON" in result.err
    assert result.sent() == []  # nothing started, nothing sent


@pytest.mark.parametrize("pair", ["restaurant=noma", 'restaurant:="noma"'])
def test_a_pair_that_names_an_argument_of_args_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], pair: str
) -> None:
    result = run(
        capsys, "call", "book_table", pair, "--args", '{"restaurant": 1}', "--trace", "--", *demo_stdio()
    )
    assert result.code == 2, result.err
    assert "'restaurant' is given twice" in result.err, result.err
    assert result.sent() == []  # refused before connecting


@pytest.mark.parametrize(
    "given",
    [
        ["echo", "text=caf\udce9"],  # what Python makes of b"caf\xe9" (Latin-1) in a UTF-8 locale
        ["ech\udcff"],
        ["echo", "--args", '{"text": "caf\udce9"}'],
    ],
)
def test_arguments_that_are_not_utf8_are_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, given: list[str]
) -> None:
    result = run(capsys, "call", *given, "--ui", "none", "--trace", "--", *_typed_app(tmp_path))
    assert result.code == 2, result.err
    assert "is not valid UTF-8" in result.err
    assert "set the terminal to UTF-8" in result.err
    assert result.sent() == []


def test_a_value_that_must_be_json(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "cancel_booking", "booking_id=one", "--", *demo_stdio())
    assert result.code == 2
    # the schema wants an integer, so quoting the word as text would only fail on the server
    assert (
        "'booking_id' takes an integer (the tool's input schema says so), which 'one' is not: "
        "give it as JSON, such as booking_id=3" in result.err
    ), result.err
    assert ":='\"...\"'" not in result.err, result.err


@pytest.mark.parametrize(
    ("pair", "said"),
    [
        ("maybe_n=five", "'maybe_n' takes an integer or null (the tool's input schema says so)"),
        ("level=high", "'level' takes an integer (the tool's input schema says so), which 'high' is not"),
        (
            "tags=a,b",
            "'tags' takes an array or null (the tool's input schema says so), which 'a,b' is not: "
            "give it as JSON, such as tags='[...]'",
        ),
        (
            "one_of=yes",
            "'one_of' takes a boolean or a number (the tool's input schema says so), which 'yes' "
            "is not: give it as JSON, such as one_of=true",
        ),
    ],
)
def test_a_value_the_schema_types_names_the_type_not_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pair: str, said: str
) -> None:
    result = run(capsys, "call", "echo", pair, "--ui", "none", "--trace", "--", *_typed_app(tmp_path))
    assert result.code == 2, result.err
    assert said in result.err, result.err
    assert "quote text" not in result.err, result.err
    assert "tools/call" not in result.sent_methods()


def test_a_value_typed_with_no_json_type_names_the_type_given() -> None:
    """``"type": "int"`` (no JSON type): there is no kind to name nor example to give, and
    the message once read "'count' takes  (the tool's input schema says so)"."""
    schema = {"type": "object", "properties": {"count": {"type": "int"}}}
    with pytest.raises(UsageError) as refused:
        parse_pairs(["count=five"], schema=schema)
    assert str(refused.value) == (
        "'count' is typed int in the tool's input schema, which is no JSON type, and 'five' is not "
        "JSON: give it as JSON (--trace shows the tool's inputSchema)"
    )
    assert parse_pairs(["count=5"], schema=schema) == {"count": 5}


def test_a_value_given_as_json_that_is_not_json_says_how_to_quote_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(capsys, "call", "echo", "text:=hello", "--ui", "none", "--", *_typed_app(tmp_path))
    assert result.code == 2, result.err
    assert (
        "the value of 'text' must be JSON here ('hello' is not); quote text as text:='\"...\"'" in result.err
    )


@pytest.mark.parametrize(
    "pairs", [("restaurant=noma", "restaurant=geranium"), ("restaurant=noma", 'restaurant:="noma"')]
)
def test_a_name_given_by_two_pairs_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], pairs: tuple[str, str]
) -> None:
    """As with --args and a pair: one of the two values typed would be dropped without a word."""
    result = run(capsys, "call", "book_table", *pairs, "--trace", "--", *demo_stdio())
    assert result.code == 2, result.err
    assert "'restaurant' is given twice" in result.err, result.err
    assert result.sent() == []  # refused before connecting


def test_args_given_twice_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """The later object would replace the earlier whole: one of them dropped without a word.
    An error of argparse's own, as the CLI's other option errors are (exit 2)."""
    twice = ["--args", '{"restaurant": "noma"}', "--args", '{"party_size": 2}']
    with pytest.raises(SystemExit) as exc:
        main(["call", "book_table", *twice, "--", *demo_stdio()])
    assert exc.value.code == 2
    assert "argument --args: given twice: give it once" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["restaurant", "=", "noma"], "not 'restaurant' (no spaces around =: each argument is one word"),
        (["restaurant=", "noma"], "not 'noma' (no spaces around =: each argument is one word"),
        (["restaurant", "=noma"], "not 'restaurant' (no spaces around ="),
        (
            ["restaurant=Le", "Bernardin"],
            "not 'Bernardin' (if it goes on the value before it, quote them as one word: "
            "'restaurant=Le Bernardin')",
        ),
        # every word of the value, not the first two only
        (
            ["restaurant=Le", "Grand", "Bernardin", "party=2"],
            "not 'Grand' (if it goes on the value before it, quote them as one word: "
            "'restaurant=Le Grand Bernardin')",
        ),
        # a name left without its value is not said to be part of the value before it
        (["party=4", "restaurant"], "not 'restaurant' (if it goes on the value before it"),
    ],
)
def test_an_argument_the_shell_split_at_its_spaces_says_how_to_keep_it_whole(
    capsys: pytest.CaptureFixture[str], words: list[str], said: str
) -> None:
    result = run(capsys, "call", "book_table", *words, "--", *demo_stdio())
    assert result.code == 2
    assert f"arguments are NAME=VALUE or NAME:=JSON, {said}" in result.err, result.err


def test_a_bare_word_alone_is_not_said_to_be_split(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "book_table", "noma", "--", *demo_stdio())
    assert result.code == 2
    assert result.err.strip().endswith("arguments are NAME=VALUE or NAME:=JSON, not 'noma'"), result.err
