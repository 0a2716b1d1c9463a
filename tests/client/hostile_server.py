"""A hostile MCP server over stdio, for the client's robustness tests: it answers raw JSON,
one line per message, as the scenario named by its first argument says.

Modern scenarios (2026-07-28) answer ``server/discover``; ``legacy-*`` ones refuse it
(-32601) and answer ``initialize`` at 2025-11-25. Every other request goes to the scenario.
Each line received is echoed to stderr, prefixed with ``got``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

SCENARIO = sys.argv[1]
FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
URL_ASK = {"mode": "url", "message": "Sign in", "elicitationId": "e0"}
DISCOVER = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "private",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile", "version": "1"}},
}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "hostile", "version": "1"},
}


#: Requests that are not valid JSON-RPC, each with an id the client can read.
MALFORMED: dict[str, dict[str, Any]] = {
    "params-not-object": {"method": "elicitation/create", "params": ["Your name?"]},
    "method-not-string": {"method": 7, "params": FORM["params"]},
    "method-empty": {"method": "", "params": FORM["params"]},
    "jsonrpc-1.0": {"jsonrpc": "1.0", "method": "elicitation/create", "params": FORM["params"]},
}


flooded: tuple[dict[str, Any], int] | None = None
#: legacy-ask-during-initialize: the answer to its early question, and a call waiting for it.
early: list[dict[str, Any]] = []
waiting: list[dict[str, Any]] = []
asking: dict[str, Any] | None = None
seen: list[dict[str, Any]] = []
answered: list[dict[str, Any]] = []


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request: dict[str, Any], body: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": request["id"], "result": body})


def text(request: dict[str, Any], value: object) -> None:
    result(request, {"content": [{"type": "text", "text": json.dumps(value)}]})


def scenario(request: dict[str, Any]) -> None:
    global asking
    params = request.get("params") or {}
    count = len(seen)
    seen.append(request)
    if SCENARIO == "null-id-error":  # as a server that could not read the request's id answers
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error: a test"}})
    elif SCENARIO == "ask-forever":
        ask = {
            "resultType": "input_required",
            "inputRequests": {f"k{count}": FORM},
            "requestState": f"s{count}",
        }
        result(request, ask)
    elif SCENARIO == "ask-then-exit":  # a question, then the process ends
        result(request, {"resultType": "input_required", "inputRequests": {"k": FORM}, "requestState": "s"})
        sys.exit(3)
    elif SCENARIO == "state-forever":
        result(request, {"resultType": "input_required", "requestState": f"s{count}"})
    elif SCENARIO in ("url-then-state", "pages-then-state"):  # then only a requestState for ever
        if "requestState" not in params:
            ask = {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/sign-in"},
            }
            asks = {"signin": ask}
            if SCENARIO == "pages-then-state":  # two pages in one round
                pay = {**ask["params"], "message": "Pay", "url": "https://pay.example.net/p"}
                asks["pay"] = {"method": "elicitation/create", "params": pay}
            result(request, {"resultType": "input_required", "inputRequests": asks, "requestState": "s"})
        else:
            result(request, {"resultType": "input_required", "requestState": f"s{count}"})
    elif SCENARIO == "first-round":  # argv[2]: the first round's result (JSON); then the params got
        if count == 0:
            result(request, json.loads(sys.argv[2]))
        else:
            text(request, {k: v for k, v in params.items() if k != "_meta"})
    elif SCENARIO == "many-requests":
        result(
            request, {"resultType": "input_required", "inputRequests": {f"k{i}": FORM for i in range(500)}}
        )
    elif SCENARIO == "unknown-input-method":
        asks = {"k": {"method": "tools/call", "params": {"name": "t"}}}
        result(request, {"resultType": "input_required", "inputRequests": asks})
    elif SCENARIO == "unknown-result-type":
        result(request, {"resultType": "partial", "content": []})
    elif SCENARIO == "input-required-anywhere":
        result(request, {"resultType": "input_required", "inputRequests": {"k": FORM}})
    elif SCENARIO in ("stray-responses", "legacy-stray-responses"):  # others' ids, then twice
        send({"jsonrpc": "2.0", "id": 999, "result": {"content": []}})
        send({"jsonrpc": "2.0", "id": str(request["id"]), "result": {"content": []}})
        text(request, "first")
        text(request, "second")
    elif SCENARIO in ("endless-pages", "legacy-endless-pages"):  # a new cursor on every page
        tool = {"name": f"t{count}", "inputSchema": {"type": "object"}}
        result(request, {"tools": [tool], "nextCursor": f"c{count}"})
    elif SCENARIO in ("looping-pages", "legacy-looping-pages"):  # page 2 names page 2 again
        tool = {"name": f"t{count}", "inputSchema": {"type": "object"}}
        result(request, {"tools": [tool], "nextCursor": "again"})
    elif SCENARIO in ("tools-not-a-list", "legacy-tools-not-a-list"):  # page 2's tools: an object
        tool = {"name": f"t{count}", "inputSchema": {"type": "object"}}
        result(request, {"tools": [tool], "nextCursor": "c"} if "cursor" not in params else {"tools": tool})
    elif SCENARIO in ("number-cursor", "legacy-number-cursor"):  # a cursor that is not a string
        result(request, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "nextCursor": 2})
    elif SCENARIO == "huge-state":
        if "requestState" in params:
            text(request, len(params["requestState"]))
        else:
            state = "s" * (int(sys.argv[2]) if len(sys.argv) > 2 else 8_000_000)
            result(
                request, {"resultType": "input_required", "inputRequests": {"k": FORM}, "requestState": state}
            )
    elif SCENARIO == "undeclared-after-form":  # a form, then what the client did not declare
        undeclared = {
            "sampling": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
            "roots": {"method": "roots/list"},
            "url": {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "Go", "url": "https://example.com/"},
            },
        }[sys.argv[2]]
        result(request, {"resultType": "input_required", "inputRequests": {"a": FORM, "b": undeclared}})
    elif SCENARIO == "legacy-url-required":  # -32042 with as many URLs as argv[2] says
        urls = [
            {
                "mode": "url",
                "message": f"Step {i}",
                "url": f"https://example.com/{i}",
                "elicitationId": f"e{i}",
            }
            for i in range(int(sys.argv[2]))
        ]
        if sys.argv[3:] == ["refused-url"]:  # the last one a URL the client refuses
            urls[-1]["url"] = "javascript:alert(1)"
        elif sys.argv[3:] == ["without-ids"]:  # which 2025-11-25 requires
            for entry in urls:
                del entry["elicitationId"]
                entry["url"] += "?code=SECRET-CODE"  # a one-time code: quoted redacted
        elif len(sys.argv) > 3:  # and then a form, which -32042 may not carry
            urls.append(
                {"mode": "form", "message": "Name?", "requestedSchema": FORM["params"]["requestedSchema"]}
            )
        error = {"code": -32042, "message": "URL elicitation required", "data": {"elicitations": urls}}
        send({"jsonrpc": "2.0", "id": request["id"], "error": error})
    elif SCENARIO == "legacy-url-notice-first":  # argv[2] rounds of -32042, each after its notice
        rounds = int(sys.argv[2])
        if count < rounds:  # argv[3] "same-id": one id (e0) for every round, else e0, e1...
            eid = "e0" if sys.argv[3:] == ["same-id"] else f"e{count}"
            notice = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete"}
            send({**notice, "params": {"elicitationId": eid}})
            url = {
                "mode": "url",
                "message": "Sign in",
                "url": f"https://example.com/{eid}",
                "elicitationId": eid,
            }
            error = {"code": -32042, "message": "URL elicitation required", "data": {"elicitations": [url]}}
            send({"jsonrpc": "2.0", "id": request["id"], "error": error})
        else:
            text(request, count)
    elif SCENARIO == "legacy-url-steps":  # request i does argv[2 + i] (the last one past the end)
        step = sys.argv[2:][min(count, len(sys.argv) - 3)]
        what, _, ids = step.partition(":")
        if what in ("error", "gone"):  # -32042 listing the URL steps of these ids ("error:e0,e1")
            urls = [
                {
                    "mode": "url",
                    "message": "Sign in",
                    "url": f"https://example.com/{eid}",
                    "elicitationId": eid,
                }
                for eid in ids.split(",")
            ]
            error = {"code": -32042, "message": "URL elicitation required", "data": {"elicitations": urls}}
            send({"jsonrpc": "2.0", "id": request["id"], "error": error})
            if what == "gone":  # and then the process ends
                sys.exit(3)
        elif what == "ask":  # a URL-mode question of this id; the call's result: its response
            asking = request
            ask = {**URL_ASK, "url": f"https://example.com/{ids}", "elicitationId": ids}
            send({"jsonrpc": "2.0", "id": f"q-{count}", "method": "elicitation/create", "params": ask})
        elif what == "notice":  # the step of this id is complete, then the result
            notice = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete"}
            send({**notice, "params": {"elicitationId": ids}})
            text(request, count)
        else:
            text(request, count)
    elif SCENARIO == "legacy-flood":  # argv[2] questions at once; the result once all are answered
        global flooded
        flooded = (request, int(sys.argv[2]))
        for i in range(flooded[1]):
            send({"jsonrpc": "2.0", "id": f"s-{i}", "method": "elicitation/create", "params": FORM["params"]})
    elif SCENARIO == "legacy-ask-forever":  # a new question after each answer, until refused (argv[2] times)
        asking = request
        send({"jsonrpc": "2.0", "id": "q-0", "method": "elicitation/create", "params": FORM["params"]})
    elif SCENARIO == "legacy-sample":  # asks for sampling; the call's result is the answer it got
        asking = request
        ask = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}
        send({"jsonrpc": "2.0", "id": "q-0", "method": "sampling/createMessage", "params": ask})
    elif SCENARIO == "legacy-malformed":  # a request that is not valid JSON-RPC (argv[2]); as legacy-sample
        asking = request
        send({"jsonrpc": "2.0", "id": "q-0", **MALFORMED[sys.argv[2]]})
    elif SCENARIO == "malformed":  # a request not valid JSON-RPC (argv[2]; or a form), then the result
        send({"jsonrpc": "2.0", "id": "q-0", **MALFORMED.get(sys.argv[2], FORM)})
        text(request, "done")
    elif SCENARIO == "legacy-ask-during-initialize":  # the call's result: what came for q-0
        if early:
            text(request, early[0])
        else:
            waiting.append(request)
    elif SCENARIO == "ask-url":  # a round of URL-mode questions (argv[2:] their URLs, keys k, k1...)
        if "inputResponses" in params:
            text(request, params["inputResponses"])
        else:
            asks = {
                "k" if i == 0 else f"k{i}": {
                    "method": "elicitation/create",
                    "params": {**URL_ASK, "url": url},
                }
                for i, url in enumerate(sys.argv[2:])
            }
            result(request, {"resultType": "input_required", "inputRequests": asks})
    elif SCENARIO == "legacy-ask-url":  # a URL-mode question (argv[2] its URL); as legacy-sample
        asking = request
        ask = {**URL_ASK, "url": sys.argv[2]}
        send({"jsonrpc": "2.0", "id": "q-0", "method": "elicitation/create", "params": ask})
    elif SCENARIO == "legacy-same-id":  # two questions under one id; the result: the answers
        asking = request
        send({"jsonrpc": "2.0", "id": "q-0", "method": "elicitation/create", "params": FORM["params"]})
        second = {**FORM["params"], "message": "Your age?"}
        send({"jsonrpc": "2.0", "id": "q-0", "method": "elicitation/create", "params": second})
    elif SCENARIO == "legacy-ask":  # asks, then never answers the request
        send({"jsonrpc": "2.0", "id": "s-1", "method": "elicitation/create", "params": FORM["params"]})
    else:
        raise SystemExit(f"unknown scenario {SCENARIO!r}")


def main() -> None:
    legacy = SCENARIO.startswith("legacy-")
    for line in sys.stdin:
        sys.stderr.write("got " + line)
        message = json.loads(line)
        if "id" in message and "method" not in message and SCENARIO == "legacy-same-id":
            # every response, until the one to a ping sent once q-0 has its result: none
            # can come after it for the questions sent before
            if message["id"] == "p-0":
                text(asking, answered)
            else:
                answered.append(message)
                if "result" in message:
                    send({"jsonrpc": "2.0", "id": "p-0", "method": "ping"})
        elif (
            "id" in message
            and "method" not in message
            and asking is not None
            and SCENARIO in ("legacy-sample", "legacy-malformed", "legacy-ask-url", "legacy-url-steps")
        ):
            text(asking, message)
        elif "id" in message and "method" not in message and asking is not None:
            answered.append(message)
            refused = sum("error" in m for m in answered)
            if refused >= int(sys.argv[2] if len(sys.argv) > 2 else 1):  # argv[2]: refusals it takes
                text(asking, {"answered": len(answered) - refused, "error": message["error"]})
            else:
                ask = {"jsonrpc": "2.0", "id": f"q-{len(answered)}", "method": "elicitation/create"}
                send({**ask, "params": FORM["params"]})
        if "id" in message and "method" not in message and flooded is not None:
            answered.append(message)
            if len(answered) == flooded[1]:
                text(flooded[0], [m.get("error", {}).get("code", 0) for m in answered])
        if "id" in message and "method" not in message and SCENARIO == "legacy-ask-during-initialize":
            early.append(message)
            for request in waiting:
                text(request, message)
        if "id" not in message or "method" not in message:
            continue
        if message["method"] == "server/discover":
            if legacy:
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "Method not found"},
                    }
                )
            else:
                result(message, DISCOVER)
        elif message["method"] == "initialize":
            if SCENARIO == "legacy-ask-during-initialize":  # a question before the session exists
                send(
                    {"jsonrpc": "2.0", "id": "q-0", "method": "elicitation/create", "params": FORM["params"]}
                )
            if SCENARIO == "legacy-deep-version":  # written out: json.dumps itself recurses
                deep = "[" * 1000 + '"2025-11-25"' + "]" * 1000
                line = json.dumps(
                    {"jsonrpc": "2.0", "id": message["id"], "result": {**INIT, "protocolVersion": 0}}
                )
                sys.stdout.write(line.replace('"protocolVersion": 0', f'"protocolVersion": {deep}') + "\n")
                sys.stdout.flush()
            else:
                result(message, INIT)
        else:
            scenario(message)


if __name__ == "__main__":
    main()
