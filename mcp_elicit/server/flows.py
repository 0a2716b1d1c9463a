"""URL-mode flows: the out-of-band step a person does on a web page (enter a secret, sign
in to a third party), tracked from the question to its completion.

Rules:

* A flow has an unguessable id (128 bits) and belongs to the principal who started it.
  It lives in the store (so any instance can serve its page or its retry) and expires
  (default 10 minutes).
* Its link carries a second, single-use token. The first browser to present it claims the
  flow: the token is consumed atomically (``Store.take``) and the browser gets a cookie;
  only that browser may then act on the flow. Links hold no personal data and grant
  access to nothing but this one flow's page.
* A flow ends once: the first ``finish`` (complete, declined, cancelled, failed), on any
  instance, adds the flow's end marker (``Store.add``, atomic); a later one changes
  nothing and learns how the flow ended. The marker is the truth: a pending record
  written back late (a claim in flight) cannot reopen an ended flow.
* Ending a flow publishes an event on the flow's channel; a retry waiting on any
  instance wakes at once. Waiters subscribe before they look, so no completion is missed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import orjson

from mcp_elicit.stores.base import Store

__all__ = ["Flow", "FlowStatus", "Flows"]

FlowStatus = Literal["pending", "complete", "declined", "cancelled", "failed"]
NAMESPACE = "flow"


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

    def owns(self, cookie: str | None) -> bool:
        """True when ``cookie`` is the one given to the browser that claimed the flow."""
        return (
            bool(cookie)
            and self.browser is not None
            and hmac.compare_digest(self.browser, _digest(cookie or ""))
        )


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
        if not flow_id or len(flow_id) > 64:
            return None
        raw = await self.store.get(NAMESPACE, f"id:{flow_id}")
        if raw is None:
            return None
        flow = Flow(**orjson.loads(raw))
        if flow.expires <= self.clock():
            return None
        if not flow.done:  # the record may lag behind the end marker
            ended = await self.store.get(NAMESPACE, f"end:{flow_id}")
            if ended is not None:
                end = orjson.loads(ended)
                flow.status, flow.detail = end["status"], end["detail"]
        return flow

    async def save(self, flow: Flow) -> None:
        ttl = max(flow.expires - self.clock(), 1.0)
        await self.store.put(NAMESPACE, f"id:{flow.id}", orjson.dumps(asdict(flow)), ttl=ttl)

    async def claim(self, flow_id: str, link: str) -> tuple[Flow, str] | None:
        """Consume the link token of ``flow_id``; the flow and a cookie for the browser."""
        if not link or len(link) > 128:
            return None
        owner = await self.store.take(NAMESPACE, f"link:{_digest(link)}")
        if owner is None or not hmac.compare_digest(owner, flow_id.encode()):
            return None
        flow = await self.get(flow_id)
        if flow is None or flow.done:
            return None
        cookie = secrets.token_urlsafe(24)
        flow.browser = _digest(cookie)
        await self.save(flow)
        return flow, cookie

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
        async with self.store.subscribe(f"flow:{flow_id}") as events:
            deadline = self.clock() + timeout
            while True:
                flow = await self.get(flow_id)
                left = deadline - self.clock()
                if flow is None or flow.done or left <= 0:
                    return flow
                await events.next(min(left, self.recheck))
