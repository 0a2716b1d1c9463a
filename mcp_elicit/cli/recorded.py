"""What ``call`` (``prompt``, ``read``) shows and keeps of the questions it answered: each
question once, with the answer that was sent.

Rules: an answer is kept and shown as the client will send it, the form's defaults filled
in. One that does not fit the form (the client checks every answer before it leaves, and
asks again: a script then says ``cancel``, a page shows the form again) is not shown when
it is given: it is held, and shown with the answer that is sent, as why that one was not
(``not_sent`` in ``--json``'s rounds). A question is thus shown once, whoever answers it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_elicit.cli import page_wait
from mcp_elicit.cli.output import SAID_MAX, URL_MAX, fit, said, write
from mcp_elicit.client import Answerer, ElicitAnswer, ElicitationRequest, Scripted
from mcp_elicit.client.url_consent import UrlVerdict, judge_url
from mcp_elicit.core.client_inputs import check_elicit_answer
from mcp_elicit.errors import CliError, FormValidationError, RequestTimeout
from mcp_elicit.ui.form_text import clean

__all__ = ["Recorded", "url_lines"]


@dataclass
class Recorded:
    """Wraps an answerer: keeps every question and answer, and prints them on stderr
    when ``echo`` (for answerers that show nothing themselves). A URL that
    ``client.url_consent`` refuses never reaches a script (the client declines it): it is
    recorded and printed, why included, through ``refused``, which a person's answerer
    shows too; the warnings about any other URL are printed with it. A round's questions
    reach the inner answerer together when it takes them so (``elicit_many``). An answer
    that does not fit is held until the one sent (the module's rules); when it is printed
    here, a script's own warning of it is turned off (``Scripted.warn_unfit``). A question's
    message is shown and kept ``unechoed``."""

    inner: Answerer
    echo: bool = True
    rounds: list[dict[str, Any]] = field(default_factory=list)
    #: Answers given that did not fit, by question key, until an answer to it is sent.
    unfit: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: The hosts of the pages accepted, as the question showed them (``judge_url``).
    accepted_pages: set[str] = field(default_factory=set)
    url_waiting = staticmethod(page_wait.say_waiting)  # a line on stderr, whoever answers
    #: How a question's message is shown and kept: without the secrets the TARGET gave
    #: (``Target.unechoed``; a stdio server's question may quote its own ``--token``).
    unechoed: Callable[[str], str] = field(default=str)

    def __post_init__(self) -> None:
        if self.echo and isinstance(self.inner, Scripted):
            self.inner.warn_unfit = False  # shown here, with the answer sent

    @property
    def modes(self) -> frozenset[str]:
        return self.inner.modes

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer | Mapping[str, Any]:
        return self._record(request, await self.inner.elicit(request))

    async def refused(self, request: ElicitationRequest, verdict: UrlVerdict) -> ElicitAnswer:
        hook = getattr(self.inner, "refused", None)
        said = await hook(request, verdict) if hook is not None else None
        answer = ElicitAnswer.cancel() if said == ElicitAnswer.cancel() else ElicitAnswer.decline()
        self._record(request, answer)
        return answer

    async def elicit_many(
        self, requests: Sequence[ElicitationRequest]
    ) -> list[ElicitAnswer | Mapping[str, Any]]:
        many = getattr(self.inner, "elicit_many", None)
        if many is None:
            return [await self.elicit(request) for request in requests]
        return [self._record(r, raw) for r, raw in zip(requests, await many(requests), strict=True)]

    def _record(
        self, request: ElicitationRequest, raw: ElicitAnswer | Mapping[str, Any]
    ) -> ElicitAnswer | Mapping[str, Any]:
        given = raw.to_json() if isinstance(raw, ElicitAnswer) else dict(raw)
        answer, problems = _checked(request, given)
        if problems:  # the client asks again: shown with the answer it sends
            held = {"action": given.get("action"), "problems": problems}
            if "content" in given:
                held["content"] = given["content"]
            self.unfit.setdefault(request.key, []).append(held)
            return raw
        verdict = judge_url(request.url, server=request.server.where) if request.url is not None else None
        entry: dict[str, Any] = {
            "key": request.key,
            "mode": request.mode,
            "message": self.unechoed(request.message),
            "action": answer.get("action"),
        }
        if "content" in answer:
            entry["content"] = answer["content"]
        if request.url is not None:
            entry["url"] = request.url
        if verdict is not None:
            entry["url_warnings"] = [w.code for w in verdict.warnings]
            if entry["action"] == "accept":
                self.accepted_pages.add(clean(verdict.host, joiners=False) or "?")
        not_sent = self.unfit.pop(request.key, [])
        if not_sent:
            entry["not_sent"] = not_sent
        self.rounds.append(entry)
        if self.echo:
            self._print(request, answer, not_sent)
        return raw

    def unfinished(self, error: CliError, exc: BaseException) -> CliError:
        """``error`` with what to do added when the request ran out of time after a page was
        accepted during it: at 2025-11-25 the server's request waits in place for the page to
        be finished, which accepting it (a script's at once) does not do. A script is told
        how to decline pages in ``--answers``; a person, to finish the page or decline it."""
        sites = sorted(self.accepted_pages)
        if not isinstance(exc, RequestTimeout) or not sites:
            return error
        one = len(sites) == 1
        pages = f"page at {sites[0]}" if one else f"pages at {', '.join(sites)}"
        if isinstance(self.inner, Scripted):
            way_out = (
                'decline pages nobody will finish (an --answers entry {"mode": "url", "action": "decline"})'
            )
        else:  # a person, in the terminal or the browser
            way_out = "decline it" if one else "decline them"
        return type(error)(
            f"{error}\nThe server may be waiting for the {pages} that {'was' if one else 'were'} accepted "
            f"to be finished: accepting a page does not finish it. Finish the {'page' if one else 'pages'}, "
            f"or {way_out}.",
            exit_code=error.exit_code,
        )

    async def url_done(self, request: ElicitationRequest) -> None:
        done = getattr(self.inner, "url_done", None)  # optional: done at once without it
        if done is not None:
            await done(request)

    def _print(
        self, request: ElicitationRequest, answer: Mapping[str, Any], not_sent: Sequence[Mapping[str, Any]]
    ) -> None:
        server = request.server.title or request.server.name
        lines = [
            f"? {said(server)} asks ({said(request.key)}, during {said(str(request.origin))}):",
            f"  {fit(self.unechoed(request.message), SAID_MAX, length=True)}",
        ]
        if request.url is not None:
            lines += [f"  {line}" for line in url_lines(request.url, request.server.where)]
        for held in not_sent:
            given = f"{held['action']}{_shown(held.get('content'))}"
            why = "; ".join(held["problems"])
            lines.append(f"  not sent: {clean(given)} (it does not fit the form: {clean(why)})")
        lines.append(f"  → {answer.get('action')}{clean(_shown(answer.get('content')))}")
        write("\n".join(lines), sys.stderr)


def url_lines(url: str, server: str) -> list[str]:
    """A URL step's address as shown to a person: the URL and its site, then each warning
    ``client.url_consent`` has about it (``refused:`` for one that must not be opened).
    ``server``: where the server that sent it was reached."""
    verdict = judge_url(url, server=server)
    lines = [f"url: {_url_shown(url, verdict)}  (site: {clean(verdict.site, joiners=False) or '?'})"]
    for warning in verdict.warnings:
        lines.append(f"{'refused' if warning.refuses else 'warning'}: {clean(warning.text)}")
    return lines


#: The parts of a URL never cut short: where the page is.
_WHOLE: Final = frozenset({"scheme", "host", "domain", "port"})


def _url_shown(url: str, verdict: UrlVerdict) -> str:
    """``url`` inert, at most about ``URL_MAX`` characters and then how long the whole is:
    cut in its user-info and its path, never in its host (a host cut off would hide the
    site the page is on), unless that alone is longer (it is refused: ``url_consent``)."""
    whole = sum(len(part.text) for part in verdict.parts if part.role in _WHOLE)
    if len(url) <= URL_MAX or not verdict.parts or whole > URL_MAX:
        return fit(url, URL_MAX, length=True, joiners=False)
    room = URL_MAX - whole
    cut = [part for part in verdict.parts if part.role not in _WHOLE]  # user-info, the rest
    shown = []
    for part in verdict.parts:
        if part.role in _WHOLE:
            shown.append(clean(part.text, joiners=False))
            continue
        cut.remove(part)
        # what follows keeps up to half of what is left
        width = max(room - min(sum(len(p.text) for p in cut), room // 2), 2)
        at = "@" if part.role == "userinfo" else ""  # kept: it says where the user-info ends
        shown.append(fit(part.text.removesuffix(at), width, joiners=False) + at)
        room = max(room - width, 0)
    return f"{''.join(shown)} ({len(url)} characters)"


def _shown(content: object) -> str:
    if not isinstance(content, Mapping) or not content:
        return ""
    return "  " + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in content.items())


def _checked(request: ElicitationRequest, answer: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """What the client will send for ``answer`` (it checks it the same way, and fills in the
    form's defaults) and no problem; else ``answer`` itself and why it will not be sent."""
    try:
        return check_elicit_answer(request, answer), []
    except FormValidationError as exc:
        return dict(answer), [str(problem) for problem in exc.problems]
    except ValueError as exc:  # a malformed answer (InvalidAnswer)
        return dict(answer), [str(exc)]
