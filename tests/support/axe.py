"""axe-core, the WCAG rule engine, run over a page in the browser the UI tests drive.

axe-core is an npm package pinned by tests/ui/axe/package-lock.json and installed there with
Node 22 (``make axe``, part of ``make install``); the tests only read its ``axe.min.js`` and
inject it into the page under test. Without it, :func:`audit` skips, saying what is missing.

    from support.axe import audit, blocking

    found = await audit(page)                  # every violation, as axe reports it
    assert not blocking(found), describe(found)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["AXE_JS", "Violation", "audit", "blocking", "describe", "missing"]

AXE_JS = Path(__file__).resolve().parents[1] / "ui" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
#: The impacts axe gives, least to most.
IMPACTS = ("minor", "moderate", "serious", "critical")
#: What the pages must never have: every violation of these impacts fails a test.
BLOCKING = frozenset({"moderate", "serious", "critical"})
#: Rules whose undecided results ("needs review") are not counted: axe cannot always tell the
#: colours behind a text (forced colours, a button's own background in a transition).
UNDECIDABLE = frozenset({"color-contrast"})
#: The WCAG levels checked (2.0, 2.1 and 2.2, A and AA), and axe's own best practices.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


@dataclass(frozen=True)
class Violation:
    """One rule broken on one element: axe's rule id, its impact, the element and why."""

    rule: str
    impact: str
    target: str
    html: str
    why: str

    def __str__(self) -> str:
        return f"{self.rule} ({self.impact}) at {self.target}: {self.why}\n    {self.html}"


def missing() -> str | None:
    """Why axe-core cannot run here, or None."""
    if not AXE_JS.is_file():
        return f"axe-core is not installed at {AXE_JS.parent} (make axe, or make install)"
    return None


async def audit(page: Page, *, within: str | None = None) -> list[Violation]:
    """Every violation axe-core finds on ``page`` as it is now (in ``within``, a selector, if
    given): one per element and rule, naming both. Hidden parts of the page are not checked."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    if not await page.evaluate("typeof window.axe === 'object'"):
        # The answer server's CSP refuses inline scripts (add_script_tag's), as it should: the
        # script is evaluated through the DevTools protocol instead, which the CSP does not govern.
        await page.evaluate(AXE_JS.read_text(encoding="utf-8") + "\n;undefined")
    result: dict[str, Any] = await page.evaluate(
        "([within, tags]) => axe.run(within ?? document, {runOnly: {type: 'tag', values: tags}})",
        [within, TAGS],
    )
    found = []
    undecided = [rule for rule in result["incomplete"] if rule["id"] not in UNDECIDABLE]
    for rule in [*result["violations"], *undecided]:
        for node in rule["nodes"]:
            found.append(
                Violation(
                    rule=rule["id"],
                    impact=node.get("impact") or rule.get("impact") or "minor",
                    target=" ".join(str(t) for t in node["target"]),
                    html=node["html"][:200],
                    why=(node.get("failureSummary") or rule["help"]).replace("\n", " "),
                )
            )
    return found


def blocking(found: list[Violation]) -> list[Violation]:
    """The violations a page must not have (``BLOCKING``)."""
    return [v for v in found if v.impact in BLOCKING]


def describe(found: list[Violation]) -> str:
    """Every violation on a line of its own, for an assertion's message."""
    return f"{len(found)} accessibility violations:\n" + "\n".join(f"  {v}" for v in found)
