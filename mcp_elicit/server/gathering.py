"""Questions asked together (``ctx.gather``), and questions the client lacks the
capability for.

Rules:

* A question the client did not declare the capability for is made all the same; its
  -32021 is raised when it is asked (awaited alone, gathered, made a URL step), not when
  it is made: ``ctx.gather(ctx.elicit(...), ctx.sample(...))`` from a client with neither
  fails with one -32021 naming both (``elicitation.form, sampling``), in its message and
  its ``data.requiredCapabilities``, so that the client adds them all before it retries
  rather than meeting them one by one. Alone, a question's error is unchanged; several
  naming the same capability give that one error.
* Where the session's revision is what lacks a capability (``RevisionLacks``:
  ``requiredProtocolVersion``), the merged message says what the revision lacks in that
  error's words (a multi-select's field name too), and the merged data names the latest
  revision named, by the registry's order (``wire.versions.latest``).
* ``ctx.gather`` takes questions only: anything else is a ``TypeError`` naming the first,
  before any capability is judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp_elicit.core.mrtr import Ask
from mcp_elicit.core.rev_2025_11_25 import RevisionLacks
from mcp_elicit.errors import MissingClientCapability
from mcp_elicit.server.questions import Question
from mcp_elicit.server.results import closed_unrun
from mcp_elicit.wire.versions import latest

if TYPE_CHECKING:
    from mcp_elicit.server.context import Context

__all__ = ["gathered", "merged", "unaskable"]


def unaskable(
    ctx: Context, method: str, params: dict[str, Any], missing: MissingClientCapability, key: str | None
) -> Question[Any]:
    """A question the client lacks the capability for, raising ``missing`` when asked. It
    takes no key (it is never sent: a fallback may ask under the same key)."""
    return Question(ctx, Ask(key if isinstance(key, str) and key else method, method, params), None, missing)


def merged(missing: Sequence[MissingClientCapability]) -> MissingClientCapability:
    """One -32021 naming every capability in ``missing``: the first when they all name
    the same (a single question's error is unchanged)."""
    first = missing[0]
    if all(m.data == first.data for m in missing):
        return first
    required: dict[str, Any] = {}
    for m in missing:
        _merge(required, m.required)
    plain = MissingClientCapability.requiring(required)
    lacking = [m for m in missing if isinstance(m, RevisionLacks)]
    if not lacking:
        return plain
    since = latest(m.data["requiredProtocolVersion"] for m in lacking)  # the first with all of them
    lacks = ", ".join(dict.fromkeys(m.lacks for m in lacking))
    return MissingClientCapability(
        f"{plain.message.removesuffix(', which the client did not declare')}, which the client did "
        f"not declare or the session's revision does not have (MCP {lacking[0].revision} does not "
        f"have {lacks}; all of them came by {since})",
        {"requiredCapabilities": required, "requiredProtocolVersion": since},
    )


def _merge(into: dict[str, Any], more: Mapping[str, Any]) -> None:
    """Add the capabilities ``more`` names to ``into`` (objects merged, copied)."""
    for key, value in more.items():
        have = into.get(key)
        if isinstance(value, Mapping):
            if not isinstance(have, dict):
                have = into[key] = {}
            _merge(have, value)
        else:
            into[key] = value


def gathered(questions: Sequence[object]) -> list[Ask]:
    """What ``ctx.gather`` sends for its arguments. Anything but a question (a coroutine
    such as ``ctx.info(...)``, closed unrun) is a ``TypeError`` naming the first; questions
    the client lacks capabilities for fail with one -32021 naming them all (``merged``).
    Either way the questions beside them are taken, so none warns that it was never asked."""
    asked = [q for q in questions if isinstance(q, Question)]
    wrong = [(n, q, closed_unrun(q)) for n, q in enumerate(questions, 1) if not isinstance(q, Question)]
    missing = [q.missing for q in asked if q.missing is not None]
    if wrong or missing:
        for question in asked:
            question.close()  # unstarted: taken, no warning
    if wrong:
        n, other, name = wrong[0]
        what = f"a {type(other).__name__}" if name is None else f"a coroutine ({name})"
        raise TypeError(
            "ctx.gather() takes questions (ctx.elicit(...), ctx.elicit_url(...), ctx.sample(...), "
            f"ctx.list_roots()); its argument {n} is {what}: await that on its own"
        )
    if missing:
        raise merged(missing)
    return [q.ask for q in asked]
