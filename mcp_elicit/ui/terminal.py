"""The terminal answerer: a person answers a server's questions in their terminal.

A form goes in three steps. First the whole question: which server asks, during which
request, its message, and every field with its title, description, constraints, default
and choices (each with its description); the person chooses to fill it in, to decline
(``d``), or to cancel (Esc). Then one prompt per field (``ui.field_prompt``), its
description (a few rows of it) and choices shown again above it and what it takes under
it, prefilled with the default (the first letter typed replaces it, as the field's keys
say; an edit or a move first edits it), checked on every keystroke with the form's own
rules; Shift-Tab (``!b`` on a dumb terminal) goes back to the field before, its answer
kept to change, and what was typed in the field left is there again when it comes back.
Then a review of every answer, where any can be changed by its number before sending
(Enter), or the whole question declined (``d``) or cancelled (Esc). Sending says how the
answer travels (``sent_line``): "Sent." where it is the response to the server's request
(2025-11-25); at 2026-07-28, that it goes with the retried request (or the task's
update), which has not happened yet when the person is told. A decline or a cancel is an
answer too, and says the same of how it travels (``refused_line``).

A URL goes through consent: the full URL with its host and registrable domain
highlighted and every warning from ``client.url_consent``; a URL it refuses never
reaches ``elicit`` (the client declines it) but is shown, with why, by ``refused``, where
it can only be declined or cancelled. Only after the person types ``o`` is the URL handed to the system
browser (never fetched here); then they say when they are done (Enter: the answer is
``accept``), open it again (``r``), or cancel (Esc). When the server says the step is
finished first (2025-11-25: ``notifications/elicitation/complete``), the prompt goes away
and the answer is ``accept``. On 2026-07-28, while the server waits for a page the person
said done before finishing it, one line says so (``url_waiting``, ``ui.page_wait``).

Rules: Esc (alone: Alt keys edit the line) and Ctrl-C cancel at any prompt, as does
Ctrl-D on an empty line (end of input); Ctrl-C between two prompts of one question (a field
answered, the next not yet asked; the browser starting) cancels it too, at the next prompt
(``Prompter.question``: the key is held from the question's first prompt to its last); declining is always an explicit choice, there at
every step: ``d`` at the question and the review, Ctrl-N at a field's prompt (where "d"
is an answer), so no field must first be answered to decline.
On a dumb terminal (``TERM=dumb``) the prompts are plain lines and the keys are typed
words (``prompts.Prompter.plain``); the hints name whichever the prompter takes. A question
cancelled by SIGINT says "Interrupted" (the person stopped the program), by SIGTERM
"Terminated (SIGTERM)", by SIGHUP "Hung up (SIGHUP)", by the server stopping (its process ended, its connection lost)
"The server stopped"; one cancelled otherwise says the question was withdrawn.
Everything shows on stderr (stdout stays for results). rich and prompt_toolkit come from
the ``cli`` extra; without it, building a ``TerminalAnswerer`` raises a ``UsageError``
saying what to install. The browser opener is injectable (tests, other front ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import sys
import threading
import webbrowser
from collections.abc import Callable, Coroutine, Iterable, Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any, Literal

from mcp_elicit.client.answerers import ElicitAnswer, cancel_sent, known_modes, server_stopped
from mcp_elicit.client.url_consent import UrlVerdict, judge_url
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import ConfigError, FormValidationError, UsageError
from mcp_elicit.forms import FieldSpec, FormSchema
from mcp_elicit.transports.local import Opener, open_in_browser
from mcp_elicit.ui.form_text import carried_by, position
from mcp_elicit.ui.page_wait import waiting_line

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output
    from rich.console import Console

__all__ = [
    "Opener",
    "TerminalAnswerer",
    "interrupts_noted",
    "refused_line",
    "require_cli_extra",
    "sent_line",
    "sent_when_stopped",
    "system_browser",
]


#: What each prompt says; ``{cancel}`` is the prompter's key for it (Esc, or a word typed
#: on a dumb terminal).
_DECIDE = ("Enter: fill in the form", "d: decline", "{cancel}: cancel > ")
_CONSENT = ("o: open it in your browser", "d: decline", "{cancel}: cancel > ")
_REFUSED = ("Enter or d: decline", "{cancel}: cancel > ")
_AFTER_OPEN = ("Enter: I am done on the page", "r: open it again", "{cancel}: cancel > ")


def require_cli_extra() -> None:
    """Raise ``UsageError`` naming what to install when rich or prompt_toolkit is missing."""
    missing = [name for name in ("rich", "prompt_toolkit") if importlib.util.find_spec(name) is None]
    if missing:
        raise UsageError(
            f"the terminal answerer needs {' and '.join(missing)}: pip install 'mcp-elicit[cli]'"
        )


def system_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser; False when there is none to open it with.

    On a Unix without a display (and no ``$BROWSER`` chosen), ``webbrowser`` would start a
    text browser in this very terminal, in the middle of the prompts: say no instead.
    """
    headless = (
        os.name == "posix"
        and sys.platform != "darwin"
        and not any(os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"))
    )
    if headless:
        return False
    try:
        return webbrowser.open(url, new=2)
    except webbrowser.Error:
        return False


class TerminalAnswerer:
    """Answers elicitations by asking the person at this terminal; see the module docstring."""

    def __init__(
        self,
        *,
        console: Console | None = None,
        input: Input | None = None,
        output: Output | None = None,
        open_url: Opener = system_browser,
        modes: Iterable[str] = ("form", "url"),
    ) -> None:
        require_cli_extra()
        from mcp_elicit.ui.prompts import Prompter
        from mcp_elicit.ui.render import stderr_console

        self.prompter = Prompter(input=input, output=output)
        self.console = console or stderr_console(plain=self.prompter.plain)
        self.open_url = open_url
        try:
            self._modes = known_modes(modes)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None

    @property
    def modes(self) -> frozenset[str]:
        return self._modes

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return await self._asking(
            request, self._url(request) if request.mode == "url" else self._form(request)
        )

    async def refused(self, request: ElicitationRequest, verdict: UrlVerdict) -> ElicitAnswer:
        """A URL the client refuses: shown with why, and only declined (or cancelled)."""
        return await self._asking(request, self._refused(request, verdict))

    async def _asking(
        self, request: ElicitationRequest, asking: Coroutine[Any, Any, ElicitAnswer]
    ) -> ElicitAnswer:
        """What ``asking`` (the person asked ``request``) comes to, a key that declines or
        cancels at any prompt included."""
        from mcp_elicit.ui.prompts import Cancelled, Declined

        with interrupts_noted() as interrupts:
            try:
                with self.prompter.question():  # Ctrl-C between its prompts cancels it too
                    return await asking
            except Cancelled:
                self.console.print(refused_line(request, "cancel"), style="yellow")
                return ElicitAnswer.cancel()
            except Declined:
                return self._declined(request)
            except asyncio.CancelledError as exc:
                said = stopped_by(interrupts, exc)
                if said == "the question was withdrawn":  # the server took it back, or the call ended
                    said = "this question was withdrawn"
                self.console.print(f"{said[0].upper()}{said[1:]}; {sent_when_stopped(exc)}.", style="yellow")
                raise

    async def url_done(self, request: ElicitationRequest) -> None:
        """At once: the person said they were done before ``accept`` went out."""
        return None

    async def url_waiting(self, request: ElicitationRequest) -> None:
        """One line: the request waits for the page of ``request`` to be finished; above
        the prompt of another request's question, if one is being asked."""
        async with self.prompter.above():
            self.console.print(waiting_line(request), soft_wrap=True)

    # ---- forms ------------------------------------------------------------------------

    async def _form(self, request: ElicitationRequest) -> ElicitAnswer:
        from mcp_elicit.ui.prompts import Back
        from mcp_elicit.ui.render import problems_text, question_panel, review_table

        schema = request.schema
        if schema is None:  # the client never asks for a form it cannot read
            return ElicitAnswer.cancel()
        self.console.print(question_panel(request))
        if await self._choose(_DECIDE, "", "d") == "d":
            return self._declined(request)
        values: dict[str, Any] = {}
        drafts: dict[str, str] = {}  # what was in a field's line when the person went back
        at = 0
        while at < len(schema.fields):
            spec = schema.fields[at]
            try:
                values[spec.name] = await self._field(
                    schema, spec, values.get(spec.name), back=at > 0, draft=drafts.pop(spec.name, None)
                )
            except Back as went:  # to the field before, its answer kept
                if went.text is not None:
                    drafts[spec.name] = went.text
                at -= 1
            else:
                at += 1
        count = len(schema.fields)
        review = (
            "Enter: send",
            *([f"{'1' if count == 1 else f'1-{count}'}: change an answer"] if count else []),
            "d: decline",
            f"{self.prompter.cancel_key}: cancel > ",
        )
        while True:
            self.console.print(review_table(schema, values))
            problems = _problems(schema, values)
            if problems:
                self.console.print(problems_text(problems.problems, schema))
            choice = (
                await self.prompter.ask(review, check=_review_check(count, ready=problems is None))
            ).strip()
            if choice.lower() in _WORDS["d"]:
                return self._declined(request)
            chosen = position(choice, count)
            if chosen is not None:
                spec = schema.fields[chosen - 1]
                values[spec.name] = await self._field(schema, spec, values.get(spec.name))
                continue
            content = {name: value for name, value in values.items() if value is not None}
            self.console.print(sent_line(request), style="green")
            return ElicitAnswer.accept(content)

    async def _field(
        self,
        schema: FormSchema,
        spec: FieldSpec,
        current: object,
        *,
        back: bool = False,
        draft: str | None = None,
    ) -> object:
        from mcp_elicit.ui.field_prompt import ask_field

        return await ask_field(self.prompter, self.console, schema, spec, current, back=back, draft=draft)

    async def _choose(self, message: tuple[str, ...], *choices: str) -> str:
        """One of ``choices`` (keys of ``_WORDS``), typed as a letter or a word."""

        def check(text: str) -> str | None:
            if _canonical(text, choices) is not None:
                return None
            return "type " + " or ".join(repr(c) if c else "Enter" for c in choices)

        cancel = self.prompter.cancel_key
        text = await self.prompter.ask([part.format(cancel=cancel) for part in message], check=check)
        return _canonical(text, choices) or ""

    def _declined(self, request: ElicitationRequest) -> ElicitAnswer:
        self.console.print(refused_line(request, "decline"), style="yellow")
        return ElicitAnswer.decline()

    # ---- URLs -------------------------------------------------------------------------

    async def _url(self, request: ElicitationRequest) -> ElicitAnswer:
        from mcp_elicit.ui.render import url_panel

        url = request.url or ""
        self.console.print(url_panel(request, judge_url(url, server=request.server.where)))
        if await self._choose(_CONSENT, "o", "d") == "d":
            return self._declined(request)
        while True:
            opened = await open_in_browser(self.open_url, url)
            if opened:
                self.console.print("Opened in your browser.", style="green")
            else:
                self.console.print(
                    "Could not start a browser here; open the address above yourself.", style="yellow"
                )
            choice = await self._choose_unless_finished(_AFTER_OPEN, request, "", "r")
            if choice is None:
                self.console.print("The server says the step on the page is finished.", style="green")
                return ElicitAnswer.accept()
            if choice != "r":
                return ElicitAnswer.accept()

    async def _refused(self, request: ElicitationRequest, verdict: UrlVerdict) -> ElicitAnswer:
        from mcp_elicit.ui.render import url_panel

        self.console.print(url_panel(request, verdict))
        await self._choose(_REFUSED, "", "d")
        return self._declined(request)

    async def _choose_unless_finished(
        self, message: tuple[str, ...], request: ElicitationRequest, *choices: str
    ) -> str | None:
        """``_choose``, or None as soon as the server says the URL step is finished (the
        prompt is then taken down)."""
        if request.finished is None:
            return await self._choose(message, *choices)
        prompt = asyncio.ensure_future(self._choose(message, *choices))
        finished = asyncio.ensure_future(request.finished())
        try:
            await asyncio.wait({prompt, finished}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (prompt, finished):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        if not prompt.cancelled():
            return prompt.result()  # the person answered first (or pressed Esc: Cancelled)
        return None


def sent_line(request: ElicitationRequest) -> str:
    """What the person is told once they send a form's answer, true of how it travels
    (``form_text.carried_by``): at 2025-11-25 it is the response to the server's request,
    written at once; at 2026-07-28 it waits for the round's other questions and goes with
    the retried request (or a task's update), which may still fail."""
    carried = carried_by(request)
    return f"Answered. It goes to the server with {carried}." if carried else "Sent."


def refused_line(request: ElicitationRequest, action: Literal["decline", "cancel"]) -> str:
    """What the person is told once they decline or cancel ``request``: that refusal is an
    answer too, and travels as a form's does (``sent_line``): the response to the server's
    request at once at 2025-11-25 (the server is told), with the retried request (or the
    task's update) at 2026-07-28, still to come."""
    done = "Declined." if action == "decline" else "Cancelled."
    carried = carried_by(request)
    return f"{done} That goes to the server with {carried}." if carried else f"{done} The server was told."


#: What may be typed for each choice ("" is Enter alone).
_WORDS = {"": ("",), "d": ("d", "decline"), "o": ("o", "open"), "r": ("r", "retry")}


def _canonical(text: str, choices: tuple[str, ...]) -> str | None:
    word = text.strip().lower()
    for choice in choices:
        if word in _WORDS[choice]:
            return choice
    return None


def _review_check(count: int, *, ready: bool) -> Callable[[str], str | None]:
    def check(text: str) -> str | None:
        word = text.strip().lower()
        if word in _WORDS["d"]:
            return None
        if position(word, count) is not None:
            return None
        if not word:
            return None if ready else "fix the answers above first (type a number), or decline"
        if count == 0:
            return "type d to decline, or Enter to send"
        change = "1 to change the answer" if count == 1 else f"a number from 1 to {count} to change an answer"
        return f"type {change}, d to decline, or Enter to send"

    return check


def _problems(schema: FormSchema, values: dict[str, Any]) -> FormValidationError | None:
    content = {name: value for name, value in values.items() if value is not None}
    try:
        schema.validate(schema.apply_defaults(content))
    except FormValidationError as exc:
        return exc
    return None


#: The signals ``interrupts_noted`` notes (SIGHUP is not on Windows).
_NOTED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
#: The signal lists being noted into (one per question being asked), and the handlers the
#: signals noted had before the first of them.
_noting: list[list[int]] = []
_before: dict[int, Callable[[int, FrameType | None], Any]] = {}


def _note(signum: int, frame: FrameType | None) -> None:
    for seen in _noting:
        seen.append(signum)
    _before[signum](signum, frame)


@contextlib.contextmanager
def interrupts_noted() -> Iterator[list[int]]:
    """A list that gets an item (the signal's number) for each SIGINT, SIGTERM and SIGHUP
    while the block runs (the handler the signal had then runs as before): a question
    cancelled by one was stopped by the person, or the program was terminated, not
    withdrawn by the server (``stopped_by``). Only the main thread sees signals; elsewhere
    the list stays empty, and so it does for a signal without a Python handler (ignored,
    or the default action: SIGTERM then ends the program)."""
    seen: list[int] = []
    if threading.current_thread() is not threading.main_thread():  # not noted, even nested
        yield seen  # in the main thread's: its SIGINT stops the main thread's question
        return
    if not _noting:
        for signum in _NOTED:
            previous = signal.getsignal(signum)
            if callable(previous):
                _before[signum] = previous
                signal.signal(signum, _note)
    _noting.append(seen)
    try:
        yield seen
    finally:
        _noting.remove(seen)
        if not _noting:
            for noted, handler in _before.items():
                signal.signal(noted, handler)
            _before.clear()


def stopped_by(signals: list[int], cancelled: BaseException) -> str:
    """What stopped a question (``cancelled`` while ``interrupts_noted`` gave ``signals``),
    in a few words for the person: a SIGTERM or SIGHUP (the command's CLI makes either a
    SIGINT too), a Ctrl-C, the server stopping (``server_stopped``), else the server (or the program)
    taking the question back."""
    if signal.SIGTERM in signals:
        return "terminated (SIGTERM)"
    if hasattr(signal, "SIGHUP") and signal.SIGHUP in signals:
        return "hung up (SIGHUP)"
    if signals:
        return "interrupted"
    return "the server stopped" if server_stopped(cancelled) else "the question was withdrawn"


def sent_when_stopped(cancelled: BaseException) -> str:
    """What was sent of a question stopped so (``cancelled``): nothing, unless the client
    answers it ``cancel`` as it withdraws it (``cancel_sent``: 2025-11-25, a question that
    came with no request of its own, over stdio say, during the request abandoned)."""
    return "the server is told it was cancelled" if cancel_sent(cancelled) else "nothing was sent"
