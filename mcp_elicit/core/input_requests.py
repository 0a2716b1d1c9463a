"""The ``inputRequests`` of an ``input_required`` result (2026-07-28; a task's too): what a
server may ask, and each entry checked before anyone is asked. No I/O.

Rules:

* ``inputRequests`` is absent or null (nothing asked), or an object of key to request;
  any other value is a ``ProtocolViolation`` quoting it (``not_a_map``, which also says
  why a round's explicit null is refused: ``core.rounds``).
* At most ``limit`` entries (``MAX_INPUT_REQUESTS``, 32, by default): more is a
  ``ProtocolViolation``, and none of them is answered.
* Each entry is an object whose ``method`` is one of ``INPUT_REQUEST_METHODS``
  (``elicitation/create``, ``sampling/createMessage``, ``roots/list``) and whose
  ``params``, when given, are an object; a fault names the entry's key.
* A URL step (an ``elicitation/create`` in ``url`` mode) is *accepted* (``accepted_url``)
  when its answer's ``action`` is ``accept``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcp_elicit.core.quoting import quoted
from mcp_elicit.errors import ProtocolViolation

__all__ = [
    "INPUT_REQUEST_METHODS",
    "MAX_INPUT_REQUESTS",
    "InputRequest",
    "accepted_url",
    "input_requests",
    "not_a_map",
]

#: What a server may ask inside ``inputRequests``.
INPUT_REQUEST_METHODS: Final = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
#: The most input requests one round (or one task poll) may carry.
MAX_INPUT_REQUESTS: Final = 32


@dataclass(frozen=True, slots=True)
class InputRequest:
    """One entry of ``inputRequests``: what the server asks, under its key."""

    key: str
    method: str
    params: Mapping[str, Any]


def input_requests(raw: object, method: str, *, limit: int = MAX_INPUT_REQUESTS) -> tuple[InputRequest, ...]:
    """The entries of an ``inputRequests`` map (from a ``method`` result), checked; more
    than ``limit`` of them is a ``ProtocolViolation``."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise ProtocolViolation(not_a_map(method, raw))
    if len(raw) > limit:
        raise ProtocolViolation(
            f"the {method} result carries {len(raw)} input requests in one round; this client "
            f"answers at most {limit} (RoundLimits.max_requests), so none was answered"
        )
    out: list[InputRequest] = []
    for key, entry in raw.items():
        if not isinstance(entry, Mapping):
            raise ProtocolViolation(f"input request {quoted(key)} must be an object with method and params")
        what = entry.get("method")
        if not isinstance(what, str) or what not in INPUT_REQUEST_METHODS:
            raise ProtocolViolation(
                f"input request {quoted(key)} asks for {quoted(what)}; a server may only ask for "
                + ", ".join(sorted(INPUT_REQUEST_METHODS))
            )
        params = entry.get("params")
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            raise ProtocolViolation(f"the params of input request {quoted(key)} must be an object")
        out.append(InputRequest(str(key), str(what), params))
    return tuple(out)


def accepted_url(request: InputRequest, response: object) -> bool:
    """Whether ``response`` accepts ``request``, a URL-mode elicitation."""
    return (
        request.method == "elicitation/create"
        and request.params.get("mode") == "url"
        and isinstance(response, Mapping)
        and response.get("action") == "accept"
    )


def not_a_map(method: str, raw: object) -> str:
    """Why ``raw``, the ``inputRequests`` of a ``method`` result, is not one."""
    return f"inputRequests in the {method} result must be an object of key to request, not {quoted(raw)}"
