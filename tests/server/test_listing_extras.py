"""A tool's ``icons=`` and ``annotations=``: given as mappings in the spec's words or as the
``mcp_types`` models a server written with the official SDK already builds, they are listed
in the spec's shape; what the spec cannot carry is refused at registration, naming it.

An ``mcp_types.Icon`` was taken and listed as ``{"mime_type": ..., "sizes": None}`` (a
listing the schema refuses), and ``ToolAnnotations(readOnlyHint=True)`` was refused as
"not a mapping". Driven in memory, every message checked against the schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types
import pytest

from mcp_elicit import Server
from mcp_elicit.transports.stdio_client import connect_stdio

from support.memory import MemoryClient
from support.procs import cli
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

ICON = "https://example.com/table.png"


async def listed(app: Server, wire: WireChecker, name: str) -> dict[str, Any]:
    result = await MemoryClient(app, checker=wire).result("tools/list")
    return next(t for t in result["tools"] if t["name"] == name)


async def test_the_mcp_types_models_are_listed_in_the_spec_words(wire: WireChecker) -> None:
    app = Server("extras")

    @app.tool(
        annotations=mcp_types.ToolAnnotations(readOnlyHint=True, title="Look up"),
        icons=[mcp_types.Icon(src=ICON, mimeType="image/png", sizes=["48x48"])],
    )
    def look_up(name: str) -> str:
        return name

    tool = await listed(app, wire, "look_up")
    assert tool["annotations"] == {"readOnlyHint": True, "title": "Look up"}
    assert tool["icons"] == [{"src": ICON, "mimeType": "image/png", "sizes": ["48x48"]}]


async def test_mappings_are_listed_leaving_out_what_is_none(wire: WireChecker) -> None:
    app = Server("extras")

    @app.tool(
        annotations={"destructiveHint": False, "openWorldHint": None},
        icons=[{"src": ICON, "theme": None}, {"src": ICON, "theme": "dark"}],
    )
    def look_up(name: str) -> str:
        return name

    tool = await listed(app, wire, "look_up")
    assert tool["annotations"] == {"destructiveHint": False}
    assert tool["icons"] == [{"src": ICON}, {"src": ICON, "theme": "dark"}]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # the model's Python names, which no client reads
        ({"annotations": {"read_only_hint": True}}, "annotations: read_only_hint is written readOnlyHint"),
        ({"icons": [{"src": ICON, "mime_type": "image/png"}]}, "icons[0]: mime_type is written mimeType"),
        # a key the spec does not define: the schema would carry it, but _meta is the spec's place
        # for one of your own, and a misspelt hint (readonlyHint) would pass unseen
        (
            {"annotations": {"x-reviewed": "2026-01"}},
            "annotations: 'x-reviewed' is not one of the spec's (title, readOnlyHint, destructiveHint, "
            "idempotentHint, openWorldHint); a key of your own goes in the tool's meta=",
        ),
        # values the spec's types refuse
        (
            {"annotations": {"readOnlyHint": "yes"}},
            "annotations: readOnlyHint: Input should be a valid boolean",
        ),
        ({"icons": [{"mimeType": "image/png"}]}, "icons[0]: src: Field required"),
        ({"icons": [{"src": ICON, "sizes": "48x48"}]}, "icons[0]: sizes: Input should be a valid list"),
        ({"icons": [{"src": ICON, "theme": "blue"}]}, "icons[0]: theme: Input should be 'light' or 'dark'"),
        ({"icons": [ICON]}, f"icons[0] {ICON!r}: expected a mapping or an mcp_types.Icon"),
        # a resource's annotations are not a tool's
        (
            {"annotations": mcp_types.Annotations(audience=["user"])},
            "annotations: an Annotations has 'audience', which is not one of the spec's (title, "
            "readOnlyHint, destructiveHint, idempotentHint, openWorldHint): give an "
            "mcp_types.ToolAnnotations or a mapping",
        ),
        # the wrong kind altogether, as before
        ({"annotations": "readOnlyHint"}, "annotations 'readOnlyHint': expected None or a mapping"),
        ({"icons": "icon.png"}, "icons 'icon.png': expected None or a list of mappings"),
    ],
)
def test_what_the_spec_cannot_carry_is_refused_at_registration(
    options: dict[str, Any], expected: str
) -> None:
    app = Server("extras")
    with pytest.raises(TypeError) as refused:
        app.tool(**options)
    assert str(refused.value) == f"app.tool(): {expected}"


SERVED = """
import mcp_types
from mcp_elicit import Server

app = Server("extras")


@app.tool(
    title="Look up a name",
    annotations=mcp_types.ToolAnnotations(readOnlyHint=True, title="Look up"),
    icons=[mcp_types.Icon(src="https://example.com/table.png", theme="dark")],
    meta={"example.com/cost": 1},
)
def look_up(name: str) -> str:
    return name
"""


@pytest.mark.parametrize(
    ("revision", "with_icons"),
    [("2026-07-28", True), ("2025-11-25", True), ("2025-06-18", False), ("2025-03-26", False)],
)
async def test_a_revision_without_icons_is_listed_none(
    tmp_path: Path, revision: str, with_icons: bool
) -> None:
    """Icons came with 2025-11-25: a session of an earlier revision is listed the tool
    without them (its Tool has no such key), the annotations as they are (every revision
    the server speaks has the same five). A title and ``_meta`` came with 2025-06-18: a
    2025-03-26 session was listed them, and is not now."""
    (tmp_path / "extras.py").write_text(SERVED, encoding="utf-8")
    async with connect_stdio(
        [*cli(), "serve", "extras.py"], cwd=str(tmp_path), versions=(revision,), timeout=30
    ) as client:
        (tool,) = await client.list_tools()
    assert tool["annotations"] == {"readOnlyHint": True, "title": "Look up"}
    assert ("icons" in tool) is with_icons
    if with_icons:
        assert tool["icons"] == [{"src": "https://example.com/table.png", "theme": "dark"}]
    if revision == "2025-03-26":
        assert "title" not in tool and "_meta" not in tool
    else:
        assert (tool["title"], tool["_meta"]) == ("Look up a name", {"example.com/cost": 1})
