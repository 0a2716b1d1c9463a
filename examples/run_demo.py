"""`make demo`: serve examples/demo_server.py on 127.0.0.1 and say how to reach it."""

from __future__ import annotations

import argparse
import sys

from mcp_elicit.cli.main import main as cli

CURL = """\
Try it (a tools/call that answers input_required, then the retry with the answer):

  curl -s http://127.0.0.1:{port}/mcp -H 'content-type: application/json' \\
    -H 'accept: application/json, text/event-stream' -H 'mcp-protocol-version: 2026-07-28' \\
    -H 'mcp-method: tools/call' -H 'mcp-name: book_table' \\
    -d '{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"book_table",
         "arguments":{{"restaurant":"noma"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
         "io.modelcontextprotocol/clientCapabilities":{{"elicitation":{{}}}}}}}}}}'

Press Ctrl-C to stop.
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    print(f"mcp-elicit demo: the booking server at http://127.0.0.1:{args.port}/mcp\n", file=sys.stderr)
    print(CURL.format(port=args.port), file=sys.stderr)
    return cli(["serve", "examples/demo_server.py", "--http", f"127.0.0.1:{args.port}"])


if __name__ == "__main__":
    raise SystemExit(main())
