"""The official Python SDK's client (``mcp`` 2.3.0) running a plan, for the server's interop
tests (tests/server/test_interop_clients.py, test_listing_extras_prompts_resources.py). Run
with the peer's own python:

    python sdk_plan_client.py PLAN.json

The plan is the one tests/peers/ts/client.mjs reads: ``era`` is the SDK's ``mode``
(``auto`` or ``legacy``), ``url`` or ``command`` says where the server is, ``answers`` and
``steps`` say what to answer and do (``listTools``, ``callTool``, ``getPrompt``,
``readResource``; this client also takes ``listPrompts``, ``listResources`` and
``listResourceTemplates``). The SDK declares elicitation (form and url) whenever an
elicitation callback is given, and nothing without one, so ``elicitation`` may only be
``{"form": {}, "url": {}}`` or null here. An answer may carry ``delayMs`` (how long the
person takes before answering), ``secret`` (typed into the server's page, as a person
would) and ``awaitComplete`` (answer once the server's ``notifications/elicitation/complete``
for that step has come); ``refuse`` (a message) makes the handler fail with that error.

Prints one JSON object: the protocol version, each step's result or error, the params of
every elicitation asked, the completion notices and what typing into pages gave. The SDK
offers no tap on every message, so ``received`` and ``sent`` stay empty.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
from mcp.client.client import Client
from mcp.client.context import ClientRequestContext
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError


async def type_secret(link: str, value: str) -> None:
    """Open the link (it sets the page's cookie and redirects), read the CSRF token, submit."""
    async with httpx2.AsyncClient() as browser:
        opened = await browser.get(link)
        if opened.status_code != 303:
            raise RuntimeError(f"the link answered {opened.status_code}")
        page = opened.url.join(opened.headers["location"])
        html = (await browser.get(page)).text
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
        if csrf is None:
            raise RuntimeError(f"no CSRF token on the page: {html[:300]}")
        origin = f"{page.scheme}://{page.netloc.decode()}"
        done = await browser.post(
            page, data={"csrf": csrf.group(1), "action": "submit", "value": value}, headers={"origin": origin}
        )
        if done.status_code != 200 or "Saved" not in done.text:
            raise RuntimeError(f"the page answered {done.status_code}: {done.text[:300]}")


async def main(plan: dict[str, Any]) -> None:
    answers: list[dict[str, Any]] = list(plan.get("answers") or [])
    asked: list[dict[str, Any]] = []
    notices: list[str] = []
    heard: dict[str, asyncio.Event] = {}
    typing: list[asyncio.Task[Any]] = []

    def event(eid: str) -> asyncio.Event:
        return heard.setdefault(eid, asyncio.Event())

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            notices.append(message.params.elicitation_id)
            event(message.params.elicitation_id).set()

    async def on_elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        wire = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        asked.append(wire)
        answer = dict(answers.pop(0)) if answers else {"action": "cancel"}
        if "refuse" in answer:  # the handler fails: the SDK sends (or raises) this error
            return types.ErrorData(code=types.INTERNAL_ERROR, message=answer["refuse"])
        secret = answer.pop("secret", None)
        wait = answer.pop("awaitComplete", False)
        await asyncio.sleep(answer.pop("delayMs", 0) / 1000)  # a person taking their time
        if wire.get("mode") == "url" and answer["action"] == "accept" and secret is not None:
            typed = asyncio.ensure_future(type_secret(wire["url"], secret))
            typing.append(typed)
            eid = wire.get("elicitationId")
            if wait and eid:
                await typed
                await asyncio.wait_for(event(eid).wait(), 10)
        return types.ElicitResult(**answer)

    if "url" in plan:
        server: Any = plan["url"]
    else:
        # the whole environment: the SDK passes only a few variables by default, so the
        # server would not see PYTHONPATH and could run another checkout's mcp_elicit
        server = StdioServerParameters(
            command=plan["command"][0], args=plan["command"][1:], env=dict(os.environ)
        )
    callback = on_elicit if plan.get("elicitation") is not None else None
    results: list[dict[str, Any]] = []
    async with Client(
        server, mode=plan.get("era", "auto"), elicitation_callback=callback, message_handler=on_message
    ) as client:
        for step in plan["steps"]:
            try:
                if step["op"] == "listTools":
                    out: Any = await client.list_tools()
                elif step["op"] == "callTool":
                    out = await client.call_tool(step["name"], step.get("arguments") or {})
                elif step["op"] == "getPrompt":
                    out = await client.get_prompt(step["name"], step.get("arguments") or {})
                elif step["op"] == "readResource":
                    out = await client.read_resource(step["uri"])
                elif step["op"] == "listPrompts":
                    out = await client.list_prompts()
                elif step["op"] == "listResources":
                    out = await client.list_resources()
                elif step["op"] == "listResourceTemplates":
                    out = await client.list_resource_templates()
                else:
                    raise ValueError(f"unknown step {step['op']}")
                results.append({"result": out.model_dump(mode="json", by_alias=True, exclude_none=True)})
            except MCPError as exc:
                error = exc.error
                results.append({"error": {"code": error.code, "message": error.message, "data": error.data}})
        version = client.protocol_version
    pages = [None if t.exception() is None else str(t.exception()) for t in await _settled(typing)]
    out = {"protocolVersion": version, "results": results, "asked": asked, "notices": notices, "pages": pages}
    print(json.dumps({**out, "received": [], "sent": []}))


async def _settled(tasks: list[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
    await asyncio.gather(*tasks, return_exceptions=True)
    return tasks


if __name__ == "__main__":
    asyncio.run(main(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))))
