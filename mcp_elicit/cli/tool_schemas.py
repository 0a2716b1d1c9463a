"""A tool's schemas around ``mcp-elicit call``: the input schema the server lists for it,
which reads the call's NAME=VALUE words, and the output schema its result is checked
against (a mismatch is a warning, never a failure).

A tool the server does not list is a clear ``CheckFailed`` naming those it does (and the
closest, for a typo); one it
listed but the client rejected is left to ``call_tool``, which says why. The check is
``jsonschema``'s, imported on first use, and ``$ref`` is resolved inside the schema only,
never fetched; a schema or result nested past ``MAX_CHECKED_DEPTH`` is not checked (the
same verdict whatever the process's recursion limit).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Mapping
from typing import Any

from mcp_elicit.cli import output
from mcp_elicit.cli.tool_checks import MAX_CHECKED_DEPTH
from mcp_elicit.client import Client
from mcp_elicit.errors import CheckFailed
from mcp_elicit.wire.jsonrpc import nests_past

__all__ = ["output_mismatch", "tool_schemas"]


async def tool_schemas(
    client: Client, name: str
) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """The tool's input schema (for reading NAME=VALUE) and output schema (to check the
    result against), and a clear error for a tool the server does not list."""
    if "tools" not in client.server_capabilities:
        return None, None
    tools = await client.list_tools()
    for tool in tools:
        if tool.get("name") == name:
            schema, produces = tool.get("inputSchema"), tool.get("outputSchema")
            return (
                schema if isinstance(schema, Mapping) else None,
                produces if isinstance(produces, Mapping) else None,
            )
    if name in client.rejected_tools:
        return None, None  # call_tool says why it was rejected
    names = sorted(str(t.get("name")) for t in tools)
    listed = output.listed(names) or "none"
    if len(names) > output.NAMES_LISTED:
        listed += " (mcp-elicit check with the same TARGET lists them all)"
    close = difflib.get_close_matches(name, names, n=1)
    meant = f" (did you mean '{output.said(close[0])}'?)" if close else ""
    raise CheckFailed(f"the server has no tool {name!r}{meant}; its tools: {listed}")


def output_mismatch(schema: Mapping[str, Any] | None, result: Mapping[str, Any]) -> str:
    """How a tool result breaks the tool's listed ``outputSchema``, or "". A tool with an
    output schema must return ``structuredContent`` that conforms to it (an ``isError``
    result excepted); like other server faults that leave a usable result, it is a warning."""
    if schema is None or result.get("isError") is True:
        return ""
    if "structuredContent" not in result:
        return "the tool lists an outputSchema, but its result has no structuredContent"
    jsonschema: Any = importlib.import_module("jsonschema")  # untyped; imported on first use
    validator = jsonschema.validators.validator_for(dict(schema), default=jsonschema.Draft202012Validator)
    too_deep = (
        "the tool's outputSchema or its result is nested too deeply to check; the result was not checked"
    )
    if nests_past(schema, MAX_CHECKED_DEPTH) or nests_past(result["structuredContent"], MAX_CHECKED_DEPTH):
        return too_deep  # the same verdict whatever the process's recursion limit
    registry = importlib.import_module("jsonschema_specifications").REGISTRY  # else a $ref's URL is fetched
    try:
        error = jsonschema.exceptions.best_match(
            validator(dict(schema), registry=registry).iter_errors(result["structuredContent"])
        )
    except importlib.import_module("referencing.exceptions").Unresolvable as exc:
        return f"the tool's outputSchema has a $ref that cannot be resolved ({output.said(str(exc))}: references are resolved inside the schema only, not fetched); the result was not checked"
    except jsonschema.SchemaError as exc:
        return f"the tool's outputSchema is not a valid JSON Schema ({output.said(exc.message)}); the result was not checked"
    except RecursionError:  # within MAX_CHECKED_DEPTH, on a stack already deep
        return too_deep
    if error is None:
        return ""
    where = error.json_path.replace("$", "structuredContent", 1)
    said = output.fit(error.message, output.SAID_MAX, length=True)  # it quotes the value whole
    return f"the result does not match the tool's outputSchema: at {output.said(where)}, {said}"
