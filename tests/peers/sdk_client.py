"""The official Python SDK's client (``mcp`` 2.3.0) booking a table on the demo server.

Run with the peer's own python (tests/.peers/mcp): ``python sdk_client.py URL MODE``, MODE
being the SDK's ``legacy`` (the 2025-11-25 handshake) or ``auto`` (2026-07-28 when the
server speaks it). The SDK's elicitation callback answers each form by its field names.
Prints one JSON object: the booking result's text, and what the callback was asked.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import mcp_types as types
from mcp.client.client import Client
from mcp.client.context import ClientRequestContext

ANSWERS: dict[str, Any] = {
    "party_size": 4,
    "date": "2099-04-01",
    "seating": "bar",
    "dietary": ["vegetarian"],
    "confirm": True,
}


async def main(url: str, mode: str) -> None:
    asked: list[list[str]] = []

    async def answer(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestFormParams), params
        fields = list(params.requested_schema.get("properties", {}))
        asked.append(fields)
        return types.ElicitResult(action="accept", content={name: ANSWERS[name] for name in fields})

    async with Client(url, mode=mode, elicitation_callback=answer) as client:
        result = await client.call_tool("book_table", {"restaurant": "septime"})
        listed = await client.call_tool("list_bookings", {})
    texts = [getattr(block, "text", "") for block in result.content]
    print(
        json.dumps(
            {"text": " ".join(texts), "asked": asked, "listed": getattr(listed.content[0], "text", "")}
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
