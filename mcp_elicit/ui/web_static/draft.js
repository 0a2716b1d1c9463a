// mcp-elicit: the browser answerer's draft. What a person has typed is kept in the tab's
// session storage, under the round's own key, so a reload brings it back. Loaded before
// app.js (which uses it as window.mcpElicitDraft).
//
// Rules: only form fields and the questions declined one by one ("Decline this question")
// are kept, never a URL-mode step's opening (the person says again that a page is done) and
// never a field marked data-secret (one that looks like a password, a key or a card: no page
// should keep one); session storage is this tab's only, and gone
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

  // The draft of round `round` for the page's `form`, declined() naming the questions
  // declined one by one (their ids): save(), restore() (found: whether there was one; the
  // fields it filled in, and the ids of the questions it says were declined), forget().
  function open(form, round, declined) {
    const key = PREFIX + round;
    const storage = store();
    try {
      for (const old of Object.keys(storage || {})) if (old.startsWith(PREFIX) && old !== key) storage.removeItem(old);
    } catch (error) {
      // nothing to drop
    }

    function save() {
      if (!storage || !round) return;
      const fields = {};
      for (const control of controls(form)) {
        const boxed = control.type === "checkbox" || control.type === "radio";
        fields[control.id] = boxed ? control.checked : control.value;
      }
      try {
        storage.setItem(key, JSON.stringify({ fields, declined: declined() }));
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
      const fields = kept && typeof kept.fields === "object" && kept.fields;
      const said = kept && Array.isArray(kept.declined) ? kept.declined : [];
      const declinedIds = new Set(said.filter((id) => typeof id === "string"));
      if (!fields) return { found: false, filled, declined: declinedIds };
      for (const control of controls(form)) {
        if (!Object.hasOwn(fields, control.id)) continue;
        const value = fields[control.id];
        if (control.type === "checkbox" || control.type === "radio") control.checked = value === true;
        else if (typeof value === "string") control.value = value;
        filled.add(control.closest(".field"));
      }
      return { found: true, filled, declined: declinedIds };
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
