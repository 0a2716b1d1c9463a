"""One line of input at a time (prompt_toolkit): validated as it is typed; Esc, Ctrl-C and
Ctrl-D cancel; Ctrl-N declines and Shift-Tab goes back where the caller allows it; the
first letter typed (or pasted) replaces a default still as given, an edit or a move first
edits it.

Rules: ``ask`` returns the text once it passes ``check`` (the check runs on every
keystroke and its message shows under the line, wrapped at word boundaries to the
terminal's width, every row of it: Enter does nothing while it fails). A ``toolbar`` (what
the field takes, which keys do what) shows at the bottom as rows of its parts (a sequence
of texts, shown `` · ``-separated), wrapped to the terminal's width, so no key it names is
cut off at the edge; so is the prompt itself (``("Enter: fill in the form", "d: decline",
"Esc: cancel > ")``). A text given whole (a ``str``) is one part, never split: a server's
" · " in a field's label is its text, not the client's separator. Widths are the columns
the text takes (``ui.columns``: a Chinese or Japanese letter or an emoji takes two, a
combining mark none; an emoji sequence as prompt_toolkit draws it, each emoji in it two),
so a row never runs past the terminal's edge, where prompt_toolkit would cut it off.
The Ctrl-C key cancels the question, but a SIGINT signal (``kill -INT``, a stop button) is
left to the program, as it is while no prompt reads: under ``mcp-elicit call`` it stops the
call (exit 130). prompt_toolkit's own handling raised ``KeyboardInterrupt`` in whichever
task was prompting, where nothing waits for it.
Esc alone or Ctrl-C raise ``Cancelled`` wherever the person is; so does Ctrl-D on an empty
line (end of input: the terminal is closed or the person is leaving), never a bare
``EOFError``. Ctrl-N raises ``Declined`` at a prompt asked with ``declinable=True`` (a
form's field, where typing "d" is an answer), so a person can decline wherever they are,
not only once every field holds a valid answer. Shift-Tab raises ``Back`` (with the text in
the line) at a prompt asked with ``back=True`` (a form's field after its first: back to the
one before it, as Shift-Tab moves back a field in a form). Up brings back only what was typed at
earlier prompts asked with the same ``recall`` (a field's earlier answers, when its form is
asked again); a prompt without one has nothing to bring back: with one history for every
prompt, Up at a field gave the answer typed at the field before it. An Esc that starts an
Alt key (Alt+b, Alt+f, Alt+d) edits the line as prompt_toolkit's own bindings say.
Every prompt of one question is asked inside ``question``, so that Ctrl-C between two of
them cancels it too (``ui.interrupt_key``); one typed after its last is the program's SIGINT.
Output goes to stderr unless an ``Output`` is given, so stdout stays for results, in the
output's encoding (``server_text.for_encoding``: on an
ASCII-only terminal the "·" between the keys a prompt names is "|", never the encoder's
"?"), wrapped as so written ("é" shown as "\\xe9" takes four columns). Imported only by
``ui.terminal`` once the ``cli`` extra is known to be installed.

A toolbar needs the terminal to say where its cursor is (prompt_toolkit hides it until a
cursor-position report came): unless this terminal is known to answer one, the toolbar
is printed once above the prompt instead, so the keys it names are always shown.

On a dumb terminal (prompt_toolkit's ``is_dumb_terminal``: ``TERM=dumb`` in an Emacs
shell, a CI log, ``script``), or one terminfo knows without cursor addressing, the
Prompter is ``plain``: it asks in plain lines (``ui.plain_lines``), and ``cancel_key``,
``decline_key`` and ``back_key`` name the words typed there for the caller's hints, and
``literal_hint`` how to give one of them as an answer.

Output written while a prompt may be reading (a line about another request: one person,
several requests) goes through ``above``: a drawn prompt is taken off the screen first and
drawn again below it (prompt_toolkit's ``in_terminal``), a plain prompt's line is ended
first and written again after, so nothing lands in the line the person types. Either way
what was typed so far is shown again after the prompt and kept: a plain prompt takes it
from the terminal, which holds a line until Enter (it hands it over out of cooked mode),
so the person does not type again what they see gone; the terminal's line editing no
longer reaches that part (the answer can be changed at the form's review).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import unicodedata
from collections.abc import AsyncIterator, Callable, Iterator, Sequence

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app, in_terminal
from prompt_toolkit.application.current import set_app
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, has_validation_error, to_filter
from prompt_toolkit.history import DummyHistory, History, InMemoryHistory
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import ConditionalContainer, Window
from prompt_toolkit.output import Output, create_output
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.renderer import CPR_Support
from prompt_toolkit.utils import is_dumb_terminal
from prompt_toolkit.validation import ValidationError, Validator

from mcp_elicit.ui.columns import cells, wrapped
from mcp_elicit.ui.interrupt_key import held, waiting
from mcp_elicit.ui.plain_lines import (
    BACK_WORDS,
    CANCEL_WORDS,
    DECLINE_WORDS,
    LITERAL_HINT,
    Back,
    Cancelled,
    Declined,
    PlainLines,
)
from mcp_elicit.ui.server_text import for_encoding

__all__ = ["Back", "Cancelled", "Check", "Declined", "Parts", "Prompter"]

#: The problem with the text typed so far, or None when it may be sent.
Check = Callable[[str], str | None]

#: What a prompt or a toolbar says: one text, or parts shown ``_PARTS``-separated.
Parts = str | Sequence[str]


class _CheckValidator(Validator):
    def __init__(self, check: Check, shown: Callable[[str], str]) -> None:
        self._check = check
        self._shown = shown

    def validate(self, document: Document) -> None:
        problem = self._check(document.text)
        if problem is not None:
            problem = self._shown(problem)
            lines = wrapped(problem, _width())
            raise ValidationError(message="\n".join(lines), cursor_position=len(document.text))


#: What separates the parts of a toolbar; a toolbar wraps between them.
_PARTS = " · "


def _parts(text: Parts) -> list[str]:
    return [text] if isinstance(text, str) else list(text)


def _joined(text: Parts) -> str:
    return _PARTS.join(_parts(text))


def _rows(text: Parts, width: int, shown: Callable[[str], str]) -> str:
    """``text``'s parts as the terminal shows them (``shown``) in rows of at most ``width``
    columns, broken between parts (inside a part only when the part alone is too wide).
    Measured as shown: on an ASCII-only terminal "é" takes four columns ("\\xe9")."""
    rows: list[str] = []
    between = shown(_PARTS)
    for part in map(shown, _parts(text)):
        if rows and cells(rows[-1]) + cells(between) + cells(part) <= width:
            rows[-1] += between + part
        else:
            rows.extend(wrapped(part, width))
    return "\n".join(rows)


def _width() -> int:
    """The terminal's width, as the prompt being drawn has it (never under 20)."""
    return max(get_app().output.get_size().columns, 20)


def _problems_shown_whole(session: PromptSession[str]) -> None:
    """Make the row under the prompt that says why the text is refused (prompt_toolkit's
    validation toolbar) as tall as its message: it is one row, so on a narrow terminal a
    message was cut at the edge ("Number of guests at the party tonight pl") and the reason
    never showed. A terminal made narrower since the message was wrapped wraps it again."""
    for container in session.layout.walk():
        if isinstance(container, ConditionalContainer) and container.filter is has_validation_error:
            window = container.content
            if isinstance(window, Window):
                window.height = None
                window.wrap_lines = to_filter(True)
                window.dont_extend_height = to_filter(True)


@Condition
def _esc_alone() -> bool:
    """The Esc being handled came alone: nothing typed after it in the same burst.

    A terminal sends Alt+b as Esc then b in one write (prompt_toolkit's input parser waits
    half a second for the rest of a sequence after an Esc), so an Esc with keys queued
    behind it is the start of an Alt key and goes to prompt_toolkit's own bindings (Alt+b,
    Alt+f: a word back, forward; Alt+d: delete a word). The key buffer holds more than the
    Esc when prompt_toolkit retries an unbound Alt key as Esc, then the key: not alone.
    """
    processor = get_app().key_processor
    return len(processor.key_buffer) == 1 and not processor.input_queue


def _bindings(
    declinable: Callable[[], bool], fresh: Callable[[], bool], back: Callable[[], bool]
) -> KeyBindings:
    bindings = KeyBindings()

    # A default not yet edited nor moved in goes at the first letter typed (or pasted), as
    # a text box's selected default does: typing to it appended ("cheese1,2").
    @bindings.add(Keys.Any, filter=Condition(fresh))
    @bindings.add(Keys.BracketedPaste, filter=Condition(fresh))
    def _replace(event: KeyPressEvent) -> None:
        event.current_buffer.text = ""
        event.current_buffer.insert_text(event.data.replace("\r\n", "\n").replace("\r", "\n"))

    @bindings.add("escape", eager=True, filter=_esc_alone)
    @bindings.add("c-c")
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit(exception=Cancelled())

    @bindings.add("c-n", filter=Condition(declinable))
    def _decline(event: KeyPressEvent) -> None:
        event.app.exit(exception=Declined())

    @bindings.add("s-tab", filter=Condition(back))
    def _back(event: KeyPressEvent) -> None:
        event.app.exit(exception=Back(event.current_buffer.text))

    return bindings


def _cannot_draw(output: Output | None) -> bool:
    """The terminal is dumb, as prompt_toolkit judges one (``is_dumb_terminal``: ``TERM``
    is ``dumb`` or ``unknown``), or, for this process's own terminal, terminfo describes
    its type without cursor addressing (``cup``). An output given (a test's, another front
    end's) is drawn on unless it is a VT100 one of a dumb type; a type terminfo does not
    know is drawn on, as prompt_toolkit does."""
    if output is not None:
        return isinstance(output, Vt100_Output) and output.term is not None and is_dumb_terminal(output.term)
    if is_dumb_terminal():
        return True
    try:
        import curses
    except ImportError:  # no terminfo here (Windows)
        return False
    try:
        curses.setupterm(fd=sys.stderr.fileno())
        return curses.tigetstr("cup") is None
    except (curses.error, OSError, ValueError):  # an unknown type, no stderr to ask about
        return False


class Prompter:
    """Asks for one line at a time on a terminal (or on the given input and output)."""

    def __init__(self, *, input: Input | None = None, output: Output | None = None) -> None:
        self._input = input
        self._output = output
        self._session: PromptSession[str] | None = None
        self._declinable = False
        self._back = False
        self._fresh = False  # the default is as given: the first key typed replaces it
        #: Asks in plain lines: the terminal cannot be drawn on (see ``_cannot_draw``).
        self.plain = _cannot_draw(output)
        self.cancel_key = CANCEL_WORDS[0] if self.plain else "Esc"
        self.decline_key = DECLINE_WORDS[0] if self.plain else "Ctrl-N"
        self.back_key = BACK_WORDS[0] if self.plain else "Shift-Tab"
        #: How to answer one of those words itself, for a field's hints (None: no words).
        self.literal_hint = LITERAL_HINT if self.plain else None
        self._lines: PlainLines | None = None  # made on first use, as the session is
        self._recalled: dict[str, InMemoryHistory] = {}  # what Up brings back, by ``recall``

    @property
    def output(self) -> Output:
        if self._output is None:
            self._output = create_output(stdout=sys.stderr)
        return self._output

    @property
    def input(self) -> Input:
        if self._input is None:
            self._input = create_input()
        return self._input

    @property
    def lines(self) -> PlainLines:
        """What asks when ``plain``; made on first use, as the session is."""
        if self._lines is None:
            self._lines = PlainLines(self.input, self.output, self._shown)
        return self._lines

    @property
    def session(self) -> PromptSession[str]:
        """Made on first use, so that building a ``Prompter`` needs no terminal."""
        if self._session is None:
            self._session = PromptSession(
                input=self._input,
                output=self.output,
                key_bindings=_bindings(lambda: self._declinable, lambda: self._fresh, lambda: self._back),
            )
            self._session.default_buffer.on_text_changed += self._touched
            self._session.default_buffer.on_cursor_position_changed += self._touched
            _problems_shown_whole(self._session)
        return self._session

    async def ask(
        self,
        message: Parts,
        *,
        default: str = "",
        check: Check | None = None,
        toolbar: Parts | None = None,
        declinable: bool = False,
        back: bool = False,
        draft: bool = False,
        recall: str | None = None,
    ) -> str:
        """The text typed, once ``check`` accepts it; ``Cancelled`` on Esc, Ctrl-C or end of
        input; ``Declined`` on Ctrl-N when ``declinable``; ``Back`` on Shift-Tab when
        ``back``. The first key typed replaces ``default`` unless it is a ``draft`` (what
        the person typed before: keys edit it). Up brings back the texts earlier prompts
        with the same ``recall`` returned (none without it)."""
        if self.plain:
            said, bar = _joined(message), _joined(toolbar) if toolbar is not None else None
            return await self.lines.ask(said, default, check, bar, declinable=declinable, back=back)
        shown = self._drawn
        if toolbar is not None and self.session.app.renderer.cpr_support is not CPR_Support.SUPPORTED:
            self._say(_rows(toolbar, max(self.output.get_size().columns, 20), shown))  # see the docstring
        self._declinable, self._back = declinable, back
        last = _parts(message)[-1] if _parts(message) else ""
        after = last[len(last.rstrip()) :]  # the space the cursor starts after
        # prompt_toolkit keeps a prompt's settings for the next one where that one passes
        # None: a review asked without a toolbar showed the keys of the field before it
        session = self.session
        session.bottom_toolbar = None
        session.validator = None
        history: History = (
            DummyHistory() if recall is None else self._recalled.setdefault(recall, InMemoryHistory())
        )
        session.history = session.default_buffer.history = history  # read again as the prompt starts
        try:
            return await session.prompt_async(
                lambda: _rows(message, _width(), shown).rstrip() + after,
                default=default,
                validator=_CheckValidator(check, shown) if check is not None else None,
                validate_while_typing=True,
                handle_sigint=False,
                pre_run=self._untouched if default and not draft else None,
                bottom_toolbar=(lambda: _rows(toolbar, _width(), shown)) if toolbar is not None else None,
            )
        except EOFError:
            raise Cancelled() from None
        finally:
            self._declinable = self._back = self._fresh = False

    @contextlib.contextmanager
    def question(self) -> Iterator[None]:
        """Around every prompt of one question: the terminal's Ctrl-C is held as a key from
        before its first prompt to after its last (``ui.interrupt_key``), so one typed
        between two prompts cancels the question at the next, as at a prompt; one typed
        after the last, once the question has its answer, is given to the program as the
        SIGINT it would have been (what waited with it dropped, as the terminal drops it),
        once the terminal is given back. A question stopped by anything but a prompt's
        ending (a signal, the server taking it back) drops a Ctrl-C typed for it (with what
        waited with it), which would otherwise cancel the next question at once, or reach
        the shell as a character; anything else typed ahead is kept."""
        source = self.input if self.plain else self.session.app.input
        # the stack's callbacks run once the terminal is given back (``held`` left)
        with contextlib.ExitStack() as after, held(source) as key:
            try:
                yield
            except Exception:  # Cancelled, Declined, and what else a prompt ends with
                if key is not None and self._typed_after(source, key):
                    after.callback(signal.raise_signal, signal.SIGINT)
                raise
            except BaseException:  # stopped: what the key was typed for is gone with it
                if key is not None:
                    self._typed_after(source, key)
                raise
            if key is not None and self._typed_after(source, key):
                after.callback(signal.raise_signal, signal.SIGINT)

    def _typed_after(self, source: Input, key: str) -> bool:
        """Whether the interrupt key (``key``) was typed since the last prompt read; what
        else waits is kept for the next prompt (a drawn one's as prompt_toolkit keeps keys
        read ahead)."""
        if self.plain:
            return self.lines.interrupted(key)
        keys = get_typeahead(source)
        while waiting(source) and (more := source.read_keys()):
            keys.extend(more)
        if any(pressed.key == Keys.ControlC or pressed.data == key for pressed in keys):
            return True
        store_typeahead(source, keys)
        return False

    @contextlib.asynccontextmanager
    async def above(self) -> AsyncIterator[None]:
        """Around output written while a prompt may be reading: it shows above the prompt,
        which is drawn (or written) again below it."""
        if self.plain:
            with self.lines.above():
                yield
            return
        app = self._session.app if self._session is not None else None
        if app is None or not app.is_running:
            yield
            return
        with set_app(app):
            async with in_terminal():
                yield

    def _untouched(self) -> None:
        self._fresh = True  # run once the default is in the line

    def _touched(self, _buffer: object) -> None:
        self._fresh = False

    def _shown(self, text: str) -> str:
        """``text`` as this terminal's encoding can show it (``server_text.for_encoding``)."""
        return for_encoding(text, self.output.encoding())

    def _drawn(self, text: str) -> str:
        """``text`` as ``_shown``, each letter and the marks on it written as one character
        where Unicode has one (NFC: "e" and U+0301 as "é"): prompt_toolkit draws a
        combining mark that ends a row twice, or drops it at the terminal's edge."""
        return unicodedata.normalize("NFC", self._shown(text))

    def _say(self, text: str) -> None:
        self.output.write(self._shown(text) + "\n")
        self.output.flush()
