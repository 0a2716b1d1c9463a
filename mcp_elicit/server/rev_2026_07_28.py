"""Asking questions on revision 2026-07-28: multi round-trip requests, replay style.

Rules: a question whose answer is in hand (in the sealed state, or fresh and valid in
``inputResponses``) returns at once; otherwise the round ends with ``input_required`` for
every unanswered question of the batch. A tampered, expired or foreign ``requestState``
fails the request before the handler runs, even when the handler would ask nothing.
Questions asked from concurrent tasks (``asyncio.TaskGroup``) are merged into one round.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp_elicit.core.mrtr import Ask, InputRequired, Replay, binding_for
from mcp_elicit.sealing import Binding, StateSealer

__all__ = ["ReplayAsker", "run_replayed"]


class ReplayAsker:
    """Answers questions from the replay record; raises ``InputRequired`` for the rest."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay

    async def ask(self, asks: list[Ask]) -> list[Any]:
        answers: list[Any] = []
        missing: list[Ask] = []
        for ask in asks:
            found, answer = self.replay.resolve(ask)
            if found:
                answers.append(answer)
            else:
                missing.append(ask)
        if missing:
            raise InputRequired(missing)
        return answers


async def run_replayed(
    method: str,
    params: Mapping[str, Any],
    handler: Callable[[ReplayAsker], Awaitable[dict[str, Any]]],
    *,
    sealer: StateSealer,
    principal: str | None,
    now: Callable[[], float],
) -> dict[str, Any]:
    """Run ``handler`` for one round; its result, or ``input_required`` with new state."""
    binding: Binding | None = None
    if "requestState" in params:
        binding = binding_for(method, params, principal)
        replay = Replay.begin(params, sealer=sealer, binding=binding, now=now())
    else:
        replay = Replay.begin(params, sealer=sealer, binding=_NO_BINDING, now=0.0)
    try:
        return await handler(ReplayAsker(replay))
    except InputRequired as exc:
        asks = exc.asks
    except BaseExceptionGroup as group:
        matched, rest = group.split(InputRequired)
        if rest is not None or matched is None:
            raise
        asks = [ask for err in _leaves(matched) for ask in err.asks]
    if binding is None:
        binding = binding_for(method, params, principal)
    return replay.input_required(asks, sealer=sealer, binding=binding, now=now())


_NO_BINDING = Binding(method="", target="", arguments=b"", principal=None)


def _leaves(group: BaseExceptionGroup[InputRequired]) -> list[InputRequired]:
    out: list[InputRequired] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(_leaves(exc))
        else:
            out.append(exc)
    return out
