"""Registering handlers: what a Python developer naturally passes to ``@app.tool()``,
``@app.prompt()`` and ``@app.resource()`` (functions, callable objects, ``functools.partial``,
bound methods, static methods) works, and what cannot work fails at registration saying
what to do. Registration from a plain function's worker thread happens on the event loop.
Driven in memory, every message checked against the schema."""

from __future__ import annotations

import asyncio
import functools
import re
import threading
import typing
from typing import Annotated, Any

import pydantic
import pytest
from pydantic import Field

import mcp_elicit
from mcp_elicit import Context, Server

from support.memory import MemoryClient
from support.registration import label, text
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def listed(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in result["tools"] if t["name"] == name)


class Greeter:
    """A greeter (the class)."""

    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    def __call__(self, who: str) -> str:
        """Greet someone."""
        return f"{self.greeting}, {who}"

    def shout(self, who: str) -> str:
        """Greet someone loudly."""
        return f"{self.greeting.upper()}, {who.upper()}!"

    async def whisper(self, ctx: Context, who: str) -> str:
        """Greet someone quietly."""
        return f"{self.greeting.lower()}, {who.lower()}..."


class AsyncGreeter:
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    async def __call__(self, ctx: Context, who: str) -> str:
        """Greet someone, awaited."""
        await asyncio.sleep(0)
        return (
            f"{self.greeting}, {who} (on the loop: {threading.current_thread() is threading.main_thread()})"
        )


def add(base: int, step: int, times: int = 1) -> int:
    """Add step to base, times times."""
    return base + step * times


async def add_later(base: int, step: int) -> int:
    """Add step to base, awaited."""
    await asyncio.sleep(0)
    return base + step


async def label_later(kind: str, item: str) -> str:
    """Label an item, awaited."""
    await asyncio.sleep(0)
    return f"{kind}:{item} (later)"


async def test_callable_objects_partials_and_methods_register_and_run(wire: WireChecker) -> None:
    app = Server("callables")
    greeter = Greeter("Hello")
    app.tool(name="greet")(greeter)
    app.tool(name="greet_async")(AsyncGreeter("Hi"))
    app.tool(name="add_five")(functools.partial(add, step=5))
    app.tool(name="add_to_ten")(functools.partial(add, 10))
    app.tool(name="add_later")(functools.partial(add_later, step=2))
    app.tool()(greeter.shout)
    app.tool()(greeter.whisper)
    client = MemoryClient(app, checker=wire)

    tools = await client.result("tools/list")
    assert [t["name"] for t in tools["tools"]] == [
        "greet",
        "greet_async",
        "add_five",
        "add_to_ten",
        "add_later",
        "shout",
        "whisper",
    ]
    assert listed(tools, "greet")["description"] == "Greet someone."
    assert listed(tools, "greet")["inputSchema"]["properties"] == {"who": {"type": "string"}}
    assert listed(tools, "greet_async")["description"] == "Greet someone, awaited."
    # what a partial binds is not an argument any more, whether by position or by keyword
    assert sorted(listed(tools, "add_five")["inputSchema"]["properties"]) == ["base", "times"]
    assert sorted(listed(tools, "add_to_ten")["inputSchema"]["properties"]) == ["step", "times"]
    assert listed(tools, "add_five")["description"] == "Add step to base, times times."
    assert listed(tools, "add_later")["description"] == "Add step to base, awaited."
    assert sorted(listed(tools, "shout")["inputSchema"]["properties"]) == ["who"]
    assert sorted(listed(tools, "whisper")["inputSchema"]["properties"]) == ["who"]
    assert listed(tools, "shout")["description"] == "Greet someone loudly."

    async def call(name: str, **arguments: Any) -> str:
        result = await client.result("tools/call", {"name": name, "arguments": arguments})
        assert not result.get("isError"), result
        return text(result)

    assert await call("greet", who="Ada") == "Hello, Ada"
    assert await call("greet_async", who="Ada") == "Hi, Ada (on the loop: True)"
    assert await call("add_five", base=1, times=2) == "11"
    assert await call("add_to_ten", step=3) == "13"
    assert await call("add_later", base=1) == "3"
    assert await call("shout", who="Ada") == "HELLO, ADA!"
    assert await call("whisper", who="Ada") == "hello, ada..."
    # a keyword a partial bound cannot be overridden by the caller
    assert await call("add_five", base=1, step=100) == "6"


async def test_callable_objects_and_partials_as_prompts_and_resources(wire: WireChecker) -> None:
    app = Server("callables")
    app.prompt(name="greeting")(Greeter("Dear"))
    app.prompt(name="greeting_async")(AsyncGreeter("Hey"))
    app.resource("test://fruit/{item}", name="fruit")(functools.partial(label, "fruit"))
    app.resource("test://veg/{item}", name="veg")(functools.partial(label_later, kind="veg"))
    app.resource("test://people/{who}", name="people")(AsyncGreeter("Yo"))
    client = MemoryClient(app, checker=wire)

    prompts = await client.result("prompts/list")
    assert [(p["name"], p["description"]) for p in prompts["prompts"]] == [
        ("greeting", "Greet someone."),
        ("greeting_async", "Greet someone, awaited."),
    ]
    got = await client.result("prompts/get", {"name": "greeting_async", "arguments": {"who": "Bo"}})
    assert got["messages"][0]["content"]["text"] == "Hey, Bo (on the loop: True)"
    templates = await client.result("resources/templates/list")
    assert [(t["name"], t.get("description")) for t in templates["resourceTemplates"]] == [
        ("fruit", "Label an item."),
        ("veg", "Label an item, awaited."),
        ("people", "Greet someone, awaited."),
    ]
    read = await client.result("resources/read", {"uri": "test://fruit/apple"})
    assert read["contents"][0]["text"] == "fruit:apple"
    read = await client.result("resources/read", {"uri": "test://veg/leek"})
    assert read["contents"][0]["text"] == "veg:leek (later)"
    read = await client.result("resources/read", {"uri": "test://people/Al"})
    assert read["contents"][0]["text"] == "Yo, Al (on the loop: True)"


def test_a_static_method_registers_in_its_class_body_and_stays_one() -> None:
    app = Server("static")

    class Tools:
        @app.tool()
        @staticmethod
        def double(n: int) -> int:
            """Double n."""
            return 2 * n

    assert Tools.double(2) == 4  # the class still has its static method
    assert app._tools["double"].description == "Double n."
    assert list(app._tools["double"].input_schema["properties"]) == ["n"]


async def test_a_class_method_registers_once_bound(wire: WireChecker) -> None:
    app = Server("classy")

    class Counter:
        start = 40

        @classmethod
        def next_after(cls, n: int) -> int:
            """The number after n, from the class's start."""
            return cls.start + n + 1

    app.tool()(Counter.next_after)
    client = MemoryClient(app, checker=wire)
    result = await client.result("tools/call", {"name": "next_after", "arguments": {"n": 1}})
    assert text(result) == "42"


def test_a_class_method_object_in_its_class_body_is_refused_saying_what_to_do() -> None:
    app = Server("classy")
    with pytest.raises(TypeError, match=r"classmethod.*register .*after the class"):

        class Counter:
            @app.tool()  # type: ignore[type-var]
            @classmethod
            def next_after(cls, n: int) -> int:
                return n + 1


@pytest.mark.parametrize(
    ("handler", "uri"),
    [
        pytest.param(Greeter("Hello"), "test://people/{who}", id="callable object"),
        pytest.param(AsyncGreeter("Hello"), "test://people/{who}", id="async callable object"),
        pytest.param(functools.partial(label, "fruit"), "test://fruit/{item}", id="partial"),
        pytest.param(functools.partial(label_later, kind="veg"), "test://veg/{item}", id="async partial"),
    ],
)
@pytest.mark.parametrize("kind", ["tool", "prompt", "resource"])
def test_a_handler_without_a_name_of_its_own_needs_name(handler: Any, uri: str, kind: str) -> None:
    app = Server("nameless")
    register = {"tool": app.tool(), "prompt": app.prompt(), "resource": app.resource(uri)}[kind]
    with pytest.raises(ValueError, match=rf"has no __name__.*pass name=\.\.\. to app\.{kind}\(\)"):
        register(handler)


@pytest.mark.parametrize("kind", ["tool", "prompt"])
def test_a_lambda_needs_a_name(kind: str) -> None:
    app = Server("lambdas")
    register = app.tool() if kind == "tool" else app.prompt()
    with pytest.raises(ValueError, match=rf"'<lambda>'.*pass name=\.\.\. to app\.{kind}\(\)"):
        register(lambda: "x")
    named = app.tool(name="anon") if kind == "tool" else app.prompt(name="anon")
    named(lambda: "x")
    assert app.names("tools" if kind == "tool" else "prompts") == ["anon"]


def test_something_not_callable_is_refused_saying_so() -> None:
    app = Server("odd")
    with pytest.raises(TypeError, match=r"app\.tool\(\) registers a function.*got str"):
        app.tool(name="x")("not a function")  # type: ignore[type-var]


@pytest.mark.parametrize("kind", ["resource", "completion"])
def test_a_decorator_without_its_parentheses_is_refused_saying_so(kind: str) -> None:
    # ``@app.resource`` (no call) would hand the function to resource() as its URI: nothing
    # would be registered. (``@app.tool`` and ``@app.prompt`` work bare: test_bare_decorators.)
    app = Server("bare")

    async def greet(who: str) -> str:
        return f"hello {who}"

    with pytest.raises(TypeError, match=rf"@app\.{kind} needs its parentheses: write @app\.{kind}\("):
        getattr(app, kind)(greet)
    assert app.names("tools") == app.names("prompts") == app.names("resources") == []


@pytest.mark.parametrize("kind", ["tool", "prompt", "resource"])
def test_a_name_or_uri_that_is_not_text_is_refused_saying_so(kind: str) -> None:
    app = Server("odd names")
    option = "uri" if kind == "resource" else "name"
    decorator = getattr(app, kind)
    with pytest.raises(TypeError, match=rf"app\.{kind}\(\): the {option} must be a string, not int \(42\)"):
        decorator(**{option: 42})


async def positional_only(item: str, /, count: int = 1) -> str:
    return item * count


@pytest.mark.parametrize("kind", ["tool", "prompt", "resource"])
def test_a_positional_only_parameter_is_refused_saying_so(kind: str) -> None:
    # It was listed as an argument, then every call failed: arguments are passed by name.
    app = Server("slashes")
    register = {"tool": app.tool(), "prompt": app.prompt(), "resource": app.resource("test://{item}")}[kind]
    with pytest.raises(TypeError, match=r"positional_only: item is positional-only.*remove the '/'"):
        register(positional_only)
    assert app.names("tools") == app.names("prompts") == app.names("resources") == []


async def unannotated_ctx(ctx, city: str) -> str:  # type: ignore[no-untyped-def]
    return city


async def unannotated_context(context, city: str) -> str:  # type: ignore[no-untyped-def]
    return city


@pytest.mark.parametrize(("handler", "name"), [(unannotated_ctx, "ctx"), (unannotated_context, "context")])
@pytest.mark.parametrize("kind", ["tool", "prompt"])
def test_a_context_parameter_without_its_annotation_is_refused_saying_so(
    kind: str, handler: Any, name: str
) -> None:
    # Unannotated, it was an argument the client had to send (a required one, of any type),
    # and the function never got the context.
    app = Server("unannotated")
    with pytest.raises(
        TypeError, match=rf"unannotated_{name}: {name} has no annotation.*write {name}: Context"
    ):
        getattr(app, kind)()(handler)


@pytest.mark.parametrize("kind", ["tool", "prompt"])
def test_two_context_parameters_are_refused_saying_so(kind: str) -> None:
    # Only the last got the context: every call failed, the first one missing.
    app = Server("two contexts")

    async def twice(ctx: Context, again: Context) -> str:
        return "never"

    with pytest.raises(TypeError, match=r"twice: ctx and again are both Context parameters; keep one"):
        getattr(app, kind)()(twice)


class Thing:
    """A class pydantic knows no JSON Schema for."""


async def takes_a_thing(city: str, thing: Thing) -> str:
    return city


@pytest.mark.parametrize("kind", ["tool", "prompt"])
def test_a_parameter_type_with_no_json_schema_is_refused_naming_it(kind: str) -> None:
    # It was pydantic's PydanticSchemaGenerationError, naming neither the handler nor the
    # parameter and suggesting arbitrary_types_allowed=True.
    app = Server("things")
    with pytest.raises(
        TypeError, match=r"takes_a_thing: the type of thing \(.*Thing.*\) has no JSON Schema; use str, int"
    ):
        getattr(app, kind)()(takes_a_thing)


async def count_wrong(times: int = "twice") -> str:  # type: ignore[assignment]
    return str(times)


async def none_for_int(times: int = None) -> str:  # type: ignore[assignment]  # noqa: RUF013 (the mistake)
    return str(times)


async def out_of_range(times: Annotated[int, Field(ge=1)] = 0) -> str:
    return str(times)


@pytest.mark.parametrize(
    ("handler", "fragment"),
    [
        (count_wrong, "the default of times, 'twice', does not fit its type"),
        (none_for_int, "the default of times, None, does not fit its type"),
        (out_of_range, "the default of times, 0, does not fit its type"),
    ],
)
@pytest.mark.parametrize("kind", ["tool", "prompt"])
def test_a_default_that_does_not_fit_its_type_is_refused_saying_so(
    kind: str, handler: Any, fragment: str
) -> None:
    # It went into the inputSchema as it was ({"type": "integer", "default": "twice"}), and
    # a call without the argument ran the function with it.
    app = Server("defaults")
    with pytest.raises(
        TypeError, match=rf"{handler.__name__}: {re.escape(fragment)}.*change the default or the type"
    ):
        getattr(app, kind)()(handler)


async def pydantic_field_default(name: str = pydantic.Field(default="z", max_length=3)) -> str:
    return name


async def own_field_default(times: int = mcp_elicit.Field(minimum=1)) -> str:  # type: ignore[assignment]
    return str(times)


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (
            pydantic_field_default,
            "pydantic_field_default: the default of name is a pydantic.Field(...), which goes in the "
            "annotation: name: Annotated[str, pydantic.Field(...)] = 'z'",
        ),
        (
            own_field_default,
            "own_field_default: the default of times is a mcp_elicit.Field(...), which goes in the "
            "annotation: times: Annotated[int, mcp_elicit.Field(...)]",
        ),
    ],
)
@pytest.mark.parametrize("kind", ["tool", "prompt"])
def test_a_field_given_as_the_default_is_refused_saying_where_it_goes(
    kind: str, handler: Any, expected: str
) -> None:
    # It was "the default of name, FieldInfo(annotation=NoneType, ...), does not fit its
    # type ... change the default or the type", which names neither the slip nor the fix.
    app = Server("defaults")
    with pytest.raises(TypeError) as refused:
        getattr(app, kind)()(handler)
    assert str(refused.value) == expected


@pytest.mark.parametrize(
    ("kind", "option", "value", "expected"),
    [
        # went out as given (a listing the schema refuses), or failed with Python's
        # "dictionary update sequence element #0 has length 1; 2 is required"
        ("tool", "title", 5, "None or a string"),
        ("tool", "description", ["Adds."], "None or a string"),
        ("tool", "annotations", "readOnlyHint", "None or a mapping"),
        ("tool", "meta", [1], "None or a mapping"),
        ("tool", "icons", "icon.png", "None or a list of mappings"),
        ("tool", "input_schema", "object", "None or a mapping"),
        ("tool", "output_schema", "object", "None or a mapping"),
        ("tool", "structured", "no", "None, True or False"),
        ("tool", "single_use_state", "yes", "True or False"),
        ("prompt", "title", 5, "None or a string"),
        ("prompt", "description", 5, "None or a string"),
        ("resource", "title", 5, "None or a string"),
        ("resource", "mime_type", 5, "None or a string"),
    ],
)
def test_a_decorator_option_of_the_wrong_kind_is_refused_naming_it(
    kind: str, option: str, value: Any, expected: str
) -> None:
    app = Server("options")
    decorator = app.resource if kind == "resource" else getattr(app, kind)
    given = ("test://r",) if kind == "resource" else ()
    with pytest.raises(
        TypeError, match=rf"^app\.{kind}\(\): {option} {re.escape(repr(value))}: expected {expected}$"
    ):
        decorator(*given, **{option: value})


class Spot(typing.TypedDict):
    """Where a table is."""

    room: Annotated[str, Field(description="Which room")]
    seat: typing.NotRequired[int]


class Seating(typing.TypedDict, total=False):
    spot: Spot
    spots: list[Spot]


async def test_a_typing_typeddict_gives_schemas_on_every_python(wire: WireChecker) -> None:
    """``typing.TypedDict`` (the one a developer imports first), as a tool's return type
    and as an argument's, nested too: pydantic takes it only from Python 3.12, so on 3.11
    registration raised pydantic's 'use typing_extensions.TypedDict' instead."""
    app = Server("typeddicts")

    @app.tool()
    async def where(room: str) -> Spot:
        return {"room": room, "seat": 4}

    @app.tool()
    async def seat(seating: Seating, extra: Spot | None = None) -> str:
        return repr((seating, extra))

    client = MemoryClient(app, checker=wire)
    tools = await client.result("tools/list")
    out = listed(tools, "where")["outputSchema"]
    assert out["type"] == "object" and out["required"] == ["room"]
    assert out["properties"]["room"]["description"] == "Which room"
    assert out["description"] == "Where a table is."
    arguments = listed(tools, "seat")["inputSchema"]
    assert arguments["required"] == ["seating"]

    result = await client.result("tools/call", {"name": "where", "arguments": {"room": "bar"}})
    assert result["structuredContent"] == {"room": "bar", "seat": 4}
    given = {"seating": {"spot": {"room": "bar"}, "spots": [{"room": "hall", "seat": 2}]}}
    assert text(await client.result("tools/call", {"name": "seat", "arguments": given})) == repr(
        (given["seating"], None)
    )
    refused = await client.result("tools/call", {"name": "seat", "arguments": {"seating": {"spot": {}}}})
    assert refused["isError"] and "room" in text(refused)


def test_a_second_registration_under_a_taken_name_says_how_to_resolve_it() -> None:
    app = Server("twice")

    async def first() -> str:
        return "1"

    app.tool(name="book")(first)
    app.prompt(name="plan")(first)
    app.resource("menu://today")(first)
    app.resource("menu://{day}")(lambda day: day)
    with pytest.raises(ValueError, match="already registered") as tool:
        app.tool(name="book")(first)
    with pytest.raises(ValueError, match="already registered") as prompt:
        app.prompt(name="plan")(first)
    with pytest.raises(ValueError, match="already registered") as resource:
        app.resource("menu://today")(first)
    with pytest.raises(ValueError, match="already registered") as template:
        app.resource("menu://{day}")(lambda day: day)
    assert str(tool.value) == (
        "a tool named 'book' is already registered: give this one a name of its own "
        "(@app.tool(name=...)), or remove the other first (app.remove_tool('book'))"
    )
    assert str(prompt.value) == (
        "a prompt named 'plan' is already registered: give this one a name of its own "
        "(@app.prompt(name=...)), or remove the other first (app.remove_prompt('plan'))"
    )
    assert str(resource.value) == (
        "a resource at 'menu://today' is already registered: serve this one at a URI of its own, "
        "or remove the other first (app.remove_resource('menu://today'))"
    )
    assert str(template.value) == (
        "a resource template at 'menu://{day}' is already registered: serve this one at a URI "
        "of its own, or remove the other first (app.remove_resource('menu://{day}'))"
    )
