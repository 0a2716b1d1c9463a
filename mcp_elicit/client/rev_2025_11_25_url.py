"""URL elicitation required (-32042) on the handshake revisions (2025-11-25, 2025-06-18,
2025-03-26): a request the server will not serve until the person has completed a step
at a URL.

Rules:

* Each URL is put to the answerer (the user sees it and consents);
  ``notifications/elicitation/complete`` arrives on the event stream (the answerer's
  ``request.finished`` returns once it has, as for a step of ``elicitation/create``); the original
  request is retried (a new id, by the session) when every accepted URL is complete (a
  notice that came first counts) or the user says it is done. A declined URL ends the
  request with the error.
* All of them are checked before the person sees any: an error listing more URLs than
  ``RoundLimits.max_requests``, an entry not in URL mode, or one without its
  ``elicitationId`` (the name its completion notice gives), or two under one
  ``elicitationId`` (one notice would finish both), is a ``ProtocolViolation`` naming it,
  and none of them is shown. A session that did not declare URL mode, or whose answerer
  does not take it, gets the error as it is (``URLElicitationRequired``), unread.
* At a revision without URL mode (2025-06-18, 2025-03-26: ``declared.defined_modes``),
  whatever ``initialize`` declared for the revision it offered, -32042 means nothing the
  client can follow: it is the server's error, raised as a plain ``ProtocolError`` with
  the server's code, message and data, not as a URL elicitation (whose steps a user
  interface would offer to open). No URL is shown and the request is not sent again.
  So is a URL the client refuses (``client.url_consent``): that one alone is put to the
  client's refusal (``Inputs.elicit`` declines it, telling the answerer), none of the
  others is shown, and the request ends with the error, saying the URL was refused.
* A step's completion notice is listened for from the moment it is shown until it is
  done with, however the request ends (a step declined, the request cancelled, a Ctrl-C
  while the person is shown a URL): a later step of the same ``elicitationId`` is one of
  its own, not refused as still open.
* No request is in flight while the person is on the steps: a server gone for good
  meanwhile (a stdio server process exited) withdraws them from the person and fails the
  request with ``TransportError`` (``Connection.while_present``), as a 2026-07-28 round.
  A KeyboardInterrupt the answerer raises, on a step's page or while the person says when
  it is done (``url_done``), leaves the request (``interrupts``), not the event loop.
* The steps said to be done are kept for the request (``FinishedSteps``): one the server
  asks for again was not finished when the retry went, or, when the server's own notice
  said it was complete, the server does not see it; the round limit's error names which.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_elicit.client.connection import Connection
from mcp_elicit.client.declared import declared_modes, defined_modes
from mcp_elicit.client.interrupts import Interrupt, carrying, reraise
from mcp_elicit.client.no_response import to_named
from mcp_elicit.client.reaping import reap
from mcp_elicit.client.rev_2025_11_25_questions import ServerQuestions
from mcp_elicit.core.client_inputs import ElicitationRequest, Origin, parse_elicitation
from mcp_elicit.core.quoting import quoted
from mcp_elicit.core.rounds import RoundLimits
from mcp_elicit.errors import ProtocolError, ProtocolViolation
from mcp_elicit.telemetry_attributes import redact_uri, redact_urls

__all__ = ["FinishedSteps", "url_required"]


@dataclass
class FinishedSteps:
    """The URL steps said to be done during one request (by elicitationId and by URL), each
    with whether the server's own notice said so, and those the server asked for again all
    the same: one the person (or a script) called done was not finished yet; one the
    server said was complete is the server's fault, and waiting longer would not help."""

    seen: dict[str, bool] = field(default_factory=dict)
    again: dict[str, bool] = field(default_factory=dict)

    def said_done(self, request: ElicitationRequest, *, by_server: bool) -> None:
        names = [name for name in (request.elicitation_id, request.url) if name]
        if any(name in self.seen for name in names):
            told = any(self.seen.get(name, False) for name in names)
            shown = redact_urls(request.url or request.key)
            self.again[shown] = self.again.get(shown, False) or told
        for name in names:
            self.seen[name] = by_server

    def hint(self) -> str:
        """What to do about the steps asked again, for the round limit's error; "" if none."""
        told = [name for name, by_server in self.again.items() if by_server]
        unfinished = [name for name, by_server in self.again.items() if not by_server]
        said = []
        if told:
            said.append(
                f"it asked again for a step it had said was complete ({', '.join(told)}, "
                "notifications/elicitation/complete): the server does not see its own completion"
            )
        if unfinished:
            said.append(
                f"it asked again for a step said to be done ({', '.join(unfinished)}), so each retry "
                "went before the page was finished: finish it there before saying done; a script "
                'waits for the server\'s notice with "await_completion": true'
            )
        return f" ({'; '.join(said)})" if said else ""


async def url_required(
    conn: Connection,
    questions: ServerQuestions,
    limits: RoundLimits,
    error: Mapping[str, Any],
    origin: Origin,
    finished: FinishedSteps | None = None,
) -> None:
    """Put the URLs of ``error`` (a -32042 answering ``origin``) to the person, and return
    once every one they accepted is complete: the request may then be sent again. A URL
    declined ends the request with the error; a malformed error is raised as it is."""
    revision = questions.session.revision
    if "url" not in defined_modes(revision):
        raise _servers_own(error)
    if "url" not in declared_modes(questions.session.declared, revision) & conn.inputs.modes:
        raise ProtocolError.from_error(error)
    data = error.get("data")
    raw = data.get("elicitations") if isinstance(data, Mapping) else None
    if not isinstance(raw, list) or not raw:
        raise ProtocolError.from_error(error)
    if len(raw) > limits.max_requests:
        raise ProtocolViolation(
            f"{conn.server} answered {origin} with -32042 listing {len(raw)} URL-mode "
            f"elicitations; this client puts at most {limits.max_requests} to the user at once "
            "(RoundLimits.max_requests), so none was shown"
        )
    requests = [
        parse_elicitation(
            entry if isinstance(entry, Mapping) else {},
            server=conn.server,
            key=f"url {entry.get('elicitationId') if isinstance(entry, Mapping) else i}",
            origin=origin,
        )
        for i, entry in enumerate(raw)
    ]
    for request in requests:  # all checked before the person sees any
        if request.mode != "url":
            raise ProtocolViolation(f"{request.describe()}: -32042 may only carry URL-mode elicitations")
        if request.elicitation_id is None:
            raise ProtocolViolation(
                f"{conn.server} answered {origin} with -32042 listing a URL-mode elicitation "
                f"without an elicitationId ({redact_uri(request.url or '')!r}); without it the client cannot learn when "
                "the step is complete, so none was shown"
            )
    ids = [request.elicitation_id for request in requests]
    twice = next((eid for i, eid in enumerate(ids) if eid in ids[:i]), None)
    if twice is not None:
        raise ProtocolViolation(
            f"{conn.server} answered {origin} with -32042 listing elicitationId {quoted(twice)} twice; "
            "each step needs an id of its own (one completion notice would finish both), so none "
            "was shown"
        )
    refused = [request for request in requests if conn.inputs.refuses(request)]
    await conn.while_present(
        _steps(conn, questions, error, refused[:1] or requests, refused=bool(refused), finished=finished),
        lambda why: (
            f"{origin}{to_named(conn.server)} cannot go on: {why}; its URL steps were "
            "withdrawn from the person"
        ),
    )


def _servers_own(error: Mapping[str, Any]) -> ProtocolError:
    """``error`` as a code its revision does not define: the server's, as it sent it."""
    own = ProtocolError(str(error.get("message", "")), error.get("data"))
    own.code = -32042  # type: ignore[misc]  # as from_error keeps a code it does not know
    return own


async def _steps(
    conn: Connection,
    questions: ServerQuestions,
    error: Mapping[str, Any],
    requests: list[ElicitationRequest],
    *,
    refused: bool,
    finished: FinishedSteps | None,
) -> None:
    """Put each of ``requests`` to the person, then wait until each accepted is complete."""
    waits: list[tuple[ElicitationRequest, asyncio.Event]] = []
    waiting: list[str] = []  # the ids of the steps registered and not yet done with
    try:
        for request in requests:
            waiting.append(request.elicitation_id or request.key)
            event = questions.notices.completion(waiting[-1])
            request = replace(request, finished=event.wait)  # as a step of elicitation/create
            answer = await conn.inputs.elicit(request)
            if answer.get("action") != "accept":
                said = (
                    "this client refused its URL" if refused else f"the user answered {answer.get('action')}"
                )
                told = f"{error.get('message', '')} ({said})"
                raise ProtocolError.from_error({**error, "message": told})
            waits.append((request, event))
        for request, event in waits:
            await _until_done(conn, request, event)
            waiting.remove(request.elicitation_id or request.key)
            questions.notices.done_with(request.elicitation_id or request.key)
            if finished is not None:
                finished.said_done(request, by_server=event.is_set())
    finally:  # however the request ended (declined, cancelled, a Ctrl-C): its steps are over
        for eid in waiting:
            questions.notices.done_with(eid)


async def _until_done(conn: Connection, request: ElicitationRequest, event: asyncio.Event) -> None:
    if event.is_set():
        return
    done = carrying(conn.inputs.url_done(request))
    heard = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({done, heard}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        try:
            await reap(done, heard, failures=True)
        except Interrupt as exc:  # a Ctrl-C while the person says when they are done
            reraise(exc)
