"""The URL steps of a -32042 (URL elicitation required) the CLI did not follow, as a person
reads them and as ``--json`` gives them (``url_steps``).

A -32042 reaches the person when the client could not follow it: at 2026-07-28, which
has no place for it (``era_hints``), and at 2025-11-25 when nothing answers (``--ui
none``, or no terminal: the call declared no elicitation). A step the person declined
was shown to them when it was put to them; its error is not repeated with it.

Rules:

* Text: at most ``SHOWN`` steps, the rest counted. Each its message, on one line, inert
  and at most ``output.SAID_MAX`` characters ("…" and the whole length end one cut
  short), and its URL judged as a URL-mode question's is (``recorded.url_lines``: the
  site, a refusal, the warnings); nothing is opened. A step that is not an object, or
  whose ``url`` is not a string, is said to be unreadable. How to follow them is said only
  when one can be followed (``unfollowable``: not when none is named, nor when this client
  refuses every URL).
* ``--json``: every step, as the server sent it: ``elicitationId``, ``url`` and
  ``message`` exactly (null when missing or not a string); ``url_warnings``, the codes of
  ``client.url_consent``'s warnings about the URL (as a round's), and ``url_refused``,
  true for a URL that must not be opened. ``print_json`` writes them inert.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_elicit.cli.output import SAID_MAX, fit
from mcp_elicit.cli.recorded import url_lines
from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.errors import CheckFailed, CliError, URLElicitationRequired
from mcp_elicit.wire.versions import is_modern

__all__ = ["SHOWN", "UrlStepsRequired", "step_lines", "unfollowable", "unfollowed"]

#: How many of a -32042's steps are shown as text.
SHOWN: Final = 10


class UrlStepsRequired(CheckFailed):
    """A -32042 the CLI did not follow, with its steps as ``--json`` gives them (``steps``)."""

    def __init__(self, message: str, steps: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.steps = steps


def unfollowed(
    error: CliError, exc: BaseException, where: str, revision: str | None, *, nobody_answers: bool
) -> CliError:
    """``error`` (what ``explain`` made of ``exc``) with the steps of ``exc`` when it is a
    -32042: as data, and, at a handshake revision with nobody to answer, as text with why
    nothing was opened and what to give instead. ``where``: the TARGET, as the URL's judge
    reads where the server runs."""
    if not isinstance(exc, URLElicitationRequired) or not isinstance(error, CheckFailed):
        return error
    text = str(error)
    if nobody_answers and not is_modern(revision):
        text += (
            "\nThis call declared no elicitation (with no terminal on stdin and stderr, or --ui none), "
            "so the client could not follow the server's URL-mode steps; their pages were not opened."
            + "".join(f"\n{line}" for line in step_lines(exc, where))
            + "\n"
            + (
                unfollowable(exc, where)
                or "To follow them (each page shown to you first, to open or not), give --ui web, "
                "--ui terminal (in a terminal), or --answers FILE."
            )
        )
    return UrlStepsRequired(text, [_data(step, where) for step in _steps(exc)])


def step_lines(exc: URLElicitationRequired, where: str) -> list[str]:
    """The steps of ``exc`` as a person reads them, numbered, or that it named none."""
    steps = _steps(exc)
    if not steps:
        return ["It named no step (no data.elicitations)."]
    lines = []
    for number, step in enumerate(steps[:SHOWN], 1):
        url = step.get("url") if isinstance(step, Mapping) else None
        if not isinstance(step, Mapping) or not isinstance(url, str):
            lines.append(f"  {number}. (unreadable: no URL)")
            continue
        message = step.get("message")
        lines.append(
            f"  {number}. {fit(message, SAID_MAX, length=True) if isinstance(message, str) else '(no message)'}"
        )
        lines.extend(f"     {line}" for line in url_lines(url, where))
    if len(steps) > SHOWN:
        lines.append(f"  ... and {len(steps) - SHOWN} more")
    return lines


def unfollowable(exc: URLElicitationRequired, where: str) -> str:
    """Why no step of ``exc`` could be followed however the command is run again (it names
    none, or this client refuses every URL), or "" when one could."""
    steps = _steps(exc)
    if not steps:
        return "With no step named, there is nothing to follow, however the command is run."
    urls = [s.get("url") if isinstance(s, Mapping) else None for s in steps]
    if any(isinstance(url, str) and not judge_url(url, server=where).refused for url in urls):
        return ""
    return "This client refuses the URL of every step, so none can be followed, however it is run."


def _steps(exc: URLElicitationRequired) -> list[Any]:
    data = exc.data if isinstance(exc.data, Mapping) else {}
    steps = data.get("elicitations")
    return steps if isinstance(steps, list) else []


def _data(step: object, where: str) -> dict[str, Any]:
    given = step if isinstance(step, Mapping) else {}
    shown: dict[str, Any] = {
        key: value if isinstance(value := given.get(key), str) else None
        for key in ("elicitationId", "url", "message")
    }
    url = shown["url"]
    verdict = judge_url(url, server=where) if url is not None else None
    shown["url_warnings"] = [w.code for w in verdict.warnings] if verdict is not None else []
    shown["url_refused"] = verdict is None or verdict.refused
    return shown
