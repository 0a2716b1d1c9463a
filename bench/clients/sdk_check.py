"""The official SDK's client doing what ``mcp-elicit check`` does: spawn, discover, list, exit.

Run with the SDK's environment (``bench/.envs/mcp/bin/python``)::

    bench/.envs/mcp/bin/python bench/clients/sdk_check.py -- .venv/bin/mcp-elicit serve examples/demo_server.py

It is written the way the SDK's docs show: ``Client(StdioServerParameters(...))`` as an
async context manager, which spawns the command, probes ``server/discover`` and falls
back to ``initialize`` (its default ``mode="auto"``); then ``list_tools()`` page by page
until there is no ``next_cursor``; leaving the context closes the server's stdin and
waits for it to exit. It prints one JSON object: the revision, the server's name and
the tool names, so that the caller can check that it saw the tools.
"""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def check(command: list[str]) -> dict[str, object]:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(params) as client:
        names: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = await client.list_tools(cursor=cursor)
            pages += 1
            names.extend(tool.name for tool in page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        info = client.server_info
        return {
            "revision": client.protocol_version,
            "server": info.name if info is not None else None,
            "pages": pages,
            "tools": names,
        }


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("usage: sdk_check.py -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    print(json.dumps(asyncio.run(check(argv))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
