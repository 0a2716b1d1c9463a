// mcp-elicit: the browser answerer's review, the answers shown back before they are sent, and
// its entry in the tab's history. Loaded after values.js, before app.js (which uses it as
// window.mcpElicitReview).
//
// The rows are the answer server's (/api/check: each field's label and its answer as a person
// reads it); this script only lays them out, each question's message in the frame the form
// gives it. All text from the server is set with textContent.
//
// The review is a step of its own in the tab's history, as it would be on a page of its own:
// Back there goes back to the form, not away from the question and its answers (a "Leave
// site?" prompt, and the round cancelled once the page is gone). Leaving the review any other
// way (Change answers, answers refused, the round ending) steps back over its entry, so Back
// then leaves the form (or the ended page) as it would before; Forward to it steps back at
// once (the answers may have changed since: Review checks them again). A reload keeps the entries a page made as the
// reloaded page's own (Back and Forward between them load nothing): reloaded on the review,
// the page shows the review again when the draft holds every answer, and else steps back to
// the form's entry, rather than show the form on the review's entry with the form's own entry
// behind it, where a Back would seem to do nothing.
"use strict";

window.mcpElicitReview = (() => {
  const { instant, showNumber } = window.mcpElicitValues;

  // A date-time's field shows the person's own time; its review row says that time too, so
  // "2026-12-24T18:30:00Z" does not read as another hour than the field showed (19:30).
  function shownAs(field, value) {
    if (!field || field.dataset.format !== "date-time") return "";
    const when = instant(value.replace(/ \(default\)$/, ""));
    if (!when || Number.isNaN(when.getTime())) return "";
    const local = when.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
    return ` (${local} your time)`;
  }

  function fill(reviewList, questions, result) {
    reviewList.replaceChildren();
    questions.forEach((q, i) => {
      const block = document.createElement("div");
      block.className = "review-question";
      if (questions.length > 1) {
        const title = document.createElement("h3");
        title.textContent = `Question ${i + 1}`;
        block.append(title);
      }
      // The server's message in the frame the question gives it, named as the server's:
      // here too, where the person confirms, it never reads as the page's own words.
      const said = document.createElement("div");
      said.className = "said";
      said.setAttribute("role", "group");
      said.setAttribute("aria-labelledby", `review-${q.id}-said`);
      const label = document.createElement("p");
      label.className = "said-label";
      label.id = `review-${q.id}-said`;
      label.setAttribute("aria-hidden", "true"); // it names the group: read once, not twice
      label.textContent = document.getElementById(`${q.id}-said`).textContent;
      const message = document.createElement("p");
      message.className = "message";
      message.dir = "auto"; // a server's right-to-left text reads right to left
      message.textContent = document.getElementById(`${q.id}-message`).textContent;
      said.append(label, message);
      block.append(said);
      const list = document.createElement("dl");
      const fields = q.querySelectorAll(".field");
      ((result.questions[i] || {}).rows || []).forEach(([label, value], n) => {
        const dt = document.createElement("dt");
        dt.textContent = label || "Answer";
        dt.dir = "auto";
        const dd = document.createElement("dd");
        const number = fields[n] && fields[n].dataset.number !== undefined;
        dd.textContent = (number ? showNumber(value) : value) + shownAs(fields[n], value);
        dd.dir = "auto";
        list.append(dt, dd);
      });
      block.append(list);
      reviewList.append(block);
    });
  }

  const REVIEW = "mcp-elicit-review";

  // The review's entry: landed (this load of the page started on it: a reload there), on()
  // (the tab is on it now), push() (a new one).
  function entry() {
    const on = () => Boolean(history.state && history.state[REVIEW]);
    return Object.freeze({ landed: on(), on, push: () => history.pushState({ [REVIEW]: true }, "") });
  }

  return Object.freeze({ entry, fill });
})();
