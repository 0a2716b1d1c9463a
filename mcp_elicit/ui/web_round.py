"""One round of the browser answerer (``ui.web``): its questions, its secrets (link token,
cookie, CSRF token), how the page's answers are judged, and how the round ends.

Rules:

* A round ends once: with the person's answers, ``decline``/``cancel`` for every question,
  or ``cancel`` when the page is gone (every event stream of an opened page closed for
  ``grace`` seconds, or none connected within ``FIRST_STREAM_SECONDS``).
* What the page posts is judged again here, question by question, by the form's own
  rules (``web_pages.check_form``) and, for a URL question, the URL consent
  (``client.url_consent``): a refused address can only be declined, and cannot be said
  to be opened.
* The round waits ``lifetime`` seconds; the page warns before that ends, and the person's
  "More time" (``more_time``) gives the whole ``lifetime`` again, from then, as often as
  asked (WCAG 2.2.1).
* A one-question URL round whose server says when the step is done (2025-11-25) ends
  with ``accept`` once it says so and the person has pressed Open (``finished_watch``).
* Its pages are taken to be as many as the most event streams ever open at once: when the
  round ends, that many have not heard how (``untold``). A page hears it (``heard``) on an
  event stream (live, or asked for again), as a post answered 409, or by ending the round
  with a post. A page names itself (a random name per load) on its streams and posts, so
  that it is told once however many times it hears; one that names none counts each time,
  and one ending the round while a stream is live hears it on that stream instead (the
  poster cannot be told from the streaming pages).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final, Literal

from mcp_elicit.client.answerers import ElicitAnswer
from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.ui.form_text import clean
from mcp_elicit.ui.web_pages import check_form, review_rows

__all__ = ["FIRST_STREAM_SECONDS", "Round", "finished_watch"]

#: A page opened whose event stream never connects (no JavaScript, closed at once) is gone.
FIRST_STREAM_SECONDS: Final = 15.0


class Round:
    """One page's worth of questions, and how it ends (``answers``)."""

    def __init__(self, requests: Sequence[ElicitationRequest], *, grace: float, lifetime: float) -> None:
        self.requests = tuple(requests)
        self.lifetime = lifetime
        self.token = secrets.token_urlsafe(32)
        self.cookie_name = "mcp_elicit_" + hashlib.sha256(self.token.encode()).hexdigest()[:12]
        self.cookie = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self.claimed = False
        self.answers: asyncio.Future[list[ElicitAnswer]] = asyncio.get_running_loop().create_future()
        self.ended = asyncio.Event()
        self.reason = ""
        self.grace = grace
        self.streams = 0
        self.peak = 0  # the most event streams open at once: the round's pages
        #: Pages that have not heard how the round ended; ``all_told`` is set once none is left.
        self.untold = 0
        self.all_told = asyncio.Event()
        self._told: set[str] = set()  # the pages, by name, that heard how it ended
        self._live: Counter[str] = Counter()  # live event streams per page name ("": none)
        self._timer: asyncio.TimerHandle | None = None
        #: Set when the person opened the URL of a one-question URL round ("Open").
        self.url_opened = asyncio.Event()
        #: The answerer's wait for the answers, which "More time" moves on.
        self.deadline: asyncio.Timeout | None = None

    def left(self) -> float:
        """Seconds until the answerer stops waiting."""
        when = self.deadline.when() if self.deadline is not None else None
        loop = asyncio.get_running_loop()
        return self.lifetime if when is None else max(when - loop.time(), 0.0)

    def more_time(self) -> float:
        """The person asked for more time: the whole ``lifetime`` again, from now."""
        if self.deadline is not None:
            self.deadline.reschedule(asyncio.get_running_loop().time() + self.lifetime)
        return self.left()

    def finish(self, answers: list[ElicitAnswer], reason: str) -> None:
        if not self.answers.done():
            self.reason = reason
            self.answers.set_result(answers)
            self.untold = self.peak
            if self.untold <= 0:
                self.all_told.set()
        self.ended.set()
        if self._timer is not None:
            self._timer.cancel()

    def heard(self, page: str = "") -> None:
        """Page ``page`` (or one that names none) learnt how the round ended."""
        if page:
            if page in self._told:
                return
            self._told.add(page)
        self.untold -= 1
        if self.untold <= 0:
            self.all_told.set()

    def every(self, action: Literal["decline", "cancel"]) -> list[ElicitAnswer]:
        return [ElicitAnswer(action) for _ in self.requests]

    def untold_streaming(self) -> int:
        """The pages not yet told with a live event stream, each to hear it there (a page
        that names none, per stream)."""
        return sum(n if not page else int(n > 0) for page, n in self._live.items() if page not in self._told)

    def stream_opened(self, page: str = "") -> None:
        self.streams += 1
        self._live[page] += 1
        self.peak = max(self.peak, self.streams)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def opened(self) -> None:
        """The link was used: from now on, a page without an event stream is a closed page."""
        self.claimed = True
        if self.streams == 0:
            wait = max(self.grace, FIRST_STREAM_SECONDS)
            self._timer = asyncio.get_running_loop().call_later(wait, self._gone)

    def stream_closed(self, page: str = "") -> None:
        self.streams -= 1
        self._live[page] -= 1
        if self.streams == 0 and not self.answers.done():
            self._timer = asyncio.get_running_loop().call_later(self.grace, self._gone)

    def _gone(self) -> None:
        if self.streams == 0:
            self.finish(self.every("cancel"), "closed")

    def not_openable(self, index: object) -> str | None:
        """Why question ``index`` has no page the person could have opened, or None."""
        if type(index) is not int or not 0 <= index < len(self.requests):
            return "Say which question's page was opened."
        request = self.requests[index]
        if request.mode != "url":
            return "That question has no web page to open."
        if judge_url(request.url or "", server=request.server.where).refused:
            return "This address is refused; it can only be declined."
        return None

    def judge(self, raw: object) -> tuple[list[dict[str, Any]], list[ElicitAnswer] | None]:
        """What the page says for each question, checked: per question its problems (by
        field position) and review rows; the answers when everything is fine."""
        given = raw if isinstance(raw, list) and len(raw) == len(self.requests) else None
        out: list[dict[str, Any]] = []
        answers: list[ElicitAnswer] = []
        for n, request in enumerate(self.requests):
            item = given[n] if given is not None and isinstance(given[n], dict) else {}
            action = item.get("action")
            seen: dict[str, Any] = {"problems": {}, "form": None, "rows": []}
            if action == "decline":
                seen["rows"] = [["", "Declined"]]
                answers.append(ElicitAnswer.decline())
            elif request.mode == "url":
                verdict = judge_url(request.url or "", server=request.server.where)
                if action != "accept":
                    seen["form"] = "Open the page and say when you are done, or decline this question."
                elif verdict.refused:
                    seen["form"] = "This address is refused; it can only be declined."
                else:
                    seen["rows"] = [[f"Web page on {clean(verdict.site, joiners=False)}", "Done"]]
                    answers.append(ElicitAnswer.accept())
            elif request.schema is None or action != "accept":
                seen["form"] = "This question has no answer yet."
            else:
                checked = check_form(request.schema, item.get("values"))
                seen["problems"] = {str(k): v for k, v in checked.problems.items()}
                seen["form"] = checked.form_problem
                if checked.ok:
                    seen["rows"] = review_rows(request.schema, checked.content)
                    answers.append(ElicitAnswer.accept(checked.content))
            out.append(seen)
        ok = len(answers) == len(self.requests)
        return out, answers if ok else None


def finished_watch(round_: Round) -> asyncio.Future[None] | None:
    """For a one-question URL round whose server will say when the step is done
    (``request.finished``, 2025-11-25): once it says so and the person has pressed Open,
    the round ends with ``accept`` and the page says why."""
    if len(round_.requests) != 1:
        return None
    finished = round_.requests[0].finished
    if round_.requests[0].mode != "url" or finished is None:
        return None

    async def watch() -> None:
        await finished()
        await round_.url_opened.wait()
        round_.finish([ElicitAnswer.accept()], "finished")

    return asyncio.ensure_future(watch())
