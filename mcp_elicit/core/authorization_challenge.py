"""The ``WWW-Authenticate`` challenges an MCP server answers a request with (RFC 9110
section 11.6.1, RFC 6750 section 3, RFC 9449 section 7.1): parsed into their scheme and
auth-params, for the client's authorization flow (:mod:`mcp_elicit.core.authorization`).

Rules: lenient (a part that cannot be read ends the parse, keeping what came before),
linear in the header whatever it holds, auth-param names lower-cased, the first of a
repeated name kept. No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["Challenge", "bearer_challenge", "token_challenges"]

_TOKEN: Final = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QUOTED: Final = r'"(?:[^"\\]|\\.)*"'
_PARAM: Final = re.compile(rf"\s*({_TOKEN})\s*=\s*({_QUOTED}|{_TOKEN}=*)\s*(?:,|$)")
_SCHEME: Final = re.compile(rf"[\s,]*({_TOKEN})(?=[\s,]|$)\s*")
_TOKEN68: Final = re.compile(r"([A-Za-z0-9._~+/-]+=*)\s*(?:,|$)")
_BLANK: Final = re.compile(r"\s*\Z")
_ESCAPED: Final = re.compile(r"\\(.)")


# ---- the challenge -----------------------------------------------------------------


@dataclass(frozen=True)
class Challenge:
    """One ``WWW-Authenticate`` challenge: its scheme and auth-params (names lower-cased)."""

    scheme: str
    params: Mapping[str, str]

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def scope(self) -> str | None:
        scope = self.params.get("scope", "").strip()
        return scope or None

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata") or None


def _challenges(header: str) -> list[Challenge]:
    """Parse a ``WWW-Authenticate`` value (RFC 9110 §11.6.1) into its challenges. Lenient:
    a part it cannot read ends the parse, keeping what came before. Read by position,
    never by copying what is left: linear in the header, however many challenges it has."""
    out: list[Challenge] = []
    pos = 0
    while _BLANK.match(header, pos) is None:
        match = _SCHEME.match(header, pos)
        if match is None:
            break
        scheme, pos = match.group(1), match.end()
        params: dict[str, str] = {}
        if _PARAM.match(header, pos) is None and (token68 := _TOKEN68.match(header, pos)) is not None:
            pos = token68.end()  # Basic dXNlcjpwYXNz: nothing of ours
        while (param := _PARAM.match(header, pos)) is not None:
            name, value = param.group(1).lower(), param.group(2)
            if value.startswith('"'):
                value = _ESCAPED.sub(r"\1", value[1:-1])
            params.setdefault(name, value)
            pos = param.end()
        out.append(Challenge(scheme, params))
        while pos < len(header) and header[pos] in " ,":
            pos += 1
    return out


def bearer_challenge(headers: Iterable[str]) -> Challenge | None:
    """The ``Bearer`` challenge among the ``WWW-Authenticate`` header values, if any."""
    for header in headers:
        for challenge in _challenges(header):
            if challenge.scheme.lower() == "bearer":
                return challenge
    return None


def token_challenges(headers: Iterable[str]) -> list[Challenge]:
    """The ``Bearer`` and ``DPoP`` (RFC 9449 §7.1) challenges among the
    ``WWW-Authenticate`` header values, in order: what an OAuth client can answer."""
    return [
        challenge
        for header in headers
        for challenge in _challenges(header)
        if challenge.scheme.lower() in ("bearer", "dpop")
    ]
