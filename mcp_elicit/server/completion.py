"""``completion/complete``: argument suggestions from the function registered with
``@app.completion()``.

Rules: ``ref`` names a prompt (``name``) or a resource template (``uri``) the server
offers, and ``argument`` has the ``name`` of one of its arguments (variables) and the
``value`` typed so far; an optional ``context`` holds the ``arguments`` already chosen
(strings); anything else is -32602 saying what is offered or expected. The function gets
``(ref, argument, context)`` and may be async; its first 100 values are returned, as
strings, and when it gave more, ``hasMore`` is true and ``total`` says how many. Without a
function, the answer is an empty list. A plain function (``def``) runs in a worker thread
(``suggest``), an async one on the event loop. A function with a parameter named
``principal`` also gets the caller (a ``Principal``, None when unauthenticated), so that it
suggests only what that caller may see; one that cannot take it by keyword is refused when
registered. A ``functools.partial`` that binds ``principal`` keeps what it bound (the caller
is not passed over it). What the function takes, and whether it is async, is read once, when
it is registered (``Suggester.of``), not at each completion.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_elicit.errors import InvalidParams
from mcp_elicit.server.signature import is_async
from mcp_elicit.server.threads import run_sync

__all__ = ["Completer", "Suggester", "check_reference", "complete", "takes_principal"]

Completer = Callable[[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any] | None], Any]
_MAX_VALUES = 100


async def complete(
    completer: Callable[..., Any] | None, params: Mapping[str, Any], principal: Any = None
) -> dict[str, Any]:
    """The ``completion/complete`` result (before ``finish``); ``completer`` is called
    with the request's ``ref``, ``argument``, ``context`` and the caller, ``principal``."""
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or ref.get("type") not in ("ref/prompt", "ref/resource"):
        raise InvalidParams(
            'Invalid params: completion/complete "ref" must be a prompt or resource reference'
        )
    field = "name" if ref["type"] == "ref/prompt" else "uri"
    if not isinstance(ref.get(field), str):
        raise InvalidParams(
            f'Invalid params: completion/complete "ref" of type {ref["type"]} needs "{field}" (a string)'
        )
    if (
        not isinstance(argument, dict)
        or not isinstance(argument.get("name"), str)
        or not isinstance(argument.get("value"), str)
    ):
        raise InvalidParams(
            'Invalid params: completion/complete "argument" needs "name" and "value" (strings)'
        )
    context = params.get("context")
    if context is not None and not (
        isinstance(context, dict)
        and (
            context.get("arguments") is None
            or (
                isinstance(context["arguments"], dict)
                and all(isinstance(v, str) for v in context["arguments"].values())
            )
        )
    ):
        raise InvalidParams(
            'Invalid params: completion/complete "context" must be an object whose "arguments" maps '
            "names to the values (strings) already chosen"
        )
    values: list[str] = []
    if completer is not None:
        out = completer(ref, argument, context, principal)
        if hasattr(out, "__await__"):
            out = await out
        if out is not None and (isinstance(out, (str, bytes, Mapping)) or not isinstance(out, Iterable)):
            raise TypeError(
                f"the completion function returned {type(out).__name__}; return a list of strings"
            )
        values = [str(v) for v in (out or [])]
    if len(values) > _MAX_VALUES:  # the first 100, and how many there are
        return {"completion": {"values": values[:_MAX_VALUES], "total": len(values), "hasMore": True}}
    return {"completion": {"values": values, "hasMore": False}}


@dataclass(frozen=True, slots=True)
class Suggester:
    """A registered completion function, with what its signature says read once: whether
    it is given the caller (``principal``) and whether it runs on the event loop."""

    fn: Completer
    principal: bool
    on_loop: bool

    @classmethod
    def of(cls, fn: Completer) -> Suggester:
        """``fn`` ready to call; ``TypeError`` for a ``principal`` it could not be given."""
        return cls(fn, takes_principal(fn), is_async(fn))

    def __call__(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None,
        principal: Any = None,
    ) -> Any:
        """What the function gives, to await: an async function is called here, on the
        event loop; a plain one runs in a worker thread, as it may block."""
        extra = {"principal": principal} if self.principal else {}
        if self.on_loop:  # an async def, a partial of one, or an object with an async __call__
            return self.fn(ref, argument, context, **extra)
        return run_sync("the completion function", self.fn, ref, argument, context, **extra)


def takes_principal(fn: Callable[..., Any]) -> bool:
    """Whether the completion function ``fn`` is to be given the caller: it has a parameter
    named ``principal`` (given by keyword) that a ``functools.partial`` did not bind already.
    TypeError for one that cannot take it so: filled by the three arguments' positions,
    positional-only, or ``*principal`` (each call would fail)."""
    if isinstance(fn, functools.partial) and "principal" in fn.keywords:
        return False  # bound on purpose: the caller is not passed over it
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature: the three arguments only
        return False
    named = parameters.get("principal")
    if named is None:
        return False
    positional = [p for p in parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if named.kind is named.POSITIONAL_ONLY:
        fault = "is positional-only; make it a keyword parameter"
    elif named in positional[:3]:
        fault = "is in the place of ref, argument or context (given by position); put it after them"
    elif named.kind in (named.VAR_POSITIONAL, named.VAR_KEYWORD):
        fault = f"is {'*' if named.kind is named.VAR_POSITIONAL else '**'}principal; name it principal"
    else:
        return True
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    raise TypeError(
        f"completion function {name}: its parameter principal (the caller, given as principal=) {fault}"
    )


def check_reference(
    ref: Mapping[str, Any],
    argument: Mapping[str, Any],
    *,
    prompts: Mapping[str, Sequence[str]],
    resources: Mapping[str, Sequence[str]],
) -> None:
    """-32602 unless ``ref`` names one of ``prompts`` (name to argument names) or of
    ``resources`` (URI or URI template to variable names) and ``argument`` one of its
    arguments. ``ref`` and ``argument`` have the shapes ``complete`` checked."""
    if ref["type"] == "ref/prompt":
        what, name, offered, parts, listing = "prompt", ref["name"], prompts, "argument", "prompts/list"
    else:
        name, offered, parts, listing = ref["uri"], resources, "variable", "resources/templates/list"
        what = "resource template" if "{" in name else "resource"
    names = offered.get(name)
    if names is None:
        raise InvalidParams(
            f'Invalid params: completion/complete names the {what} "{name}", which this server does not '
            f"offer (see {listing})"
        )
    if argument["name"] not in names:
        having = f"its {parts}s: {', '.join(names)}" if names else "it has none"
        raise InvalidParams(
            f'Invalid params: the {what} "{name}" has no {parts} "{argument["name"]}" ({having})'
        )
