"""Multi round-trip requests (2026-07-28), server side, replay style. No I/O.

A handler that needs input asks for it; when the answer is not in hand, the request ends
with ``resultType: "input_required"``, the outstanding ``inputRequests`` and a sealed
``requestState`` holding every answer accepted so far. The client retries with a new id,
the answers under the same keys and the state echoed; the handler runs again from the
top, finds its earlier answers in the state, and goes one question further.

Rules:

* Each question has a key (chosen by the handler, or derived from its order) and a
  fingerprint (a digest of exactly what was asked). A recorded answer is only ever given
  back to the same key *and* the same fingerprint; anything else is a
  ``ReplayMismatchError``, never a silent mix-up.
* A key names one question in a run of the handler: a second question under a key
  already asked (a fixed ``key=`` in a loop) is ``key_reused``, on every revision, since
  here it would be handed the first one's answer.
* An accepted form answer that leaves out a required field the question was sent with a
  default for takes that default (``sent_defaults``), as a client that pre-fills it sends.
* A fresh answer (from ``inputResponses``) is checked against the question asked *now*:
  the form schema for elicitation, the result shape for sampling and roots. A bad
  elicitation answer re-asks the question with a note saying what was wrong (a person
  can answer differently), once, as on 2025-11-25: a second bad answer to a question
  asked again counts as ``cancel`` (the state lists the keys asked again, never the bad
  answers; a retry without an answer asks it again, still on its second try). A sampling
  result or roots list that does not fit its schema fails the request with -32602 naming
  the key (the client's software would answer the same again), as does an
  ``inputResponses`` that is not an object when such a question is asked. A bad answer
  is never handed to the handler. Keys nobody asked about are ignored.
* A URL-mode answer counts only for a question the server sent: one pending in the
  sealed state of the round that asked it. Its ``accept`` is consent to open a page the
  client was shown; without that state (or with a state that did not ask it), the
  question is asked. Form and other answers may come without state (a client that knows
  the questions answers them in its first call).
* The state is sealed (AEAD) and bound to the method, the target, the arguments and the
  principal; any failure to open it is ``InvalidRequestState``. A request that completes
  in one round carries no state. Answers too large for the state together (each may be
  within the ``inputResponses`` limit) fail the request with -32602 saying so; what the
  handler remembers (``ctx.remember``) grown too large is -32603 saying so.
* Limits come first: an oversized ``inputResponses`` (too many entries, bytes or levels
  of nesting) is refused with -32602 before anything else; then one holding a value that
  is not an object (each is a result), under any key, asked or not: -32602 naming the
  key, as ``tasks/update`` is (``check_input_responses``). An object that is not a fit
  answer is the question's to judge (above). A round asks at most
  ``MAX_INPUT_REQUESTS`` questions (what a client answers in one round), the first ones
  asked; the others are asked in the rounds after.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import orjson
from pydantic import ValidationError

from mcp_elicit.core.input_requests import MAX_INPUT_REQUESTS
from mcp_elicit.core.input_responses import check_input_responses
from mcp_elicit.errors import (
    FormValidationError,
    InternalError,
    InvalidAnswer,
    InvalidParams,
    ReplayMismatchError,
)
from mcp_elicit.forms import FormSchema
from mcp_elicit.sealing import Binding, StateSealer, arguments_digest

__all__ = [
    "ELICIT",
    "LIST_ROOTS",
    "SAMPLE",
    "Ask",
    "InputRequired",
    "Replay",
    "binding_for",
    "check_answer",
    "key_reused",
]

ELICIT: Final = "elicitation/create"
SAMPLE: Final = "sampling/createMessage"
LIST_ROOTS: Final = "roots/list"

#: Fingerprints of form questions by (schema digest, message, mode): at most
#: ``_FINGERPRINTS_KEPT``, of messages of at most ``_MESSAGE_KEPT`` characters (a long one,
#: which often holds text of its own request, is digested each time rather than kept).
_FORM_FINGERPRINTS: dict[tuple[str, object, object], str] = {}
_FINGERPRINTS_KEPT: Final = 4096
_MESSAGE_KEPT: Final = 512
_STATE_VERSION: Final = 1
_ABSENT: Final = object()  # no entry under a key (an entry's value may be null)


@dataclass(slots=True)
class Ask:
    """One question a handler asks: an input request under a key.

    ``schema`` is set for form-mode elicitation; the answer is checked against it.
    """

    key: str
    method: str
    params: dict[str, Any]
    schema: FormSchema | None = None
    _fingerprint: str | None = field(default=None, repr=False)

    @property
    def fingerprint(self) -> str:
        fingerprint = self._fingerprint
        if fingerprint is not None:
            return fingerprint
        schema = self.schema
        params = self.params
        memo: tuple[str, object, object] | None = None
        if schema is not None and self.method == ELICIT and len(params) == 3:
            message = params.get("message")
            if not isinstance(message, str) or len(message) <= _MESSAGE_KEPT:
                memo = (schema.digest, message, params.get("mode"))
                fingerprint = _FORM_FINGERPRINTS.get(memo)
        if fingerprint is None:
            if schema is not None:
                # the schema's own digest stands for it: no need to encode it again
                params = {k: v for k, v in params.items() if k != "requestedSchema"}
                params["requestedSchema"] = schema.digest
            digest = hashlib.sha256(
                orjson.dumps({"m": self.method, "p": params}, option=orjson.OPT_SORT_KEYS)
            ).digest()
            fingerprint = base64.urlsafe_b64encode(digest[:12]).decode("ascii")
            if memo is not None:
                if len(_FORM_FINGERPRINTS) >= _FINGERPRINTS_KEPT:
                    _FORM_FINGERPRINTS.clear()
                _FORM_FINGERPRINTS[memo] = fingerprint
        self._fingerprint = fingerprint
        return fingerprint

    def wire(self, note: str | None = None) -> dict[str, Any]:
        """The ``inputRequests`` entry; ``note`` (what was wrong last time) leads the message.

        A URL-mode ``elicitationId`` (kept in ``params`` for 2025-11-25) is left out: the
        2026-07-28 revision removed it along with the completion notice."""
        params = self.params
        if self.method == ELICIT and "elicitationId" in params:
            params = {k: v for k, v in params.items() if k != "elicitationId"}
        if note is not None and self.method == ELICIT:
            params = {**params, "message": f"{note}\n\n{params.get('message', '')}".rstrip()}
        return {"method": self.method, "params": params}


class InputRequired(BaseException):
    """Raised inside a handler when answers are missing; ends this round.

    It derives from ``BaseException`` so that a handler's ``except Exception`` cannot
    swallow it by accident. The questions themselves are collected by the ``Replay``.
    """


def binding_for(method: str, params: Mapping[str, Any], principal: str | None) -> Binding:
    """What a request's state is bound to: method, target, arguments, principal."""
    if method == "resources/read":
        target = params.get("uri")
        arguments: Any = None
    else:
        target = params.get("name")
        arguments = params.get("arguments")
    # a dict (what JSON decodes to) is a Mapping: spare the ABC check on the common path
    if type(arguments) is not dict and not isinstance(arguments, Mapping):
        arguments = None
    try:
        digest = arguments_digest(arguments)
    except ValueError as exc:  # nested past what can be digested: the client's to fix
        raise InvalidParams(
            f"Invalid params: {exc}; a request that asks questions binds its requestState to its "
            "arguments: send them nested less deeply"
        ) from None
    return Binding(method, target if isinstance(target, str) else "", digest, principal)


class Replay:
    """The answers one round of a multi round-trip request has to work with."""

    __slots__ = (
        "answers",
        "fresh",
        "memo",
        "notes",
        "outstanding",
        "pending",
        "refusal",
        "retried",
        "round",
        "shape_problem",
        "unfit",
    )

    def __init__(
        self,
        answers: dict[str, tuple[str, Any]] | None = None,
        pending: dict[str, str] | None = None,
        fresh: dict[str, Any] | None = None,
        round_no: int = 0,
        shape_problem: str | None = None,
        memo: dict[str, Any] | None = None,
        retried: set[str] | None = None,
    ) -> None:
        self.answers: dict[str, tuple[str, Any]] = {} if answers is None else answers
        #: JSON values a handler keeps from one round to the next (e.g. a URL flow's id).
        self.memo: dict[str, Any] = {} if memo is None else memo
        self.pending: dict[str, str] = {} if pending is None else pending
        self.fresh: dict[str, Any] = {} if fresh is None else fresh
        self.round = round_no
        self.shape_problem = shape_problem
        self.notes: dict[str, str] = {}
        #: Keys of the questions asked again (with a note) in the last round: their second
        #: and last try.
        self.retried: set[str] = set() if retried is None else retried
        #: The questions whose second try did not fit either (now ``cancel``), each with
        #: what was wrong (None: the answers could not be read), for the log.
        self.unfit: list[tuple[Ask, InvalidAnswer | None]] = []
        #: Questions asked this round without an answer, in the order they were asked.
        self.outstanding: dict[str, Ask] = {}
        #: The -32602 this round raised over the client's answers (one that does not fit
        #: its schema, or answers too large for the state), when it raised one.
        self.refusal: InvalidParams | None = None

    @classmethod
    def begin(cls, params: Mapping[str, Any], *, sealer: StateSealer, binding: Binding, now: float) -> Replay:
        """Open the state and read the answers a retry carries."""
        responses = params.get("inputResponses")
        fresh: dict[str, Any] = {}
        problem: str | None = None
        if responses is not None:
            if not isinstance(responses, dict):
                problem = "inputResponses must be an object mapping each input request key to its result"
            else:
                check_input_responses(responses)
                fresh = responses
        token = params.get("requestState")
        if token is None:
            return cls(None, None, fresh, 0, problem) if responses is not None else cls()
        payload = sealer.open(token, binding, now=now)
        try:
            state = orjson.loads(payload)
            recorded = state["a"]
            answers = {k: (v[0], v[1]) for k, v in recorded.items()} if recorded else {}
            pending = state["p"]
            memo = state.get("m", {})
            retried = state.get("t", [])
            # decoded by orjson: an object is a dict, never a subclass (nor a list of pairs)
            if type(pending) is not dict or type(memo) is not dict or type(retried) is not list:
                raise TypeError
            round_no = int(state["r"])
            again = set(retried)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, IndexError):
            raise InternalError("Internal error: a sealed requestState had an unexpected layout") from None
        return cls(answers, pending, fresh, round_no, problem, memo, again)

    def resolve(self, ask: Ask) -> tuple[bool, Any]:
        """``(True, answer)`` when ``ask`` is answered (checked), else ``(False, None)``.

        A fresh elicitation answer that does not fit is noted and counts as unanswered
        (asked again); on its question's second try it is ``cancel`` instead.
        """
        key = ask.key
        recorded = self.answers.get(key)
        if recorded is not None:
            if recorded[0] != ask.fingerprint:
                raise ReplayMismatchError(
                    f"On replay the handler asked something different under key {key!r} than the "
                    "recorded round did. A handler must ask the same questions, in the same order, for the "
                    "same arguments and answers; give changing questions distinct keys."
                )
            return True, recorded[1]
        expected = self.pending.get(key)
        if expected is not None and expected != ask.fingerprint:
            raise ReplayMismatchError(
                f"The question under key {key!r} changed between rounds; the client's answer was for "
                "a different question. Give changing questions distinct keys."
            )
        raw = self.fresh.get(key, _ABSENT)
        if raw is _ABSENT:
            if self.shape_problem is not None:
                if ask.method != ELICIT:  # the client's software would send the same again
                    self.refusal = InvalidParams(
                        f"Invalid params: {self.shape_problem}, so it answers nothing: "
                        f"not the {ask.method} asked under {key!r}"
                    )
                    raise self.refusal
                note = f"Your previous answer could not be read: {self.shape_problem}."
                return self._unfit(ask, expected, note, None)
            return False, None
        if expected is None and ask.method == ELICIT and ask.params.get("mode") == "url":
            return False, None  # consent to a page the client was never sent: ask
        try:
            answer = check_answer(ask, raw)
        except InvalidAnswer as exc:
            if ask.method != ELICIT:  # the client's software answered: asking again gets the same
                self.refusal = InvalidParams(
                    f"Invalid params: inputResponses[{key!r}] answers {ask.method}, but {exc}"
                )
                raise self.refusal from None
            return self._unfit(ask, expected, f"Your previous answer was not accepted: {exc}.", exc)
        # the pending fingerprint, when there is one, is the question's (checked above)
        self.answers[key] = (ask.fingerprint if expected is None else expected, answer)
        return True, answer

    def _unfit(
        self, ask: Ask, expected: str | None, note: str, invalid: InvalidAnswer | None
    ) -> tuple[bool, Any]:
        """An elicitation answer to ``ask`` that does not fit: asked again with ``note`` the
        first time; on its second try, ``cancel`` (recorded as the answer)."""
        key = ask.key
        if key not in self.retried:
            self.notes[key] = note
            return False, None
        answer = {"action": "cancel"}
        self.answers[key] = (ask.fingerprint if expected is None else expected, answer)
        self.unfit.append((ask, invalid))
        return True, answer

    def want(self, ask: Ask) -> None:
        """Record ``ask`` as unanswered in this round."""
        known = self.outstanding.get(ask.key)
        if known is not None and known.fingerprint != ask.fingerprint:
            raise ReplayMismatchError(f"Two different questions in one round share the key {ask.key!r}")
        self.outstanding[ask.key] = ask

    def input_required(self, *, sealer: StateSealer, binding: Binding, now: float) -> dict[str, Any]:
        """The ``input_required`` result asking the outstanding questions, with the state
        for the next round. With no question outstanding it is a state-only round: the
        client retries (after a pause) with the state alone."""
        requests: dict[str, Any] = {}
        pending: dict[str, str] = {}
        notes = self.notes
        # at most what a client takes in one round: the rest are asked in the next ones
        for key, ask in itertools.islice(self.outstanding.items(), MAX_INPUT_REQUESTS):
            requests[key] = ask.wire(notes.get(key) if notes else None)
            pending[key] = ask.fingerprint
        # orjson writes each (fingerprint, answer) tuple as the array the state holds
        state = {"v": _STATE_VERSION, "r": self.round + 1, "a": self.answers, "p": pending}
        if self.memo:
            state["m"] = self.memo
        # on its second try until answered: asked again now, or in an earlier round (the
        # keys of this round's questions at most, so the list stays as small as ``pending``)
        retried = self.retried
        again = [key for key in requests if key in notes or key in retried] if notes or retried else None
        if again:
            state["t"] = again
        payload = orjson.dumps(state)
        try:  # seal checks the size too: say why only when it refuses
            token = sealer.seal(payload, binding, now=now)
        except ValueError:
            if len(payload) > sealer.max_payload:
                error = _state_too_large(len(payload), len(orjson.dumps(self.answers)), sealer.max_payload)
                if isinstance(error, InvalidParams):
                    self.refusal = error
                raise error from None
            raise
        if requests:
            return {"resultType": "input_required", "inputRequests": requests, "requestState": token}
        return {"resultType": "input_required", "requestState": token}


def _state_too_large(size: int, answered: int, most: int) -> InternalError | InvalidParams:
    """Why a state of ``size`` bytes (``answered`` of them the answers) does not fit."""
    if answered <= most // 2:  # not the answers: what the handler remembers
        return InternalError(
            f"Internal error: the values the handler remembers take {size - answered} bytes, "
            f"more than a requestState carries ({most})"
        )
    return InvalidParams(
        f"Invalid params: the answers given so far take {answered} bytes, more than a requestState "
        f"carries ({most} bytes); answer with less"
    )


def key_reused(key: str, *, given: bool = False) -> ReplayMismatchError:
    """The error for a second question asked under ``key`` in one run of a handler;
    ``given``: one of the two is a question asked without ``key=``, given ``key``."""
    if given:
        return ReplayMismatchError(
            f"The handler gave a question key={key!r}, the key a question asked without key= is "
            "given (the kind of question and its number, in the order asked): a key names one "
            "question in a run. Give the keyed question another key, or every question its own."
        )
    return ReplayMismatchError(
        f"The handler asked a second question under the key {key!r} in one run: a key names one "
        "question (on 2026-07-28 the second would be handed the first one's answer). Give each "
        f"question its own key, e.g. f'{key}-{{n}}' in a loop."
    )


def sent_defaults(ask: Ask, content: object) -> object:
    """An accepted form answer with each required field it leaves out (or sends as null)
    that the question as sent gave a default: that default, which a client that supports
    defaults pre-fills and the person kept. Only those sent: at 2025-06-18, where only a
    boolean's is, the others stay "is required", as the person never saw them."""
    sent = ask.params.get("requestedSchema")
    if not isinstance(content, dict) or not isinstance(sent, dict):
        return content
    properties = sent.get("properties", {})
    missing = [
        name
        for name in sent.get("required", ())
        if content.get(name) is None and "default" in properties.get(name, {})
    ]
    if not missing:
        return content
    return {**content, **{name: copy.deepcopy(properties[name]["default"]) for name in missing}}


def check_answer(ask: Ask, raw: object) -> Any:
    """Check one ``inputResponses`` entry against its question; return the clean answer."""
    if not isinstance(raw, dict):
        raise InvalidAnswer("each answer must be a JSON object")
    method = ask.method
    if method == ELICIT:
        action = raw.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise InvalidAnswer('"action" must be "accept", "decline" or "cancel"')
        schema = ask.schema
        if action != "accept" or schema is None:
            return {"action": action}
        content = raw.get("content")
        try:
            clean = schema.admit(sent_defaults(ask, {} if content is None else content))
        except FormValidationError as exc:
            raise InvalidAnswer(str(exc), fields=[problem.field for problem in exc.problems]) from None
        return {"action": "accept", "content": clean}
    if method == SAMPLE:
        from mcp_types import CreateMessageResult

        try:
            CreateMessageResult.model_validate(raw)
        except ValidationError as exc:
            raise InvalidAnswer(_pydantic_summary(exc, "a sampling result")) from None
        return raw
    if method == LIST_ROOTS:
        from mcp_types import ListRootsResult

        try:
            ListRootsResult.model_validate(raw)
        except ValidationError as exc:
            raise InvalidAnswer(_pydantic_summary(exc, "a roots list")) from None
        return raw
    raise InvalidAnswer(f"unexpected input request method {method!r}")


def _pydantic_summary(exc: ValidationError, what: str) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
    return f"it is not {what} ({where}: {first.get('msg', 'invalid')})"
