"""Multi round-trip requests (2026-07-28), client side: the bookkeeping of one logical
request across its rounds. No I/O: results in, the next round's params (or the final
result) out.

Rules (*Multi Round-Trip Requests*, client requirements):

* A result without ``resultType``, or with ``"complete"``, is final. Any other value but
  ``"input_required"`` is invalid, and so is ``input_required`` on a method other than
  ``tools/call``, ``prompts/get`` and ``resources/read``.
* An ``input_required`` result carries ``inputRequests`` (a map of key to
  ``elicitation/create``, ``sampling/createMessage`` or ``roots/list``), ``requestState``
  (an opaque string), or both; neither (an empty ``inputRequests`` asks nothing) is
  invalid, and so is either one given as null (a value of the wrong type, not an absent
  field).
* A retry is the original params, plus ``inputResponses`` under exactly the keys asked
  this round, plus ``requestState`` echoed as the very same string (omitted when the
  result had none). Nothing from one logical request ever reaches another: each has its
  own ``Rounds``, and every retry is built afresh from the original params.
* Bounded: at most ``max_rounds`` rounds in all, and at most ``max_state_only`` rounds in
  a row that ask nothing (state only), which are retried after the ``backoff`` delays
  (seconds; the last one repeats). Each limit raises ``RoundsExceeded`` saying which.
  Limits that cannot work (not whole numbers, fewer than one round or one request, a
  delay that is negative or not finite) are refused as ``RoundLimits`` is made
  (``ConfigError`` naming the field), not in the middle of a call.
* A URL step the client accepted (an ``elicitation/create`` in ``url`` mode answered
  ``accept``) is *pending* until a round asks something else or the request completes:
  the person is on its page, and the server answers state-only rounds while it waits
  for the page (each after its own wait; URL mode's completion on this revision). Those
  rounds are bounded by time, not by count: they go on until ``url_wait`` seconds
  (600, a page's life) have passed since the round that asked the step, given the
  clock (``step(result, now)``), and count against neither ``max_state_only`` nor
  ``max_rounds``. The time is checked as each round comes back, so the last round sent
  within it may end later, by at most its backoff and the request timeout (cutting it at
  ``url_wait`` would race the server's own end of the page, which it answers in that
  round). The first of them says which steps it waits for (``NeedInput.awaiting_pages``:
  every URL step of that round the client accepted, as the server may wait for any of
  them), so the client can say so once for each. State-only rounds with no URL step
  pending (none asked, one declined, or no clock given) are counted as before: a server
  cannot keep a client for ever.
* At most ``max_requests`` input requests in one round (32 by default): a result asking
  more is a ``ProtocolViolation``, and none of it is answered.
* A ``requestState`` longer than ``max_state_bytes`` (UTF-8; 1 MiB by default) is a
  ``ProtocolViolation`` too: it would travel back with every retry, so nothing of that
  round is answered or sent.
* A retry that carried a ``requestState`` and was refused (-32602: the state lapsed while
  the person answered, say) may be started again once (``restart``): from the original
  params, with the counts from zero. From then on each question identical (key, method,
  params) to one answered earlier in this request gets that answer (``NeedInput.known``),
  and only the others are asked (``NeedInput.requests``); a page accepted before is not
  said again, and its ``url_wait`` goes on from when it was first asked. Not when the
  refusal is about anything but the state (``refuses_state``): started again, the same
  answers would be refused the same way, and the person told their state lapsed.
"""

from __future__ import annotations

import math
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from mcp_elicit.core.input_requests import (
    MAX_INPUT_REQUESTS,
    InputRequest,
    accepted_url,
    input_requests,
    not_a_map,
)
from mcp_elicit.core.quoting import quoted, shown_text
from mcp_elicit.errors import ConfigError, ProtocolViolation, RoundsExceeded

__all__ = [
    "INPUT_METHODS",
    "MAX_STATE_BYTES",
    "Complete",
    "NeedInput",
    "RoundLimits",
    "Rounds",
    "Step",
    "refuses_state",
]

#: Client requests whose result may be ``input_required``.
INPUT_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: The longest ``requestState`` (UTF-8 bytes) a client echoes by default.
MAX_STATE_BYTES: Final = 1024 * 1024
_RETRY_KEYS: Final = ("inputResponses", "requestState")


@dataclass(frozen=True, slots=True)
class RoundLimits:
    """How far a multi round-trip request may go before it fails."""

    max_rounds: int = 10
    max_state_only: int = 5
    max_requests: int = MAX_INPUT_REQUESTS
    max_state_bytes: int = MAX_STATE_BYTES
    backoff: tuple[float, ...] = (0.0, 0.1, 0.25, 0.5, 1.0)
    #: Seconds an accepted URL step's page may keep the request in state-only rounds.
    url_wait: float = 600.0
    #: Seconds a task's polls go on through the server's passing outage (``core.task_watch``).
    outage_wait: float = 60.0

    def __post_init__(self) -> None:
        for name, least in (
            ("max_rounds", 1),
            ("max_state_only", 0),
            ("max_requests", 1),
            ("max_state_bytes", 0),
        ):
            value = getattr(self, name)
            if not _whole(value) or value < least:
                raise ConfigError(f"RoundLimits {name} {value!r}: expected a whole number, at least {least}")
        delays = self.backoff
        if (
            isinstance(delays, str | bytes)
            or not isinstance(delays, Sequence)
            or not all(map(_seconds, delays))
        ):
            raise ConfigError(
                f"RoundLimits backoff {delays!r}: expected a sequence of finite numbers of seconds, at least 0"
            )
        object.__setattr__(self, "backoff", tuple(float(d) for d in delays))
        if not _seconds(self.url_wait):
            raise ConfigError(
                f"RoundLimits url_wait {self.url_wait!r}: expected a finite number of seconds, at least 0"
            )
        object.__setattr__(self, "url_wait", float(self.url_wait))
        if not _seconds(self.outage_wait):
            raise ConfigError(
                f"RoundLimits outage_wait {self.outage_wait!r}: expected a finite number of seconds, at least 0"
            )
        object.__setattr__(self, "outage_wait", float(self.outage_wait))

    def delay(self, state_only: int) -> float:
        """The wait before the ``state_only``-th consecutive state-only retry (1-based)."""
        if not self.backoff or state_only <= 0:
            return 0.0
        return self.backoff[min(state_only, len(self.backoff)) - 1]


@dataclass(frozen=True, slots=True)
class Complete:
    """The final result of the logical request."""

    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class NeedInput:
    """The server wants ``requests`` answered (possibly none) before the retry, which goes
    out after ``delay`` seconds. ``awaiting_pages``: on the first state-only round of
    pending URL steps, those steps (the server waits for their pages), in the order asked.
    ``requests`` are those to answer now; after a ``restart`` those already answered
    identically are in ``known`` instead."""

    requests: tuple[InputRequest, ...]
    state: str | None = field(repr=False)  # sealed answers: a bearer of them, not shown
    delay: float = 0.0
    awaiting_pages: tuple[InputRequest, ...] = ()
    #: After a ``restart``, the answers already given to this round's other questions (by
    #: key): ``retry`` adds them, nobody is asked them again.
    known: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class _Page:
    """The accepted URL steps of one round, pending: asked at ``asked`` (the clock), said
    once."""

    steps: tuple[InputRequest, ...]
    asked: float
    said: bool = False


Step: TypeAlias = Complete | NeedInput


@dataclass(slots=True)
class Rounds:
    """One logical request's rounds: feed each result to ``step``, build the retry with
    ``retry``. ``rounds`` counts the results seen so far, ``waited`` those of them that
    were state-only while a URL step was pending; ``restarted`` is True once the request
    was started again (``restart``)."""

    method: str
    params: Mapping[str, Any]
    limits: RoundLimits = field(default_factory=RoundLimits)
    rounds: int = 0
    state_only: int = 0
    waited: int = 0
    _pending: NeedInput | None = None
    _asked: float | None = None  # the clock at the round that asked the pending questions
    _page: _Page | None = None
    restarted: bool = False
    _asked_all: tuple[InputRequest, ...] = ()  # the pending round's questions, known ones too
    _answered: list[tuple[InputRequest, Any]] = field(default_factory=list, repr=False)
    _state_sent: bool = False  # whether the last retry carried a requestState
    _pages: list[_Page] = field(default_factory=list, repr=False)  # each accepted, in order

    def __post_init__(self) -> None:
        self.params = {k: v for k, v in self.params.items() if k not in _RETRY_KEYS}

    def step(self, result: Mapping[str, Any], now: float | None = None) -> Step:
        """Classify one round's result, received at ``now`` (a monotonic clock, seconds;
        without it no URL step is waited for); raise ``ProtocolViolation`` or
        ``RoundsExceeded``."""
        self.rounds += 1
        kind = result.get("resultType", "complete")
        if kind == "complete":
            self._pending = self._page = None
            return Complete(dict(result))
        if kind != "input_required":
            raise ProtocolViolation(
                f"the server answered {self.method} with resultType {quoted(kind)}, which this client does "
                "not know (it speaks 'complete' and 'input_required')"
            )
        if self.method not in INPUT_METHODS:
            raise ProtocolViolation(
                f"the server answered {self.method} with input_required, which only tools/call, "
                "prompts/get and resources/read may receive"
            )
        if "inputRequests" in result and result["inputRequests"] is None:  # null is no absence
            raise ProtocolViolation(not_a_map(self.method, None))
        requests = input_requests(result.get("inputRequests"), self.method, limit=self.limits.max_requests)
        state = result.get("requestState")
        if "requestState" in result and not isinstance(state, str):
            raise ProtocolViolation(
                f"requestState in the {self.method} result must be a string, not {quoted(state)}"
            )
        if state is not None and (size := _utf8_size(state)) > self.limits.max_state_bytes:
            raise ProtocolViolation(
                f"the server answered {self.method} with a requestState of {size} bytes; this client "
                f"echoes at most {self.limits.max_state_bytes} (RoundLimits.max_state_bytes), so the "
                "request was abandoned"
            )
        if not requests and state is None:
            given = "an empty inputRequests (nothing to answer)" if "inputRequests" in result else ""
            raise ProtocolViolation(
                f"the server answered {self.method} with input_required "
                + (
                    f"with {given} and no requestState"
                    if given
                    else "but neither inputRequests nor requestState"
                )
            )
        page = None if requests else self._waiting(now)
        if page is not None:
            self.waited += 1
        if self.rounds - self.waited >= self.limits.max_rounds:
            raise RoundsExceeded(
                f"{self.method} still needed input after {self.rounds - self.waited} rounds (the limit is "
                f"{self.limits.max_rounds}); the server keeps asking, so the request was abandoned"
            )
        delay = 0.0
        if requests:
            self.state_only = 0
            self._asked = now
        else:
            self.state_only += 1
            if page is None and self.state_only > self.limits.max_state_only:
                raise RoundsExceeded(
                    f"{self.method} was answered {self.state_only} times in a row with only a "
                    f"requestState and nothing to answer (the limit is {self.limits.max_state_only}); "
                    "the server is not making progress"
                )
            delay = self.limits.delay(self.state_only)
        awaiting: tuple[InputRequest, ...] = ()
        if page is not None and not page.said:  # said once for each page
            page.said, awaiting = True, page.steps
        known = self._known(requests) if self.restarted else {}
        ask = tuple(r for r in requests if r.key not in known)
        self._asked_all = requests
        self._pending = NeedInput(ask, state, delay, awaiting, known)
        return self._pending

    def _known(self, requests: tuple[InputRequest, ...]) -> dict[str, Any]:
        """The answers given earlier in this request to questions identical to some of
        ``requests`` (the latest answer to each), by key."""
        known: dict[str, Any] = {}
        for request in requests:
            for earlier, answer in self._answered:
                if earlier == request:
                    known[request.key] = answer
        return known

    def restart(self) -> dict[str, Any] | None:
        """The params that start the request again (the original ones: no requestState,
        no inputResponses) after the server refused the last retry with -32602; None when
        that retry carried no ``requestState`` (the refusal is then about something else)
        or the request was started again before (at most once)."""
        if not self._state_sent or self.restarted:
            return None
        self.restarted, self._state_sent = True, False
        self.rounds = self.state_only = self.waited = 0
        self._pending = self._page = self._asked = None
        return dict(self.params)

    def _same_page(self, page: _Page) -> _Page:
        """``page``, or after a ``restart`` the page of the same steps accepted before it
        (answered from before, not shown again): its wait goes on, said once."""
        if self.restarted:
            for earlier in self._pages:
                if all(step in earlier.steps for step in page.steps):
                    return earlier
        self._pages.append(page)
        return page

    def _waiting(self, now: float | None) -> _Page | None:
        """The URL step a state-only round at ``now`` waits for, if one is pending;
        ``RoundsExceeded`` once it has been pending longer than ``url_wait``."""
        page = self._page
        if page is None or now is None:
            return None
        if now - page.asked > self.limits.url_wait:
            raise RoundsExceeded(
                f"{self.method} waited more than {self.limits.url_wait:g} s for the "
                f"{'page' if len(page.steps) == 1 else 'pages'} at "
                f"{' and '.join(_host(step) for step in page.steps)} to be finished (RoundLimits.url_wait): the server still answers "
                "with only a requestState, so the request was abandoned"
            )
        return page

    def retry(self, responses: Mapping[str, Any]) -> dict[str, Any]:
        """The params of the next round: the original params, the answers to the last
        ``NeedInput`` (exactly its keys) and its ``requestState``, untouched."""
        pending = self._pending
        if pending is None:
            raise RuntimeError("retry() needs a NeedInput step first")
        wanted = {r.key for r in pending.requests}
        if set(responses) != wanted:
            missing = sorted(wanted - set(responses))
            extra = sorted(set(responses) - wanted)
            raise ValueError(
                f"inputResponses must answer exactly the keys asked (missing {missing}, extra {extra})"
            )
        responses = {**pending.known, **responses}
        asked = [r.key for r in self._asked_all]
        self._answered.extend((r, responses[r.key]) for r in self._asked_all)
        if self._asked_all:  # a round that asked something ends any earlier wait
            accepted = tuple(r for r in self._asked_all if accepted_url(r, responses[r.key]))
            self._page = _Page(accepted, self._asked) if accepted and self._asked is not None else None
            if self._page is not None:
                self._page = self._same_page(self._page)
        params = dict(self.params)
        if asked:
            params["inputResponses"] = {key: responses[key] for key in asked}
        if pending.state is not None:
            params["requestState"] = pending.state
        self._state_sent = pending.state is not None
        self._pending, self._asked_all = None, ()
        return params


def refuses_state(message: str, data: object) -> bool:
    """Whether a -32602 refusing a retry refused its ``requestState`` (lapsed, or no longer
    this server's), so that the request started again may get further: the message names
    the state ("Invalid or expired requestState"), and neither names the answers
    (``inputResponses``, an answer) nor puts a renewed ``requestState`` in ``data`` (the
    state held: a single-use one is renewed so). Any other -32602 (a handler's own, an
    answer too large) would come again the same way."""
    if isinstance(data, Mapping) and isinstance(data.get("requestState"), str):
        return False
    said = message.lower()
    if "inputresponses" in said or "answer" in said:
        return False
    return "requeststate" in said or re.search(r"\bstate\b", said) is not None


def _host(request: InputRequest) -> str:
    """The host of a URL step's page, as a message names it (its URL was checked before
    anyone was asked)."""
    url = request.params.get("url")
    try:
        host = urllib.parse.urlsplit(url).hostname if isinstance(url, str) else None
    except ValueError:  # an unclosed "[": no host to name
        host = None
    return shown_text(host) if host else "(no host)"


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _seconds(value: object) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


def _utf8_size(text: str) -> int:
    """``text``'s length in UTF-8 (a lone surrogate counted as the three bytes it takes)."""
    return len(text.encode("utf-8", "surrogatepass"))
