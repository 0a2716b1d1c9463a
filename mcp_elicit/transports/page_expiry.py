"""How a URL-mode page says when it expires (its flow's end: ``flow_ttl`` from the ask).

Rules:

* From the start the page says how long it lasts. Near the end (half its lifetime, at
  most a minute, before) it warns in an alert, then shows the time left (not a live
  region: read when looked at, not spoken every second). Once the time is up it says
  so in the alert and what to do next (ask again in the application: a new link),
  empties and hides the form, so that nothing is typed into a page that would refuse
  it, and its title says it expired.
* No "more time": the page's time is the flow's, and the request waiting for the flow
  (and the client's sealed state) lasts no longer; a page that outlived them would take
  a secret nobody waits for. Asking again is the way to more time.
* The count runs on the page's own clock from the seconds left when it was served, so
  the browser's wall clock does not matter. The script is constant; the strict CSP
  allows it by its hash (``SCRIPT_SOURCE``), and nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import math
from typing import Final

__all__ = ["SCRIPT_SOURCE", "expiry_notice"]

_SCRIPT: Final = """
(() => {
  const box = document.getElementById("expiry");
  const left = Number(box.dataset.left), warn = Number(box.dataset.warn);
  const start = performance.now();
  const say = document.getElementById("expiry-alert");
  const spell = (s) => (s >= 45 ? `${Math.round(s / 60)} minute${s >= 90 ? "s" : ""}` : `${s} seconds`);
  let warned = false;
  const tick = () => {
    const rest = Math.ceil(left - (performance.now() - start) / 1000);
    if (rest <= 0) {
      const value = document.getElementById("value");
      if (value) value.value = "";
      document.querySelector(".box").hidden = true;
      document.getElementById("expiry-note").hidden = true;
      document.getElementById("expiry-time").hidden = true;
      document.getElementById("expiry-warning").hidden = false;
      say.textContent = "This page has expired. Nothing was saved. "
        + "Go back to your application and ask again: it gives you a new link.";
      document.title = `Page expired · ${document.title}`;
      return;
    }
    if (rest <= warn) {
      if (!warned) {
        warned = true;
        document.getElementById("expiry-warning").hidden = false;
        say.textContent = `This page expires in ${spell(rest)}. Save before then: `
          + "what you typed is not kept after that.";
      }
      document.getElementById("expiry-left").textContent =
        `${Math.floor(rest / 60)}:${String(rest % 60).padStart(2, "0")}`;
    }
    window.setTimeout(tick, 1000);
  };
  tick();
})();
"""
#: What the pages' Content-Security-Policy allows to run: this script alone.
SCRIPT_SOURCE: Final = "'sha256-" + base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode() + "'"
_WARNING_STYLE: Final = (
    "border:2px solid #b26a00;background:#fff4e0;border-radius:8px;padding:0 1rem;margin:1rem 0"
)


def expiry_notice(left: float, lifetime: float) -> str:
    """The page's notice (HTML) for a flow with ``left`` of its ``lifetime`` seconds to go."""
    left = max(left, 0.0)
    warn = min(60.0, lifetime / 2)
    minutes = math.ceil(left / 60)
    how_long = "less than a minute" if left < 60 else f"{minutes} minute{'s' if minutes > 1 else ''}"
    return f"""<div id="expiry" data-left="{left:.1f}" data-warn="{warn:.1f}">
<p class="muted" id="expiry-note">This link works once. This page expires in {how_long}.</p>
<div id="expiry-warning" style="{_WARNING_STYLE}" hidden>
<p id="expiry-alert" role="alert"></p>
<p id="expiry-time">Time left: <strong id="expiry-left"></strong></p>
</div>
</div>
<script>{_SCRIPT}</script>"""
