// mcp-elicit: the browser answerer's URL-mode step, "Open the page" then "I'm done". Loaded
// before app.js (which uses it as window.mcpElicitUrlStep).
//
// Rules: the page is seen opened when its link is followed by a click (Enter, a click, a click
// with Ctrl or Shift) or a middle click (an auxclick: no "click" comes); "I'm done" then shows,
// and app.js tells the answer server, so that a 2025-11-25 server's word that the step is
// finished is taken. A link opened from its menu ("Open link in new tab") or dragged to the tab
// bar fires no event that says so, and a new tab opened in the background moves neither focus
// nor visibility: the menu opening (contextmenu: a right click, the menu key, a long press) and
// a drag starting (dragstart) show "I'm done" too, for the person to say it, but count as no
// opening (the menu may be closed unused, the link copied, the drag dropped nowhere).
"use strict";

window.mcpElicitUrlStep = (() => {
  const OPENED = "Opened in a new tab. Come back here and press “I'm done” when you have finished there.";
  const MAYBE = "Opened it from the link's menu or by dragging it? Press “I'm done” here when you have finished there.";

  // Question q's link and button. opened(): the page was seen opened; done(): the person says
  // the step is done (alone: the round's only question, whose answer then goes at once);
  // say(text): for the status line.
  function wire(q, { alone, opened, done, say }) {
    const open = q.querySelector("a.open");
    const button = q.querySelector("button.done");
    if (!open || !button) return;
    const note = document.getElementById(`${q.id}-state`);
    let finished = false; // "I'm done" pressed
    const opening = () => {
      opened();
      button.hidden = false;
      open.textContent = "Open it again";
      open.classList.remove("primary");
      button.classList.add("primary");
      note.textContent = OPENED;
      say(OPENED);
    };
    const perhaps = () => {
      if (finished || !button.hidden) return; // said already, or seen opened
      button.hidden = false;
      note.textContent = MAYBE;
      say(MAYBE);
    };
    open.addEventListener("click", opening);
    open.addEventListener("auxclick", (event) => {
      if (event.button === 1) opening();
    });
    open.addEventListener("contextmenu", perhaps);
    open.addEventListener("dragstart", perhaps);
    button.addEventListener("click", () => {
      finished = true;
      done();
      if (alone) return; // nothing else to review: the answer is on its way
      open.focus(); // the button going away would drop the focus to the page's top
      button.hidden = true;
      note.textContent = "Done.";
    });
  }

  return Object.freeze({ wire });
})();
