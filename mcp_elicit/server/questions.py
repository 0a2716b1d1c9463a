"""A question a handler asks, the answer it gets, and the ``Asker`` that carries it to
the client in the revision of the request.

Rules:

* A ``Question`` is not asked until it is awaited (alone, or with others through
  ``ctx.gather``); it is a coroutine, so it can also run as a task. Awaited once: a second
  ``await`` is a ``RuntimeError``, and so is awaiting it off the handler's event loop or
  after its request ended (``Context._live``).
* A question forgotten says so, as a coroutine never awaited does: reading an answer's
  attribute (``action``, ``data``...) off the question is an ``AttributeError`` saying to
  await it, and one otherwise dropped without being awaited, gathered, closed or made a URL step
  (its ``ask`` read) warns (``RuntimeWarning``) that it was never asked; not when the
  making or asking of another question ended the handler (``ctx.gather(q1, refused)``, a
  cancellation, an unanswered 2026-07-28 question ending the round before the next one
  made is awaited): that end says it, or the next round asks it. One the client lacks the
  capability for warns too (dropping it is the handler's slip whatever the client), naming
  it by the call and the key the handler gave, never its method, and saying why it could
  not have been asked.
* An answer at hand (a replayed 2026-07-28 round) comes back with no coroutine layer under
  the handler's; only an unanswered question waits on the asker.
* An elicitation's answer is an ``Answer``: accept (with the form's typed ``data`` and its
  raw ``content``), decline or cancel, each its own subclass so that checking ``action``
  narrows ``data`` for a type checker. Declining and cancelling are answers, not
  exceptions. Other questions (sampling, roots, URL mode) are converted by the function
  the ``Context`` gave with them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Coroutine, Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from mcp_elicit.core.mrtr import Ask
from mcp_elicit.errors import MissingClientCapability

if TYPE_CHECKING:
    from mcp_elicit.server.context import Context

__all__ = ["Accepted", "Answer", "Asker", "Cancelled", "Declined", "FormAnswer", "Question", "answer_of"]

T = TypeVar("T")
#: A question's answer: covariant, so that questions of several kinds gathered past six
#: (``ctx.gather``) share their common type rather than fail to type check.
T_co = TypeVar("T_co", covariant=True)
Action = Literal["accept", "decline", "cancel"]


class Asker(Protocol):
    """How questions reach the client in the revision of the request."""

    async def ask(self, asks: list[Ask]) -> list[Any]: ...

    def answered(self, asks: list[Ask]) -> list[Any] | None:
        """The answers to ``asks`` when they are at hand without waiting; None when the
        caller must await ``ask`` for them."""
        ...

    async def require_url(self, ask: Ask) -> Any: ...

    @property
    def memo(self) -> dict[str, Any]: ...

    async def pause(self) -> None: ...

    @property
    def ended(self) -> bool:
        """Whether the request (or task) is over: nothing can be asked or sent for it."""
        ...


@dataclass(frozen=True, slots=True, init=False, eq=False)
class Answer(Generic[T]):
    """The user's answer to an elicitation.

    ``data`` is the typed content of an accepted form (an instance of the type asked for,
    or a dict for a raw schema); None for decline, cancel, and URL mode. A form's answer
    is one of the subclasses :class:`Accepted`, :class:`Declined` and :class:`Cancelled`
    (``ctx.elicit`` returns a :data:`FormAnswer`), so that a type checker takes ``data``
    as the type asked for once ``action`` (or ``accepted``) has ruled the others out.
    Answers are equal when their action, data and content are, whichever class made them.
    """

    action: Action
    data: T | None = None
    content: Mapping[str, Any] | None = None

    def __init__(
        self, action: Action, data: T | None = None, content: Mapping[str, Any] | None = None
    ) -> None:
        # Written out: one is made per question answered, and the generated frozen
        # __init__ (object.__setattr__ per field) costs twice this. Set through the slots.
        _set_action(self, action)
        _set_data(self, data)
        _set_content(self, content)

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Answer):
            return NotImplemented
        return (self.action, self.data, self.content) == (other.action, other.data, other.content)

    def __hash__(self) -> int:
        return hash((self.action, self.data, self.content))


class Accepted(Answer[T]):
    """An accepted form: ``data`` is the type asked for, ``content`` what the client sent."""

    __slots__ = ()
    action: Literal["accept"]
    data: T
    content: Mapping[str, Any]

    @property
    def accepted(self) -> Literal[True]:
        return True


class _NotAccepted(Answer[T]):
    """A form answered without data: declined or cancelled."""

    __slots__ = ()
    data: None
    content: None

    @property
    def accepted(self) -> Literal[False]:
        return False


class Declined(_NotAccepted[T]):
    """The user said no."""

    __slots__ = ()
    action: Literal["decline"]


class Cancelled(_NotAccepted[T]):
    """The user closed the form without choosing (or gave no answer that fits, twice)."""

    __slots__ = ()
    action: Literal["cancel"]


#: What ``ctx.elicit`` returns: narrowed by ``action`` or ``accepted`` to one of the three.
FormAnswer = Accepted[T] | Declined[T] | Cancelled[T]

_BY_ACTION: dict[str, type[Answer[Any]]] = {"accept": Accepted, "decline": Declined, "cancel": Cancelled}


def answer_of(action: Action, data: Any = None, content: Mapping[str, Any] | None = None) -> Answer[Any]:
    """The form answer of ``action``: an :class:`Accepted`, :class:`Declined` or :class:`Cancelled`."""
    return _BY_ACTION[action](action, data, content)


_set_action, _set_data, _set_content = (vars(Answer)[name].__set__ for name in ("action", "data", "content"))


#: What a handler reads off an answer (a form's, a URL step's, a sampling result): read off
#: a question not awaited, it is a hint to await it rather than a bare ``AttributeError``.
_ANSWER_ATTRIBUTES = frozenset({"accepted", "action", "content", "data", "model", "role"})


class Question(Coroutine[Any, Any, T_co]):
    """A question not yet asked: ``await`` it alone, pass several to ``ctx.gather``, or
    run it as a task (it is a coroutine, started only when awaited)."""

    __slots__ = ("_ask", "_convert", "_coro", "_ctx", "_taken", "missing")

    def __init__(
        self,
        ctx: Context,
        ask: Ask,
        convert: Callable[[Any], T_co] | None,
        missing: MissingClientCapability | None = None,
    ) -> None:
        """``convert`` turns the raw answer into the handler's; None for a form's ``Answer``
        (built from ``ask.schema``: no closure per question). ``missing``: the -32021 of a
        capability the client did not declare, raised when the question is asked (alone,
        or gathered with others: then one error names what they all lack)."""
        self._ctx = ctx
        ctx._interrupted = False
        self.missing = missing
        self._ask = ask
        self._taken = False
        self._convert = convert
        self._coro: Generator[Any, None, T_co] | None = None

    @property
    def ask(self) -> Ask:
        """The question as the asker sends it; read by ``ctx.gather`` and the URL steps,
        which ask it themselves (so it is not a question dropped unasked). The -32021 of a
        capability the client lacks for it is raised here (``ctx.gather`` reads ``missing``
        of all its questions first)."""
        self._taken = True
        if self.missing is not None:
            self._ctx._interrupted = True
            raise self.missing
        return self._ask

    @property
    def made_by(self) -> str:
        """The call that made it, as a handler writes it (``ctx.elicit``): what a message
        about it tells the handler to await."""
        return f"ctx.{self._ctx._called(self._ask)}"

    def __getattr__(self, name: str) -> Any:
        if name in _ANSWER_ATTRIBUTES:
            self._taken = True  # this error says it already; no warning when it is dropped
            called = self._ctx._called(self._ask)
            raise AttributeError(
                f"ctx.{called}() returns the question, not its answer: {name!r} is an attribute of "
                f"the answer. Await the question: answer = await ctx.{called}(...)"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __del__(self) -> None:
        # runs for every question: plain slot reads (no getattr call) for one awaited
        try:
            if self._coro is not None or self._taken or self._ctx._interrupted:
                return  # awaited, asked by other means, closed, or dropped by another's end
        except AttributeError:  # never made whole (its __init__ did not run)
            return
        called, ask, what = self._ctx._called(self._ask), self._ask, self._ctx._what()
        if self.missing is None:
            said = (
                f"ctx.{called}() made question {ask.key!r} in {what}, but it was never awaited, so it "
                f"was never asked: await it (answer = await ctx.{called}(...)) or pass it to ctx.gather(...)"
            )
        else:  # keyed by its method unless the handler gave one (``unaskable``): not a name it wrote
            named = "a question" if ask.key == ask.method else f"question {ask.key!r}"
            said = (
                f"ctx.{called}() made {named} in {what} that this client cannot be asked "
                f"({self.missing.message}), and it was never awaited: await it (answer = await "
                f"ctx.{called}(...), raising MissingClientCapability, which the handler may catch to "
                "fall back) or do not make it"
            )
        warnings.warn(said, RuntimeWarning, stacklevel=1)

    def result(self, raw: Any) -> T_co:
        convert = self._convert
        if convert is not None:
            return convert(raw)
        if raw["action"] != "accept":  # a form's answer (checked by the asker)
            return answer_of(raw["action"])  # type: ignore[return-value]
        content = raw.get("content") or {}
        form = self._ask.schema
        return Accepted("accept", form.build(content, checked=True) if form is not None else content, content)  # type: ignore[return-value]

    def _asking(self) -> Generator[Any, None, T_co]:
        # A generator, not a coroutine awaiting the asker's: an answer at hand (a replayed
        # round) comes back with no coroutine layer under the handler's.
        ctx = self._ctx
        ctx._live(self._ask)  # made in time, awaited where, or when, it cannot be asked
        if self.missing is not None:
            ctx._interrupted = True
            raise self.missing
        asker = ctx._asker
        asks = [self._ask]
        try:
            raws = asker.answered(asks)
            if raws is None:
                raws = yield from asker.ask(asks).__await__()
        except BaseException:
            ctx._interrupted = True  # the questions made to await after it are not forgotten
            raise
        return self.result(raws[0])

    def _inner(self) -> Generator[Any, None, T_co]:
        if self._coro is None:
            self._coro = self._asking()
        return self._coro

    def send(self, value: Any) -> Any:
        return self._inner().send(value)

    def throw(self, *args: Any) -> Any:
        return self._inner().throw(*args)

    def close(self) -> None:
        if self._coro is not None:
            self._coro.close()
        else:  # closed unstarted, as a coroutine is: dropped on purpose, no warning
            self._taken = True

    def __await__(self) -> Generator[Any, None, T_co]:
        if self._coro is not None:
            raise RuntimeError("cannot reuse already awaited question")
        self._coro = coro = self._asking()
        return coro
