"""The stamp a URL-mode form carries: which flow its page was served for, whose, and
until when, sealed with the server's state keys, so that a form sent once the flow is
gone (the page outlived it, the server restarted) is told apart from one never served.

Rules:

* The stamp is a sealed token (``sealing.StateSealer``) bound to the flow's id: a
  stamp copied to another flow's address, changed, or sealed under other keys does not
  open. It holds the flow's kind, name, principal and end; nothing of it is readable.
* It opens for ``STAMP_GRACE`` seconds past its flow's end: that long, a person who left
  the page open is told it expired; past that, the form is refused as one never served.
* A stamp grants nothing. It only chooses the words of a refusal for a form that finds
  no flow, and only for the same user as the flow's (``pages``: the same checks as a
  flow's own page); everything else gets the refusal it would without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import orjson

from mcp_elicit.errors import InvalidRequestState
from mcp_elicit.sealing import Binding, StateSealer
from mcp_elicit.server.flows import Flow

__all__ = ["STAMP_GRACE", "Stamp", "open_stamp", "stamp"]

#: Seconds past its flow's end that a page's stamp still opens (a tab left open overnight).
STAMP_GRACE: Final = 86400.0
_METHOD: Final = "mcp-elicit/page"


@dataclass(frozen=True, slots=True)
class Stamp:
    """What a page's stamp says of the flow it was served for."""

    flow: Flow

    def expired(self, now: float) -> bool:
        return self.flow.expires <= now


def stamp(sealer: StateSealer, flow: Flow, now: float) -> str:
    """The stamp of a page served now for ``flow``."""
    payload = orjson.dumps(
        {"kind": flow.kind, "name": flow.name, "principal": flow.principal, "expires": flow.expires}
    )
    left = max(flow.expires - now, 0.0)
    return sealer.seal(payload, _binding(flow.id), now=now, ttl=left + STAMP_GRACE)


def open_stamp(sealer: StateSealer, token: str, flow_id: str, now: float) -> Stamp | None:
    """What ``token`` says, when it is a stamp this server made for ``flow_id``; else None."""
    try:
        record = orjson.loads(sealer.open(token, _binding(flow_id), now=now))
        return Stamp(
            Flow(
                id=flow_id,
                kind=str(record["kind"]),
                name=str(record["name"]),
                principal=record["principal"],
                expires=float(record["expires"]),
            )
        )
    except (InvalidRequestState, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def _binding(flow_id: str) -> Binding:
    return Binding(_METHOD, flow_id, b"")
