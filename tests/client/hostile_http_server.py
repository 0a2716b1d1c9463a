"""A hostile MCP server over Streamable HTTP (2025-11-25), for the client's robustness
tests: plain ``http.server``, raw JSON, bound to 127.0.0.1 on a port of its own choosing,
which it prints as its first line of stdout.

``initialize`` opens session ``hostile-1``. A ``tools/call`` answers with an event stream
that first carries a request that is not valid JSON-RPC (the shape named by the first
argument, its id ``q-0``; or, for comparison, the well-formed ``ping``), then waits up to five seconds for the client to answer ``q-0``
with a POST, and ends the stream with the call's result: as JSON text, that answer and the
session headers it came with (or null when none came). With a second argument
``during-initialize`` the malformed request goes on ``initialize``'s own event stream
instead (whose response headers assign the session), before the ``InitializeResult``, and
a ``tools/call`` just answers with what came for ``q-0``. Every POST body is echoed to
stderr, prefixed with ``got``.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FORM = {
    "mode": "form",
    "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}
MALFORMED: dict[str, dict[str, Any]] = {
    "params-not-object": {"method": "elicitation/create", "params": ["Your name?"]},
    "method-not-string": {"method": 7, "params": FORM},
    "ping": {"method": "ping"},  # not malformed: what a well-formed question gets, to compare
}
SESSION = "hostile-1"
SHAPE = sys.argv[1]
DURING_INITIALIZE = sys.argv[2:] == ["during-initialize"]

answered = threading.Condition()
answers: dict[object, dict[str, Any]] = {}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._plain(405)

    def do_DELETE(self) -> None:
        self._plain(200)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        sys.stderr.write(f"got {body.decode()}\n")
        message = json.loads(body)
        if "method" not in message:  # an answer to one of our requests
            with answered:
                answers[message.get("id")] = {
                    "message": message,
                    "headers": {
                        name: self.headers.get(name) for name in ("mcp-session-id", "mcp-protocol-version")
                    },
                }
                answered.notify_all()
            self._plain(202)
        elif "id" not in message:
            self._plain(202)
        elif message["method"] == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile-http", "version": "1"},
            }
            if DURING_INITIALIZE:
                initialized = {"jsonrpc": "2.0", "id": message["id"], "result": result}
                self._ask_first(lambda _: initialized)
            else:
                self._json({"jsonrpc": "2.0", "id": message["id"], "result": result}, session=True)
        elif message["method"] == "tools/call" and DURING_INITIALIZE:
            with answered:
                text = json.dumps(answers.get("q-0"))
            result = {"content": [{"type": "text", "text": text}]}
            self._json({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif message["method"] == "tools/call":
            self._call(message)
        else:
            error = {"code": -32601, "message": f"Method not found: {message['method']}"}
            self._json({"jsonrpc": "2.0", "id": message["id"], "error": error})

    def _call(self, request: dict[str, Any]) -> None:
        def result(got: dict[str, Any] | None) -> dict[str, Any]:
            text = json.dumps(got)
            return {
                "jsonrpc": "2.0",
                "id": request["id"],
                "result": {"content": [{"type": "text", "text": text}]},
            }

        self._ask_first(result)

    def _ask_first(self, then: Callable[[dict[str, Any] | None], dict[str, Any]]) -> None:
        """An event stream carrying the malformed request ``q-0``, then (once it is answered,
        or after five seconds) the message ``then`` makes of its answer (None: none came)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        if DURING_INITIALIZE:
            self.send_header("Mcp-Session-Id", SESSION)
        self.end_headers()
        self._event({"jsonrpc": "2.0", "id": "q-0", **MALFORMED[SHAPE]})
        with answered:
            answered.wait_for(lambda: "q-0" in answers, timeout=5.0)
            got = answers.get("q-0")
        self._event(then(got))
        self.close_connection = True

    def _event(self, message: dict[str, Any]) -> None:
        self.wfile.write(b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n")
        self.wfile.flush()

    def _json(self, message: dict[str, Any], *, session: bool = False) -> None:
        body = json.dumps(message).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if session:
            self.send_header("Mcp-Session-Id", SESSION)
        self.end_headers()
        self.wfile.write(body)

    def _plain(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
