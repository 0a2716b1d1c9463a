"""Answering what a server asks a client: elicitations through the answerer, sampling and
roots through their callbacks, each answer checked before it leaves.

Rules:

* An answer is checked before it leaves (``core.client_inputs``); an elicitation in a mode
  the client did not declare, or a sampling or roots request without a callback, is the
  server's protocol violation, never a silent answer. A request for a capability the
  client did not declare at all (sampling or roots without a callback, elicitation
  without an answerer) is a method it does not offer: ``Inputs.undeclared`` names the
  capability, for both revisions' wording (2025-11-25 answers -32601 with it, as a server
  does for its own undeclared capabilities). A form the client cannot show is
  reported and answered ``cancel``. An answer that still does not fit after three tries
  raises ``FormValidationError``; one whose action is none of accept, decline and cancel
  (``{"action": "yes"}``: no person answers that, a program does) raises ``InvalidAnswer``
  at once, naming the answerer's method and the question. An accepted answer naming a field the form lacks is
  sent without it, and reported (an answerer's typo would otherwise vanish unsaid).
* A URL-mode question's URL is judged before any answerer sees it, by the rule the
  bundled answerers show a person (``client.url_consent.judge_url``). One it refuses (a
  scheme but http(s), ``javascript:``, ``file:``, ``data:``...; no scheme or no host;
  user-info before the host; a control, invisible or bidirectional character...) is
  answered ``decline`` by the client itself, as a person saying no would be, and
  reported with the URL escaped (its control characters stay inert). The answerer is
  told through its optional ``refused(request, verdict)`` hook (``Answerer``), which may
  show the person why; the hook returning ``cancel`` (the person dismissed it) answers
  ``cancel``, anything else ``decline``: a refused URL is never accepted. Plain ``http``
  to a host other than this computer is not refused (a test server is often one): it is
  reported as not encrypted, and the answerer is asked.
* The answerer is asked one question at a time (a person answers one at a time, and a
  terminal can show one prompt): questions that arrive together (a 2025-11-25 server's
  concurrent requests, on any stream) wait their turn.
* A round's input requests (2026-07-28) are checked together first: one the client did
  not declare fails the round before anyone is asked the others. Then they are answered
  in their order; every URL is judged before any question is shown, and when the answerer
  has ``elicit_many`` and the round holds two or more elicitations it can show (a refused
  URL is not one), those go to it together (one page for all), and any answer
  among them that does not fit is asked again on its own. ``elicit_many`` returning
  anything but one answer per question is the answerer's ``TypeError``, saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from mcp_elicit.client.answerers import Answerer, ElicitAnswer, RootsCallback, SamplingCallback
from mcp_elicit.client.transport import thinking
from mcp_elicit.client.url_consent import UrlVerdict, judge_url
from mcp_elicit.core.client import ThinkClock
from mcp_elicit.core.client_inputs import (
    ElicitationRequest,
    Origin,
    ServerInfo,
    check_elicit_answer,
    check_roots_answer,
    check_sampling_answer,
    check_sampling_request,
    parse_elicitation,
)
from mcp_elicit.core.input_requests import InputRequest
from mcp_elicit.errors import (
    FormValidationError,
    InvalidAnswer,
    ProtocolViolation,
    ValidationProblem,
    shown_repr,
)

__all__ = ["Inputs"]

_ATTEMPTS = 3


@dataclass
class Inputs:
    """Answers what a server asks: elicitation (answerer), sampling and roots (callbacks)."""

    answerer: Answerer | None
    sampling: SamplingCallback | None
    roots: RootsCallback | None
    clock: ThinkClock
    report: Callable[[str], None]
    #: Held while the answerer has a question: one at a time.
    _person: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @property
    def modes(self) -> frozenset[str]:
        return self.answerer.modes if self.answerer is not None else frozenset()

    def thinking(self) -> contextlib.AbstractContextManager[None]:
        return thinking(self.clock)

    async def answer(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        key: str,
        origin: Origin,
        server: ServerInfo,
        finished: Callable[[], Awaitable[object]] | None = None,
    ) -> dict[str, Any]:
        """The checked result for one input request (``elicitation/create``,
        ``sampling/createMessage`` or ``roots/list``); ``finished`` see ``ElicitationRequest``."""
        if method == "elicitation/create":
            request = parse_elicitation(params, server=server, key=key, origin=origin)
            if finished is not None and request.mode == "url":
                request = replace(request, finished=finished)
            return await self.elicit(request)
        self._check_declared(method, key=key, origin=origin, server=server)
        if method == "sampling/createMessage":
            assert self.sampling is not None
            check_sampling_request(params, key=key, server=server)
            with self.thinking():
                raw = await self.sampling(params)
            return check_sampling_answer(raw)
        assert self.roots is not None
        with self.thinking():
            roots = await self.roots()
        return check_roots_answer(roots)

    def undeclared(self, method: str) -> str | None:
        """The capability ``method`` belongs to when this client did not declare it
        (``sampling`` with no sampling callback, ``roots`` with no roots callback,
        ``elicitation`` with no mode to answer in); None when it did, or ``method`` is none
        of the three."""
        capability, declared = {
            "elicitation/create": ("elicitation", bool(self.modes)),
            "sampling/createMessage": ("sampling", self.sampling is not None),
            "roots/list": ("roots", self.roots is not None),
        }.get(method, ("", True))
        return None if declared else capability

    def _check_declared(self, method: str, *, key: str, origin: Origin, server: ServerInfo) -> None:
        """``ProtocolViolation`` unless this client can answer ``method`` (sampling and
        roots with their callbacks; elicitations are checked by ``_check_mode``)."""
        if method not in ("sampling/createMessage", "roots/list"):
            raise ProtocolViolation(f"{server} asked for {method!r}, which a server may not ask a client")
        missing = self.undeclared(method)
        if missing is not None:
            raise ProtocolViolation(
                f"{server} asked for {method} ({key!r} during {origin}); this client declares no "
                f"{missing} capability"
            )

    def _check_mode(self, request: ElicitationRequest) -> None:
        """``ProtocolViolation`` unless this client declared the elicitation's mode."""
        if self.answerer is None or request.mode not in self.modes:
            modes = [m for m in ("form", "url") if m in self.modes]
            answers = (
                f"it answers {' and '.join(modes)} mode only"
                if modes
                else "it declares no elicitation capability"
            )
            raise ProtocolViolation(
                f"{request.describe()}, but this client declared no {request.mode}-mode elicitation "
                f"({request.method} in {request.mode} mode; {answers})"
            )

    async def answer_round(
        self,
        requests: Sequence[InputRequest],
        *,
        origin: Origin,
        server: ServerInfo,
        sent_with: Literal["retry", "tasks/update"] = "retry",
    ) -> dict[str, Any]:
        """The checked answers to one round's input requests, by key (see the rules); the
        answerer is told they go with ``sent_with`` (``ElicitationRequest.sent_with``)."""
        asked = {
            r.key: replace(
                parse_elicitation(r.params, server=server, key=r.key, origin=origin), sent_with=sent_with
            )
            for r in requests
            if r.method == "elicitation/create"
        }
        for r in requests:  # the whole round is checked before anyone is asked
            if r.key in asked:
                self._check_mode(asked[r.key])
            else:
                self._check_declared(r.method, key=r.key, origin=origin, server=server)
        verdicts = {key: self._judged(e) for key, e in asked.items()}
        together = [
            e
            for key, e in asked.items()
            if e.mode in self.modes and e.schema_problem is None and not _refuses(verdicts[key])
        ]
        batch = getattr(self.answerer, "elicit_many", None)
        first: dict[str, ElicitAnswer | Mapping[str, Any]] = {}
        if batch is not None and len(together) > 1:
            with self.thinking():
                async with self._person:
                    raws = await _awaitable(batch(together), "elicit_many")
            first = _one_each(raws, together)
        out: dict[str, Any] = {}
        for r in requests:
            if r.key in asked:
                out[r.key] = await self._elicit(asked[r.key], first.get(r.key), verdicts[r.key])
            else:
                out[r.key] = await self.answer(r.method, r.params, key=r.key, origin=origin, server=server)
        return out

    async def elicit(
        self, request: ElicitationRequest, *, first: ElicitAnswer | Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The checked answer to one elicitation; ``first`` is an answer already given (by
        ``elicit_many``), checked before the answerer is asked again."""
        self._check_mode(request)
        return await self._elicit(request, first, self._judged(request))

    def refuses(self, request: ElicitationRequest) -> bool:
        """Whether ``request``'s URL is one this client refuses (nothing reported)."""
        return request.url is not None and judge_url(request.url, server=request.server.where).refused

    def _judged(self, request: ElicitationRequest) -> UrlVerdict | None:
        """``judge_url``'s verdict on a URL-mode question's URL (None without one), reported
        when it refuses the URL or warns that the page is not encrypted (see the rules)."""
        if request.url is None:
            return None
        verdict = judge_url(request.url, server=request.server.where)
        asked = f"{request.server} asked question {shown_repr(request.key)} during {request.origin} to open"
        if verdict.refused:
            why = " ".join(w.text for w in verdict.warnings if w.refuses)
            self.report(
                f"{asked} {shown_repr(request.url)}, a URL this client refuses to show: {why} Answering decline"
            )
        elif "not-https" in verdict.codes:
            self.report(
                f"{asked} {shown_repr(request.url)}, a page that is not encrypted (http://, not to this "
                "computer): what the person types there can be read or changed on the way"
            )
        return verdict

    async def _refuse(self, request: ElicitationRequest, verdict: UrlVerdict) -> dict[str, Any]:
        """``decline`` (``cancel`` when the answerer's ``refused`` hook says the person
        cancelled) for a question whose URL this client refuses; the hook is told first."""
        hook = getattr(self.answerer, "refused", None)
        said: object = None
        if hook is not None:
            with self.thinking():
                async with self._person:
                    said = await _awaitable(hook(request, verdict), "refused")
        if isinstance(said, ElicitAnswer):
            said = said.to_json()
        cancelled = isinstance(said, Mapping) and said.get("action") == "cancel"
        return {"action": "cancel" if cancelled else "decline"}

    async def _elicit(
        self,
        request: ElicitationRequest,
        first: ElicitAnswer | Mapping[str, Any] | None,
        verdict: UrlVerdict | None,
    ) -> dict[str, Any]:
        """``elicit`` for a question already checked, its URL judged (``verdict``)."""
        assert self.answerer is not None
        if verdict is not None and verdict.refused:
            return await self._refuse(request, verdict)
        if request.schema_problem is not None:
            self.report(
                f"{request.server} sent a form this client cannot show ({request.schema_problem}); "
                f"{request.describe()}; answering cancel"
            )
            return {"action": "cancel"}
        last: FormValidationError | None = None
        for attempt in range(_ATTEMPTS):
            if attempt == 0 and first is not None:
                raw = first
            else:
                with self.thinking():
                    async with self._person:
                        raw = await _awaitable(self.answerer.elicit(request), "elicit")
            if isinstance(raw, ElicitAnswer):
                answer = raw.to_json()
            elif isinstance(raw, Mapping):
                answer = dict(raw)
            else:
                raise TypeError(
                    f"the answerer's elicit() returned {type(raw).__name__}; return an ElicitAnswer or a "
                    "mapping like {'action': 'accept', 'content': {...}}"
                )
            try:
                checked = check_elicit_answer(request, answer)
            except FormValidationError as exc:
                last = exc
                request = request.again(exc.problems)
            except InvalidAnswer as exc:  # an action that does not exist: the program's, no person's
                given = "elicit_many" if attempt == 0 and first is not None else "elicit"
                raise InvalidAnswer(
                    f"the answerer's {given}() gave an invalid answer to {request.describe()}: {exc}"
                ) from None
            except ValueError as exc:
                last = FormValidationError((ValidationProblem(None, str(exc)),))
                request = request.again(last.problems)
            else:
                self._report_unknown(request, answer)
                return checked
        assert last is not None
        summary = ValidationProblem(None, f"no valid answer to {request.describe()} after {_ATTEMPTS} tries")
        raise FormValidationError((summary, *last.problems))

    def _report_unknown(self, request: ElicitationRequest, answer: Mapping[str, Any]) -> None:
        """Report the fields an accepted form answer names that the form lacks (a typo in
        an answerer): they cannot be sent, and dropping them silently lost the answer."""
        content = answer.get("content")
        if answer.get("action") != "accept" or request.mode != "form" or not isinstance(content, Mapping):
            return
        unknown = [shown_repr(str(name)) for name in content if name not in request.fields]
        if unknown:
            self.report(
                f"the answer to {request.describe()} names {', '.join(unknown)}: the form has no such "
                f"field (its fields: {', '.join(request.fields)}); not sent"
            )

    async def url_waiting(self, step: InputRequest, *, origin: Origin, server: ServerInfo) -> None:
        """Tell the answerer, through its optional ``url_waiting(request)``, that the request
        waits for the page of ``step``, a URL step it accepted (2026-07-28)."""
        hook = getattr(self.answerer, "url_waiting", None)
        if hook is not None:
            request = parse_elicitation(step.params, server=server, key=step.key, origin=origin)
            await _awaitable(hook(request), "url_waiting")

    async def url_done(self, request: ElicitationRequest) -> None:
        if self.answerer is not None:
            with self.thinking():
                done = getattr(self.answerer, "url_done", None)  # optional: done at once without it
                if done is not None:
                    await done(request)


def _refuses(verdict: UrlVerdict | None) -> bool:
    return verdict is not None and verdict.refused


def _one_each(
    raws: object, requests: Sequence[ElicitationRequest]
) -> dict[str, ElicitAnswer | Mapping[str, Any]]:
    """What ``elicit_many`` returned for ``requests``, by key: ``TypeError`` unless it is a
    sequence of answers (``ElicitAnswer`` or mappings), one per request."""
    how = "return a list of answers (ElicitAnswer), one per question, in the order asked"
    if not isinstance(raws, Sequence) or isinstance(raws, str | bytes):
        raise TypeError(f"the answerer's elicit_many() returned {type(raws).__name__}; {how}")
    if len(raws) != len(requests):
        answers = "answer" if len(raws) == 1 else "answers"
        raise TypeError(
            f"the answerer's elicit_many() returned {len(raws)} {answers} for {len(requests)} questions; {how}"
        )
    for request, raw in zip(requests, raws, strict=True):
        if not isinstance(raw, ElicitAnswer | Mapping):
            raise TypeError(
                f"the answerer's elicit_many() returned {type(raw).__name__} for question {request.key!r}; {how}"
            )
    return {request.key: raw for request, raw in zip(requests, raws, strict=True)}


def _awaitable(value: Any, method: str) -> Any:
    """``value``, what the answerer's ``method`` returned, when it can be awaited."""
    if not inspect.isawaitable(value):
        raise TypeError(
            f"the answerer's {method}() returned {type(value).__name__}, not an awaitable; declare it async def"
        )
    return value
