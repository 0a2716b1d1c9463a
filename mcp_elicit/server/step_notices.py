"""The message that tells the instances sharing a store that a principal's URL step is
done (``Server.complete_elicitation``), so that their 2025-11-25 sessions waiting on it
hear ``notifications/elicitation/complete``: a session lives on the instance that opened
it, while the page's backend that completes its step may call any instance, or run in a
process of its own.

Rules:

* It holds the step's id and its principal, nothing else, sealed with the server's keys
  for this use only and for ``TTL`` seconds (``seal``): nothing of it can be read on the
  store's channel, and it cannot be made by anyone without the keys.
* ``open_notice`` gives the id and the principal back; a message that does not open
  (another server's keys, altered, late) or holds anything else gives None, and is ignored.
"""

from __future__ import annotations

import orjson

from mcp_elicit.errors import InvalidRequestState
from mcp_elicit.sealing import Binding, StateSealer

__all__ = ["TTL", "open_notice", "seal"]

#: Seconds a notice may travel.
TTL = 60.0
_USE = Binding("relay/elicitation/complete", "", b"")


def seal(sealer: StateSealer, elicitation_id: str, principal: str | None, *, now: float) -> str:
    """The sealed notice that ``principal``'s step ``elicitation_id`` is done."""
    return sealer.seal(orjson.dumps([elicitation_id, principal]), _USE, now=now, ttl=TTL)


def open_notice(sealer: StateSealer, sealed: object, *, now: float) -> tuple[str, str | None] | None:
    """The step id and principal a sealed notice holds; None when it does not open."""
    try:
        step = orjson.loads(sealer.open(sealed, _USE, now=now))
    except (InvalidRequestState, orjson.JSONDecodeError):
        return None
    if not (isinstance(step, list) and len(step) == 2 and isinstance(step[0], str)):
        return None
    principal = step[1]
    return (step[0], principal) if principal is None or isinstance(principal, str) else None
