"""``subscriptions/listen`` (revision 2026-07-28): what a listener asked for, what the
server agrees to, and which notifications reach it. No I/O.

Rules:

* Every notification type is opt-in: ``toolsListChanged``, ``promptsListChanged``,
  ``resourcesListChanged`` (booleans), ``resourceSubscriptions`` (resource URIs) and, with
  the tasks extension, ``taskIds``. A listener gets only what it asked for and the server
  agreed to; the acknowledgement names exactly that (a type the server does not offer is
  left out, as is a URI no resource or template serves, or a task the listener may not see).
* Every message of a subscription carries ``io.modelcontextprotocol/subscriptionId`` (the
  id of its ``subscriptions/listen`` request) in ``_meta``; the acknowledgement comes first.
* Bounded: at most ``MAX_ITEMS`` URIs and as many task ids per listener, a URI of at most
  ``MAX_URI`` characters and a task id of at most ``MAX_TASK_ID`` (longer than any the
  server makes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcp_elicit.errors import InvalidParams

__all__ = ["MAX_ITEMS", "MAX_TASK_ID", "MAX_URI", "SUBSCRIPTION_ID", "Filter", "stamped"]

SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
MAX_ITEMS: Final = 100
#: The longest resource URI a subscription may name, and the longest task id.
MAX_URI: Final = 8192
MAX_TASK_ID: Final = 256
_FLAGS: Final = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}


@dataclass(frozen=True, slots=True)
class Filter:
    """The notification types of one subscription."""

    flags: frozenset[str] = frozenset()
    uris: frozenset[str] = frozenset()
    task_ids: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, params: Mapping[str, Any]) -> Filter:
        """``params.notifications`` of a ``subscriptions/listen`` request, or -32602."""
        raw = params.get("notifications")
        if not isinstance(raw, Mapping):
            raise InvalidParams('Invalid params: subscriptions/listen needs "notifications" (an object)')
        flags = set()
        for name in _FLAGS:
            value = raw.get(name)
            if value is not None and not isinstance(value, bool):
                raise InvalidParams(f"Invalid params: notifications.{name} must be true or false")
            if value:
                flags.add(name)
        return cls(
            frozenset(flags),
            _strings(raw, "resourceSubscriptions", MAX_URI),
            _strings(raw, "taskIds", MAX_TASK_ID),
        )

    def agreed(
        self, *, offered: frozenset[str], served_uris: frozenset[str], visible_tasks: frozenset[str]
    ) -> Filter:
        """What the server honours: the flags it ``offered``, the URIs it serves to this
        listener, the tasks the listener may see."""
        return Filter(self.flags & offered, self.uris & served_uris, self.task_ids & visible_tasks)

    def wire(self) -> dict[str, Any]:
        """The ``notifications`` object of the acknowledgement."""
        out: dict[str, Any] = {name: True for name in sorted(self.flags)}
        if self.uris:
            out["resourceSubscriptions"] = sorted(self.uris)
        if self.task_ids:
            out["taskIds"] = sorted(self.task_ids)
        return out

    def wants(self, method: str, params: Mapping[str, Any]) -> bool:
        """Whether this subscription gets the notification ``method`` with ``params``."""
        if method == "notifications/resources/updated":
            return params.get("uri") in self.uris
        if method == "notifications/tasks":
            return params.get("taskId") in self.task_ids
        return any(_FLAGS[flag] == method for flag in self.flags)


def stamped(params: Mapping[str, Any], subscription: object) -> dict[str, Any]:
    """``params`` with the subscription's id in ``_meta``."""
    meta = params.get("_meta")
    return {**params, "_meta": {**(meta if isinstance(meta, Mapping) else {}), SUBSCRIPTION_ID: subscription}}


def _strings(raw: Mapping[str, Any], name: str, longest: int) -> frozenset[str]:
    value = raw.get(name)
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidParams(f"Invalid params: notifications.{name} must be an array of strings")
    if len(value) > MAX_ITEMS:
        raise InvalidParams(f"Invalid params: notifications.{name} lists more than {MAX_ITEMS} items")
    if any(len(v) > longest for v in value):
        raise InvalidParams(
            f"Invalid params: notifications.{name} holds an item longer than {longest} characters"
        )
    return frozenset(value)
