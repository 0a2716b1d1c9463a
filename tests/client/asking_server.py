"""A 2025-11-25 server over stdio that asks the client what a test wrote, raw.

Its first argument is a JSON file: ``{"ask": [...], "at": "call" | "initialized"}``. Each
entry of ``ask`` is a JSON-RPC message sent as it is (a request of the server's, a
notification), or ``{"sleep": seconds}``. They are sent when ``tools/call`` arrives (or
after ``notifications/initialized`` with ``"at": "initialized"``). The call's result is a
text content holding every response the client sent to the server's requests, in order,
once there are ``expect`` of them (default: one per request in ``ask``), or after
``wait`` seconds (default 8). ``init`` overrides fields of its ``InitializeResult`` (its
``protocolVersion``). With ``call_error``, ``tools/call`` is answered with that JSON-RPC
``error`` at once, and nothing is asked. Each line received is echoed to stderr.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

PLAN = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
ASK: list[dict[str, Any]] = PLAN["ask"]
EXPECT: int = PLAN.get("expect", sum(1 for m in ASK if "method" in m and "id" in m))
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "asking", "version": "1"},
}
lock = threading.Lock()
answers: list[dict[str, Any]] = []
call: dict[str, Any] | None = None
replied = False


def send(message: dict[str, Any]) -> None:
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def ask() -> None:
    for message in ASK:
        if "sleep" in message:
            time.sleep(message["sleep"])
        else:
            send(message)


def reply() -> None:
    global replied
    with lock:
        if call is None or replied:
            return
        replied = True
        text = json.dumps(answers)
        line = {"jsonrpc": "2.0", "id": call["id"], "result": {"content": [{"type": "text", "text": text}]}}
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()


def later() -> None:
    time.sleep(PLAN.get("wait", 8))
    reply()


def main() -> None:
    global call
    for line in sys.stdin:
        sys.stderr.write("got " + line)
        message = json.loads(line)
        if "method" not in message:
            answers.append(message)
            if len(answers) >= EXPECT:
                reply()
        elif message["method"] == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {**INIT, **PLAN.get("init", {})}})
        elif message["method"] == "notifications/initialized":
            if PLAN.get("at") == "initialized":
                threading.Thread(target=ask, daemon=True).start()
        elif message["method"] == "tools/call" and "call_error" in PLAN:
            send({"jsonrpc": "2.0", "id": message["id"], "error": PLAN["call_error"]})
        elif message["method"] == "tools/call":
            call = message
            threading.Thread(target=later, daemon=True).start()
            if PLAN.get("at", "call") == "call":
                threading.Thread(target=ask, daemon=True).start()
            if len(answers) >= EXPECT:
                reply()
        elif "id" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
