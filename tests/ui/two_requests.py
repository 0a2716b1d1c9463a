"""One person, two requests, in a real terminal: the terminal answerer asks a form (a
``name``), and each SIGUSR1 says that another request waits for a page
(``url_waiting``) while the form is being answered. The answer is printed as JSON."""

from __future__ import annotations

import asyncio
import json
import signal

from mcp_elicit.core.client_inputs import Origin, ServerInfo, parse_elicitation
from mcp_elicit.ui.terminal import TerminalAnswerer

SERVER = ServerInfo(name="bookings", version="1.0.0", title="Table bookings", where="stdio:bookings")
ORIGIN = Origin("tools/call", "book")
FORM = {"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}, "required": ["name"]}
PAGE = {
    "mode": "url",
    "message": "Pay the deposit",
    "url": "https://pay.example.com/d",
    "elicitationId": "e1",
}


async def main() -> None:
    answerer = TerminalAnswerer()
    waits: set[asyncio.Task[None]] = set()

    def another_request_waits() -> None:
        task = asyncio.ensure_future(
            answerer.url_waiting(parse_elicitation(PAGE, server=SERVER, key="pay", origin=ORIGIN))
        )
        waits.add(task)
        task.add_done_callback(waits.discard)

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, another_request_waits)
    form = {"mode": "form", "message": "Who books?", "requestedSchema": FORM}
    answer = await answerer.elicit(parse_elicitation(form, server=SERVER, key="who", origin=ORIGIN))
    print(json.dumps({"action": answer.action, "content": answer.content}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
