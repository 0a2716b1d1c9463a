// mcp-elicit: how the browser answerer's page reads what a person typed, and shows values back.
// Loaded before app.js (which uses it as window.mcpElicitValues). No validation rule: the
// answer server checks every value with the form's own rules. Only what a browser alone
// knows is settled here: the person's time zone, their language's decimal mark, and what a
// control holds that no answer can carry.
"use strict";

window.mcpElicitValues = (() => {
  const pad = (n, width = 2) => String(n).padStart(width, "0");

  function localText(when) {
    return (
      `${pad(when.getFullYear(), 4)}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}` +
      `T${pad(when.getHours())}:${pad(when.getMinutes())}:${pad(when.getSeconds())}`
    );
  }

  // A datetime-local value is wall time in this browser's time zone: say which zone. A
  // wall time the clocks skip (summer time, Samoa's whole 2011-12-30) names no instant:
  // it comes back as another day, hour or minute, and is null. (new Date(45, ...) is 1945.)
  function withOffset(text) {
    const m = /^(\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d))?/.exec(text);
    if (!m) return text;
    const seconds = m[6] || "00";
    const when = new Date(0);
    when.setFullYear(+m[1], +m[2] - 1, +m[3]);
    when.setHours(+m[4], +m[5], +seconds, 0);
    const wall = [when.getFullYear(), when.getMonth() + 1, when.getDate(), when.getHours(), when.getMinutes()];
    if (wall.some((part, i) => part !== +m[i + 1])) return null;
    // RFC 3339 offsets are whole minutes; a zone's old local mean time was not (5:21:10).
    const offset = -when.getTimezoneOffset();
    const sign = offset >= 0 ? "+" : "-";
    const abs = Math.round(Math.abs(offset));
    return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${seconds}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  }

  // The instant an RFC 3339 date-time names, as the form's rules read it (T or t, Z or z,
  // any fraction). A leap second (:60) is shown as the second before it: no Date holds it.
  const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:[Zz]|([+-])(\d\d):(\d\d))$/;

  function instant(text) {
    const m = RFC3339.exec(text);
    if (!m) return null;
    const when = new Date(0);
    when.setUTCFullYear(+m[1], +m[2] - 1, +m[3]);
    when.setUTCHours(+m[4], +m[5], Math.min(+m[6], 59), m[7] ? +m[7].slice(0, 3).padEnd(3, "0") : 0);
    const offset = m[8] ? (m[8] === "-" ? -1 : 1) * (+m[9] * 60 + +m[10]) : 0;
    return new Date(when.getTime() - offset * 60000);
  }

  // A date picker takes years up to 275760; the form's dates are RFC 3339's, whose year has
  // four digits, and Python holds none before 0001. Why a picked day's year cannot be sent,
  // or "" when it can.
  function yearProblem(text) {
    const m = /^(\d+)-/.exec(text);
    if (!m || (m[1].length === 4 && +m[1] >= 1)) return "";
    return `the year must be from 0001 to 9999 (${m[1]} is ${+m[1] < 1 ? "before" : "past"} it)`;
  }

  // The decimal mark of the browser's language: "2,5" in a German browser is two and a
  // half. A number box would read it as 25 there (Chromium drops what it does not expect),
  // so numbers are typed as text and read here.
  const DECIMAL = (() => {
    try {
      const part = new Intl.NumberFormat().formatToParts(1.5).find((p) => p.type === "decimal");
      return part ? part.value : ".";
    } catch (error) {
      return ".";
    }
  })();
  // The other of "." and ",": a thousands separator in this language, a decimal mark in
  // others ("1.000" is a thousand in Germany, one in Britain). Never guessed at.
  const OTHER = DECIMAL === "," ? "." : ",";

  // Digits grouped as a language writes them: "1 000" in French (a narrow no-break space),
  // "1’000" in Swiss German, "١٬٠٠٠" in Arabic. One number, but no form reads it so.
  const GROUPED = /\p{Nd}[\s'’\u066c]\p{Nd}/u;

  // What a number typed goes to the answer server as ({text}: the form's own way of writing
  // it, a point before any decimals), or why it is not sent ({problem}). A minus sign
  // (U+2212, as Swedish writes one) goes as typed: the answer server reads it as the
  // terminal does (form_text), so the two cannot disagree.
  function readNumber(typed) {
    const text = typed.trim();
    const write = `write the number without thousands separators and with “${DECIMAL}” before any decimals, like 1000 or 2${DECIMAL}5`;
    if (text.includes(OTHER)) return { problem: `“${text}” reads two ways; ${write}` };
    if (GROUPED.test(text)) return { problem: `“${text}” has a separator between its digits; ${write}` };
    return { text: DECIMAL === "." ? text : text.split(DECIMAL).join(".") };
  }

  // A number as the answer server writes it ("0.5", "0.5 (default)") in this language's way.
  function showNumber(text) {
    return DECIMAL === "." ? text : text.replace(/(\d)\.(\d)/g, `$1${DECIMAL}$2`);
  }

  return Object.freeze({ instant, localText, readNumber, showNumber, withOffset, yearProblem });
})();
