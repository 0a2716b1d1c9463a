"""A hand-written stdio MCP server that misbehaves on purpose, for the CLI tests.

    python fake_stdio_server.py MODE [--era modern|legacy]

Modes: ``good`` (two clean tools over two pages), ``bad-tools`` (definitions with every
kind of fault, over two pages), ``noisy`` (prints a banner on stdout first, then behaves),
``junk`` (prints on stdout and never speaks JSON-RPC), ``junk-waits`` / ``junk-exits``
(print one such line, then read without answering / exit at once), ``junk-on-list-waits``
/ ``junk-on-list-exits`` (answer the opening request, then print one such line for
``tools/list``, then the same), ``exit`` (writes to stderr and exits
with code 3), ``loop`` (tools/list's cursor never ends), ``no-tools`` (a tools/list page
without ``tools``), ``bogus-result`` (tools/call answers an unknown resultType), ``tool-error``
(tools/call answers an ``isError`` result), ``broken-prompts`` (declares prompts and
resources: ``prompts/list`` fails, one resource, no templates), ``bad-offers`` (clean tools,
then a fault in a prompt, a resource and a template), ``asks-on-connect`` / ``asks-on-list``
(sends an ``elicitation/create`` request before it answers ``initialize`` or
``server/discover`` / ``tools/list``, and ignores the answer; ``asks-escapes`` the same
before ``tools/list``, and on 2026-07-28 as its answer to ``tools/call``, with terminal
escapes in its URL question and its title), ``caps-list`` (capabilities
as a list), ``discover-input-required`` (server/discover answered with input_required),
``no-capabilities`` (declares nothing, so has no tools to list), ``list-error`` (answers
``tools/list`` with -32603 "database is down"; ``list-internal`` the same with only
"Internal error", the reason on stderr), ``list-never`` (answers
the opening request, never ``tools/list``), ``call-never`` (never answers ``tools/call``), ``output-bad`` / ``output-missing`` (echo lists
an outputSchema; its result breaks it, or has no structuredContent), ``deep`` (tools/call
answers structuredContent nested 1000 deep), ``deep-page`` (a tools/list page without
``tools``, its ``items`` nested 1000 deep), ``deep-schema`` (echo's inputSchema and
outputSchema nest ``items`` 600 deep, its result a list as deep), ``url-required`` (tools/call
answers -32042 naming two URL steps: the first says echo's ``text``, 2 MB of it when that is
``huge``, its id 200 002 characters and no second step when that is ``long-id``; the second has terminal escapes in its message, id and URL), ``huge-error``
(tools/call answers an error whose message is 2 MB, escapes in it), ``huge-notes`` (before
answering tools/call, sends progress and a log message of 2 MB each, escapes in them),
``many-logs`` (before answering tools/call, sends 5000 log messages ``log 1`` ... ``log 5000``;
then, when echo's ``text`` is ``fail``, answers -32603), ``big-logs`` (before answering
tools/call, sends ``BIG_LOGS`` log messages ``big N xxx...`` of 1 MB each), ``deep-log``
(before answering tools/call, sends a log message ``first``, then one whose data nests
lists 600 deep, then ``last``),
``wide`` (tools, instructions and prompts in Chinese, with emoji and combining marks:
``WIDE``), ``long-names`` (two tools with the same name of 200 004 characters, one whose
inputSchema's type is 200 000 characters), ``output-huge`` (as ``output-bad``, 2 MB in the value that breaks it), ``many-tools``
(lists 3001 tools, one of them named with an escape; echo takes 3000
arguments and no other). A legacy server answers ``server/discover``
with -32601 and speaks 2025-11-25 after ``initialize`` (or the older revision ``--era``
names, ``2025-06-18`` or ``2025-03-26``, whatever the client proposed). With
``FAKE_RECEIVED`` set to a path, every line it reads is appended to that file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

SERVER_INFO = {"name": "fake", "version": "0.0.1", "title": "Fake server"}
GOOD = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {"name": "ping.v2", "description": "Answer pong.", "inputSchema": {"type": "object"}},
]
BAD = [
    {"name": "bad name!", "description": "Spaces and a bang.", "inputSchema": {"type": "object"}},
    {"name": "undocumented", "inputSchema": {"type": "object"}},
    {
        "name": "typo",
        "description": "A schema with a type that does not exist.",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "strnig"}}},
    },
    {"name": "array_root", "description": "Arguments must be an object.", "inputSchema": {"type": "array"}},
    {
        "name": "header",
        "description": "x-mcp-header on an object.",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "object", "x-mcp-header": "Region"}},
        },
    },
    {"name": "echo", "description": "A second echo.", "inputSchema": {"type": "object"}},
]

BAD_OFFERS = {
    "prompts/list": {
        "prompts": [
            {"name": "plan", "description": "Plan an evening.", "arguments": [{"name": "city"}]},
            {"name": "trip", "arguments": [{"name": "day", "required": "yes"}]},
        ]
    },
    "resources/list": {"resources": [{"uri": "notes.txt", "name": "notes"}]},
    "resources/templates/list": {"resourceTemplates": [{"uriTemplate": "file:///{path", "name": "files"}]},
}

#: What the ``wide`` mode lists: names and descriptions whose letters take two columns
#: (Chinese, emoji) or none (combining marks), and its instructions.
WIDE = [
    {"name": "echo", "description": "Echo the text back, as it was typed, to whoever asked for it."},
    {
        "name": "天气预报",
        "description": "查询指定城市未来七天的天气预报，包括温度、湿度、风速和降水概率等详细信息，数据每小时更新一次。",
    },
    {
        "name": "派对🎉",
        "description": "Throws a party 🎉🎊🥳 with balloons 🎈 for all 👯 who ask nicely, all night 🕺💃🎶",
    },
    {
        "name": "cafe\u0301_cre\u0300me",
        "description": "Le menu du cafe\u0301 : cre\u0300me bru\u0302le\u0301e, the\u0301 glace\u0301, "
        "tarte a\u0300 la po\u0302ire, pre\u0301pare\u0301e chaque matin",
    },
    {"name": "長い名前のツール一覧表示機能", "description": "すべてのツールを一覧表示します。"},
]
WIDE_INSTRUCTIONS = (
    "请先调用天气预报工具，然后再举办派对🎉。所有工具都需要登录，每位用户每天最多可调用一百次。"
)
WIDE_PROMPTS = {"prompts": [{"name": f"提示词模板第{n}号"} for n in range(1, 9)]}

#: How many log messages of 1 MB the ``big-logs`` mode sends.
BIG_LOGS = 12
#: The outputSchema the ``output-*`` modes list for echo.
COUNTED = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

#: What the ``deep`` mode's result carries, replaced on the way out by ``_deep()``.
DEEP = "deep"

#: The second step ``url-required`` names: what it says would act on a terminal.
ESCAPED_STEP = {
    "mode": "url",
    "elicitationId": "e\x1b[2J",
    "message": "Then here\x1b[2J",
    "url": "https://example.com/\x1b]0;pwned\x07",
}
#: Two megabytes of server text.
HUGE = "x" * 2_000_000

#: The request the ``asks-*`` modes send, and before answering what.
ASK = {
    "jsonrpc": "2.0",
    "id": "ask-1",
    "method": "elicitation/create",
    "params": {"mode": "form", "message": "Your name?", "requestedSchema": {"type": "object"}},
}
ASKS = {
    "asks-on-connect": ("initialize", "server/discover"),
    "asks-on-list": ("tools/list",),
    "asks-escapes": ("tools/list",),
}
#: What ``asks-escapes`` sends instead: a URL question whose text would act on a terminal.
ASK_ESCAPES = {
    "jsonrpc": "2.0",
    "id": "ask-1",
    "method": "elicitation/create",
    "params": {
        "mode": "url",
        "message": "Sign in\x1b[2J",
        "url": "https://example.com/\x1b]0;pwned\x07",
        "elicitationId": "e1",
    },
}


def respond(mode: str, era: str, message: dict[str, Any]) -> dict[str, Any] | None:
    method = message.get("method")
    rid = message.get("id")
    if rid is None:
        return None
    modern = era == "modern"
    extra: dict[str, Any] = {"resultType": "complete"} if modern else {}

    def result(body: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "result": {**body, **extra}}

    info = {**SERVER_INFO, "title": "Fake\x1b[31m server"} if mode == "asks-escapes" else SERVER_INFO
    capabilities: dict[str, Any] = {"tools": {}}
    if mode in ("broken-prompts", "bad-offers", "wide"):
        capabilities.update(prompts={}, resources={})
    if mode == "no-capabilities":
        capabilities = {}

    if method == "server/discover":
        if not modern:
            return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}
        if mode == "discover-input-required":
            body = {"resultType": "input_required", "inputRequests": {"q": ASK}, "requestState": "s"}
            return {"jsonrpc": "2.0", "id": rid, "result": body}
        return result(
            {
                "supportedVersions": ["2026-07-28"],
                "capabilities": ["tools"] if mode == "caps-list" else capabilities,
                "ttlMs": 0,
                "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo": info},
                **({"instructions": WIDE_INSTRUCTIONS} if mode == "wide" else {}),
            }
        )
    if method == "initialize":
        spoken = era if era.startswith("20") else "2025-11-25"
        said = {"instructions": WIDE_INSTRUCTIONS} if mode == "wide" else {}
        return result({"protocolVersion": spoken, "capabilities": capabilities, "serverInfo": info, **said})
    if method == "tools/list":
        if mode == "list-never":
            return None
        if mode in ("list-error", "list-internal"):
            said = "database is down" if mode == "list-error" else "Internal error"
            if mode == "list-internal":
                print("fake: the database at port 5432 refused the connection", file=sys.stderr, flush=True)
            return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": said}}
        cursor = (message.get("params") or {}).get("cursor")
        if mode == "loop":
            return result({"tools": GOOD[:1], "nextCursor": "again"})
        if mode == "no-tools":
            return result({"items": []})
        if mode == "deep-page":
            return result({"items": DEEP})
        if mode in ("output-bad", "output-missing", "output-huge"):
            return result({"tools": [{**GOOD[0], "outputSchema": COUNTED}]})
        if mode == "deep-schema":
            deep = {"type": "object", "properties": {"x": _nested({}, "items", 600)}}
            return result({"tools": [{**GOOD[0], "inputSchema": deep, "outputSchema": deep}]})
        if mode == "many-tools":
            many = [{**GOOD[1], "name": f"tool_{n:04}"} for n in range(2999)]
            props = {f"p{n:04}": {"type": "string"} for n in range(3000)}
            wide = {"type": "object", "properties": props, "additionalProperties": False}
            first = [{**GOOD[1], "name": "a\x1b[2J"}, {**GOOD[0], "inputSchema": wide}]
            return result({"tools": [*first, *many]})
        if mode == "wide":
            return result({"tools": [{**tool, "inputSchema": {"type": "object"}} for tool in WIDE]})
        if mode == "long-names":  # one name 200 004 characters long, twice (a duplicate)
            long = {**GOOD[0], "name": "echo" + "n" * 200_000, "description": "d" * 200_000}
            return result({"tools": [long, long, {**GOOD[1], "inputSchema": {"type": "x" * 200_000}}]})
        pages = [GOOD, BAD] if mode == "bad-tools" else [GOOD[:1], GOOD[1:]]
        if cursor is None:
            return result({"tools": pages[0], "nextCursor": "page-2"})
        return result({"tools": pages[1]})
    if method == "prompts/list" and mode == "wide":
        return result(WIDE_PROMPTS)
    if method in ("resources/list", "resources/templates/list") and mode == "wide":
        return result({"resources": []} if method == "resources/list" else {"resourceTemplates": []})
    if method == "prompts/list" and mode == "broken-prompts":
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "error": {"code": -32603, "message": "Internal error: no prompts today"},
        }
    if method == "resources/list" and mode == "broken-prompts":
        return result({"resources": [{"uri": "file:///notes.txt", "name": "notes"}]})
    if method == "resources/templates/list" and mode == "broken-prompts":
        return result({"resourceTemplates": []})
    if mode == "bad-offers" and method in BAD_OFFERS:
        return result(BAD_OFFERS[method])
    if method == "tools/call":
        if mode == "call-never":
            return None
        if mode == "asks-escapes" and modern:
            body = {"resultType": "input_required", "inputRequests": {"q": ASK_ESCAPES}, "requestState": "s"}
            return {"jsonrpc": "2.0", "id": rid, "result": body}
        if mode in ("url-required", "huge-error"):
            return {"jsonrpc": "2.0", "id": rid, "error": _error(mode, message)}
        if mode == "bogus-result":
            return {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "bogus"}}
        if mode == "tool-error":
            return result({"content": [{"type": "text", "text": "echo is broken today"}], "isError": True})
        if mode == "deep":  # written out below: json.dumps itself recurses
            return result({"content": [], "structuredContent": DEEP})
        if mode == "deep-schema":
            body = {
                "content": [{"type": "text", "text": "ok"}],
                "structuredContent": {"x": _nested([], None, 600)},
            }
            return result(body)
        if mode == "output-huge":  # a result that breaks the schema with 2 MB
            return result({"content": [{"type": "text", "text": "many"}], "structuredContent": {"n": HUGE}})
        if mode == "output-bad":
            return result(
                {"content": [{"type": "text", "text": '{"n": "many"}'}], "structuredContent": {"n": "many"}}
            )
        text = ((message.get("params") or {}).get("arguments") or {}).get("text", "")
        return result({"content": [{"type": "text", "text": f"echo: {text}"}]})
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}


def _error(mode: str, message: dict[str, Any]) -> dict[str, Any]:
    """The error ``url-required`` or ``huge-error`` answers tools/call with."""
    if mode == "huge-error":
        return {"code": -32603, "message": f"Internal error\x1b[2J {HUGE} END"}
    text = ((message.get("params") or {}).get("arguments") or {}).get("text", "")
    said = f"Sign in {HUGE} END" if text == "huge" else text
    first = {
        "mode": "url",
        "elicitationId": "id" + "i" * 200_000 if text == "long-id" else "bank-1",
        "message": said,
        "url": "https://accounts.example.com/signin",
    }
    data = {"elicitations": [first] if text == "long-id" else [first, ESCAPED_STEP]}
    return {"code": -32042, "message": "URL elicitation required", "data": data}


def _huge_notes(call: dict[str, Any]) -> list[dict[str, Any]]:
    """The notifications ``huge-notes`` sends before it answers ``call``."""
    token = ((call.get("params") or {}).get("_meta") or {}).get("progressToken", call.get("id"))
    said = f"Working\x1b[2J {HUGE} END"
    progress = {"progressToken": token, "progress": 1, "total": 2, "message": said}
    log = {"level": "info", "logger": "fake\x1b[31m", "data": said}
    return [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": progress},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": log},
    ]


def _nested(inner: Any, key: str | None, depth: int) -> Any:
    """``inner`` wrapped ``depth`` times: in ``{key: ...}``, or in a list when ``key`` is None."""
    for _ in range(depth):
        inner = [inner] if key is None else {key: inner}
    return inner


def _deep() -> str:
    """An object nested 1000 deep, within the 1024 levels a JSON reader takes."""
    return '{"a":' * 1000 + "1" + "}" * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--era", default="legacy", choices=["modern", "legacy", "2025-06-18", "2025-03-26"])
    args = parser.parse_args()
    if args.mode == "exit":
        print("fake: cannot open the database", file=sys.stderr, flush=True)
        return 3
    if args.mode in ("noisy", "junk", "junk-waits", "junk-exits"):
        print("Starting the fake server on stdio...", flush=True)
    if args.mode == "junk-exits":
        return 0
    if args.mode == "junk-waits":
        while sys.stdin.readline():
            pass
        return 0
    if args.mode == "junk":
        while sys.stdin.readline():
            print("still not JSON", flush=True)
        time.sleep(0.1)
        return 0
    received = os.environ.get("FAKE_RECEIVED")
    for line in sys.stdin:
        if not line.strip():
            continue
        if received:
            with open(received, "a", encoding="utf-8") as log:
                log.write(line)
        message = json.loads(line)
        if message.get("method") == "tools/list" and args.mode.startswith("junk-on-list"):
            print("Listing the tools...", flush=True)
            if args.mode == "junk-on-list-exits":
                return 0
            continue
        if message.get("method") == "tools/call" and args.mode == "huge-notes":
            for note in _huge_notes(message):
                sys.stdout.write(json.dumps(note) + "\n")
        if message.get("method") == "tools/call" and args.mode == "big-logs":
            for n in range(1, BIG_LOGS + 1):
                log = {"level": "info", "data": f"big {n} " + "x" * 1_000_000}
                note = {"jsonrpc": "2.0", "method": "notifications/message", "params": log}
                sys.stdout.write(json.dumps(note) + "\n")
        if message.get("method") == "tools/call" and args.mode == "deep-log":
            deep: object = "bottom"
            for _ in range(600):
                deep = [deep]
            for data in ("first", deep, "last"):
                note = {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": data},
                }
                sys.stdout.write(json.dumps(note) + "\n")
        if message.get("method") == "tools/call" and args.mode == "many-logs":
            for n in range(1, 5001):
                log = {"level": "info", "data": f"log {n}"}
                sys.stdout.write(
                    json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": log})
                )
                sys.stdout.write("\n")
            if message.get("params", {}).get("arguments", {}).get("text") == "fail":
                failed = {"code": -32603, "message": "it failed"}
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": failed}) + "\n")
                sys.stdout.flush()
                continue
        if message.get("method") in ASKS.get(args.mode, ()):
            sys.stdout.write(json.dumps(ASK_ESCAPES if args.mode == "asks-escapes" else ASK) + "\n")
        reply = respond(args.mode, args.era, message)
        if reply is not None:
            line = json.dumps(reply)
            if args.mode == "deep":
                line = line.replace('"structuredContent": "deep"', '"structuredContent": ' + _deep())
            if args.mode == "deep-page":
                line = line.replace('"items": "deep"', '"items": ' + _deep())
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
