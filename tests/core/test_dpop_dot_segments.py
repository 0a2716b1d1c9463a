"""A proof's ``htu`` is compared with the URL requested after RFC 3986's syntax-based
normalization (RFC 9449, section 4.3), which takes dot segments out (RFC 3986, section
6.2.2.3): ``/a/../mcp`` is ``/mcp``, and so is ``/a/%2E%2E/mcp`` once its unreserved
escapes are undone (section 6.2.2.2). A proof spelling the endpoint so was refused. Only
whole segments are dots: an escaped ``/`` is no boundary, ``...`` is a name, and dots
that lead elsewhere name elsewhere."""

from __future__ import annotations

import pytest

from mcp_elicit.core.dpop import DpopKey, ProofError, check_proof

NOW = 1_800_000_000.0
TOKEN = "an.access.token"
BODY = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
URL = "https://mcp.example/mcp"


def _checks(htu: str, url: str = URL) -> bool:
    proof = DpopKey.generate().proof("POST", htu, now=NOW, access_token=TOKEN, body=BODY)
    try:
        check_proof(proof, method="POST", url=url, access_token=TOKEN, body=BODY, now=NOW)
    except ProofError as refused:
        assert "htu" in str(refused)
        return False
    return True


@pytest.mark.parametrize(
    "htu",
    [
        "https://mcp.example/a/../mcp",
        "https://mcp.example/./mcp",
        "https://mcp.example/mcp/.",
        "https://mcp.example/mcp/x/..",
        "https://mcp.example/../mcp",  # nothing above the root
        "https://mcp.example/a/b/../../mcp",
        "https://mcp.example/a/%2E%2E/mcp",  # escaped dots are dots (section 2.3)
        "https://mcp.example/a/%2e./mcp",
        "https://mcp.example/%2E/mcp",
        "HTTPS://MCP.EXAMPLE:443/a/./../mcp/",
    ],
)
def test_dot_segments_are_taken_out(htu: str) -> None:
    assert _checks(htu)


@pytest.mark.parametrize(
    "htu",
    [
        "https://mcp.example/mcp/../other",  # the dots lead elsewhere
        "https://mcp.example/mcp/..",  # the parent of the endpoint
        "https://mcp.example/a%2F..%2Fmcp",  # an escaped / is part of a segment
        "https://mcp.example/a/..%2Fmcp",
        "https://mcp.example/.../mcp",  # a name, not a dot segment
        "https://mcp.example/a/..;x/mcp",
        "https://mcp.example/a/%252E%252E/mcp",  # an escaped %: no dots
    ],
)
def test_what_is_not_a_dot_segment_is_kept(htu: str) -> None:
    assert not _checks(htu)


def test_dots_in_the_url_requested_are_names_a_proof_must_spell() -> None:
    # A URL served with dot segments was not resolved: the router took them as names (a
    # Mount("/{tenant}") reached at /%2E%2E/mcp). Taking them out made it another URL,
    # and a proof for that other resource (/mcp) was taken here.
    dotted = "https://mcp.example/%2E%2E/mcp"
    assert not _checks("https://mcp.example/mcp", url=dotted)
    assert not _checks("https://mcp.example/a/../mcp", url="https://mcp.example/mcp/../mcp")
    assert not _checks("https://mcp.example/api/./v1/mcp", url="https://mcp.example/api/v1/x/../mcp")
    assert not _checks("https://mcp.example/mcp", url="https://mcp.example/./mcp")
    # spelled as it was sent, escapes in either case or not, it is taken
    assert _checks(dotted, url=dotted)
    assert _checks("https://mcp.example/%2e%2e/mcp", url=dotted)
    assert _checks("https://mcp.example/../mcp", url=dotted)
    assert _checks("HTTPS://MCP.EXAMPLE:443/./mcp/", url="https://mcp.example/./mcp")
    assert not _checks("https://mcp.example/api/mcp", url="https://mcp.example/api/v1/mcp")
