// mcp-elicit: the browser answerer's page. No build step, no dependencies.
//
// This script holds no validation rule of its own: it sends what the person entered to the
// answer server (/api/check), which checks it with the form's own FormSchema.validate, and
// shows the messages it gets back next to their fields. /api/answer checks again before
// anything reaches the MCP client. All text from the server is set with textContent.
// values.js (how typed values are read and shown), draft.js (what a reload keeps),
// review.js (the answers shown back before they are sent), events.js (the answer server's
// event stream: how the round ended, and what the page says then) and urlstep.js (a URL question's Open and "I'm done")
// load before it.
"use strict";

(() => {
  const app = document.getElementById("app");
  if (!app) return;
  // The fields and buttons come hidden: without this script they would do nothing (the
  // page's <noscript> says why), and hiding them in the HTML holds without the stylesheet.
  for (const part of document.querySelectorAll("[data-js]")) part.hidden = false;
  const $ = (id) => document.getElementById(id);
  const { instant, localText, readNumber, showNumber, withOffset, yearProblem } = window.mcpElicitValues;
  const csrf = app.dataset.csrf;
  // This load of the page, named on its streams and posts: counted told once, however often
  const pageName = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
  const server = app.dataset.server || "The server";
  const form = $("answers");
  const alertBox = $("alert");
  const status = $("status");
  const reviewStep = $("review-step");
  const reviewList = $("review-list");
  const asked = document.title; // the server and its question: the tab says where the person is before it
  const questions = Array.from(form.querySelectorAll("section.question"));
  const state = questions.map((q) => ({
    declined: false,
    url: q.dataset.mode === "url" ? "pending" : null,
  }));
  const touched = new Set();
  let showAll = false;
  let seq = 0;
  let timer = 0;
  let sayTimer = 0; // what the status line says next, once emptied (say)
  let over = false;
  let busy = false;
  let dirty = false;
  let stopListening = () => {}; // the event stream (events.js), closed when the page ends

  // What the page says once the round ended, by how (events.js): data-carried is what takes
  // the answer to the server when that is still to come (2026-07-28), "" when it went at once
  const webOnly = state.every((s) => s.url !== null); // web pages only: nothing typed was sent
  const ENDINGS = window.mcpElicitEvents.endings(server, app.dataset.carried || "", webOnly);

  // ---- values ------------------------------------------------------------------------

  // Why a field's control cannot be read as a value, by field id (set by fieldValue): the
  // answer server is sent "?" for it, and this message is shown instead of its own.
  const unreadable = new Map();

  // A default is shown in local wall time, which drops its zone, its fraction and a leap
  // second, and cannot tell an hour the clock shows twice: left as shown, it goes back as
  // the server wrote it (fieldValue), never re-written from the control.
  for (const input of form.querySelectorAll("input[data-rfc3339]")) {
    const when = instant(input.dataset.rfc3339);
    if (when && !Number.isNaN(when.getTime())) input.value = localText(when);
    if (input.value !== "") input.dataset.shown = input.value; // as the control keeps it
  }
  // A number's default is shown with this language's decimal mark ("0,5" in German).
  for (const input of form.querySelectorAll(".field[data-number] input")) input.value = showNumber(input.value);

  // What was typed before a reload, back in its fields, and the questions declined one by
  // one declined again (draft.js).
  const declinedIds = () => questions.filter((q, i) => state[i].declined).map((q) => q.id);
  const draft = window.mcpElicitDraft.open(form, app.dataset.round, declinedIds);
  const restored = draft.restore();
  questions.forEach((q, i) => {
    if (restored.declined.has(q.id) && q.querySelector("button.decline-one")) declineOne(i, true);
  });

  function fieldValue(field) {
    unreadable.delete(field.id);
    const kind = field.dataset.kind;
    if (kind === "multi_choice") {
      return Array.from(field.querySelectorAll("input:checked"), (box) => box.value);
    }
    if (kind === "boolean") {
      const box = field.querySelector("input[type=checkbox]");
      if (box) return box.checked;
      const picked = field.querySelector("input:checked"); // yes, no or no answer
      return picked && !picked.hasAttribute("data-none") ? picked.value === "true" : null;
    }
    if (kind === "choice") {
      // "(no answer)" is marked data-none: an option's own value may be "".
      const select = field.querySelector("select");
      const picked = select ? select.selectedOptions[0] : field.querySelector("input:checked");
      return picked && !picked.hasAttribute("data-none") ? picked.value : null;
    }
    const input = field.querySelector("input, textarea");
    // A half-typed date reads as "": send something, and let the check say what.
    if (input.validity && input.validity.badInput) return "?";
    if (input.value === "") return null;
    // A textarea reads every line break as "\n": its default, untouched, goes back as it is.
    if (input.tagName === "TEXTAREA" && input.value === input.defaultValue.replace(/\r\n?/g, "\n")) {
      return input.defaultValue;
    }
    const cannot = (why) => {
      unreadable.set(field.id, `${field.dataset.label}: ${why}`);
      return "?";
    };
    if (field.dataset.number !== undefined) {
      const number = readNumber(input.value);
      return number.problem ? cannot(number.problem) : number.text;
    }
    const format = field.dataset.format;
    if (format !== "date-time" && format !== "date") return input.value;
    if (input.dataset.shown !== undefined && input.value === input.dataset.shown) return input.dataset.rfc3339;
    if (yearProblem(input.value)) return cannot(yearProblem(input.value));
    if (format === "date") return input.value;
    const sent = withOffset(input.value);
    if (sent !== null) return sent;
    const [day, time] = input.value.split("T");
    return cannot(`there is no ${time.slice(0, 5)} on ${day} in your time zone (the clocks skip it); pick another time`);
  }

  function collect() {
    return questions.map((q, i) => {
      if (state[i].declined) return { action: "decline" };
      if (state[i].url !== null) return { action: state[i].url === "done" ? "accept" : "pending" };
      return { action: "accept", values: Array.from(q.querySelectorAll(".field"), fieldValue) };
    });
  }

  async function post(path, body) {
    let response;
    try {
      response = await fetch(path, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-MCP-Elicit-CSRF": csrf, "X-MCP-Elicit-Page": pageName },
        body: JSON.stringify(body),
        credentials: "same-origin",
        cache: "no-store",
      });
    } catch (error) {
      return { status: 0, data: {} };
    }
    let data = {}; // what a body that is not JSON gives
    try {
      data = await response.json();
    } catch (error) {}
    return { status: response.status, data };
  }

  // ---- showing problems ----------------------------------------------------------------

  function say(text) {
    status.textContent = "";
    window.clearTimeout(sayTimer);
    sayTimer = window.setTimeout(() => (status.textContent = text), 60);
  }

  // A screen reader announces an alert when its text changes: the same text written
  // again would be silent, so a repeat says so ("Again: ...").
  function alarm(text) {
    alertBox.textContent = text && alertBox.textContent === text ? `Again: ${text}` : text;
  }

  function retitle(where) {
    document.title = where ? `${where} · ${asked}` : asked;
  }

  function needFixing(count) {
    return count === 1 ? "1 answer needs fixing" : `${count} answers need fixing`;
  }

  function controlOf(field) {
    return field.querySelector("fieldset") || field.querySelector("input, select, textarea");
  }

  function focusable(field) {
    return field.querySelector("input:checked") || field.querySelector("input, select, textarea");
  }

  function setError(field, message) {
    const error = $(`${field.id}-error`);
    const control = controlOf(field);
    const before = error.textContent;
    error.textContent = message;
    field.classList.toggle("invalid", Boolean(message));
    if (message) control.setAttribute("aria-invalid", "true");
    else control.removeAttribute("aria-invalid");
    // what is said of the field being typed in, and unsaid once it is right
    if (message !== before && field.contains(document.activeElement)) say(message);
  }

  // Messages for touched fields (all of them after a review was asked for). Returns the
  // fields and questions shown as wrong.
  function showProblems(result, all) {
    const bad = [];
    questions.forEach((q, i) => {
      const seen = (result.questions || [])[i] || {};
      const problems = seen.problems || {};
      q.querySelectorAll(".field").forEach((field, n) => {
        const message = problems[String(n)] && (unreadable.get(field.id) || problems[String(n)]);
        const show = Boolean(message) && !state[i].declined && (all || touched.has(field.id));
        setError(field, show ? message : "");
        if (show) bad.push({ target: focusable(field), label: field.dataset.label });
      });
      const qError = $(`${q.id}-error`);
      const formProblem = all && !state[i].declined ? seen.form || "" : "";
      qError.textContent = formProblem;
      if (formProblem) {
        const target = q.querySelector("a.open, button.done:not([hidden]), .field input, .field select, .field textarea");
        bad.push({ target, label: questions.length > 1 ? `question ${i + 1}` : "the question" });
      }
    });
    return bad;
  }

  function scheduleCheck() {
    window.clearTimeout(timer);
    timer = window.setTimeout(check, 300);
  }

  async function check() {
    if (over) return;
    const mine = ++seq;
    const { status: code, data } = await post("/api/check", { questions: collect() });
    if (code === 409 && data.ended) return finish(data.ended); // the round ended meanwhile
    if (mine !== seq || over || code !== 200) return;
    const bad = showProblems(data, showAll);
    if (showAll && !form.hidden) retitle(bad.length ? needFixing(bad.length) : ""); // as the fields say
  }

  function touch(event) {
    const field = event.target.closest(".field");
    if (!field || over) return; // a field left as the page ends (its change) keeps no draft
    touched.add(field.id);
    dirty = true;
    draft.save();
    scheduleCheck();
  }

  form.addEventListener("input", touch);
  form.addEventListener("change", touch);

  // ---- review, send, decline, cancel ---------------------------------------------------

  // The review's entry in the tab's history (review.js says what it is for, and why a page
  // reloaded there shows the review again or steps back to the form's entry).
  const entry = window.mcpElicitReview.entry();
  let stepping = false; // a step back over it on its way: one, however many ask

  function stepBack() {
    if (stepping || !entry.on()) return;
    stepping = true;
    history.back();
  }

  function backToForm() {
    reviewStep.hidden = true;
    form.hidden = false;
    retitle("");
    stepBack();
  }

  function focusFirst() {
    const first = form.querySelector(".field input, .field select, .field textarea, a.open");
    if (first) first.focus();
  }

  window.addEventListener("popstate", () => {
    stepping = false;
    if (over) return stepBack(); // an ended page stays as it is, off the review's entry
    // Forward to the review's entry: stepped back over, so the form shows on its own entry
    if (reviewStep.hidden) return stepBack();
    // The answers (or a decline, a cancel) on their way: the review stays, its entry back,
    // so no form is shown to change answers that are being sent as they are.
    if (busy) return entry.push();
    backToForm();
    focusFirst();
  });

  function refuseWith(data) {
    backToForm();
    const bad = showProblems(data, true);
    const names = bad.map((b) => b.label);
    alarm(`${needFixing(names.length)}: ${names.join(", ")}.`);
    retitle(needFixing(names.length));
    if (bad.length && bad[0].target) bad[0].target.focus();
  }

  async function review() {
    if (busy || over) return;
    busy = true;
    try {
      showAll = true;
      seq++;
      const { status: code, data } = await post("/api/check", { questions: collect() });
      if (code !== 200) return failed(code, data);
      if (!data.ok) return refuseWith(data);
      showProblems(data, true);
      alarm("");
      window.mcpElicitReview.fill(reviewList, questions, data);
      draft.save(); // a reload here shows the review again, untouched defaults and all
      form.hidden = true;
      reviewStep.hidden = false;
      if (!entry.on()) entry.push();
      retitle("Check your answers");
      $("review-title").focus();
    } finally {
      busy = false;
    }
  }

  async function send() {
    if (busy || over) return;
    busy = true;
    try {
      const { status: code, data } = await post("/api/answer", { action: "accept", questions: collect() });
      if (code === 200 && data.ok) return finish("answered");
      if (code === 422) return refuseWith(data);
      failed(code, data);
    } finally {
      busy = false;
    }
  }

  async function end(action) {
    if (busy || over) return;
    busy = true;
    try {
      const { status: code, data } = await post("/api/answer", { action });
      if (code === 200 && data.ok) return finish(action);
      failed(code, data);
    } finally {
      busy = false;
    }
  }

  function failed(code, data) {
    if (code === 409 && data.ended) return finish(data.ended);
    const why = code === 0 ? "mcp-elicit is no longer listening" : `the answer server said ${code}`;
    alarm(`This could not be sent: ${why}.`);
  }

  function finish(reason) {
    if (over) return;
    over = true;
    draft.forget();
    window.clearTimeout(timer);
    window.clearTimeout(warnTimer);
    timeBox.hidden = true;
    stopListening();
    app.dataset.live = "0"; // an ended page listens no more: its stream is closed
    if (reason === "answered" && state.every((s) => s.declined)) reason = "decline"; // each declined, then sent
    const [title, text] = ENDINGS[reason] || ENDINGS.cancel;
    stepBack(); // off the review's entry: one Back leaves the ended page
    form.hidden = true;
    reviewStep.hidden = true;
    alarm("");
    say(""); // no complaint left for a screen reader to find on the finished page
    $("finished-title").textContent = title;
    $("finished-text").textContent = text;
    $("finished").hidden = false;
    retitle(title);
    $("finished-title").focus();
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    review();
  });
  $("send").addEventListener("click", send);
  $("change").addEventListener("click", () => {
    backToForm();
    focusFirst();
  });
  for (const id of ["decline", "decline-review"]) $(id).addEventListener("click", () => end("decline"));
  for (const id of ["cancel", "cancel-review"]) $(id).addEventListener("click", () => end("cancel"));

  // ---- time: warned before mcp-elicit stops waiting, and more of it on request ----------

  const timeBox = $("time");
  let warnTimer = 0;

  // Warn half the wait (at most a minute) before it ends: time enough to press the button.
  function plan(left) {
    window.clearTimeout(warnTimer);
    timeBox.hidden = true;
    const ahead = Math.min(60, left / 2);
    warnTimer = window.setTimeout(() => {
      if (over) return;
      $("time-text").textContent =
        `mcp-elicit stops waiting for this answer in about ${Math.round(ahead)} seconds, and the ` +
        "question is cancelled. Press “More time” to keep it open. ";
      timeBox.hidden = false;
    }, (left - ahead) * 1000);
  }

  $("more-time").addEventListener("click", async () => {
    if (over) return;
    const { status: code, data } = await post("/api/more-time", {});
    if (code !== 200 || !data.ok) return failed(code, data);
    plan(data.left);
    const more = data.left < 120 ? `${Math.round(data.left)} seconds` : `${Math.round(data.left / 60)} minutes`;
    say(`You have more time: about ${more} more.`);
  });

  plan(Number(app.dataset.left) || 600);

  // ---- several questions: decline one --------------------------------------------------

  // Question i declined, or answered after all.
  function declineOne(i, declining) {
    const q = questions[i];
    state[i].declined = declining;
    q.classList.toggle("declined", declining);
    for (const part of q.querySelectorAll(".fields, .url-box")) part.hidden = declining;
    $(`${q.id}-declined`).hidden = !declining;
    q.querySelector("button.decline-one").parentElement.hidden = declining;
    $(`${q.id}-error`).textContent = "";
  }

  form.addEventListener("click", (event) => {
    const button = event.target.closest("button.decline-one, button.undecline");
    if (!button || over) return;
    const i = questions.findIndex((q) => q.id === button.dataset.q);
    const q = questions[i];
    const declining = button.classList.contains("decline-one");
    declineOne(i, declining);
    dirty = true;
    draft.save(); // kept across a reload, as typed answers are
    (declining ? q.querySelector("button.undecline") : q.querySelector("button.decline-one")).focus();
    say(declining ? `Question ${i + 1} will be declined.` : `Question ${i + 1} will be answered.`);
    scheduleCheck();
  });

  // ---- URL consent: Open, then "I'm done" (urlstep.js) -----------------------------------

  questions.forEach((q, i) => {
    window.mcpElicitUrlStep.wire(q, {
      alone: questions.length === 1,
      say,
      opened: () => {
        if (state[i].url === "pending") state[i].url = "opened";
        post("/api/opened", { question: i }).then(({ status: code, data }) => {
          if (code === 409 && data.ended) finish(data.ended); // the round ended meanwhile
        }); // the server may then say the step is finished
      },
      done: () => {
        state[i].url = "done";
        $(`${q.id}-error`).textContent = "";
        if (questions.length === 1) return send(); // the only question: nothing else to review
        say(`Question ${i + 1}: done.`);
      },
    });
  });

  // ---- the answer server's event stream: how the round ended (events.js) ----------------

  stopListening = window.mcpElicitEvents.follow(pageName, {
    app,
    check: () => post("/api/check", {}),
    finish,
    over: () => over,
  });

  if (restored.filled.size || restored.declined.size) {
    for (const field of restored.filled) touched.add(field.id);
    dirty = true;
    say("What you entered before the page was reloaded is back.");
    if (!entry.landed) scheduleCheck();
  }
  if (entry.landed) {
    // Every answer in the draft (none: storage refused or full, the review was of nothing
    // typed): form questions with no secret-like field, or declined ones.
    const whole = restored.found && questions.every(
      (q, i) => state[i].declined || (q.dataset.mode === "form" && !q.querySelector(".field[data-secret]")),
    );
    // not shown (the check failed): the form is to be on its own entry all the same
    if (whole) review().then(() => reviewStep.hidden && stepBack());
    else stepBack();
  }

  window.addEventListener("beforeunload", (event) => {
    if (!over && dirty) event.preventDefault();
  });
})();
