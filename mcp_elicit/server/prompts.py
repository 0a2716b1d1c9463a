"""Prompts: a Python function becomes an MCP prompt template.

Rules: arguments are the function's parameters (all passed as strings on the wire;
required when they have no default); missing arguments are -32602 naming each, an invalid
one -32602 saying what is wrong (with ``redact_errors``, a validator's own message withheld,
as a tool's: ``ArgumentsError.redacted``). The function returns a ``str`` (one user message), a
list of messages (``PromptMessage``, dicts, or ``(role, content)`` pairs whose content is
a str or content block), or a ``GetPromptResult`` (whose ``resultType`` the revision
sets, not the model). It may take a ``Context`` and elicit, like a tool.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_types import GetPromptResult, PromptMessage
from pydantic import ValidationError

from mcp_elicit.errors import InvalidParams
from mcp_elicit.server.asking import awaited_as_own
from mcp_elicit.server.context import Context
from mcp_elicit.server.invalid_arguments import ArgumentsError
from mcp_elicit.server.results import content_blocks, dump, finite, unawaited
from mcp_elicit.server.signature import Signature, handler, handler_doc, handler_name
from mcp_elicit.server.threads import run_handler
from mcp_elicit.server.tools import check_name

__all__ = ["PromptDef"]


@dataclass(slots=True)
class PromptDef:
    name: str
    fn: Callable[..., Any]
    signature: Signature
    title: str | None = None
    description: str | None = None
    wire: dict[str, Any] = field(default_factory=dict)
    #: The server's ``redact_tool_errors``: an argument validator's own message withheld.
    redact_errors: bool = False
    #: The scopes a caller's token must hold to get it over HTTP (``app.prompt(scopes=)``).
    scopes: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        extras: Mapping[str, Any] | None = None,
    ) -> PromptDef:
        """The prompt ``fn`` makes; ``extras``: what its listing entry adds
        (``listing_extras``: icons, ``_meta``), checked already."""
        fn = handler(fn, "prompt")
        sig = Signature.of(fn, context_type=Context)
        prompt_name = check_name("prompt", name if name is not None else handler_name(fn, "prompt"))
        doc = description if description is not None else handler_doc(fn)
        prompt = cls(prompt_name, fn, sig, title, doc)
        wire: dict[str, Any] = {"name": prompt_name, "description": doc or prompt_name}
        if title:
            wire["title"] = title
        required = set(sig.schema.get("required", []))
        args = []
        for arg in sig.names:
            prop = sig.schema["properties"].get(arg, {})
            entry: dict[str, Any] = {"name": arg, "required": arg in required}
            if isinstance(prop, dict) and prop.get("description"):
                entry["description"] = prop["description"]
            args.append(entry)
        if args:
            wire["arguments"] = args
        prompt.wire = {**wire, **(extras or {})}
        return prompt

    async def get(self, ctx: Context, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        given = arguments or {}
        missing = [
            a["name"] for a in self.wire.get("arguments", ()) if a["required"] and a["name"] not in given
        ]
        if missing:
            names = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
            plural = "s" if len(missing) > 1 else ""
            raise InvalidParams(
                f"Invalid params: the prompt {self.name!r} needs the argument{plural} {names} (see prompts/list)"
            )
        try:
            kwargs = self.signature.bind(arguments)
        except ArgumentsError as exc:
            said = exc.redacted(f"prompt {self.name}") if self.redact_errors else str(exc)
            raise InvalidParams(f"Invalid params for prompt {self.name!r}: {said}") from None
        if self.signature.context_param is not None:
            kwargs[self.signature.context_param] = ctx
        if self.signature.is_async:
            value = await awaited_as_own(self.fn, kwargs, modern=ctx.call.modern)
        else:  # a plain function may block: not on the event loop
            value = await run_handler(f"prompt {self.name!r}", self.fn, kwargs, self.signature.context_param)
        return prompt_result(value, self.description, name=self.name)


def prompt_result(value: object, description: str | None, *, name: str = "") -> dict[str, Any]:
    """The ``prompts/get`` result for what the prompt ``name`` returned; ``TypeError`` for
    anything that is not a message the schema allows (a role other than user or assistant,
    no content block), so it is never sent."""
    if isinstance(value, GetPromptResult):
        # the model fills in 2026-07-28's resultType; the revision's finish sets it when due
        _finite(name, value.model_dump(by_alias=True, exclude_none=True))  # JSON mode: NaN is None
        whole = dump(value)
        whole.pop("resultType", None)
        return whole
    if isinstance(value, (str, PromptMessage, Mapping, tuple)):
        items: list[object] = [value]
    elif isinstance(value, Iterable) and not isinstance(value, (set, frozenset, bytes)):
        items = list(value)  # a list of messages (or a generator of them): in order
    else:
        raise TypeError(_not_messages(name, value, type(value).__name__))
    _finite(name, value if isinstance(value, list | tuple) else items)  # once, before any dump
    messages: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            messages.append({"role": "user", "content": {"type": "text", "text": item}})
        elif isinstance(item, PromptMessage):
            messages.append(dump(item))
        elif isinstance(item, tuple) and len(item) == 2:
            role, content = item
            for block in content_blocks(content, walked=True):
                messages.append(_message(name, {"role": role, "content": block}))
        elif isinstance(item, Mapping):
            messages.append(_message(name, item))
        else:
            raise TypeError(_not_messages(name, item, f"a list holding {type(item).__name__}"))
    result: dict[str, Any] = {"messages": messages}
    if description:
        result["description"] = description
    return result


def _finite(prompt: str, value: object) -> None:
    """``results.finite`` for what the prompt returned (a NaN dumped in JSON mode is null)."""
    try:
        finite(value)
    except TypeError as exc:
        raise TypeError(f"prompt {prompt!r} returned a value that cannot be sent: {exc}") from None


def _not_messages(prompt: str, value: object, what: str) -> str:
    """Why ``value`` (returned, or in the list returned; ``what`` names it) is no message:
    a coroutine (an ``await`` forgotten, closed unrun) says so, looked for only here, once
    the value is known to be none of the messages (no cost for those)."""
    if (fault := unawaited(value)) is not None:
        return f"prompt {prompt!r} returned a value that cannot be sent: {fault}"
    return (
        f"prompt {prompt!r} returned {what}; return str, a list of messages (str, (role, content) or "
        "PromptMessage) or GetPromptResult"
    )


def _message(prompt: str, item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` as a wire ``PromptMessage``, or ``TypeError`` saying what is wrong with it."""
    try:
        return dump(PromptMessage.model_validate(item))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
        raise TypeError(
            f"prompt {prompt!r} returned a message that is not a PromptMessage ({where}: "
            f"{first.get('msg', 'invalid')}); a role is user or assistant, the content one content block"
        ) from None
