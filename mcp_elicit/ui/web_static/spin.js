// mcp-elicit: the browser answerer's number fields as ARIA spin buttons. Loaded after app.js
// (which has shown the defaults and a draft in the language's way), with values.js.
//
// A number is typed in a text box (values.js says why); the number box it replaced said its
// value and bounds to assistive technology and stepped with the arrows. This script does that
// for a box web_fields marked role="spinbutton": aria-valuenow kept true as the person types,
// the Up and Down arrows stepping by its data-step, never past aria-valuemin/aria-valuemax.
// An arrow step is an "input" like typing: app.js checks it and keeps it in the draft.
"use strict";

(() => {
  const form = document.getElementById("answers");
  if (!form) return;
  const { readNumber, showNumber } = window.mcpElicitValues;

  // A number's text box says its value to assistive technology as the person types
  // (aria-valuenow, as the form writes it; aria-valuetext, as typed), and nothing when what
  // is typed is no number. The arrows step it (data-step), within its bounds.
  const spinners = form.querySelectorAll('.field[data-number] input[role="spinbutton"]');
  const bound = (input, name) => (input.hasAttribute(name) ? Number(input.getAttribute(name)) : null);
  const places = (text) => {
    const [digits, exponent] = text.toLowerCase().split("e");
    return Math.max(0, (digits.split(".")[1] || "").length - Number(exponent || 0));
  };

  // The number as JavaScript reads one, for the arrows and aria-valuenow only: a minus sign
  // (U+2212, U+FF0D) as "-". What is sent is read by the answer server (form_text).
  const asNumber = (text) => text.replace(/[\u2212\uff0d]/g, "-");

  function spoken(input) {
    const number = input.value.trim() === "" ? {} : readNumber(input.value);
    const text = number.text === undefined ? undefined : asNumber(number.text);
    if (text !== undefined && /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text) && Number.isFinite(Number(text))) {
      input.setAttribute("aria-valuenow", String(Number(text)));
      input.setAttribute("aria-valuetext", input.value.trim());
    } else {
      input.removeAttribute("aria-valuenow");
      input.removeAttribute("aria-valuetext");
    }
  }

  // One step up or down from what is typed, kept within the bounds; from empty, the first
  // value is 0, or the bound nearest it.
  function step(input, direction) {
    const typed = input.value.trim();
    const low = bound(input, "aria-valuemin");
    const high = bound(input, "aria-valuemax");
    let next = 0;
    if (typed !== "") {
      if (!input.hasAttribute("aria-valuenow")) return; // no number: left as typed
      const now = asNumber(readNumber(typed).text);
      const by = input.dataset.step || "1";
      const digits = Math.min(20, Math.max(places(now), places(by)));
      next = Number((Number(now) + direction * Number(by)).toFixed(digits));
    }
    if (low !== null && next < low) next = low;
    if (high !== null && next > high) next = high;
    input.value = showNumber(String(next));
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }

  for (const input of spinners) {
    spoken(input);
    input.addEventListener("input", () => spoken(input));
    input.addEventListener("keydown", (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.key !== "ArrowUp" && event.key !== "ArrowDown") return;
      event.preventDefault();
      step(input, event.key === "ArrowUp" ? 1 : -1);
    });
  }

})();
