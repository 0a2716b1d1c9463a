// mcp-elicit: the browser answerer's event stream, on which the answer server says how the
// round ended, and what the page says for each ending. Loaded before app.js (which uses it
// as window.mcpElicitEvents).
//
// The answer server stops when the round is over (after a while when a page's stream was
// down then, so that the page can still learn how it ended): a stream that cannot come
// back means nobody waits for this page any more. The browser drops a stream itself too:
// a reload (or Esc) stops the page's loads before the page is hidden, even sooner after a
// click, and Esc again stops the stream being asked for again. So a failed stream is
// closed and the answer server asked: still waiting, the stream is asked for again after
// 1, 1, 1, 2, 4, then 8 s while it fails (or stays up under 8 s); the round over, the page
// says how; no answer (or a refusal) is asked again, three in a row end it; leaving doesn't.
"use strict";

window.mcpElicitEvents = (() => {
  // Follow the stream of this load of the page (pageName) until the round ends: app's
  // data-live says whether it is up, check() asks the answer server (POST /api/check),
  // finish(reason) ends the page, over() says whether it has ended. Returns what closes it.
  function follow(pageName, { app, check, finish, over }) {
    let current = null; // the stream now open
    if (!window.EventSource) return () => {};
    let failures = 0; // checks in a row that got no answer
    let tries = 0; // streams in a row that failed (or stayed up under 8 s)
    let up = 0; // when the stream came up
    let leaving = false;
    let waiting = 0; // the timer that asks again: one at a time
    window.addEventListener("pagehide", () => (leaving = true));
    const later = (ms, then) => {
      window.clearTimeout(waiting);
      waiting = window.setTimeout(() => {
        if (!leaving && !over()) then();
      }, ms);
    };
    const lost = async () => {
      const { status: code, data } = await check();
      if (leaving || over()) return;
      if (code === 409 && data.ended) return finish(data.ended);
      if (code !== 200) {
        failures += 1;
        return failures >= 3 ? finish("gone") : later(250, lost);
      }
      failures = 0;
      tries += 1;
      later(Math.min(8000, 1000 * 2 ** Math.max(0, tries - 3)), listen); // 1, 1, 1, 2, 4, 8 s
    };
    const listen = () => {
      const stream = new EventSource(`/api/events?page=${pageName}`);
      current = stream;
      stream.addEventListener("open", () => {
        up = Date.now();
        app.dataset.live = "1";
      });
      stream.addEventListener("error", () => {
        stream.close(); // asked for again by this page, not by the browser
        if (leaving || over()) return;
        if (app.dataset.live === "1" && Date.now() - up >= 8000) tries = 0; // it stayed up: start over
        app.dataset.live = "0";
        lost();
      });
      stream.addEventListener("end", (event) => {
        let reason = "cancelled";
        try {
          reason = JSON.parse(event.data).reason;
        } catch (error) {
          reason = "cancelled";
        }
        finish(reason);
      });
    };
    listen();
    return () => {
      if (current) current.close();
    };
  }

  // What the page says once the round ended, by how: [heading, text]. carried is what
  // takes the answer to the server when that is still to come (form_text.carried_by:
  // 2026-07-28's retried request, or a task's next update, which may yet fail): the page
  // says it goes with that. "" at 2025-11-25, where the answer is the response to the
  // server's request, sent at once: the server was told. A decline or a cancel is an
  // answer too, and travels the same way. webOnly: the round asked
  // only web-page steps, so nothing typed was sent.
  function endings(server, carried, webOnly) {
    const told = (what, that) =>
      `${carried ? `${what} goes to ${server} with ${carried}` : `${server} was told that ${that}`}. You can close this tab.`;
    const answered = carried
      ? ["Answered", `Your answers go to ${server} with ${carried}. You can close this tab.`]
      : ["Sent", `Your answers went to ${server}. You can close this tab.`];
    return {
      answered: webOnly ? ["Done", told("That you are done", "you are done")] : answered,
      decline: ["Declined", told("That you declined", "you declined")],
      cancel: ["Cancelled", told("That you cancelled", "you cancelled")],
      // taken back by the server or by mcp-elicit (its call ended, Ctrl-C): not the person's
      // own Cancel, which the same words would claim ("the question was withdrawn", as the
      // terminal says)
      cancelled: ["Withdrawn", "The question was withdrawn before you answered, so nothing was sent. You can close this tab."],
      // withdrawn by mcp-elicit, which then answers it cancel (2025-11-25: a question that
      // came with no request of its own, during a request abandoned): the server is told
      withdrawn: ["Withdrawn", `The question was withdrawn before you answered; ${server} was told it was cancelled. You can close this tab.`],
      // every stream of the page gone too long: the question is cancelled, and that is an
      // answer, which travels as the person's own Cancel does
      closed: ["Cancelled", `The page was closed, so the question was cancelled. ${told("That", "it was cancelled")}`],
      stopped: ["Server stopped", `${server} stopped, so nothing was sent. You can close this tab.`],
      timeout: ["Timed out", "Nobody answered in time, so the question was cancelled. You can close this tab."],
      gone: ["No longer open", "mcp-elicit stopped waiting for this answer. You can close this tab."],
      finished: ["Done", `${server} says the step on that page is finished. You can close this tab.`],
    };
  }

  return Object.freeze({ endings, follow });
})();
