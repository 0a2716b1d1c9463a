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


def test_the_url_requested_is_normalized_the_same_way() -> None:
    assert _checks("https://mcp.example/mcp", url="https://mcp.example/a/../mcp")
    assert _checks("https://mcp.example/api/./v1/mcp", url="https://mcp.example/api/v1/x/../mcp")
    assert not _checks("https://mcp.example/api/mcp", url="https://mcp.example/api/v1/mcp")
