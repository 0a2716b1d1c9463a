"""The layers of the package point inward only, and the inner ones do no I/O.

errors -> wire, forms, sealing -> core -> stores, streams -> server, client -> transports
-> ui -> cli; telemetry and log_labels (how a log line names a peer's request) are
beside core, for server and client alike. inert_text (a peer's text made inert for
display) is a leaf beside errors: it imports nothing of the package, and core and the
telemetry attributes both use it; url_redaction (a URL shown without its secrets) is one
too, importing only inert_text, and so is command_redaction (a command line shown
without its secrets), importing only url_redaction. Each module is parsed with ``ast``; an import
of a layer it may not use, or of an I/O library from a sans-IO layer, fails this test
with the file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_elicit"

# What a layer may import is what the layer below it may, and that layer.
_UNDER_CORE = {"errors", "inert_text", "url_redaction", "command_redaction", "wire", "forms", "sealing"}
_UNDER_SERVER = _UNDER_CORE | {"core", "stores", "streams", "telemetry", "telemetry_attributes", "log_labels"}
_UNDER_TRANSPORTS = _UNDER_SERVER | {"server", "client"}
ALLOWED: dict[str, set[str]] = {  # each layer and the layers it may import
    "errors": set(),
    "inert_text": set(),
    "url_redaction": {"inert_text"},
    "command_redaction": {"inert_text", "url_redaction"},
    "wire": {"errors"},
    "forms": {"errors"},
    "sealing": {"errors"},
    "telemetry_attributes": {"errors", "inert_text", "url_redaction", "wire"},
    "telemetry_spans": {"errors", "inert_text", "url_redaction", "wire", "telemetry_attributes"},
    "telemetry": {"errors", "inert_text", "url_redaction", "wire", "telemetry_attributes", "telemetry_spans"},
    "log_labels": {"errors", "inert_text", "url_redaction", "wire", "telemetry_attributes"},
    "core": _UNDER_CORE,
    "stores": _UNDER_CORE | {"core"},
    "streams": _UNDER_CORE | {"core"},
    "server": _UNDER_SERVER,
    "client": _UNDER_SERVER,
    "transports": _UNDER_TRANSPORTS,
    "ui": _UNDER_TRANSPORTS | {"transports"},
    "cli": _UNDER_TRANSPORTS | {"transports", "ui"},
}
IO_LIBRARIES = {
    "asyncio",
    "anyio",
    "trio",
    "socket",
    "selectors",
    "ssl",
    "subprocess",
    "threading",
    "httpx",
    "h11",
    "starlette",
    "uvicorn",
    "redis",
    "sqlite3",
    "rich",
    "prompt_toolkit",
    "playwright",
    "webbrowser",
}
SANS_IO = {"errors", "inert_text", "url_redaction", "command_redaction", "wire", "forms", "sealing", "core"}
WEB_LIBRARIES = {"starlette", "uvicorn", "httpx"}
NEVER = {"mcp", "fastmcp"}


def _layer(path: Path) -> str | None:
    rel = path.relative_to(PACKAGE)
    if rel.parts[0] in ("__init__.py", "__main__.py", "py.typed"):
        return None
    return rel.parts[0].removesuffix(".py")


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def test_every_layer_is_known() -> None:
    for path in MODULES:
        layer = _layer(path)
        assert layer is None or layer in ALLOWED, f"{path}: unknown layer {layer!r}; add it to ALLOWED"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_inward(path: Path) -> None:
    layer = _layer(path)
    if layer is None:
        return
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    problems = []
    for line, name in _imports(tree):
        parts = name.split(".")
        if parts[0] in NEVER:
            problems.append(f"line {line}: the runtime never depends on {parts[0]!r}")
        if parts[0] == "mcp_elicit" and len(parts) > 1:
            target = parts[1]
            if target != layer and target not in ALLOWED[layer] and target not in ("__init__",):
                problems.append(f"line {line}: layer {layer!r} may not import mcp_elicit.{target}")
        if layer in SANS_IO and parts[0] in IO_LIBRARIES:
            problems.append(f"line {line}: sans-IO layer {layer!r} imports the I/O library {parts[0]!r}")
        if layer == "server" and parts[0] in WEB_LIBRARIES:
            problems.append(f"line {line}: the server framework imports the web library {parts[0]!r}")
    assert not problems, f"{path.relative_to(PACKAGE)}:\n" + "\n".join(problems)


def test_the_checker_catches_a_violation(tmp_path: Path) -> None:
    bad = ast.parse("import asyncio\nfrom mcp_elicit.server.app import Server\n")
    names = [n for _, n in _imports(bad)]
    assert "asyncio" in names and "mcp_elicit.server.app.Server" in names
