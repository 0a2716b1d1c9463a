"""The ``meta=`` of ``app.tool``, ``app.prompt`` and ``app.resource``: listed as ``_meta``
as JSON writes it, checked and copied at registration.

It was taken as any mapping and copied one level: a value JSON cannot carry (a set, an
object, a key that is not a string, an integer past 64 bits, a mapping holding itself)
registered, and then every ``tools/list`` (``prompts/list``, ``resources/list``) failed
with -32603 "Internal error", no entry listed; NaN was listed as null; and a change to
the caller's nested values after registration changed the listing."""

from __future__ import annotations

import datetime as dt
import enum
import types
from collections.abc import Callable
from typing import Any

import pytest

from mcp_elicit import Server

from support.memory import MemoryClient
from support.wire import WireChecker

#: Each decorator, registering a function with ``meta``; the list method and result key.
DECORATORS: dict[str, tuple[Callable[[Server, Any], object], str, str]] = {
    "tool": (lambda app, meta: app.tool(name="t", meta=meta)(lambda: "x"), "tools/list", "tools"),
    "prompt": (lambda app, meta: app.prompt(name="p", meta=meta)(lambda: "x"), "prompts/list", "prompts"),
    "resource": (
        lambda app, meta: app.resource("notes://a", name="a", meta=meta)(lambda: "x"),
        "resources/list",
        "resources",
    ),
}


def _holding_itself() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["again"] = loop
    return loop


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


class Shelf(enum.Enum):
    TOP = "top"


@pytest.mark.parametrize("decorator", DECORATORS)
@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"k": float("nan")}, "meta['k'] is nan; JSON has no NaN or infinity: give None or a string"),
        (
            {"k": [1, float("-inf")]},
            "meta['k'][1] is -inf; JSON has no NaN or infinity: give None or a string",
        ),
        ({1: "x"}, "meta: the key 1 is not a string, as every JSON key is"),
        ({"k": {"n": {2: "x"}}}, "meta['k']['n']: the key 2 is not a string, as every JSON key is"),
        (
            {"k": {1}},
            "meta['k'] {1}: Type is not JSON serializable: set; give JSON values (text, numbers, lists, "
            "mappings)",
        ),
        (
            {"k": 2**64},
            "meta['k'] 18446744073709551616: Integer exceeds 64-bit range; give JSON values (text, "
            "numbers, lists, mappings)",
        ),
        (  # the path cut at 200 characters
            _nested(201),
            ("meta" + "['a']" * 200)[:200] + "...: nests deeper than 200 levels (does it hold itself?)",
        ),
    ],
    ids=["nan", "infinity", "key", "nested-key", "set", "integer", "deep"],
)
def test_a_meta_json_cannot_carry_is_refused_at_registration(
    decorator: str, meta: dict[Any, Any], expected: str
) -> None:
    register, _, _ = DECORATORS[decorator]
    app = Server("meta")
    with pytest.raises(TypeError) as refused:
        register(app, meta)
    assert str(refused.value) == f"app.{decorator}(): {expected}"
    assert app.names("tools") == app.names("prompts") == app.names("resources") == []


@pytest.mark.parametrize("decorator", DECORATORS)
def test_a_meta_holding_itself_is_refused_saying_so(decorator: str) -> None:
    register, _, _ = DECORATORS[decorator]
    with pytest.raises(TypeError, match=r"^app\.\w+\(\): meta\['again'\]\['again'\].*\.\.\.: nests deeper"):
        register(Server("meta"), _holding_itself())


@pytest.mark.anyio
@pytest.mark.parametrize("decorator", DECORATORS)
async def test_meta_is_listed_as_written_when_registered(decorator: str) -> None:
    register, method, key = DECORATORS[decorator]
    rows = [{"n": 1}]
    meta = {
        "example.com/rows": rows,
        "example.com/pair": ("a", 1.5),
        "example.com/view": types.MappingProxyType({"shelf": Shelf.TOP}),
        "example.com/at": dt.datetime(2026, 1, 12, 15, 0, 58, tzinfo=dt.UTC),
        "example.com/deep": _nested(199),  # with meta itself, as deep as it may be
    }
    app = Server("meta")
    register(app, meta)
    rows.append({"n": float("nan")})  # a change after registration lists nothing new
    meta["example.com/late"] = True
    listed = await MemoryClient(app, checker=WireChecker.load("2026-07-28")).result(method)
    (entry,) = listed[key]
    assert entry["_meta"] == {
        "example.com/rows": [{"n": 1}],
        "example.com/pair": ["a", 1.5],
        "example.com/view": {"shelf": "top"},
        "example.com/at": "2026-01-12T15:00:58+00:00",
        "example.com/deep": _nested(199),
    }
