"""Tools: a Python function becomes an MCP tool.

Rules: the input schema comes from the type hints (or is given explicitly, and then the
arguments are checked against it too, see ``input_schema``); arguments are validated
before the function runs, held to the schema derived from the hints as JSON Schema reads
it (no ``"3"`` for an integer, a date-time with its offset: ``strict_arguments``; when
pydantic lays out the arguments' core schema in a way that module cannot read, the
derived schema is checked with ``jsonschema`` first, as an explicit one is, and logged), and
bad arguments are a tool error (``isError``) listing each fault, so the model can correct
itself. Whatever the function raises, other than a protocol error
(which becomes a JSON-RPC error, e.g. a missing client capability), is an ``isError``
result: ``ToolError`` with its message as is, anything else prefixed with the tool's name
(with ``redact_errors``, the server's ``redact_tool_errors``, only the name and a
reference the log line of its traceback holds: its message may name paths, hosts, SQL;
and a bad argument's fault that a validator's own ``ValueError``, ``AssertionError`` or
``PydanticCustomError`` wrote is withheld the same way, pydantic's own words and a format
check's kept: ``describe_invalid``);
so is a return value that cannot be sent (bytes not wrapped, an object with no JSON form).
A return type that is a dataclass, TypedDict or pydantic model also gives the tool an
``outputSchema`` and ``structuredContent``, written by the same pydantic adapter as that
schema (built once, here), so it fits it: fields under their aliases (``results``). The
schema is that of what the adapter writes (pydantic's serialization mode: computed
fields, serializers, serialization aliases), not of what it reads. An
``mcp_elicit.Field`` in it is refused, as in a parameter's class, and so is one on any
return type itself: pydantic reads neither (``parameter_fields``). A tool with an
``outputSchema`` (derived or given) answers ``structuredContent``, which fits it (a
dataclass or TypedDict is not checked when it is made, so a derived one is checked too):
a result without it (text, a list, a ``CallToolResult`` without it) or one that does not
fit is an ``isError`` result saying so (and logged); an ``isError`` result owes no
structure.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import secrets
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from mcp_types import CallToolResult
from pydantic import BaseModel, TypeAdapter
from typing_extensions import is_typeddict

from mcp_elicit.core.mrtr import InputRequired
from mcp_elicit.errors import ToolError
from mcp_elicit.server.argument_names import named
from mcp_elicit.server.asking import EXCHANGE_ERRORS, as_own, raise_exchange_error
from mcp_elicit.server.context import Context
from mcp_elicit.server.input_schema import ArgumentsCheck, compile_input_schema
from mcp_elicit.server.invalid_arguments import ArgumentsError
from mcp_elicit.server.parameter_fields import refuse_fields_in_classes, refuse_fields_on_result
from mcp_elicit.server.results import CONTENT_TYPES, structured_as, structured_value, tool_result
from mcp_elicit.server.signature import (
    Signature,
    handler,
    handler_doc,
    handler_name,
)
from mcp_elicit.server.strict_arguments import StrictValidate, strict_validator
from mcp_elicit.server.threads import run_handler
from mcp_elicit.wire.headers import InvalidHeaderSpec, header_params

__all__ = ["ToolDef", "error_result", "check_name"]

log = logging.getLogger("mcp_elicit.server")

_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}\Z")


def check_name(kind: str, name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"{kind} name {name!r} must be 1-128 characters of letters, digits, '_', '-' or '.'")
    return name


def error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _output_schema(annotation: Any) -> tuple[dict[str, Any], Callable[[object], Any]] | None:
    """The ``outputSchema`` a return type gives, and what writes its values to fit it
    (from the same adapter, built here once), or None when it gives none."""
    target = annotation
    if typing.get_origin(target) is typing.Annotated:
        target = typing.get_args(target)[0]
    if isinstance(target, type) and issubclass(target, CONTENT_TYPES):
        return None
    structured = (
        isinstance(target, type) and (dataclasses.is_dataclass(target) or issubclass(target, BaseModel))
    ) or is_typeddict(target)
    if not structured:
        return None
    adapter: TypeAdapter[Any] = TypeAdapter(target)
    # what is written, not what is read: computed fields, serializers, serialization aliases
    schema = adapter.json_schema(mode="serialization")
    schema.pop("title", None)
    if issubclass(target, BaseModel):  # it writes itself as its schema shows: by alias, as JSON
        return schema, structured_value
    return schema, structured_as(adapter, Mapping if is_typeddict(target) else target)


@dataclass(slots=True)
class ToolDef:
    name: str
    fn: Callable[..., Any]
    signature: Signature
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    icons: list[Mapping[str, Any]] | None = None
    header_params: dict[tuple[str, ...], str] = field(default_factory=dict)
    wire: dict[str, Any] = field(default_factory=dict)
    single_use_state: bool = False
    #: Whether a call may become a task (``ctx.start_task``), or must at 2026-07-28.
    task: Literal["optional", "required"] | None = None
    #: The scopes a caller's token must hold to call it over HTTP (``app.tool(scopes=)``).
    scopes: tuple[str, ...] = ()
    #: The check of an explicit ``input_schema=`` (or of a derived one the strict bind
    #: cannot read); None when the strict bind holds the derived schema.
    check_arguments: ArgumentsCheck | None = None
    #: The binding of arguments held to a derived schema (``strict_arguments``); None
    #: with an explicit one (checked by ``check_arguments``, then bound as the signature says).
    bind_strict: StrictValidate | None = None
    #: The check of ``structuredContent`` against the ``outputSchema``, given or derived.
    check_output: ArgumentsCheck | None = None
    #: What writes ``structuredContent`` (with an ``outputSchema``): ``results.structured_as``.
    structured: Callable[[object], Any] | None = None
    #: The server's ``redact_tool_errors``: an unexpected exception's message stays in the log.
    redact_errors: bool = False

    @classmethod
    def build(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured: bool | None = None,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
    ) -> ToolDef:
        fn = handler(fn, "tool")
        sig = Signature.of(fn, context_type=Context)
        tool_name = check_name("tool", name if name is not None else handler_name(fn, "tool"))
        schema = dict(input_schema) if input_schema is not None else sig.schema
        if schema.get("type") != "object":
            raise ValueError(f"tool {tool_name!r}: inputSchema must have type 'object' at the root")
        try:
            headers = header_params(schema)
        except InvalidHeaderSpec as exc:
            raise ValueError(f"tool {tool_name!r}: {exc}") from None
        check = compile_input_schema(tool_name, schema) if input_schema is not None else None
        bind_strict = strict_validator(sig.model) if check is None else None
        bind_strict = None if bind_strict is None else named(bind_strict, sig.renamed)
        if check is None and bind_strict is None:  # a core schema it cannot read: as an explicit one
            log.warning("tool %s: its arguments are checked with jsonschema, then bound laxly", tool_name)
            check = compile_input_schema(tool_name, schema)
        out = dict(output_schema) if output_schema is not None else None
        write: Callable[[object], Any] | None = None if out is None else structured_value
        refuse_fields_on_result(f"tool {tool_name!r}", sig.return_annotation)
        if out is None and structured is not False and (derived := _output_schema(sig.return_annotation)):
            out, write = derived
            refuse_fields_in_classes(f"tool {tool_name!r}", "the return type", sig.return_annotation)
        check_output = None
        if out is not None:  # derived too: a dataclass or TypedDict is not checked when made
            check_output = compile_input_schema(
                tool_name, out, field="output_schema", root="structuredContent"
            )
        doc = description if description is not None else handler_doc(fn)
        tool = cls(
            name=tool_name,
            fn=fn,
            signature=sig,
            title=title,
            description=doc,
            input_schema=schema,
            output_schema=out,
            annotations=annotations,
            meta=meta,
            icons=icons,
            header_params=headers,
            check_arguments=check,
            bind_strict=bind_strict,
            check_output=check_output,
            structured=write,
        )
        tool.wire = tool._wire()
        return tool

    def _wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"name": self.name}
        if self.title:
            wire["title"] = self.title
        if self.description:
            wire["description"] = self.description
        wire["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            wire["outputSchema"] = self.output_schema
        if self.annotations:
            wire["annotations"] = dict(self.annotations)
        if self.icons:
            wire["icons"] = [dict(i) for i in self.icons]
        if self.meta:
            wire["_meta"] = dict(self.meta)
        return wire

    async def call(self, ctx: Context, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The ``tools/call`` result (a 2026-07-28 round runs ``start``, ``done`` and
        ``failed`` in ``run_replayed``'s frame instead: one coroutine fewer)."""
        try:
            value = await self.start(ctx, arguments)
        except InputRequired:  # a round ends (the common miss): checked first, so it passes at once
            raise
        except Exception as exc:
            if isinstance(exc, ExceptionGroup):  # unless a sibling task's question failed the request
                raise_exchange_error(exc)
            return self.failed(as_own(exc), ctx._where())
        return self.done(value)

    def start(self, ctx: Context, arguments: Mapping[str, Any] | None) -> Awaitable[Any]:
        """The function's awaitable return value; ``_BadArguments`` when the arguments do
        not fit, before it runs."""
        if self.check_arguments is not None:
            problem = self.check_arguments(arguments if arguments is not None else {})
            if problem is not None:
                raise _BadArguments(ArgumentsError(f"Invalid arguments: {problem}"))
        signature = self.signature
        try:
            kwargs = (
                signature.bind(arguments) if self.bind_strict is None else self.bind_strict(arguments or {})
            )
        except ArgumentsError as exc:
            raise _BadArguments(exc) from None
        if signature.context_param is not None:
            kwargs[signature.context_param] = ctx
        if signature.is_async:
            return self.fn(**kwargs)  # type: ignore[no-any-return]
        # a plain function may block: not on the event loop
        return run_handler(f"tool {self.name!r}", self.fn, kwargs, signature.context_param)

    def done(self, value: object) -> dict[str, Any]:
        """The result for what the function returned."""
        try:
            result = tool_result(value, structured=self.structured)
        except TypeError as exc:  # a value it cannot send (orjson's errors are TypeErrors)
            reason = exc.__cause__ if isinstance(exc.__cause__, TypeError) else exc  # orjson wraps ours
            log.error("tool %s: the function's return value cannot be sent: %s", self.name, reason)
            return error_result(f"{self.name}: the function's return value cannot be sent: {reason}")
        if self.output_schema is None:
            return result
        if result.get("isError"):
            return result
        problem: str | None
        if "structuredContent" not in result:
            given = isinstance(value, CallToolResult)
            problem = (
                "it returned no structuredContent"
                if given
                else f"the function returned {type(value).__name__}, not structured content"
            )
        else:
            problem = (
                self.check_output(result["structuredContent"]) if self.check_output is not None else None
            )
        if problem is None:
            return result
        log.error("tool %s: the result does not fit its outputSchema: %s", self.name, problem)
        return error_result(f"{self.name}: the result does not fit the tool's outputSchema: {problem}")

    def failed(self, exc: Exception, where: str = "") -> dict[str, Any]:
        """The result for what ``start`` or the function raised (called while handling it):
        a tool error, or a protocol error raised again. ``where`` names the request in the
        log line of a failure (``request 7, session 3f9c0a1e``)."""
        if isinstance(exc, EXCHANGE_ERRORS):
            raise exc
        if isinstance(exc, _BadArguments):
            bad = exc.arguments
            return error_result(
                f"{self.name}: {bad.redacted(f'tool {self.name}') if self.redact_errors else bad}"
            )
        if isinstance(exc, ToolError):
            return error_result(str(exc))
        if self.redact_errors:
            reference = secrets.token_hex(4)
            log.exception(
                "tool %s failed (reference %s%s)", self.name, reference, f"; {where}" if where else ""
            )
            return error_result(
                f"Error executing tool {self.name} (reference {reference} in the server's log)"
            )
        log.exception("tool %s failed%s", self.name, f" ({where})" if where else "")
        return error_result(f"Error executing tool {self.name}: {exc}")


class _BadArguments(Exception):
    """Arguments that do not fit the tool (raised before its function runs): ``arguments``
    says how."""

    def __init__(self, arguments: ArgumentsError) -> None:
        super().__init__(str(arguments))
        self.arguments = arguments
