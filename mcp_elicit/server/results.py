"""What handlers return, turned into MCP content.

Rules: a ``str`` is text; ``bytes`` must be wrapped (``Image``, ``Audio``, ``Blob``) so the
MIME type is never guessed; ``mcp_types`` content models pass through; a list is each of
its items; ``None`` is no content. For tools, a mapping, dataclass or pydantic model is
structured content plus its JSON as text, so clients that ignore ``structuredContent``
still see it; a set in it is a JSON array, a float of a class of its own (numpy's ``float64``)
a number, and a value JSON has no form for (bytes, an
object of a class of its own) is a ``TypeError`` saying what to return, as is a float that
is NaN or an infinity, which JSON has no form for either (orjson would write ``null``):
the error names its JSON path (``finite``; a mapping, list, dataclass or model is walked
once, a ``str`` never, a model in the Python form of its JSON names; one nesting deeper than
orjson writes, as one holding itself does, is refused the same way). A value of the
dataclass or TypedDict a tool returns is written by the pydantic adapter its
``outputSchema`` came from (``structured_as``), so it fits that schema: fields under
their aliases, a duration or a decimal as pydantic writes it (bytes are still refused);
what that adapter does not know at the top level (a TypedDict's other keys, a dataclass's
``init=False`` fields or its subclass's own) is kept as it is.
Any other value is its text, unless it has none of its own (``<Thing object at 0x...>``),
or is a coroutine (an ``await`` forgotten: closed unrun) or a generator: a ``TypeError``. A ``CallToolResult`` passes through untouched but for ``resultType``,
which the revision sets (2025-11-25 has none).
"""

from __future__ import annotations

import base64
import dataclasses
import math
import re
from collections.abc import AsyncGenerator, Callable, Coroutine, Generator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticSerializationError, to_jsonable_python

__all__ = [
    "Audio",
    "Blob",
    "CONTENT_TYPES",
    "Image",
    "closed_unrun",
    "content_blocks",
    "dump",
    "finite",
    "structured_as",
    "structured_value",
    "tool_result",
    "unawaited",
]

_CONTENT_MODELS = (TextContent, ImageContent, AudioContent, EmbeddedResource, ResourceLink)


@dataclass(frozen=True, slots=True)
class Image:
    """Image bytes with their MIME type, e.g. ``Image(png_bytes, "image/png")``."""

    data: bytes
    mime_type: str = "image/png"

    def block(self) -> dict[str, Any]:
        return {
            "type": "image",
            "data": base64.b64encode(self.data).decode("ascii"),
            "mimeType": self.mime_type,
        }


@dataclass(frozen=True, slots=True)
class Audio:
    """Audio bytes with their MIME type, e.g. ``Audio(wav_bytes, "audio/wav")``."""

    data: bytes
    mime_type: str = "audio/wav"

    def block(self) -> dict[str, Any]:
        return {
            "type": "audio",
            "data": base64.b64encode(self.data).decode("ascii"),
            "mimeType": self.mime_type,
        }


@dataclass(frozen=True, slots=True)
class Blob:
    """Binary resource contents with their MIME type."""

    data: bytes
    mime_type: str = "application/octet-stream"


#: Return types that are content, never structured output.
CONTENT_TYPES: tuple[type, ...] = (
    *_CONTENT_MODELS,
    TextResourceContents,
    BlobResourceContents,
    CallToolResult,
    Image,
    Audio,
    Blob,
)


def dump(model: BaseModel) -> dict[str, Any]:
    """An ``mcp_types`` model as wire JSON."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def content_blocks(value: object, *, walked: bool = False) -> list[dict[str, Any]]:
    """The content blocks a returned value stands for (``walked``: ``finite`` passed it)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, (Image, Audio)):
        return [value.block()]
    if isinstance(value, _CONTENT_MODELS):
        return [dump(value)]
    if isinstance(value, (TextResourceContents, BlobResourceContents)):
        return [{"type": "resource", "resource": dump(value)}]
    if isinstance(value, (list, tuple)):
        blocks: list[dict[str, Any]] = []
        for item in value:
            blocks.extend(content_blocks(item, walked=walked))
        return blocks
    if isinstance(value, Mapping) and isinstance(value.get("type"), str):
        return [dict(value)]
    structured = structured_value(value, walked=walked)
    if structured is not None:
        return [{"type": "text", "text": orjson.dumps(structured).decode()}]
    if isinstance(value, bytes):
        raise TypeError(
            "return bytes wrapped in Image(...), Audio(...) or Blob(...) so the MIME type is known"
        )
    kind = type(value)
    if (fault := unawaited(value)) is not None:
        raise TypeError(fault)
    if isinstance(value, (Generator, AsyncGenerator)):
        gathered = "[x async for x in ...]" if isinstance(value, AsyncGenerator) else "list(...)"
        raise TypeError(f"{_a(kind.__name__)} has no text or JSON form; return a list ({gathered})")
    if kind.__str__ is object.__str__ and kind.__repr__ is object.__repr__:
        raise TypeError(
            f"{_a(kind.__name__)} object has no text or JSON form; return str, a dataclass, TypedDict, "
            "pydantic model or mapping, Image(...)/Audio(...), or mcp_types content"
        )
    return [{"type": "text", "text": str(value)}]


def unawaited(value: object) -> str | None:
    """What to say of a handler's value that is a coroutine (``return helper()`` for
    ``return await helper()``), which is closed unrun: no "never awaited" warning besides
    the error; None for any other value."""
    name = closed_unrun(value)
    if name is None:
        return None
    call = name if isinstance(getattr(value, "made_by", None), str) else name.rsplit(".", 1)[-1]
    return f"it is a coroutine ({name}), never awaited: write 'return await {call}(...)'"


def closed_unrun(value: object) -> str | None:
    """The name of ``value``, a coroutine, which is closed unrun (so it never warns that
    it was never awaited): the call that made it for a question (``made_by``: ``ctx.elicit``
    has no name of its own), else its function's qualified name; None for any other value."""
    if not isinstance(value, Coroutine):
        return None
    made_by = getattr(value, "made_by", None)
    name = made_by if isinstance(made_by, str) else getattr(value, "__qualname__", type(value).__name__)
    value.close()
    head, _, method = name.partition(".")
    if head.startswith("Context") and method:  # a mixin's (ContextNotices.info): Context's to its user
        return f"Context.{method}"
    return name


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def structured_value(value: object, *, walked: bool = False) -> Any:
    """The JSON form of a structured return value, or None when it is not structured
    (``TypeError`` for a NaN or infinity in it, unless ``walked``: ``finite`` passed it)."""
    if isinstance(value, BaseModel):
        if not walked:
            finite(value)
        return value.model_dump(mode="json", by_alias=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not walked:
            finite(value)
        return orjson.loads(orjson.dumps(value, default=_default))
    if isinstance(value, Mapping) and not isinstance(value.get("type"), str):
        if not walked:
            finite(value)
        return orjson.loads(orjson.dumps(value, default=_default))
    return None


#: How much of a path ``finite`` shows: of one key, and of the whole; how deep it looks
#: before refusing the value (orjson refuses 255 levels; a value holding itself has no end).
_KEY_SHOWN = 40
_PATH_SHOWN = 200
_DEPTH = 256
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def finite(value: object) -> None:
    """``TypeError`` naming where in ``value`` a float is NaN or an infinity (JSON has
    neither; orjson writes them as ``null``, which the tool never returned): its JSON path,
    ``$.rows[1].ratio``, bounded. Walks mappings, lists, tuples, sets, dataclasses and
    pydantic models (in Python form, by the names JSON gives their fields: ``_meta``),
    once; ``TypeError`` too for a value nesting deeper than orjson writes (one holding itself).
    A path is built only for what is found."""
    found = _not_finite(value, 0)
    if found is None:
        return
    keys, number = found
    said = "NaN" if math.isnan(number) else "Infinity" if number > 0 else "-Infinity"
    path = "$" + "".join(_step(key) for key in reversed(keys))
    if len(path) > _PATH_SHOWN:
        path = path[:_PATH_SHOWN] + "…"
    raise TypeError(f"{path} is {said}; JSON has no NaN or infinity: return None or a string instead")


def _not_finite(value: object, depth: int) -> tuple[list[object], float] | None:
    """The keys to the first non-finite float in ``value``, innermost first, and the float."""
    if isinstance(value, float):
        return None if math.isfinite(value) else ([], value)
    if isinstance(value, str | int | None):
        return None
    if depth > _DEPTH:  # where orjson stops too; else a list holding itself twice is 2**256 ways down
        raise TypeError(
            f"it nests deeper than {_DEPTH} levels, which JSON writers refuse (does a list, mapping or "
            "object hold itself?); return a value that ends"
        )
    items: Any
    indexed = False  # a mapping's key 1 is "1" in JSON, not an index
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, list | tuple | set | frozenset):
        items, indexed = enumerate(value), True
    elif isinstance(value, BaseModel):  # as it is written: aliases (_meta), extras, nested models
        items = value.model_dump(by_alias=True).items()
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = ((f.name, getattr(value, f.name)) for f in dataclasses.fields(value))
    else:
        return None
    for key, item in items:
        found = _not_finite(item, depth + 1)
        if found is not None:
            found[0].append(key if indexed else str(key))
            return found
    return None


def _step(key: object) -> str:
    if isinstance(key, int):  # an index
        return f"[{key}]"
    text = str(key)
    if _PLAIN_KEY.match(text):
        return f".{text}" if len(text) <= _KEY_SHOWN else f".{text[:_KEY_SHOWN]}…"
    shown = text if len(text) <= _KEY_SHOWN else text[:_KEY_SHOWN] + "…"
    return "[" + orjson.dumps(shown).decode() + "]"


def structured_as(adapter: TypeAdapter[Any], kind: type) -> Callable[[object], Any]:
    """``structured_value`` for a tool returning the type ``adapter`` is of: a value of
    ``kind`` (the dataclass, or ``Mapping`` for a TypedDict) is written by ``adapter``, as its
    JSON Schema describes it (aliases, ...). In Python form, then JSON: pydantic's JSON mode
    would write bytes as UTF-8 text (or fail on other bytes), where ``_default`` refuses
    them saying what to give."""
    write = adapter.dump_python

    def structured(value: object) -> Any:
        if not isinstance(value, kind):
            return structured_value(value)
        finite(value)
        # warnings off: a value of the wrong type is written as it is, and the check of
        # the outputSchema says what is wrong with it
        written = write(value, by_alias=True, warnings=False)
        others = _unknown(value, written, write)
        if others:
            written = {**written, **others}
        return orjson.loads(orjson.dumps(written, default=_typed))

    return structured


def _unknown(value: object, written: Any, write: Callable[..., Any]) -> dict[str, Any]:
    """What the adapter left out of ``value``'s top level, as it is: a TypedDict's other
    keys, a dataclass's ``init=False`` fields and its subclass's own (the schema allows
    them: it has no ``additionalProperties``)."""
    if isinstance(value, Mapping):
        plain: dict[str, Any] = dict(value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        plain = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    else:
        return {}
    if not isinstance(written, dict) or all(k in written for k in plain):
        return {}  # all there, none aliased (the common case, at no further writing)
    known = write(value, warnings=False)  # the same fields, by their Python names
    return {k: v for k, v in plain.items() if k not in known and k not in written}


def _typed(value: object) -> Any:
    """``_default``, and pydantic's JSON form of what its schemas show one for (a duration
    is a string, ``"PT2H"``), in a value of a tool's return type."""
    if isinstance(value, BaseModel | set | frozenset | bytes | bytearray):
        return _default(value)
    try:
        return to_jsonable_python(value)
    except PydanticSerializationError:
        return _default(value)  # its TypeError, saying what to give


def _default(value: object) -> Any:
    if isinstance(value, float):  # of a class of its own (numpy's float64): finite, walked first
        return float(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, set | frozenset):
        return list(value)
    if isinstance(value, bytes | bytearray):
        raise TypeError(
            "bytes have no JSON form; give text (base64 for binary), or return the bytes as content "
            "wrapped in Image(...), Audio(...) or Blob(...)"
        )
    raise TypeError(
        f"{_a(type(value).__name__)} value has no JSON form; give str, numbers, booleans, None, lists, "
        "mappings, dataclasses or pydantic models"
    )


def tool_result(value: object, *, structured: Callable[[object], Any] | None) -> dict[str, Any]:
    """The ``tools/call`` result for a tool's return value; ``structured`` writes the
    structured content of a tool with an ``outputSchema`` (``structured_value``...)."""
    if isinstance(value, str):  # the common answer, first: text, whatever the output schema
        return {"content": [{"type": "text", "text": value}]}
    if isinstance(value, CallToolResult):
        # the model fills in 2026-07-28's resultType; the revision's finish sets it when due
        finite(value.model_dump(by_alias=True, exclude_none=True))  # JSON mode: NaN is None
        whole = dump(value)
        whole.pop("resultType", None)
        return whole
    if structured is not None:
        data = structured(value)
        if data is not None:
            return {
                "content": [{"type": "text", "text": orjson.dumps(data).decode()}],
                "structuredContent": data,
            }
    finite(value)  # walked whole, for a path from the top (a content block's _meta too)
    return {"content": content_blocks(value, walked=True)}
