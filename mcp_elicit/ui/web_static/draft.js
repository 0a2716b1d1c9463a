// mcp-elicit: the browser answerer's draft. What a person has typed is kept in the tab's
// session storage, under the round's own key, so a reload brings it back. Loaded before
// app.js (which uses it as window.mcpElicitDraft).
//
// Rules: only form fields are kept, never a URL-mode step (the person says again that a
// page is done) and never a field marked data-secret (one that looks like a password, a
// key or a card: no page should keep one); session storage is this tab's only, and gone
// with it. The draft is forgotten when the page learns the round ended, and a draft of
// another round in the same tab is dropped. A round that ends while no page of it is
// loaded (a reload, another site in the tab) leaves its draft, under its own address
// only, until the tab closes: its answer server stops with it, so no page of it loads.
// Storage refused (a full or disabled store) means no draft: the page works as before.
"use strict";

window.mcpElicitDraft = (() => {
  const PREFIX = "mcp-elicit-draft:";

  function store() {
    try {
      return window.sessionStorage;
    } catch (error) {
      return null;
    }
  }

  // The controls a draft may hold: those of form fields that are not secret-like.
  function controls(form) {
    return form.querySelectorAll(
      'section.question[data-mode="form"] .field:not([data-secret]) :is(input, select, textarea)',
    );
  }

  // The draft of round `round` for the page's `form`: save(), restore() (the fields it
  // filled in), forget().
  function open(form, round) {
    const key = PREFIX + round;
    const storage = store();
    try {
      for (const old of Object.keys(storage || {})) if (old.startsWith(PREFIX) && old !== key) storage.removeItem(old);
    } catch (error) {
      // nothing to drop
    }

    function save() {
      if (!storage || !round) return;
      const kept = {};
      for (const control of controls(form)) {
        const boxed = control.type === "checkbox" || control.type === "radio";
        kept[control.id] = boxed ? control.checked : control.value;
      }
      try {
        storage.setItem(key, JSON.stringify(kept));
      } catch (error) {
        forget(); // full or refused: no draft, rather than one of some keys ago put back
      }
    }

    function restore() {
      let kept = null;
      try {
        kept = storage && round ? JSON.parse(storage.getItem(key) || "null") : null;
      } catch (error) {
        kept = null;
      }
      const filled = new Set();
      if (!kept || typeof kept !== "object") return filled;
      for (const control of controls(form)) {
        if (!Object.hasOwn(kept, control.id)) continue;
        const value = kept[control.id];
        if (control.type === "checkbox" || control.type === "radio") control.checked = value === true;
        else if (typeof value === "string") control.value = value;
        filled.add(control.closest(".field"));
      }
      return filled;
    }

    function forget() {
      try {
        if (storage) storage.removeItem(key);
      } catch (error) {
        // nothing kept
      }
    }

    return Object.freeze({ save, restore, forget });
  }

  return Object.freeze({ open });
})();
