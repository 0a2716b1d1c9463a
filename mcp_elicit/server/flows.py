"""URL-mode flows: the out-of-band step a person does on a web page (enter a secret, sign
in to a third party), tracked from the question to its completion.

Rules:

* A flow has an unguessable id (128 bits) and belongs to the principal who started it.
  It lives in the store (so any instance can serve its page or its retry) and expires
  (default 10 minutes).
* Its link carries a second, single-use token, used up in two steps. Presenting it
  (``claim``) gives the browser a cookie and records a *pending claim* under the cookie's
  digest (until the flow expires); it uses nothing up, so an answer lost on its way, or a
  link preview that keeps no cookie, leaves the link working. A browser coming back with a
  pending claim's cookie (``confirm``) adds its cookie's digest as the flow's holder
  atomically (``Store.add``): the first to come back holds the flow, every later confirm
  (another browser's, or the same browser's request a moment later) reads who does, and
  the link and every other pending claim are dead. Only that browser may then act on the flow. Links
  hold no personal data and grant access to nothing but this one flow's page.
* A flow ends once: the first ``finish`` (complete, declined, cancelled, failed), on any
  instance, adds the flow's end marker (``Store.add``, atomic); a later one changes
  nothing and learns how the flow ended. The marker is the truth: a pending record
  written back late (a claim in flight) cannot reopen an ended flow.
* Ending a flow publishes an event on the flow's channel; a retry waiting on any
  instance wakes at once. Waiters subscribe before they look, so no completion is missed
  (``watch``, which the wait for a handler's own URL step shares: ``server.url_steps``).
* A stored record is checked field by field when read. Fields this version does not know
  (written by a newer one) are ignored; a record that cannot be read (damaged, or missing
  what this version needs) is logged and reads as gone, as an expired flow does; an end
  marker that cannot be read still ends the flow, as ``failed``.
* One principal has at most ``limit`` flows of this process open at once
  (``FlowQuota``; unauthenticated callers are one), so no one caller can fill the store
  (an LRU Redis would evict other users' flows): a flow counts from its start until this
  process sees it end or it expires. At the limit, the flows are looked up (at most once
  per ``recheck`` seconds: a page may have ended on another instance) before the next is
  refused with ``PrincipalLimitReached`` (-32600, HTTP 429: the caller's own doing, as for
  sessions and subscriptions) saying so.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeVar, get_args

import orjson

from mcp_elicit.server.shares import share_held
from mcp_elicit.stores.base import Store

__all__ = ["MAX_PENDING_CLAIMS", "ClaimsExhausted", "Flow", "FlowQuota", "FlowStatus", "Flows", "watch"]

T = TypeVar("T")

FlowStatus = Literal["pending", "complete", "declined", "cancelled", "failed"]
#: Principals ``FlowQuota`` holds before its first sweep of expired flows.
_SWEEP_LEAST = 256
NAMESPACE = "flow"
_STATUSES: frozenset[str] = frozenset(get_args(FlowStatus))
#: What ``start`` makes (``token_urlsafe``), with room to spare.
_FLOW_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: What ``_digest`` gives, as stored.
_DIGEST = re.compile(rb"[0-9a-f]{64}")
#: Pending claims of one flow at most (openings of its link no browser came back from).
MAX_PENDING_CLAIMS = 16

log = logging.getLogger("mcp_elicit.flows")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii", "replace")).hexdigest()


@dataclass
class Flow:
    id: str
    kind: str
    name: str
    principal: str | None
    expires: float
    status: FlowStatus = "pending"
    browser: str | None = None
    detail: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.status != "pending"

    @classmethod
    def from_record(cls, raw: bytes) -> Flow:
        """The flow a stored record holds; ``ValueError`` saying what is wrong with it."""
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ValueError("not JSON") from None
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        for name in ("id", "kind", "name"):
            _field(record, name, str, required=True)
        _field(record, "principal", str)
        _field(record, "browser", str)
        _field(record, "detail", str)
        _field(record, "extra", dict)
        expires = record.get("expires")
        if isinstance(expires, bool) or not isinstance(expires, int | float):
            raise ValueError("'expires' is not a number")
        status = record.get("status", "pending")
        if status not in _STATUSES:
            raise ValueError(f"unknown status {str(status)[:20]!r}")
        return cls(
            id=record["id"],
            kind=record["kind"],
            name=record["name"],
            principal=record.get("principal"),
            expires=float(expires),
            status=status,
            browser=record.get("browser"),
            detail=record.get("detail"),
            extra=dict(record.get("extra") or {}),
        )

    def owns(self, cookie: str | None) -> bool:
        """True when ``cookie`` is the one given to the browser that claimed the flow."""
        return (
            bool(cookie)
            and self.browser is not None
            and hmac.compare_digest(self.browser, _digest(cookie or ""))
        )


class ClaimsExhausted(Exception):
    """A flow's link was opened ``MAX_PENDING_CLAIMS`` times with no browser back yet."""


class Flows:
    def __init__(
        self,
        store: Store,
        *,
        ttl: float = 600.0,
        recheck: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.ttl = ttl
        #: Seconds between looks at the flow while waiting, for events that do not cross processes.
        self.recheck = recheck
        self.clock = clock

    async def start(self, kind: str, name: str, principal: str | None, **extra: Any) -> tuple[Flow, str]:
        """A new pending flow and the single-use token for its link."""
        flow = Flow(
            id=secrets.token_urlsafe(16),
            kind=kind,
            name=name,
            principal=principal,
            expires=self.clock() + self.ttl,
            extra=dict(extra),
        )
        link = secrets.token_urlsafe(24)
        await self.save(flow)
        await self.store.put(NAMESPACE, f"link:{_digest(link)}", flow.id.encode(), ttl=self.ttl)
        return flow, link

    async def get(self, flow_id: str) -> Flow | None:
        if not _FLOW_ID.fullmatch(flow_id):  # from a page address: anything at all
            return None
        raw = await self.store.get(NAMESPACE, f"id:{flow_id}")
        if raw is None:
            return None
        try:
            flow = Flow.from_record(raw)
        except ValueError as exc:
            log.warning(
                "flow %s: its stored record cannot be read (%s); treating it as gone", flow_id[:6], exc
            )
            return None
        if flow.expires <= self.clock():
            return None
        if not flow.done:  # the record may lag behind the end marker
            ended = await self.store.get(NAMESPACE, f"end:{flow_id}")
            if ended is not None:
                flow.status, flow.detail = _end(flow_id, ended)
        if flow.browser is None:  # and behind the confirmed claim (a save written over it)
            held = await self.store.get(NAMESPACE, f"held:{flow_id}")
            if held is not None and _DIGEST.fullmatch(held):
                flow.browser = held.decode("ascii")
        return flow

    async def save(self, flow: Flow) -> None:
        ttl = max(flow.expires - self.clock(), 1.0)
        await self.store.put(NAMESPACE, f"id:{flow.id}", orjson.dumps(asdict(flow)), ttl=ttl)

    async def claim(self, flow_id: str, link: str) -> tuple[Flow, str] | None:
        """A pending claim of ``flow_id`` by the link token ``link``: the flow and a cookie
        for the browser, which ``confirm`` makes the flow's. The link stays usable until a
        claim is confirmed. None when the link is not (or no longer) this open flow's."""
        if not link or len(link) > 128:
            return None
        owner = await self.store.get(NAMESPACE, f"link:{_digest(link)}")
        if owner is None or not hmac.compare_digest(owner, flow_id.encode()):
            return None
        flow = await self.get(flow_id)
        if flow is None or flow.done or flow.browser is not None:  # held: the link is dead
            return None
        ttl = max(flow.expires - self.clock(), 1.0)
        if not await self._pending_slot(flow.id, ttl):
            raise ClaimsExhausted(flow.id)
        cookie = secrets.token_urlsafe(24)
        pending = orjson.dumps({"flow": flow.id, "link": _digest(link)})
        await self.store.put(NAMESPACE, f"claim:{_digest(cookie)}", pending, ttl=ttl)
        return flow, cookie

    async def _pending_slot(self, flow_id: str, ttl: float) -> bool:
        """One of the flow's ``MAX_PENDING_CLAIMS`` places for a pending claim, taken
        atomically (``Store.add``, first free place first) until the flow expires; False
        when all are taken (the last one taken says so in one look)."""
        if await self.store.get(NAMESPACE, f"pending:{flow_id}:{MAX_PENDING_CLAIMS - 1}") is not None:
            return False
        for place in range(MAX_PENDING_CLAIMS):
            if await self.store.add(NAMESPACE, f"pending:{flow_id}:{place}", b"1", ttl=ttl):
                return True
        return False

    async def claiming(self, flow: Flow, cookie: str | None) -> bool:
        """True when ``cookie`` is that of a pending claim of ``flow`` (confirmed or not)."""
        return await self._link_claimed(flow, cookie) is not None

    async def confirm(self, flow: Flow, cookie: str) -> Flow | None:
        """The browser holding ``cookie`` (a pending claim's) comes back: the first to do
        so is recorded, atomically, as the flow's browser (``held:<id>``, which ``get``
        reads) and the link token is taken. The flow as it now stands (None when gone); it
        ``owns(cookie)`` unless another browser came back first (its ``browser`` then says
        so, even while that browser's confirm is still under way) or the claim is not this
        flow's."""
        link = await self._link_claimed(flow, cookie)
        if link is None:
            return await self.get(flow.id)
        latest = await self.get(flow.id)
        if latest is None or latest.browser is not None:
            return latest  # another browser came first (or, the same one, a moment ago)
        held = _digest(cookie)
        ttl = max(latest.expires - self.clock(), 1.0)
        if not await self.store.add(NAMESPACE, f"held:{flow.id}", held.encode("ascii"), ttl=ttl):
            return await self.get(flow.id)  # it reads who holds it
        latest.browser = held
        await self.save(latest)
        await self.store.take(NAMESPACE, f"link:{link}")
        await self.store.delete(NAMESPACE, f"claim:{held}")
        return latest

    async def _link_claimed(self, flow: Flow, cookie: str | None) -> str | None:
        """The digest of the link a pending claim by ``cookie`` presented for ``flow``."""
        if not cookie or len(cookie) > 128:
            return None
        raw = await self.store.get(NAMESPACE, f"claim:{_digest(cookie)}")
        try:
            pending = orjson.loads(raw) if raw is not None else None
        except orjson.JSONDecodeError:
            pending = None
        if not isinstance(pending, dict) or not isinstance(link := pending.get("link"), str):
            return None
        return link if pending.get("flow") == flow.id else None

    async def finish(self, flow: Flow, status: FlowStatus, detail: str | None = None) -> bool:
        """End the flow with ``status`` and wake whoever waits for it; True when this call
        ended it. False when it had already ended (here or on another instance): nothing
        changes, and ``flow`` now shows how it ended."""
        ttl = max(flow.expires - self.clock(), 1.0)
        end = orjson.dumps({"status": status, "detail": detail})
        if not await self.store.add(NAMESPACE, f"end:{flow.id}", end, ttl=ttl):
            current = await self.get(flow.id)
            if current is not None:
                flow.status, flow.detail = current.status, current.detail
            return False
        latest = await self.get(flow.id) or flow  # keep what a claim recorded meanwhile
        latest.status = flow.status = status
        latest.detail = flow.detail = detail
        await self.save(latest)
        await self.store.publish(f"flow:{flow.id}", status.encode())
        return True

    async def wait(self, flow_id: str, timeout: float) -> Flow | None:
        """The flow once it is done, or as it stands after ``timeout`` seconds.

        Woken by the completion event; it also looks again every ``recheck`` seconds, for
        backends whose events do not cross processes (SQLite)."""

        async def look() -> tuple[bool, Flow | None]:
            flow = await self.get(flow_id)
            return flow is None or flow.done, flow

        return await watch(
            self.store, f"flow:{flow_id}", look, timeout, recheck=self.recheck, clock=self.clock
        )


async def watch(
    store: Store,
    channel: str,
    look: Callable[[], Awaitable[tuple[bool, T]]],
    timeout: float,
    *,
    recheck: float,
    clock: Callable[[], float],
) -> T:
    """What ``look()`` gives once it says it is done, or as it stands after ``timeout``
    seconds: it looks once subscribed to ``channel``, again whenever a message comes on
    it, and at least every ``recheck`` seconds (events that do not cross processes)."""
    async with store.subscribe(channel) as events:
        deadline = clock() + timeout
        while True:
            done, value = await look()
            left = deadline - clock()
            if done or left <= 0:
                return value
            await events.next(min(left, recheck))


class FlowQuota:
    """The flows this process started and has not seen end, by principal (with when each
    expires): at most ``limit`` of one principal's. A flow nobody finished is dropped once
    it expired: its principal's on their next flow, everyone's on a sweep whenever the
    principals held have doubled since the last one (so callers who never come back are
    not kept for the life of the process)."""

    def __init__(self, limit: int, *, clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self.clock = clock
        self._open: dict[str | None, dict[str, float]] = {}
        self._looked: dict[str | None, float] = {}
        self._tickets = itertools.count()
        self._sweep_at = _SWEEP_LEAST

    def __len__(self) -> int:
        """How many principals it holds flows of."""
        return len(self._open)

    async def admit(self, principal: str | None, flows: Flows) -> str:
        """A place for one more flow of ``principal`` while it starts (a ticket: give it to
        :meth:`ended` once it started, or failed to); ``PrincipalLimitReached`` when it has
        ``limit`` open. The place is taken at once, so requests at the same time
        cannot all pass."""
        now = self.clock()
        if len(self._open) >= self._sweep_at:
            self._sweep(now)
        held = self._open.setdefault(principal, {})
        for flow_id, expires in list(held.items()):
            if expires <= now:
                del held[flow_id]
        if len(held) >= self.limit and now - self._looked.get(principal, -flows.recheck) >= flows.recheck:
            self._looked[principal] = now
            # "?": a flow starting (a ticket), not in the store yet
            gone = [f for f in list(held) if not f.startswith("?") and await _gone(flows, f)]
            # while it looked, the principal's flows may all have ended (or expired, and a
            # sweep run): the list it held is then forgotten, and another ask may have
            # started a new one; count in the one kept now
            held = self._open.setdefault(principal, {})
            self._looked[principal] = now
            for flow_id in gone:
                held.pop(flow_id, None)
        if len(held) < self.limit:
            ticket = f"?{next(self._tickets)}"
            held[ticket] = now + flows.ttl
            return ticket
        raise share_held(
            "URL-mode pages open",
            principal,
            self.limit,
            "max_flows_per_principal",
            f"finish or close one of them, or try again once they expire (within {flows.ttl:.0f} s)",
        )

    def opened(self, flow: Flow) -> None:
        self._open.setdefault(flow.principal, {})[flow.id] = flow.expires

    def ended(self, flow_id: str, principal: str | None) -> None:
        held = self._open.get(principal)
        if held is not None:
            held.pop(flow_id, None)
            if not held:
                self._forget(principal)

    def _forget(self, principal: str | None) -> None:
        self._open.pop(principal, None)
        self._looked.pop(principal, None)

    def _sweep(self, now: float) -> None:
        """Drop every expired flow, and every principal left with none."""
        for principal, held in list(self._open.items()):
            for flow_id in [f for f, expires in held.items() if expires <= now]:
                del held[flow_id]
            if not held:
                self._forget(principal)
        self._sweep_at = max(_SWEEP_LEAST, 2 * len(self._open))


async def _gone(flows: Flows, flow_id: str) -> bool:
    """True when the flow ``flow_id`` has ended or expired."""
    flow = await flows.get(flow_id)
    return flow is None or flow.done


def _field(record: dict[str, Any], name: str, kind: type, *, required: bool = False) -> None:
    value = record.get(name)
    if (value is not None or required) and not isinstance(value, kind):
        raise ValueError(f"{name!r} is not a {'string' if kind is str else 'JSON object'}")


def _end(flow_id: str, raw: bytes) -> tuple[FlowStatus, str | None]:
    """How an end marker says the flow ended; ``failed`` when it cannot be read."""
    try:
        end = orjson.loads(raw)
        status, detail = end["status"], end.get("detail")
        if status in _STATUSES and status != "pending" and (detail is None or isinstance(detail, str)):
            return status, detail
    except (orjson.JSONDecodeError, TypeError, KeyError, AttributeError):
        pass
    log.warning("flow %s: its end marker cannot be read; treating the flow as failed", flow_id[:6])
    return "failed", None
