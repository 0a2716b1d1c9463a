"""Answerers: who answers a server's elicitations on the client's behalf.

An ``Answerer`` declares the modes it supports (``form``, ``url``: exactly what the
client's capabilities will say) and answers an ``ElicitationRequest`` (the server's
identity, the request key, the originating request, the message, a parsed ``FormSchema``
for forms) with an ``ElicitAnswer`` or an ``ElicitResult``-shaped mapping. The client
fills defaults and validates the answer before it leaves; an answer that does not fit is
given back with ``request.problems`` set, so an interactive answerer can ask again. For a
URL-mode request, ``accept`` means the user consented to open the URL; ``url_done``
returns when the user says the out-of-band step is finished. On a 2025-11-25 session
``request.finished``, when set, returns once the server says the step is finished, so an
answerer still waiting for the person can stop asking. An answerer without ``url_done``
is taken as done at once (2026-07-28 never waits on it). A URL-mode question whose URL
the client refuses (``client.url_consent``) never reaches ``elicit``: the client answers
it ``decline`` itself and calls the answerer's optional ``refused(request, verdict)``
(the ``UrlVerdict`` says why), so it can tell the person; returning
``ElicitAnswer.cancel()`` there answers ``cancel`` instead (see ``client.inputs``). On
2026-07-28, once the server answers a state-only round after a URL step the answerer
accepted (the person has not finished the page yet, and the request waits for it, up to
``RoundLimits.url_wait``), the client calls the answerer's optional
``url_waiting(request)`` once for that step, so it can say what the call waits for (the
terminal and browser answerers say it in one line, ``ui.page_wait``); so too for a step
accepted in a task, at its first poll that asks nothing new (``core.task_watch``).

An answerer (or a sampling or roots callback) that raises an exception of its own ends the
request the question came during: ``call_tool`` (``get_prompt``...) raises that very
exception, at both revisions, and the session goes on. At 2025-11-25 the server's
``elicitation/create`` is first answered -32603 ("the client failed to answer", never the
exception's text, which may quote what the person typed: every server request is answered,
as the spec asks), then the call is abandoned (``notifications/cancelled``), or, when the
server's response to the call came first, the call raises the exception all the same; at 2026-07-28,
where one input request has no error to send, the request is not retried. An answer that
still does not fit after three tries (``FormValidationError``) ends it so too. To say no,
return ``ElicitAnswer.decline()`` or ``cancel()``: those are answers, not failures.
An answerer that closes the client (``await client.aclose()``) withdraws its own question
by doing so: ``aclose`` raises ``CancelledError`` there, as a withdrawn question's answerer
sees it (let it propagate); the close completes on its own, and the call raises
``TransportError`` ("the client was closed") once it has (``client.closing``). A question
withdrawn because the server stopped (its process ended, its connection was lost) is
cancelled with the message ``SERVER_STOPPED``: ``server_stopped(exc)`` tells it from one
the server took back, so that an answerer says which it was. One the client withdraws and
then answers ``cancel`` (2025-11-25: it came with no request of its own, during a request
abandoned) is cancelled with ``CANCEL_SENT`` (``cancel_sent(exc)``): the server is told.

An answerer that can show several questions at once (the browser answerer puts one round's
questions on one page) also has ``elicit_many(requests)``, answering them in order: see
``BatchAnswerer``. On 2026-07-28 the client gives it every elicitation of a round together
(when there are two or more); without it, or on 2025-11-25 (one server request at a time),
``elicit`` is called once per question.

``Scripted`` answers from a JSON file or a mapping (for CI and tests). Entries match by
request key, field names, server name, mode, tool/prompt/resource and message text; the
first entry that matches answers. Keys are the server's ``inputRequests`` keys, which only
2026-07-28 has; a 2025-11-25 server request's key is ``request <its id>``, so a script
meant for both revisions matches by field names (or message). A request no entry matches is cancelled and reported,
naming the server, the question and its fields. ``NoAnswerer`` supports nothing (the
client then declares no elicitation capability).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import ConfigError, RequestTimeout
from mcp_elicit.log_labels import REPORTED, peer_text

__all__ = [
    "Answerer",
    "BatchAnswerer",
    "CANCEL_SENT",
    "cancel_sent",
    "check_answerer",
    "server_stopped",
    "ElicitAnswer",
    "NoAnswerer",
    "SERVER_STOPPED",
    "RootsCallback",
    "SamplingCallback",
    "Scripted",
    "ScriptEntry",
]

log = logging.getLogger("mcp_elicit.client")

Action = Literal["accept", "decline", "cancel"]
#: ``sampling/createMessage`` params in, a ``CreateMessageResult``-shaped mapping out.
SamplingCallback = Callable[[Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
#: Returns the roots (a list of ``Root`` mappings, or a ``ListRootsResult`` mapping).
RootsCallback = Callable[[], Awaitable[Sequence[Mapping[str, Any]] | Mapping[str, Any]]]
#: What a question's answerer is cancelled with when the server stopped while it was asked.
SERVER_STOPPED: Final = "the server stopped"
#: What it is cancelled with when the client withdraws it and then answers it ``cancel``
#: (2025-11-25: a question that came with no request of its own, over stdio or the event
#: stream, during a request abandoned, which the server is told of only so).
CANCEL_SENT: Final = "withdrawn; the server is told it was cancelled"


def server_stopped(cancelled: BaseException) -> bool:
    """Whether ``cancelled`` (an answerer's ``CancelledError``) withdrew the question because
    the server stopped, rather than because the server or the caller took it back."""
    return isinstance(cancelled, asyncio.CancelledError) and cancelled.args[:1] == (SERVER_STOPPED,)


def cancel_sent(cancelled: BaseException) -> bool:
    """Whether ``cancelled`` (an answerer's ``CancelledError``) withdrew a question that the
    client answers ``cancel`` all the same (``CANCEL_SENT``): something is sent for it."""
    return isinstance(cancelled, asyncio.CancelledError) and cancelled.args[:1] == (CANCEL_SENT,)


@dataclass(frozen=True, slots=True)
class ElicitAnswer:
    """An answer to one elicitation: accept (with content for forms), decline or cancel."""

    action: Action
    content: Mapping[str, Any] | None = None

    @classmethod
    def accept(cls, content: Mapping[str, Any] | None = None, /, **fields: Any) -> ElicitAnswer:
        return cls("accept", {**(content or {}), **fields})

    @classmethod
    def decline(cls) -> ElicitAnswer:
        return cls("decline")

    @classmethod
    def cancel(cls) -> ElicitAnswer:
        return cls("cancel")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action}
        if self.action == "accept" and self.content is not None:
            out["content"] = dict(self.content)
        return out


MODES: Final = frozenset({"form", "url"})


def known_modes(modes: Iterable[str]) -> frozenset[str]:
    """``modes`` as a set, refusing anything but "form" and "url" with a ConfigError."""
    chosen = frozenset(modes)
    bad = chosen - MODES
    if bad:
        raise ConfigError(f"unknown elicitation modes {sorted(bad)}; the modes are form and url")
    return chosen


def check_answerer(answerer: object) -> None:
    """``TypeError`` unless ``answerer`` looks like an :class:`Answerer` (``modes`` and
    ``elicit``; ``url_done`` may be left out, see ``Inputs.url_done``), ``ConfigError`` for
    modes other than form and url: said when the client is made, not at the first question."""
    if isinstance(answerer, type):
        got = f"is the class {answerer.__name__}; pass an instance ({answerer.__name__}(...))"
    else:
        missing = [name for name in ("modes", "elicit") if not hasattr(answerer, name)]
        if not missing:
            modes = answerer.modes  # type: ignore[attr-defined]
            if isinstance(modes, str) or not isinstance(modes, Iterable):
                raise TypeError(f"the answerer's modes must be a set of 'form' and 'url', not {modes!r}")
            known_modes(modes)
            return
        if callable(answerer) and hasattr(answerer, "__name__"):
            got = f"got the function {answerer.__name__}"
        else:
            got = f"got {type(answerer).__name__}"
            if len(missing) < 2:  # a near miss: say what it lacks
                got += f" (it has no {missing[0]})"
    raise TypeError(
        "answerer must be an Answerer: an object with modes (a set of 'form' and 'url'), "
        f"async elicit(request) (and, for URL mode, async url_done(request)), such as Scripted(...); {got}"
    )


class Answerer(Protocol):
    """Answers elicitations. See the module docstring for the contract."""

    @property
    def modes(self) -> frozenset[str]:
        """The elicitation modes supported: a subset of {"form", "url"}."""
        ...

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer | Mapping[str, Any]: ...

    # Optional, so not declared here (a Protocol member would be required):
    # async def url_done(self, request: ElicitationRequest) -> None:
    #     """Return when the user says the URL-mode step of ``request`` is finished
    #     (without it, the step is taken as done once the person accepts it)."""
    # async def refused(self, request: ElicitationRequest, verdict: UrlVerdict) -> ElicitAnswer | None:
    #     """Tell the person the URL of ``request`` is refused, and why (``verdict``)."""
    # async def url_waiting(self, request: ElicitationRequest) -> None:
    #     """Tell the person the request waits for the page of ``request`` to be finished."""


class BatchAnswerer(Answerer, Protocol):
    """An answerer that answers several questions of one round together."""

    async def elicit_many(
        self, requests: Sequence[ElicitationRequest]
    ) -> Sequence[ElicitAnswer | Mapping[str, Any]]:
        """One answer per request, in the same order."""
        ...


class NoAnswerer:
    """Supports no elicitation at all; the client declares no elicitation capability."""

    @property
    def modes(self) -> frozenset[str]:
        return frozenset()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.cancel()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


#: What a script entry may hold: its answer, then what it matches, then how it is used.
_ENTRY_KEYS: Final = frozenset(
    {"action", "content", "key", "fields", "server", "mode", "tool", "prompt", "resource", "message"}
    | {"once", "await_completion"}
)


@dataclass(frozen=True, slots=True)
class ScriptEntry:
    """One scripted answer and what it matches (every selector given must match)."""

    action: Action = "accept"
    content: Mapping[str, Any] | None = None
    key: str | None = None
    fields: frozenset[str] | None = None
    server: str | None = None
    mode: str | None = None
    target: str | None = None
    message: re.Pattern[str] | None = None
    once: bool = False
    #: For URL mode: wait for the server's completion notice instead of saying "done" at once.
    await_completion: bool = False

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], *, where: str) -> ScriptEntry:
        unknown = set(raw) - _ENTRY_KEYS
        if unknown:
            raise ConfigError(
                f"{where}: unknown keys {', '.join(sorted(unknown))} "
                f"(an entry takes {', '.join(sorted(_ENTRY_KEYS))})"
            )
        action = raw.get("action", "accept")
        if action not in ("accept", "decline", "cancel"):
            raise ConfigError(f"{where}: action must be accept, decline or cancel, not {action!r}")
        content = raw.get("content")
        if content is not None and not isinstance(content, Mapping):
            raise ConfigError(f"{where}: content must be an object of field name to value")
        fields = raw.get("fields")
        if fields is not None and (
            not isinstance(fields, list) or not all(isinstance(f, str) for f in fields)
        ):
            raise ConfigError(f"{where}: fields must be a list of field names")
        targets = [_opt_str(raw, k, where) for k in ("tool", "prompt", "resource") if k in raw]
        if len(targets) > 1:
            raise ConfigError(f"{where}: give at most one of tool, prompt, resource")
        mode = _opt_str(raw, "mode", where)
        if mode is not None and mode not in MODES:
            raise ConfigError(f"{where}: mode must be form or url, not {mode!r}")
        if mode == "url" and content is not None:
            raise ConfigError(
                f"{where}: a URL step is answered without content (the page collects it): drop content"
            )
        await_completion = _opt_bool(raw, "await_completion", where)
        if mode == "form" and await_completion:
            raise ConfigError(
                f"{where}: await_completion is for a URL step, not a form: drop it or say mode url"
            )
        message = _opt_str(raw, "message", where)
        try:
            pattern = re.compile(message) if message is not None else None
        except re.error as exc:
            raise ConfigError(f"{where}: message is not a valid regular expression: {exc}") from None
        return cls(
            action=action,
            content=content,
            key=_opt_str(raw, "key", where),
            fields=frozenset(fields) if fields is not None else None,
            server=_opt_str(raw, "server", where),
            mode=mode,
            target=targets[0] if targets else None,
            message=pattern,
            once=_opt_bool(raw, "once", where),
            await_completion=await_completion,
        )

    def matches(self, request: ElicitationRequest) -> bool:
        if self.key is not None and self.key != request.key:
            return False
        if self.server is not None and self.server not in (request.server.name, request.server.title):
            return False
        if self.mode is not None and self.mode != request.mode:
            return False
        if self.target is not None and self.target != request.origin.target:
            return False
        if self.message is not None and not self.message.search(request.message):
            return False
        if self.fields is not None and not self.fields <= set(request.fields):
            return False
        if self.key is None and self.fields is None and self.content and self.action == "accept":
            # Matched by field names: every field the content names must be in the form.
            return request.mode == "form" and set(self.content) <= set(request.fields)
        return True

    def answer(self) -> ElicitAnswer:
        content = dict(self.content) if self.content is not None else None
        return ElicitAnswer(self.action, content if self.action == "accept" else None)


def _opt_str(raw: Mapping[str, Any], name: str, where: str) -> str | None:
    value = raw.get(name)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}: {name} must be a string")
    return value


def _opt_bool(raw: Mapping[str, Any], name: str, where: str) -> bool:
    value = raw.get(name, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: {name} must be true or false")
    return value


@dataclass
class Scripted:
    """Answers from a script; see the module docstring.

    A script is a list of entries, ``{"answers": [...]}``, or a mapping of request key to
    entry (``{"details": {"action": "accept", "content": {...}}}``). ``reports`` collects
    what could not be answered. An entry that waits for the server to say its URL step is
    complete (``await_completion``) waits ``completion_timeout`` seconds at most, then
    fails the request with ``RequestTimeout``: no person is there to say it is done, and
    an answerer's time never counts against the request's own timeout. A scripted answer
    that does not fit the form is cancelled, kept in ``reports`` and logged as a warning,
    unless ``warn_unfit`` is off: a wrapper that shows it itself (``mcp-elicit call``'s
    rounds) turns it off, so the reason is said once.
    """

    entries: list[ScriptEntry]
    modes: frozenset[str] = frozenset({"form", "url"})
    reports: list[str] = field(default_factory=list)
    used: list[tuple[str, ScriptEntry]] = field(default_factory=list)
    completion_timeout: float = 120.0
    warn_unfit: bool = True

    @classmethod
    def from_script(
        cls, script: object, *, modes: Sequence[str] = ("form", "url"), where: str = "script"
    ) -> Scripted:
        entries: list[ScriptEntry] = []
        if isinstance(script, Mapping) and "answers" in script:
            script = script["answers"]
        if isinstance(script, Mapping):
            for key, raw in script.items():
                if not isinstance(raw, Mapping):
                    raise ConfigError(f"{where}: the answer for {key!r} must be an object")
                entries.append(ScriptEntry.from_json({"key": key, **raw}, where=f"{where}[{key!r}]"))
        elif isinstance(script, list):
            for i, raw in enumerate(script):
                if not isinstance(raw, Mapping):
                    raise ConfigError(f"{where}[{i}]: each answer must be an object")
                entries.append(ScriptEntry.from_json(raw, where=f"{where}[{i}]"))
        else:
            raise ConfigError(f"{where}: a script is a list of answers or an object of key to answer")
        return cls(entries, known_modes(modes))

    @classmethod
    def from_file(cls, path: str | Path, *, modes: Sequence[str] = ("form", "url")) -> Scripted:
        try:
            script = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read the answer script {path}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"the answer script {path} is not valid JSON: {exc}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"the answer script {path} is not UTF-8 text: {exc}") from None
        return cls.from_script(script, modes=modes, where=str(path))

    def _find(self, request: ElicitationRequest) -> ScriptEntry | None:
        for entry in self.entries:
            if entry.matches(request):
                if entry.once:
                    self.entries.remove(entry)
                return entry
        return None

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        if request.problems:
            # The scripted answer did not validate; asking again would give the same one.
            problem = "; ".join(str(p) for p in request.problems)
            text = f"the scripted answer does not fit: {problem}. {request.describe()}; cancelling"
            self._report(text, warn=self.warn_unfit)
            return ElicitAnswer.cancel()
        entry = self._find(request)
        if entry is None:
            self._report(f"no scripted answer for {request.describe()}; cancelling")
            return ElicitAnswer.cancel()
        self.used.append((request.key, entry))
        return entry.answer()

    async def url_done(self, request: ElicitationRequest) -> None:
        for key, entry in reversed(self.used):
            if key == request.key and entry.await_completion:
                try:
                    async with asyncio.timeout(self.completion_timeout):
                        await _forever()
                except TimeoutError:
                    step = request.elicitation_id or request.key
                    raise RequestTimeout(
                        f"{request.server} never said the URL step {step!r} was complete "
                        f"(notifications/elicitation/complete) within {self.completion_timeout:g} s, "
                        "which the script waits for (await_completion; Scripted.completion_timeout)"
                    ) from None
        return None

    def _report(self, text: str, *, warn: bool = True) -> None:
        self.reports.append(text)
        if warn:
            log.warning("%s", peer_text(text, REPORTED))  # it quotes the server: cut, inert, no key


async def _forever() -> None:
    await asyncio.Event().wait()
