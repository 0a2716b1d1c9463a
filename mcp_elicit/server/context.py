"""The ``Context`` a handler receives: ask the user (elicitation), ask the client's model
(sampling) or its roots, report progress, log.

Rules:

* ``await ctx.elicit(...)`` returns an ``Answer`` whose ``action`` is accept, decline or
  cancel. Declining and cancelling are answers, not exceptions. A URL-mode step not
  accepted is remembered (``refused``): a prompt or resource that then fails with
  ``ToolError`` fails by the user's choice (-32600, ``dispatch``).
* A form never asks for a secret (a password, an API key...): one the secret guard flags
  fails the handler with ``SensitiveFieldError``, even when it was read with
  ``check_secrets=False`` (as a client reads a server's form); ``not_secret`` lets a field
  through.
* Nothing is asked that the client did not declare: form elicitation needs
  ``elicitation`` (``{}`` means form), URL elicitation needs ``elicitation.url``, sampling
  needs ``sampling``, roots need ``roots``. Asking anyway fails the request with -32021
  naming the missing capability (raised when the question is asked; gathered questions:
  every capability they lack, ``gathering``); ``ctx.can_elicit()`` and friends let a
  handler fall back.
  A session asks in its revision's words: 2025-03-26 has no elicitation, 2025-06-18 forms
  only, said its way (``rev_2025_06_18``: a multi-select there is -32021 naming the field,
  raised when asked as a missing capability's is).
* A URL-mode question carries only a web address a browser reads as written: an
  absolute http(s) URI with a host, no credentials, at most ``MAX_URL`` characters
  (``outgoing.check_url``); anything else is the handler's ``ValueError``.
* How a question travels depends on the revision (``input_required`` and a retry on
  2026-07-28, a server-to-client request on 2025-11-25); the handler's code is the same.
* ``ctx.gather(...)`` asks in one round; a second question under one key fails (``key_reused``,
  ``context_memory``).
* Progress goes out only when the request asked for it, each above the last; log
  messages only at the level asked for, at most 100 a second (``context_notices``).
* A ``Context`` works only on its handler's event loop, and only while its request runs
  (``context_guard``): elsewhere, asking is a ``RuntimeError``; progress and logs are
  dropped once the request has ended.
* A tool registered with ``task=`` becomes a task at ``await ctx.start_task()`` when the
  client declared the tasks extension (``server.tasks``); from then on its questions wait
  in the task, its progress messages become the task's ``statusMessage`` and its logs are
  dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from mcp_types import CreateMessageResult, Root

from mcp_elicit.core.mrtr import ELICIT, LIST_ROOTS, SAMPLE, Ask, Replay
from mcp_elicit.core.rev_2025_11_25 import form_missing, url_mode_missing
from mcp_elicit.errors import MissingClientCapability, SensitiveFieldError, URLElicitationRequired
from mcp_elicit.forms import FormSchema
from mcp_elicit.log_labels import request_label, request_where
from mcp_elicit.server.asking import InPlaceAsker
from mcp_elicit.server.channel import NO_STREAM, Channel
from mcp_elicit.server.context_memory import ContextMemory
from mcp_elicit.server.context_notices import ContextNotices
from mcp_elicit.server.gathering import gathered, unaskable
from mcp_elicit.server.outgoing import check_sampling, check_url, warn_cleartext
from mcp_elicit.server.questions import Action, Answer, Asker, FormAnswer, Question
from mcp_elicit.server.rev_2025_06_18 import form_params
from mcp_elicit.server.task_handler import TaskAsker
from mcp_elicit.server.url_raised import settle
from mcp_elicit.server.url_steps import require_step
from mcp_elicit.wire.headers import shown
from mcp_elicit.wire.meta import ClientCapabilities
from mcp_elicit.wire.versions import REV_2025_06_18

if TYPE_CHECKING:
    from mcp_elicit.core.server import Call
    from mcp_elicit.server.auth import Principal
    from mcp_elicit.server.lifespan import Lifespan
    from mcp_elicit.server.oauth import ConnectAnswer
    from mcp_elicit.server.task_handler import Detach
    from mcp_elicit.server.tasks import Running
    from mcp_elicit.server.url_mode import SecretAnswer, UrlMode

__all__ = ["Channel", "Context"]

T = TypeVar("T")
T1 = TypeVar("T1")
T2 = TypeVar("T2")
T3 = TypeVar("T3")
T4 = TypeVar("T4")
T5 = TypeVar("T5")
T6 = TypeVar("T6")


class Context(ContextNotices, ContextMemory):
    """Per-request handle given to tools, prompts and resources that ask for it."""

    #: The first URL-mode step of this request the user declined or cancelled, said as
    #: ``"the user declined ..."`` (None: none). A prompt or resource that then fails with
    #: ``ToolError`` fails by the user's choice: -32600, not -32603 (``dispatch``).
    refused: str | None = None

    def __init__(
        self,
        call: Call,
        channel: Channel,
        asker: Asker,
        principal: Principal | None = None,
        log_level: str | None = None,
        url_mode: UrlMode | None = None,
        detach: Detach | None = None,
        lifespan: Lifespan | None = None,
    ) -> None:
        # Positional parameters too: one Context is made per request, and a class called
        # with keyword arguments costs about twice as much to make.
        self.call = call
        self._detach = detach
        #: The task this request became (``start_task``), None while it answers in place.
        self.task: Running | None = None
        self._url_mode = url_mode
        self._lifespan = lifespan
        self._principal = principal
        self._channel = channel
        self._asker = asker
        self._log_level = log_level if log_level is not None else call.log_level
        #: How many questions of each kind (and ``_occurrence`` names) were asked; ``=key``: taken.
        self._counters: dict[str, int] = {}
        #: What of the caller's own the handler used (see ``used``); shared with a ThreadContext.
        self._used: set[str] = set()
        self._thread = threading.get_ident()
        self._interrupted = False

    # ---- what the client can do ------------------------------------------------

    @property
    def capabilities(self) -> ClientCapabilities:
        return self.call.capabilities

    @property
    def principal(self) -> Principal | None:
        """Who is calling (from the server's ``auth=``; None without it). A result made
        after reading it may say who, so it counts as the caller's own (``used``)."""
        self._used.add("principal")
        return self._principal

    @property
    def used(self) -> Collection[str]:
        """What of the caller's own the handler used so far: ``"principal"`` (it read
        ``principal``), ``"secret"`` (``secret()``), ``"connection"`` (``connect()``). A
        result made with it is theirs alone, for no shared cache, even when it took no
        answer (the secret was stored before)."""
        return self._used

    @property
    def lifespan_context(self) -> Any:
        """What the server's ``lifespan`` yielded (its database pool, its HTTP client...):
        this instance's, the same for every request; None without ``lifespan=``."""
        return self._lifespan.value if self._lifespan is not None else None

    @property
    def revision(self) -> str:
        return self.call.revision

    @property
    def client_info(self) -> Mapping[str, Any] | None:
        return self.call.client_info

    def _where(self) -> str:
        """This request as a log line names it (``log_labels.request_where``): ``request 7``,
        and ``, session 3f9c0a1e`` in a 2025-11-25 session."""
        return request_where(self.call.id, self._session_id())

    def _label(self) -> str:
        """This request and what it is about, for a log line (``log_labels.request_label``):
        ``tools/call 'pay' (request 7)``."""
        return request_label(self.call.method, self.call.params, self.call.id, self._session_id())

    def _session_id(self) -> str | None:
        session = getattr(self._asker, "session", None)  # a SessionAsker's (which imports this module)
        sid = getattr(session, "id", None)
        return sid if isinstance(sid, str) else None

    @property
    def waits_in_place(self) -> bool:
        """Whether an unanswered question makes the handler wait for its answer (a
        2025-11-25 session, a task) rather than end the round (2026-07-28 rounds)."""
        return isinstance(self._asker, InPlaceAsker)

    def can_elicit(self, mode: Literal["form", "url"] = "form") -> bool:
        caps = self.call.capabilities
        return caps.elicitation_form if mode == "form" else caps.elicitation_url

    def can_sample(self) -> bool:
        return self.call.capabilities.sampling

    def can_list_roots(self) -> bool:
        return self.call.capabilities.roots

    # ---- questions -------------------------------------------------------------

    @overload
    def elicit(self, message: str, schema: type[T], *, key: str | None = None) -> Question[FormAnswer[T]]: ...
    @overload
    def elicit(
        self, message: str, schema: FormSchema | Mapping[str, Any], *, key: str | None = None
    ) -> Question[FormAnswer[dict[str, Any]]]: ...

    def elicit(self, message: str, schema: Any, *, key: str | None = None) -> Question[Any]:
        """Ask the user to fill in a form (flat schema: a dataclass, TypedDict, pydantic
        model, ``Form(...)`` or JSON schema). Never for secrets: use ``elicit_url``."""
        self._interrupted = True  # until its Question is made
        self._live("elicit")
        if not isinstance(message, str) or not message or message.isspace():
            raise ValueError("an elicitation needs a message saying what is asked and why")
        form = schema if type(schema) is FormSchema else FormSchema.of(schema)
        if form.secret_findings:  # read with check_secrets=False, as a client reads: still refused
            found = form.secret_findings[0]
            raise SensitiveFieldError(found.message, field=found.field)
        if not self.call.capabilities.elicitation_form:  # raised when asked (see ``unaskable``)
            return unaskable(self, ELICIT, {}, form_missing(self.revision), key)
        if self.call.revision == REV_2025_06_18:  # no mode, fewer words
            try:
                params = form_params(message, form)
            except MissingClientCapability as lacking:  # a multi-select: raised when asked, too
                return unaskable(self, ELICIT, {}, lacking, key)
        else:
            params = {"mode": "form", "message": message, "requestedSchema": form.wire}
        return Question(self, Ask(self._key("elicit", key), ELICIT, params, form), None)

    def elicit_url(
        self, message: str, url: str, *, elicitation_id: str | None = None, key: str | None = None
    ) -> Question[Answer[None]]:
        """Send the user to ``url`` (secrets, payments, third-party sign-in). ``accept`` means
        the user agreed to open it; the work on that page may not be finished."""
        self._interrupted = True  # until its Question is made
        self._live("elicit_url")
        if not isinstance(message, str) or not message.strip():
            raise ValueError("a URL elicitation needs a message saying why the user should open the page")
        if elicitation_id is not None and (not isinstance(elicitation_id, str) or not elicitation_id.strip()):
            given = repr(elicitation_id) if isinstance(elicitation_id, str) else type(elicitation_id).__name__
            raise ValueError(
                "a URL step's elicitation_id (elicitationId) must be a non-empty string, the name "
                f"server.complete_elicitation completes it by, or None for none; not {given}"
            )
        check_url(url)
        if not self.can_elicit("url"):
            return unaskable(self, ELICIT, {"mode": "url"}, url_mode_missing(self.revision), key)
        warn_cleartext(url)
        params: dict[str, Any] = {"mode": "url", "message": message, "url": url}
        if elicitation_id is not None:
            params["elicitationId"] = elicitation_id
        ask = Ask(self._key("url", key), ELICIT, params)
        return Question(self, ask, lambda raw: self._url_answer(raw["action"], message))

    def _url_answer(self, action: Action, message: str) -> Answer[None]:
        self._refusing(action, f"the URL-mode step {shown(message)}")
        return Answer(action)

    def _refusing(self, action: str, step: str) -> None:
        """Remember ``step`` as ``refused`` when the user did not accept it (the first one)."""
        if action != "accept" and self.refused is None:
            self.refused = f"the user {'declined' if action == 'decline' else 'cancelled'} {step}"

    async def require_url(
        self, message: str, url: str, *, elicitation_id: str | None = None, key: str | None = None
    ) -> Answer[None]:
        """The request cannot go on until the user completes a step at ``url``: check first
        whether it is done (a token stored), so the retry passes. 2025-11-25: -32042 and the
        client retries once told it is done; 2026-07-28: asked, and with ``elicitation_id``,
        ``accept`` held until ``server.complete_elicitation`` (``url_steps``)."""
        self._live("require_url")
        question = self.elicit_url(message, url, elicitation_id=elicitation_id, key=key)
        try:
            answer = await require_step(self, self._asker, question.ask, self._url_mode)
        except BaseException:
            self._interrupted = True  # as Question._asking: the questions made before are not forgotten
            raise
        return question.result(answer)

    def url_steps(self, required: URLElicitationRequired) -> list[Ask]:
        """The questions of the URL steps a handler's own ``URLElicitationRequired`` names
        (``data.elicitations``), made as ``require_url`` makes them: the same checks and
        keys; a step whose ``mode`` is given and is not ``"url"`` is a ``ValueError``.
        (2026-07-28 asks them, and holds those with an id as ``require_url`` does:
        ``url_raised``; 2025-11-25 sends the error as it is.) In a task the request has
        already been answered: the error goes on, and fails the task."""
        if self.task is not None:
            raise required
        data = required.data if isinstance(required.data, Mapping) else {}
        steps = data.get("elicitations")
        if not isinstance(steps, list) or not steps or not all(isinstance(s, Mapping) for s in steps):
            raise ValueError(
                "URLElicitationRequired needs data={'elicitations': [{'message': ..., 'url': ...}, ...]}; "
                "or call ctx.require_url"
            )
        asks = []
        for step in steps:
            if (mode := step.get("mode", "url")) != "url":
                raise ValueError(
                    f"a URL step's mode must be 'url' (or left out), not {mode!r}; ask with ctx.elicit"
                )
            question = self.elicit_url(
                step.get("message"), step.get("url"), elicitation_id=step.get("elicitationId")
            )
            asks.append(question.ask)
        return asks

    def _settle_raised(
        self, replay: Replay, required: URLElicitationRequired, *, tool: bool, hold: bool
    ) -> Coroutine[Any, Any, bool]:
        """On 2026-07-28, ask or hold the steps of the handler's own ``required``; True
        when the handler is to run again now (``url_raised.settle``)."""
        return settle(self, replay, required, tool=tool, hold=hold)

    def sample(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        model_preferences: Mapping[str, Any] | None = None,
        key: str | None = None,
    ) -> Question[CreateMessageResult]:
        """Ask the client's model for a completion (needs the ``sampling`` capability)."""
        self._interrupted = True  # until its Question is made
        self._live("sample")
        if not self.can_sample():
            return unaskable(self, SAMPLE, {}, MissingClientCapability.requiring({"sampling": {}}), key)
        if isinstance(messages, str):
            wire_messages: list[Any] = [{"role": "user", "content": {"type": "text", "text": messages}}]
        else:
            wire_messages = [dict(m) for m in messages]
        params: dict[str, Any] = {"messages": wire_messages, "maxTokens": max_tokens}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        if temperature is not None:
            params["temperature"] = temperature
        if model_preferences is not None:
            params["modelPreferences"] = dict(model_preferences)
        check_sampling(params)
        ask = Ask(self._key("sample", key), SAMPLE, params)
        return Question(self, ask, CreateMessageResult.model_validate)

    def list_roots(self, *, key: str | None = None) -> Question[list[Root]]:
        """Ask the client for its roots (needs the ``roots`` capability)."""
        self._interrupted = True  # until its Question is made
        self._live("list_roots")
        if not self.can_list_roots():
            return unaskable(self, LIST_ROOTS, {}, MissingClientCapability.requiring({"roots": {}}), key)
        ask = Ask(self._key("roots", key), LIST_ROOTS, {})
        return Question(self, ask, lambda raw: [Root.model_validate(r) for r in raw.get("roots", [])])

    # Typed by arity, as asyncio.gather is: each answer keeps its question's type.
    @overload
    async def gather(self) -> tuple[()]: ...
    @overload
    async def gather(self, q1: Question[T1], /) -> tuple[T1]: ...
    @overload
    async def gather(self, q1: Question[T1], q2: Question[T2], /) -> tuple[T1, T2]: ...
    @overload
    async def gather(self, q1: Question[T1], q2: Question[T2], q3: Question[T3], /) -> tuple[T1, T2, T3]: ...
    @overload
    async def gather(
        self, q1: Question[T1], q2: Question[T2], q3: Question[T3], q4: Question[T4], /
    ) -> tuple[T1, T2, T3, T4]: ...
    @overload
    async def gather(
        self, q1: Question[T1], q2: Question[T2], q3: Question[T3], q4: Question[T4], q5: Question[T5], /
    ) -> tuple[T1, T2, T3, T4, T5]: ...
    @overload
    async def gather(
        self,
        q1: Question[T1],
        q2: Question[T2],
        q3: Question[T3],
        q4: Question[T4],
        q5: Question[T5],
        q6: Question[T6],
        /,
    ) -> tuple[T1, T2, T3, T4, T5, T6]: ...
    @overload
    async def gather(
        self,
        q1: Question[T],
        q2: Question[T],
        q3: Question[T],
        q4: Question[T],
        q5: Question[T],
        q6: Question[T],
        q7: Question[T],
        /,
        *more: Question[T],
    ) -> tuple[T, ...]: ...

    async def gather(self, *questions: Question[Any]) -> tuple[Any, ...]:
        """Ask several questions in one round; the answers come back as a tuple, in the
        same order, each typed as its question's (``ctx.elicit``'s ``FormAnswer``...;
        past six questions, the union of their types). A tuple, not
        the list of earlier versions: unpacking and indexing are unchanged, but compare
        with a tuple and copy to a list to change it."""
        asks = gathered(questions)
        self._live("gather")
        try:
            raws = await self._asker.ask(asks)
        except BaseException:
            self._interrupted = True  # as Question._asking: the questions made before are not forgotten
            raise
        return tuple([q.result(raw) for q, raw in zip(questions, raws, strict=True)])

    async def secret(self, name: str, *, message: str | None = None) -> SecretAnswer:
        """A secret (an API key...) the user types into the server's own page, never into
        the client: returned at once when this principal stored it before, else asked for
        with a URL-mode elicitation. ``answer.secret`` is a server-side handle."""
        self._live("secret")
        if not isinstance(name, str) or not name.strip():
            given = repr(name) if isinstance(name, str) else type(name).__name__
            raise ValueError(
                f"a secret's name must be a non-empty string (what the vault keeps it under and its "
                f'page asks for, e.g. "openai_api_key"), not {given}'
            )
        if self._url_mode is None:
            raise RuntimeError("this Context has no URL mode (it was built outside a Server)")
        self._used.add("secret")
        answer = await self._url_mode.secret(self, name, message)
        self._refusing(answer.action, f"the page asking for {shown(name)}")
        return answer

    async def connect(self, provider: str, *, message: str | None = None) -> ConnectAnswer:
        """A connection to the third-party ``provider`` (registered with
        ``Server.oauth_provider``) for this principal: returned at once when they connected
        before (the tokens are refreshed when expired), else asked for with a URL-mode
        elicitation whose page sends them to the provider to sign in. ``answer.connection``
        is a server-side handle; its tokens never reach the client."""
        self._live("connect")
        if self._url_mode is None:
            raise RuntimeError("this Context has no URL mode (it was built outside a Server)")
        self._used.add("connection")
        answer = await self._url_mode.connect(self, provider, message)
        self._refusing(answer.action, f"the page connecting {shown(provider)}")
        return answer

    async def start_task(self, message: str | None = None) -> bool:
        """Go on as a task: the request is answered now with the task's id, and the client
        follows the task with ``tasks/get``. True when this call is (now) a task; False
        when it goes on in place (the client did not declare the tasks extension, the
        revision has no tasks, the tool was not registered with ``task=``, or the server
        holds as many tasks as it may, in all or for this principal). Questions asked before this are multi round-trip
        rounds; after it, they wait in the task. ``message`` is the task's first
        ``statusMessage``."""
        self._live("start_task")
        if self.task is not None:
            return True
        if self._detach is None:
            return False
        self.task = self._detach.start(message)
        if self.task is None:  # the server holds as many tasks as it may (in all, or for this principal)
            self._detach = None
            return False
        self._asker = TaskAsker(self._detach.tasks, self.task, dict(self._asker.memo))
        self._channel = NO_STREAM
        return True

    async def pause(self) -> None:
        """Let the client come back shortly (2026-07-28: a state-only ``input_required``
        round, the handler then run from its start; a client allows few in a row, ours 5);
        on 2025-11-25 and in a task wait in place as our client does (0, 0.1, 0.25, 0.5, then
        1 s each, unbounded): ``while not done(): pause()`` serves both for work of seconds."""
        self._live("pause")
        await self._asker.pause()

    async def close_stream(self) -> bool:
        """End this request's response stream now, before the answer: the client
        reconnects (``GET`` with ``Last-Event-ID``) and gets what follows, the answer
        included. Only a 2025-11-25 session over HTTP can (SEP-1699 polling: it frees a
        connection during a long wait); elsewhere nothing happens and this returns False."""
        self._live("close_stream")
        return await self._channel.close_stream()
