"""What the client declares at each handshake revision: the capabilities that revision
defines, so a strict server of an older revision is not shown shapes it does not know.

Rules:

* 2026-07-28 requests carry every capability (``core.client.client_capabilities``), the
  tasks extension included.
* The handshake revisions have no ``extensions``.
* ``elicitation`` with ``form``/``url`` sub-objects is 2025-11-25's. At 2025-06-18 the
  capability is a bare ``{}``, meaning form mode (URL mode does not exist there): declared
  only when the answerer takes forms. 2025-03-26 has no elicitation at all.
* ``initialize`` declares what the revision it offers defines; that is what the session
  declared, whichever revision the server then chooses. Its questions are held to what
  was declared and what the revision spoken defines (``declared_modes``): a question in
  another mode is refused as undeclared (URL mode when the server chose 2025-06-18 over
  an offered 2025-11-25, elicitation at all when it chose 2025-03-26).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_elicit.wire.versions import REV_2025_06_18

__all__ = ["declared_at", "declared_modes", "defined_modes"]

#: The handshake revision before elicitation existed.
_REV_2025_03_26: Final = "2025-03-26"


def declared_at(capabilities: Mapping[str, Any], revision: str) -> dict[str, Any]:
    """``capabilities`` (the client's, as a 2026-07-28 request carries them) as the
    handshake revision ``revision`` defines them (see the rules)."""
    caps = {k: v for k, v in capabilities.items() if k != "extensions"}
    elicitation = caps.pop("elicitation", None)
    if elicitation is None or revision == _REV_2025_03_26:
        return caps
    if revision == REV_2025_06_18:
        if isinstance(elicitation, Mapping) and "form" in elicitation:
            caps["elicitation"] = {}
        return caps
    caps["elicitation"] = elicitation
    return caps


def declared_modes(declared: Mapping[str, Any], revision: str) -> frozenset[str]:
    """The elicitation modes ``declared`` (a session's capabilities) says the client takes
    at ``revision``, the one spoken: none without ``elicitation``, form for a bare ``{}``
    (2025-06-18's way, and any revision's for an empty one), else the modes it names;
    only those ``revision`` defines (the server may choose an older one than offered)."""
    elicitation = declared.get("elicitation")
    if not isinstance(elicitation, Mapping):
        return frozenset()
    modes = frozenset(m for m in ("form", "url") if m in elicitation) or frozenset({"form"})
    return modes & defined_modes(revision)


def defined_modes(revision: str) -> frozenset[str]:
    """The elicitation modes handshake revision ``revision`` defines."""
    if revision == _REV_2025_03_26:
        return frozenset()
    if revision == REV_2025_06_18:
        return frozenset({"form"})
    return frozenset({"form", "url"})
