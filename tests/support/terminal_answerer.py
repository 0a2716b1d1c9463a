"""The terminal answerer driven through prompt_toolkit's pipe input (keys as a terminal sends
them) with its screen captured: the requests, the screen, the browser stand-in and the key
helpers the terminal tests share."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest, Origin, ServerInfo, parse_elicitation
from mcp_elicit.forms import Boolean, Choice, Form, Integer, MultiChoice, String
from mcp_elicit.ui.terminal import TerminalAnswerer

SERVER = ServerInfo(name="bookings", version="1.0.0", title="Table bookings", where="memory:bookings")
ORIGIN = Origin("tools/call", "book")
FORM = Form(
    size=Integer(title="Party size", description="How many people, you included", minimum=1, maximum=20),
    date=String(title="Date", format="date"),
    seat=Choice({"in": "Inside", "out": "On the terrace"}, title="Seating", default="in"),
    diet=MultiChoice(["vegan", "gluten-free"], title="Dietary needs", required=False),
    ok=Boolean(title="Confirm", default=True),
)
ENTER, ESC, CTRL_C, CTRL_D, CTRL_N, CTRL_U, BACKSPACE = "\r", "\x1b", "\x03", "\x04", "\x0e", "\x15", "\x7f"


def form_request(
    schema: Any = FORM, message: str = "How many, and when?", **extra: Any
) -> ElicitationRequest:
    params = {
        "mode": "form",
        "message": message,
        "requestedSchema": schema.to_json() if hasattr(schema, "to_json") else schema,
    }
    return parse_elicitation(params, server=SERVER, key="details", origin=ORIGIN)


def url_request(url: str, message: str = "Sign in to your mail") -> ElicitationRequest:
    return parse_elicitation(
        {"mode": "url", "message": message, "url": url, "elicitationId": "e1"},
        server=SERVER,
        key="signin",
        origin=ORIGIN,
    )


class Browser:
    def __init__(self, works: bool = True) -> None:
        self.opened: list[str] = []
        self.works = works

    def __call__(self, url: str) -> bool:
        self.opened.append(url)
        return self.works


class Screen:
    """What the person sees: rich's console output (``text``) and, as prompt_toolkit draws
    them on an xterm, the prompts (``drawn``)."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.console = Console(
            file=self.buffer, width=100, markup=False, emoji=False, highlight=False, color_system=None
        )
        self.prompts = io.StringIO()
        self.output = Vt100_Output(self.prompts, lambda: Size(rows=40, columns=120), term="xterm")

    @property
    def text(self) -> str:
        return self.buffer.getvalue()

    @property
    def drawn(self) -> str:
        return self.prompts.getvalue()


@asynccontextmanager
async def answerer(
    keys: str = "", *, browser: Callable[[str], bool] | None = None
) -> AsyncIterator[tuple[TerminalAnswerer, Screen, PipeInput]]:
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        screen = Screen()
        yield (
            TerminalAnswerer(
                console=screen.console, input=pipe, output=screen.output, open_url=browser or Browser()
            ),
            screen,
            pipe,
        )


async def elicit(ans: TerminalAnswerer, request: ElicitationRequest) -> ElicitAnswer:
    async with asyncio.timeout(10):
        return await ans.elicit(request)


async def until_drawn(screen: Screen, shown: str) -> None:
    """Return once prompt_toolkit has drawn ``shown``; fail after 5 s (before ``elicit``
    gives up) naming what never showed and what was drawn last."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while shown not in screen.drawn:
        if loop.time() > deadline:
            raise AssertionError(
                f"{shown!r} was not drawn within 5 s; the last drawn: {screen.drawn[-300:]!r}"
            )
        await asyncio.sleep(0.01)


async def once_drawn(screen: Screen, shown: str, pipe: PipeInput, keys: str) -> None:
    """Type ``keys`` once ``shown`` is drawn: the prompt they are meant for is then reading.

    Typed sooner, an Esc can reach an earlier prompt in one read with the Enter before it;
    that prompt ends on the Enter and leaves the Esc in the input parser, waiting for the
    rest of an Alt key, with no prompt left to read it.
    """
    await until_drawn(screen, shown)
    pipe.send_text(keys)


async def elicit_typing(
    ans: TerminalAnswerer, request: ElicitationRequest, typing: Coroutine[Any, Any, None]
) -> ElicitAnswer:
    """``elicit`` while ``typing`` runs; if ``typing`` fails, so does this, with its error."""
    async with asyncio.TaskGroup() as group:
        group.create_task(typing)
        answer = group.create_task(elicit(ans, request))
    return answer.result()
